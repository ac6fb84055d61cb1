// The quota-request inbox: pending first, approve or reject with a note.
import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { ApiError } from '../../api/problem';
import { useFetch } from '../../lib/data';
import { loc, setQuery } from '../../router';
import { ProblemView, Loading, Time } from '../../ui/common';
import { Dialog } from '../../ui/dialog';
import type { QuotaRequest } from '../../api/types';

type State = 'pending' | 'approved' | 'rejected';

export function Requests() {
  const q = loc.value.query;
  const state = (['pending', 'approved', 'rejected'].includes(q.get('state') ?? '') ? q.get('state') : 'pending') as State;
  const list = useFetch((signal) => ok(api.GET('/v1/admin/quota-requests', { params: { query: { state, limit: 200 } }, signal })), [state], { pollMs: 15000 });
  const [deciding, setDeciding] = useState<{ req: QuotaRequest; approve: boolean } | null>(null);
  const [note, setNote] = useState('');
  const [err, setErr] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const decide = async () => {
    if (!deciding) return;
    setBusy(true);
    setErr(undefined);
    try {
      const opts = { params: { path: { id: deciding.req.id } }, body: note ? { decision: note } : {} };
      if (deciding.approve) await ok(api.POST('/v1/admin/quota-requests/{id}:approve', opts));
      else await ok(api.POST('/v1/admin/quota-requests/{id}:reject', opts));
      setDeciding(null);
      setNote('');
      list.reload();
    } catch (x) {
      if (x instanceof ApiError) setErr(x);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <label>
        Show
        <select value={state} onChange={(e) => setQuery({ state: (e.target as HTMLSelectElement).value })}>
          <option value="pending">pending</option>
          <option value="approved">approved</option>
          <option value="rejected">rejected</option>
        </select>
      </label>
      <ProblemView error={list.error} />
      {!list.data && !list.error ? <Loading what="requests" /> : null}
      {list.data?.items.length ? (
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Asked</th>
                <th scope="col">Workspace</th>
                <th scope="col">By</th>
                <th scope="col">Wants</th>
                <th scope="col">Queue / flavor</th>
                <th scope="col">Why</th>
                <th scope="col">{state === 'pending' ? <span class="sr-only">Decide</span> : 'Decision'}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((r) => (
                <tr key={r.id}>
                  <td>
                    <Time at={r.created_at} />
                  </td>
                  <td>{r.workspace}</td>
                  <td>{r.requester}</td>
                  <td>
                    {r.amount} {r.resource}
                  </td>
                  <td>
                    {r.queue ?? 'default'} / {r.flavor ?? 'first covering'}
                  </td>
                  <td>{r.reason}</td>
                  <td class="actions">
                    {r.state === 'pending' ? (
                      <>
                        <button type="button" class="small primary" aria-label={`Approve ${r.amount} ${r.resource} for ${r.workspace}`} onClick={() => { setErr(undefined); setDeciding({ req: r, approve: true }); }}>
                          Approve
                        </button>
                        <button type="button" class="small danger" aria-label={`Reject ${r.amount} ${r.resource} for ${r.workspace}`} onClick={() => { setErr(undefined); setDeciding({ req: r, approve: false }); }}>
                          Reject
                        </button>
                      </>
                    ) : (
                      <>
                        {r.decided_by} <Time at={r.decided_at} />: {r.decision ?? ''}
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : list.data ? (
        <p class="muted">No {state} request.</p>
      ) : null}
      <Dialog
        open={deciding !== null}
        title={deciding ? `${deciding.approve ? 'Approve' : 'Reject'} ${deciding.req.amount} ${deciding.req.resource} for ${deciding.req.workspace}?` : ''}
        onClose={() => setDeciding(null)}
        actions={
          <>
            <button type="button" onClick={() => setDeciding(null)}>
              Not now
            </button>
            <button type="button" class={deciding?.approve ? 'primary' : 'danger'} disabled={busy} onClick={() => void decide()}>
              {deciding?.approve ? 'Approve' : 'Reject'}
            </button>
          </>
        }
      >
        {deciding?.approve ? <p>The ClusterQueue's nominal quota grows by {deciding.req.amount} {deciding.req.resource}.</p> : null}
        <label for="decision-note">Note to the requester</label>
        <textarea id="decision-note" rows={3} value={note} onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)} />
        <ProblemView error={err} />
      </Dialog>
    </>
  );
}
