// The catalog: compute profiles, ResourceFlavors, ClusterQueues with their
// quota, priority classes, and what drifted in the cluster.
import { api, ok } from '../../api/client';
import { useFetch } from '../../lib/data';
import { ProblemView, Loading, Section, Time } from '../../ui/common';
import { Crud } from './Crud';

const s = (v: unknown) => (v === null || v === undefined ? '—' : Array.isArray(v) ? v.join(', ') || '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function quotaOf(cq: Record<string, unknown>): string {
  const groups = (cq['resource_groups'] ?? []) as { flavors?: { name?: string; resources?: { name?: string; nominal_quota?: string }[] }[] }[];
  return groups.flatMap((g) => (g.flavors ?? []).flatMap((f) => (f.resources ?? []).map((r) => `${f.name}: ${r.name} ${r.nominal_quota ?? ''}`))).join('; ') || '—';
}

function Drift() {
  const d = useFetch((signal) => ok(api.GET('/v1/admin/drift', { signal })), []);
  return (
    <Section title="Drift">
      <ProblemView error={d.error} />
      {!d.data && !d.error ? <Loading what="drift" /> : null}
      {d.data ? (
        d.data.items.length ? (
          <div class="table-wrap">
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">Object</th>
                  <th scope="col">Problem</th>
                  <th scope="col">Summary</th>
                  <th scope="col">Detected</th>
                  <th scope="col">Resolution</th>
                </tr>
              </thead>
              <tbody>
                {d.data.items.map((i) => (
                  <tr key={i.id}>
                    <td>
                      {i.kind} {i.namespace ? `${i.namespace}/` : ''}
                      {i.name}
                    </td>
                    <td>{i.problem}</td>
                    <td>{i.summary ?? ''}</td>
                    <td>
                      <Time at={i.detected_at} />
                    </td>
                    <td>{i.resolution ?? 'open'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p class="muted">The cluster matches the catalog.</p>
        )
      ) : null}
    </Section>
  );
}

export function Catalog() {
  return (
    <>
      <Crud
        title="Profiles"
        collection="/v1/admin/profiles"
        keyOf={(p) => String(p['name'])}
        immutable={['name']}
        template={{ name: 'new-profile', engine: 'job', description: '', settings: {}, allowed_workspaces: [] }}
        columns={[
          { label: 'Name', cell: (p) => s(p['name']) },
          { label: 'Engine', cell: (p) => s(p['engine']) },
          { label: 'Description', cell: (p) => s(p['description']) },
          { label: 'Workspaces', cell: (p) => s(p['allowed_workspaces']) },
        ]}
      />
      <Crud
        title="Flavors"
        collection="/v1/admin/flavors"
        keyOf={(f) => String(f['name'])}
        immutable={['name']}
        template={{ name: 'new-flavor', node_labels: {} }}
        columns={[
          { label: 'Name', cell: (f) => s(f['name']) },
          { label: 'Node labels', cell: (f) => s(f['node_labels']) },
        ]}
      />
      <Crud
        title="ClusterQueues"
        collection="/v1/admin/cluster-queues"
        keyOf={(c) => String(c['name'])}
        immutable={['name']}
        template={{ name: 'new-cq', queueing_strategy: 'BestEffortFIFO', resource_groups: [] }}
        columns={[
          { label: 'Name', cell: (c) => s(c['name']) },
          { label: 'Cohort', cell: (c) => s(c['cohort']) },
          { label: 'Strategy', cell: (c) => s(c['queueing_strategy']) },
          { label: 'Nominal quota', cell: (c) => quotaOf(c) },
        ]}
      />
      <Crud
        title="Priority classes"
        collection="/v1/admin/priority-classes"
        keyOf={(p) => String(p['name'])}
        immutable={['name']}
        template={{ name: 'new-priority', value: 100, description: '' }}
        columns={[
          { label: 'Name', cell: (p) => s(p['name']) },
          { label: 'Value', cell: (p) => s(p['value']) },
          { label: 'Description', cell: (p) => s(p['description']) },
        ]}
      />
      <Drift />
    </>
  );
}
