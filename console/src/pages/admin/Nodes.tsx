// Fleet and nodes: GPUs by class and flavor, each node's health, problems
// and cordon, and a node's recent events.
import { api, ok } from '../../api/client';
import { useFetch } from '../../lib/data';
import { href } from '../../router';
import { ProblemView, Loading, Section, Time, UsageBar } from '../../ui/common';
import type { Node } from '../../api/types';

function Cordon({ n }: { n: Node }) {
  if (!n.unschedulable && !n.cordon) return <>no</>;
  return (
    <>
      cordoned{n.cordon?.by ? ` by ${n.cordon.by}` : ''}
      {n.cordon?.reason ? `: ${n.cordon.reason}` : ''}
    </>
  );
}

export function Nodes() {
  const fleet = useFetch((signal) => ok(api.GET('/v1/admin/fleet', { signal })), [], { pollMs: 15000 });
  const nodes = useFetch((signal) => ok(api.GET('/v1/admin/nodes', { params: { query: { limit: 200 } }, signal })), [], { pollMs: 15000 });
  return (
    <>
      <ProblemView error={fleet.error ?? nodes.error} />
      {fleet.data ? (
        <Section title="GPUs by class">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Class</th>
                <th scope="col">Nodes (healthy)</th>
                <th scope="col">GPUs allocated</th>
                <th scope="col">Running runs</th>
              </tr>
            </thead>
            <tbody>
              {fleet.data.classes.map((c) => (
                <tr key={c.class ?? 'none'}>
                  <th scope="row">{c.class ?? 'no GPU'}</th>
                  <td>
                    {c.nodes} ({c.healthy_nodes ?? 0})
                  </td>
                  <td>
                    <UsageBar used={c.gpus.allocated} total={c.gpus.allocatable} label={`GPUs allocated in ${c.class ?? 'no class'}`} />
                  </td>
                  <td>{c.running_runs ?? 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      ) : null}
      <Section title="Nodes">
        {!nodes.data && !nodes.error ? <Loading what="nodes" /> : null}
        {nodes.data?.items.length ? (
          <div class="table-wrap">
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">Node</th>
                  <th scope="col">Health</th>
                  <th scope="col">GPU class</th>
                  <th scope="col">GPUs free / total</th>
                  <th scope="col">Cordoned</th>
                  <th scope="col">Problems</th>
                  <th scope="col">Runs</th>
                </tr>
              </thead>
              <tbody>
                {nodes.data.items.map((n) => (
                  <tr key={n.name}>
                    <td>
                      <a href={href(`/admin/nodes/${n.name}`)}>{n.name}</a>
                    </td>
                    <td>
                      <span class={`badge h-${n.health.toLowerCase()}`}>{n.health}</span>
                    </td>
                    <td>{n.gpu_class ?? '—'}</td>
                    <td>
                      {n.gpus.free} / {n.gpus.total}
                    </td>
                    <td>
                      <Cordon n={n} />
                    </td>
                    <td>{(n.problems ?? []).map((p) => p.type).join(', ')}</td>
                    <td>{n.runs?.length ?? 0}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : nodes.data ? (
          <p class="muted">No node has been observed.</p>
        ) : null}
      </Section>
    </>
  );
}

export function NodePage({ name }: { name: string }) {
  const n = useFetch((signal) => ok(api.GET('/v1/admin/nodes/{name}', { params: { path: { name } }, signal })), [name], { pollMs: 10000 });
  if (n.error) return <ProblemView error={n.error} />;
  if (!n.data) return <Loading what="the node" />;
  const node = n.data;
  return (
    <>
      <p>
        <a href={href('/admin/nodes')}>All nodes</a> / {node.name}
      </p>
      <Section title={node.name}>
        <dl class="facts">
          <dt>Health</dt>
          <dd>
            {node.health} since <Time at={node.health_since ?? null} />
          </dd>
          <dt>Ready</dt>
          <dd>{node.ready ? 'yes' : 'no'}</dd>
          <dt>Cordoned</dt>
          <dd>
            <Cordon n={node} />
          </dd>
          <dt>GPUs</dt>
          <dd>
            {node.gpus.allocated} allocated of {node.gpus.allocatable} ({node.gpus.free} free)
          </dd>
          <dt>Flavors</dt>
          <dd>{(node.flavors ?? []).join(', ') || '—'}</dd>
        </dl>
      </Section>
      {node.problems?.length ? (
        <Section title="Problems">
          <ul class="plain">
            {node.problems.map((p, i) => (
              <li key={i}>
                <strong>{p.type}</strong> {p.reason ?? ''} {p.message ?? ''} <Time at={p.since ?? null} />
              </li>
            ))}
          </ul>
        </Section>
      ) : null}
      {node.runs?.length ? (
        <Section title="Runs on this node">
          <ul class="plain">
            {node.runs.map((r) => (
              <li key={r.run_id}>
                <a href={href(`/runs/${r.run_id}`)}>{r.name}</a> ({r.workspace}, {r.state})
              </li>
            ))}
          </ul>
        </Section>
      ) : null}
      <Section title="Recent events">
        {node.history.length ? (
          <pre class="code" tabIndex={0}>
            {node.history.map((h) => JSON.stringify(h)).join('\n')}
          </pre>
        ) : (
          <p class="muted">None.</p>
        )}
      </Section>
    </>
  );
}
