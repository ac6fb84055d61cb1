// The catalog: compute profiles, ResourceFlavors, ClusterQueues with their
// quota and usage bars, priority classes, and what drifted in the cluster.
import { api, ok } from '../../api/client';
import { useFetch } from '../../lib/data';
import { ProblemView, Loading, Section, Time, UsageBar, qty, isBytes } from '../../ui/common';
import type { WorkspaceQuota } from '../../api/types';
import { Crud } from './Crud';

const s = (v: unknown) => (v === null || v === undefined ? '—' : Array.isArray(v) ? v.join(', ') || '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function quotaOf(cq: Record<string, unknown>): string {
  const groups = (cq['resource_groups'] ?? []) as { flavors?: { name?: string; resources?: { name?: string; nominal_quota?: string }[] }[] }[];
  return groups.flatMap((g) => (g.flavors ?? []).flatMap((f) => (f.resources ?? []).map((r) => `${f.name}: ${r.name} ${r.nominal_quota ?? ''}`))).join('; ') || '—';
}

interface CqUsage {
  name: string;
  cohort: string | null;
  queues: string[];
  flavors: WorkspaceQuota['queues'][number]['flavors'];
}

/** Each ClusterQueue's usage as the cluster reports it, through the
 * workspaces' quota views (a ClusterQueue serves the LocalQueues of one or
 * more workspaces; it is shown once, with every LocalQueue that feeds it). */
async function loadUsage(signal: AbortSignal): Promise<{ cqs: CqUsage[]; errors: string[] }> {
  const wss = await ok(api.GET('/v1/admin/workspaces', { params: { query: { limit: 200 } }, signal }));
  const quotas = await Promise.all(wss.items.map((w) => ok(api.GET('/v1/workspaces/{ws}/quota', { params: { path: { ws: w.name } }, signal }))));
  const byName = new Map<string, CqUsage>();
  const errors = new Set<string>();
  for (const q of quotas) {
    if (q.cluster_error) errors.add(q.cluster_error);
    for (const lq of q.queues) {
      const cq = byName.get(lq.cluster_queue) ?? { name: lq.cluster_queue, cohort: lq.cohort ?? null, queues: [], flavors: lq.flavors };
      cq.queues.push(`${q.workspace}/${lq.name}`);
      byName.set(cq.name, cq);
    }
  }
  return { cqs: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)), errors: [...errors] };
}

function ClusterQueueUsage() {
  const u = useFetch((signal) => loadUsage(signal), [], { pollMs: 15000 });
  return (
    <Section title="ClusterQueue usage">
      <ProblemView error={u.error} />
      {!u.data && !u.error ? <Loading what="ClusterQueue usage" /> : null}
      {u.data?.errors.map((e) => (
        <p key={e} class="muted">
          Usage unavailable: {e}
        </p>
      ))}
      {u.data && !u.data.cqs.length ? <p class="muted">No workspace queue uses a ClusterQueue yet.</p> : null}
      {u.data?.cqs.length ? (
        <div class="table-wrap">
          <table class="data cq-usage">
            <thead>
              <tr>
                <th scope="col">ClusterQueue</th>
                <th scope="col">Fed by</th>
                <th scope="col">Flavor</th>
                <th scope="col">Resource</th>
                <th scope="col">In use / nominal</th>
              </tr>
            </thead>
            <tbody>
              {u.data.cqs.flatMap((cq) =>
                (cq.flavors.length ? cq.flavors : [null]).map((f, i) => (
                  <tr key={`${cq.name}-${i}`}>
                    {i === 0 ? (
                      <>
                        <th scope="row" rowSpan={Math.max(1, cq.flavors.length)}>
                          {cq.name}
                          {cq.cohort ? <span class="muted small"> cohort {cq.cohort}</span> : null}
                        </th>
                        <td rowSpan={Math.max(1, cq.flavors.length)}>{cq.queues.join(', ')}</td>
                      </>
                    ) : null}
                    {f ? (
                      <>
                        <td>{f.flavor}</td>
                        <td>{f.resource}</td>
                        <td>
                          <UsageBar used={qty(f.in_use ?? f.reserved ?? '0')} total={qty(f.nominal)} label={`${cq.name}: ${f.resource} of ${f.flavor} in use`} bytes={isBytes(f.resource)} />
                        </td>
                      </>
                    ) : (
                      <td colSpan={3} class="muted">
                        no quota
                      </td>
                    )}
                  </tr>
                )),
              )}
            </tbody>
          </table>
        </div>
      ) : null}
    </Section>
  );
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
      <ClusterQueueUsage />
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
