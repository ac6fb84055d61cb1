// Quota: what each queue may use and uses, and requests for more.
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { ApiError } from '../api/problem';
import { useFetch } from '../lib/data';
import { loc, setQuery } from '../router';
import { ProblemView, Loading, Section, Time, UsageBar, qty, isBytes } from '../ui/common';
import { Dialog } from '../ui/dialog';

function RequestForm({ ws, queues, onDone }: { ws: string; queues: string[]; onDone(): void }) {
  const [resource, setResource] = useState('nvidia.com/gpu');
  const [amount, setAmount] = useState('1');
  const [reason, setReason] = useState('');
  const [queue, setQueue] = useState('');
  const [err, setErr] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const send = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErr(undefined);
    try {
      await ok(api.POST('/v1/workspaces/{ws}/quota-requests', { params: { path: { ws } }, body: { resource, amount, reason, ...(queue ? { queue } : {}) } }));
      onDone();
    } catch (x) {
      if (x instanceof ApiError) setErr(x);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={send}>
      <label for="qr-resource">Resource</label>
      <input id="qr-resource" value={resource} onInput={(e) => setResource((e.target as HTMLInputElement).value)} required />
      <label for="qr-amount">How much more</label>
      <input id="qr-amount" value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} required />
      <label for="qr-queue">Queue</label>
      <select id="qr-queue" value={queue} onChange={(e) => setQueue((e.target as HTMLSelectElement).value)}>
        <option value="">the workspace's default</option>
        {queues.map((q) => (
          <option key={q} value={q}>
            {q}
          </option>
        ))}
      </select>
      <label for="qr-reason">Why</label>
      <textarea id="qr-reason" value={reason} onInput={(e) => setReason((e.target as HTMLTextAreaElement).value)} required rows={3} />
      <ProblemView error={err} />
      <button type="submit" class="primary" disabled={busy}>
        Send request
      </button>
    </form>
  );
}

export function Quota({ ws }: { ws: string }) {
  const quota = useFetch((signal) => ok(api.GET('/v1/workspaces/{ws}/quota', { params: { path: { ws } }, signal })), [ws], { pollMs: 15000 });
  const reqs = useFetch((signal) => ok(api.GET('/v1/workspaces/{ws}/quota-requests', { params: { path: { ws }, query: { limit: 100 } }, signal })), [ws]);
  const open = loc.value.query.get('request') === '1';
  return (
    <div class="page">
      <div class="page-head">
        <h1>Quota of {ws}</h1>
        <button type="button" class="primary" onClick={() => setQuery({ request: '1' })}>
          Request more quota
        </button>
      </div>
      <ProblemView error={quota.error} />
      {!quota.data && !quota.error ? <Loading what="quota" /> : null}
      {quota.data?.cluster_error ? <p class="muted">Usage unavailable: {quota.data.cluster_error}</p> : null}
      {quota.data?.queues.map((q) => (
        <Section key={q.name} title={`${q.name} → ${q.cluster_queue}${q.default ? ' (default)' : ''}`}>
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Flavor</th>
                <th scope="col">Resource</th>
                <th scope="col">In use / nominal</th>
                <th scope="col">Borrowed</th>
              </tr>
            </thead>
            <tbody>
              {q.flavors.map((f) => (
                <tr key={f.flavor + f.resource}>
                  <td>{f.flavor}</td>
                  <th scope="row">{f.resource}</th>
                  <td>
                    <UsageBar used={qty(f.in_use ?? f.reserved ?? '0')} total={qty(f.nominal)} label={`${f.resource} of ${f.flavor} in use`} bytes={isBytes(f.resource)} />
                  </td>
                  <td>{f.borrowed ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      ))}
      <Section title="Requests">
        <ProblemView error={reqs.error} />
        {reqs.data?.items.length ? (
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Asked</th>
                <th scope="col">Resource</th>
                <th scope="col">Amount</th>
                <th scope="col">By</th>
                <th scope="col">State</th>
                <th scope="col">Decision</th>
              </tr>
            </thead>
            <tbody>
              {reqs.data.items.map((r) => (
                <tr key={r.id}>
                  <td>
                    <Time at={r.created_at} />
                  </td>
                  <td>{r.resource}</td>
                  <td>{r.amount}</td>
                  <td>{r.requester}</td>
                  <td>
                    <span class={`badge q-${r.state}`}>{r.state}</span>
                  </td>
                  <td>{r.decision ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : reqs.data ? (
          <p class="muted">No request yet.</p>
        ) : null}
      </Section>
      <Dialog open={open} title="Request more quota" onClose={() => setQuery({ request: null })}>
        <RequestForm
          ws={ws}
          queues={quota.data?.queues.map((q) => q.name) ?? []}
          onDone={() => {
            setQuery({ request: null });
            reqs.reload();
          }}
        />
      </Dialog>
    </div>
  );
}
