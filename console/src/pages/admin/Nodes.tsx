// Fleet and nodes: GPUs by class and flavor, each node's health, problems
// and cordon, a node's recent events, and the admin's node operations
// (cordon, uncordon, drain), each with a reason and a confirmation.
import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { ApiError } from '../../api/problem';
import { useFetch } from '../../lib/data';
import { href } from '../../router';
import { ProblemView, Loading, Section, Time, UsageBar } from '../../ui/common';
import { Dialog } from '../../ui/dialog';
import type { components } from '../../api/schema';
import type { Node } from '../../api/types';

type Op = 'cordon' | 'uncordon' | 'drain';
type PodEviction = components['schemas']['PodEviction'];

const OP_TEXT: Record<Op, { title: string; what: string; button: string }> = {
  cordon: { title: 'Cordon', what: 'No new pod will be scheduled on it; pods already there keep running. The node-health automation never takes an admin\'s cordon back.', button: 'Cordon node' },
  uncordon: { title: 'Uncordon', what: 'Pods may be scheduled on it again, whoever cordoned it.', button: 'Uncordon node' },
  drain: { title: 'Drain', what: 'Cordons it and evicts its pods (DaemonSet and static pods stay). A run with a pod there moves to a new attempt elsewhere without spending its retries.', button: 'Drain node' },
};

/** The node operations, with a reason and a confirmation; a drain lists what became of each pod. */
function NodeActions({ node, onDone }: { node: Node; onDone(): void }) {
  const [op, setOp] = useState<Op | null>(null);
  const [reason, setReason] = useState('');
  const [grace, setGrace] = useState('');
  const [err, setErr] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [pods, setPods] = useState<PodEviction[] | null>(null);
  const cordoned = node.unschedulable || !!node.cordon;
  const open = (o: Op) => {
    setOp(o);
    setReason('');
    setGrace('');
    setErr(undefined);
    setPods(null);
  };
  const close = () => {
    setOp(null);
    setPods(null);
  };
  const go = async (e: Event) => {
    e.preventDefault();
    if (!op || busy) return;
    setBusy(true);
    setErr(undefined);
    const path = { name: node.name };
    try {
      if (op === 'cordon') await ok(api.POST('/v1/admin/nodes/{name}:cordon', { params: { path }, body: { reason } }));
      else if (op === 'uncordon') await ok(api.POST('/v1/admin/nodes/{name}:uncordon', { params: { path }, body: reason ? { reason } : {} }));
      else {
        const r = await ok(api.POST('/v1/admin/nodes/{name}:drain', { params: { path }, body: { reason, ...(grace ? { grace_period_seconds: Number(grace) } : {}) } }));
        setPods(r.pods);
      }
      onDone();
      if (op !== 'drain') setOp(null);
    } catch (x) {
      if (x instanceof ApiError) setErr(x);
    } finally {
      setBusy(false);
    }
  };
  const text = op ? OP_TEXT[op] : null;
  return (
    <>
      <div class="actions">
        {cordoned ? (
          <button type="button" class="op-uncordon" onClick={() => open('uncordon')}>
            Uncordon
          </button>
        ) : (
          <button type="button" class="op-cordon" onClick={() => open('cordon')}>
            Cordon
          </button>
        )}
        <button type="button" class="danger op-drain" onClick={() => open('drain')}>
          Drain
        </button>
      </div>
      <Dialog open={!!op} title={text ? `${text.title} ${node.name}?` : ''} onClose={close}>
        {pods ? (
          <>
            <p role="status">
              {node.name} is cordoned; {pods.length} pod{pods.length === 1 ? '' : 's'} considered.
            </p>
            {pods.length ? (
              <table class="data drain-result">
                <thead>
                  <tr>
                    <th scope="col">Pod</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Run</th>
                  </tr>
                </thead>
                <tbody>
                  {pods.map((p) => (
                    <tr key={p.namespace + '/' + p.pod}>
                      <td>
                        {p.namespace}/{p.pod}
                      </td>
                      <td>
                        {p.outcome}
                        {p.message ? <span class="muted small"> {p.message}</span> : null}
                      </td>
                      <td>{p.run_id ? <a href={href(`/runs/${p.run_id}`)}>{p.run_id.slice(0, 8)}</a> : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
            <div class="dialog-actions">
              <button type="button" class="primary" onClick={close}>
                Done
              </button>
            </div>
          </>
        ) : text ? (
          <form class="stack" onSubmit={go}>
            <p>{text.what}</p>
            {op === 'drain' && node.runs?.length ? (
              <p>
                <strong>
                  {node.runs.length} run{node.runs.length === 1 ? '' : 's'} will move:
                </strong>{' '}
                {node.runs.map((r) => `${r.name} (${r.workspace})`).join(', ')}
              </p>
            ) : null}
            <label for="node-op-reason">Reason{op === 'uncordon' ? ' (optional)' : ''}</label>
            <textarea id="node-op-reason" rows={2} required={op !== 'uncordon'} maxLength={1000} value={reason} onInput={(e) => setReason((e.target as HTMLTextAreaElement).value)} />
            {op === 'drain' ? (
              <>
                <label for="node-op-grace">Grace period per pod, seconds (optional: each pod's own)</label>
                <input id="node-op-grace" type="number" min={0} inputMode="numeric" value={grace} onInput={(e) => setGrace((e.target as HTMLInputElement).value)} />
              </>
            ) : null}
            <ProblemView error={err} />
            <div class="dialog-actions">
              <button type="button" onClick={close} disabled={busy}>
                Keep it as it is
              </button>
              <button type="submit" class={op === 'uncordon' ? 'primary' : 'danger'} disabled={busy}>
                {busy ? 'Working…' : text.button}
              </button>
            </div>
          </form>
        ) : null}
      </Dialog>
    </>
  );
}

function Cordon({ n }: { n: Node }) {
  if (!n.unschedulable && !n.cordon) return <>no</>;
  return (
    <>
      {n.cordon?.drain ? 'drained' : 'cordoned'}
      {n.cordon?.by ? ` by ${n.cordon.by}` : ''}
      {n.cordon?.source === 'automation' ? ' (automation)' : ''}
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
      <Section title={node.name} actions={<NodeActions node={node} onDone={n.reload} />}>
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
