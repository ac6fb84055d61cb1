// The workspace's waiting runs: position, queues and the reason in words.
import { api, ok } from '../api/client';
import { useFetch } from '../lib/data';
import { href } from '../router';
import { ProblemView, Loading, StateBadge, Time } from '../ui/common';

export function QueuePage({ ws }: { ws: string }) {
  const q = useFetch((signal) => ok(api.GET('/v1/workspaces/{ws}/queue', { params: { path: { ws } }, signal })), [ws], { pollMs: 5000 });
  return (
    <div class="page">
      <h1>Why runs in {ws} are waiting</h1>
      <ProblemView error={q.error} />
      {!q.data && !q.error ? <Loading what="the queue" /> : null}
      {q.data ? (
        <>
          {q.data.cluster !== 'ok' ? <p class="muted">Cluster figures are {q.data.cluster}; positions may be missing.</p> : null}
          {q.data.items.length ? (
            <div class="table-wrap">
              <table class="data">
                <thead>
                  <tr>
                    <th scope="col">Position</th>
                    <th scope="col">Run</th>
                    <th scope="col">State</th>
                    <th scope="col">Owner</th>
                    <th scope="col">Queue</th>
                    <th scope="col">Waiting since</th>
                    <th scope="col">Why</th>
                  </tr>
                </thead>
                <tbody>
                  {q.data.items.map((i) => (
                    <tr key={i.run_id}>
                      <td>
                        {i.position ?? '—'}
                        {i.pending ? ` of ${i.pending}` : ''}
                      </td>
                      <td>
                        <a href={href(`/runs/${i.run_id}`)}>{i.name}</a> <span class="muted small">attempt {i.attempt}</span>
                      </td>
                      <td>
                        <StateBadge state={i.state} />
                      </td>
                      <td>{i.owner}</td>
                      <td>
                        {i.local_queue ?? '—'} → {i.cluster_queue ?? '—'}
                      </td>
                      <td>
                        <Time at={i.queued_since ?? null} />
                      </td>
                      <td>{i.why}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p>No run is waiting.</p>
          )}
        </>
      ) : null}
    </div>
  );
}
