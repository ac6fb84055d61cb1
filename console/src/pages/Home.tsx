// Workspace home: what is running, what waits and why, quota used against
// nominal, and open quota requests; each figure links to its filtered view.
import { api, ok } from '../api/client';
import { useFetch } from '../lib/data';
import { href } from '../router';
import { ProblemView, Section, StateBadge, Time, UsageBar, qty, isBytes, Loading } from '../ui/common';
import type { Run } from '../api/types';

function RunsBrief({ ws, state, title }: { ws: string; state: 'Running' | 'Queued'; title: string }) {
  const r = useFetch((signal) => ok(api.GET('/v1/workspaces/{ws}/runs', { params: { path: { ws }, query: { state, limit: 10 } }, signal })), [ws, state], { pollMs: 5000 });
  const items: Run[] = r.data?.items ?? [];
  return (
    <Section title={title} actions={<a href={href(`/w/${ws}/runs`, { state })}>All {state.toLowerCase()} runs</a>}>
      <ProblemView error={r.error} />
      {!r.data && !r.error ? <Loading what="runs" /> : null}
      {r.data && !items.length ? <p class="muted">None.</p> : null}
      {items.length ? (
        <ul class="plain">
          {items.map((run) => (
            <li key={run.id}>
              <StateBadge state={run.state} /> <a href={href(`/runs/${run.id}`)}>{run.name}</a> <span class="muted small">{run.owner} · <Time at={run.created_at} /></span>
            </li>
          ))}
          {r.data?.next_cursor ? <li class="muted">and more…</li> : null}
        </ul>
      ) : null}
    </Section>
  );
}

export function Home({ ws }: { ws: string }) {
  const quota = useFetch((signal) => ok(api.GET('/v1/workspaces/{ws}/quota', { params: { path: { ws } }, signal })), [ws], { pollMs: 15000 });
  const requests = useFetch((signal) => ok(api.GET('/v1/workspaces/{ws}/quota-requests', { params: { path: { ws }, query: { limit: 50 } }, signal })), [ws]);
  const open = (requests.data?.items ?? []).filter((q) => q.state === 'pending').length;
  return (
    <div class="page">
      <h1>Workspace {ws}</h1>
      <div class="grid2">
        <RunsBrief ws={ws} state="Running" title="Running now" />
        <RunsBrief ws={ws} state="Queued" title="Waiting" />
      </div>
      <Section title="Quota" actions={<a href={href(`/w/${ws}/quota`)}>Quota and requests ({open} open)</a>}>
        <ProblemView error={quota.error} />
        {!quota.data && !quota.error ? <Loading what="quota" /> : null}
        {quota.data?.cluster_error ? <p class="muted">Cluster figures unavailable: {quota.data.cluster_error}</p> : null}
        {quota.data?.queues.map((q) => (
          <div key={q.name} class="quota-q">
            <h3>
              {q.name} <span class="muted small">→ {q.cluster_queue}{q.default ? ' (default)' : ''}</span>
            </h3>
            {q.resources.length ? (
              <table class="data">
                <thead>
                  <tr>
                    <th scope="col">Resource</th>
                    <th scope="col">In use / nominal</th>
                    <th scope="col">Pending</th>
                  </tr>
                </thead>
                <tbody>
                  {q.resources.map((res) => (
                    <tr key={res.resource}>
                      <th scope="row">{res.resource}</th>
                      <td>
                        <UsageBar used={qty(res.in_use ?? res.reserved ?? '0')} total={qty(res.nominal)} label={`${res.resource} in use of nominal`} bytes={isBytes(res.resource)} />
                      </td>
                      <td>{res.pending ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : (
              <p class="muted">No resources.</p>
            )}
          </div>
        ))}
      </Section>
    </div>
  );
}
