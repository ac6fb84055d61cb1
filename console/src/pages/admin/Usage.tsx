// Usage (GPU-hours and runs by workspace and user, exported as CSV) and the
// audit log (filters in the URL, a request id found across pages).
import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { ApiError } from '../../api/problem';
import { useFetch } from '../../lib/data';
import { loc, setQuery } from '../../router';
import { ProblemView, Loading, Section, Time, fmtNum } from '../../ui/common';

function csv(rows: (string | number)[][]): string {
  return rows.map((r) => r.map((c) => (/[",\n]/.test(String(c)) ? `"${String(c).replace(/"/g, '""')}"` : String(c))).join(',')).join('\n') + '\n';
}

function download(name: string, text: string) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  a.download = name;
  a.click();
}

export function Usage() {
  const q = loc.value.query;
  const since = q.get('since') ?? new Date(Date.now() - 30 * 86400e3).toISOString().slice(0, 10);
  const until = q.get('until') ?? '';
  const u = useFetch(
    (signal) => ok(api.GET('/v1/admin/usage', { params: { query: { since: `${since}T00:00:00Z`, ...(until ? { until: `${until}T00:00:00Z` } : {}) } }, signal })),
    [since, until],
  );
  return (
    <>
      <form class="row-form" onSubmit={(e) => e.preventDefault()}>
        <label>
          From
          <input type="date" value={since} onChange={(e) => setQuery({ since: (e.target as HTMLInputElement).value })} />
        </label>
        <label>
          Until
          <input type="date" value={until} onChange={(e) => setQuery({ until: (e.target as HTMLInputElement).value || null })} />
        </label>
        {u.data ? (
          <button
            type="button"
            onClick={() =>
              download(
                `usage-${since}.csv`,
                csv([['workspace', 'user', 'runs', 'succeeded', 'failed', 'cancelled', 'gpu_hours'], ...u.data!.users.map((r) => [r.workspace, r.user, r.runs, r.succeeded ?? 0, r.failed ?? 0, r.cancelled ?? 0, r.gpu_hours])]),
              )
            }
          >
            Export CSV
          </button>
        ) : null}
      </form>
      <ProblemView error={u.error} />
      {!u.data && !u.error ? <Loading what="usage" /> : null}
      {u.data ? (
        <>
          <p>
            {u.data.totals.runs} runs, {fmtNum(u.data.totals.gpu_hours)} GPU-hours from <Time at={u.data.since} /> to <Time at={u.data.until} />.
          </p>
          {(['workspaces', 'users'] as const).map((k) => (
            <Section key={k} title={k === 'workspaces' ? 'By workspace' : 'By user'}>
              <table class="data">
                <thead>
                  <tr>
                    <th scope="col">Workspace</th>
                    {k === 'users' ? <th scope="col">User</th> : null}
                    <th scope="col">Runs</th>
                    <th scope="col">Succeeded</th>
                    <th scope="col">Failed</th>
                    <th scope="col">GPU-hours</th>
                  </tr>
                </thead>
                <tbody>
                  {(u.data![k] as ({ workspace: string; user?: string; runs: number; succeeded?: number; failed?: number; gpu_hours: number })[]).map((r) => (
                    <tr key={r.workspace + (r.user ?? '')}>
                      <td>{r.workspace}</td>
                      {k === 'users' ? <td>{r.user}</td> : null}
                      <td>{r.runs}</td>
                      <td>{r.succeeded ?? 0}</td>
                      <td>{r.failed ?? 0}</td>
                      <td>{fmtNum(r.gpu_hours)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Section>
          ))}
        </>
      ) : null}
    </>
  );
}

type Entry = { id: number; at: string; subject: string | null; method: string; target: string; workspace: string | null; status: number; request_id: string };

export function Audit() {
  const q = loc.value.query;
  const subject = q.get('subject') ?? '';
  const workspace = q.get('workspace') ?? '';
  const rid = q.get('request_id') ?? '';
  const [form, setForm] = useState({ subject, workspace, rid });
  const [pages, setPages] = useState(1);
  const data = useFetch(
    async (signal) => {
      const items: Entry[] = [];
      let cursor: string | undefined;
      // A request id is searched across up to 50 pages; other filters are the API's.
      const maxPages = rid ? 50 : pages;
      for (let p = 0; p < maxPages; p++) {
        const page = await ok(api.GET('/v1/admin/audit', { params: { query: { limit: 200, ...(subject ? { subject } : {}), ...(workspace ? { workspace } : {}), ...(cursor ? { cursor } : {}) } }, signal }));
        items.push(...page.items);
        cursor = page.next_cursor ?? undefined;
        if (!cursor || (rid && items.some((i) => i.request_id === rid))) break;
      }
      return { items: rid ? items.filter((i) => i.request_id === rid) : items, more: !!cursor };
    },
    [subject, workspace, rid, pages],
  );
  return (
    <>
      <form
        class="row-form"
        role="search"
        aria-label="Search the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ subject: form.subject || null, workspace: form.workspace || null, request_id: form.rid || null }, { replace: false });
        }}
      >
        <label>
          Request id
          <input value={form.rid} onInput={(e) => setForm({ ...form, rid: (e.target as HTMLInputElement).value.trim() })} />
        </label>
        <label>
          Subject
          <input value={form.subject} onInput={(e) => setForm({ ...form, subject: (e.target as HTMLInputElement).value })} />
        </label>
        <label>
          Workspace
          <input value={form.workspace} onInput={(e) => setForm({ ...form, workspace: (e.target as HTMLInputElement).value })} />
        </label>
        <button type="submit">Search</button>
      </form>
      <ProblemView error={data.error instanceof ApiError ? data.error : undefined} />
      {!data.data && !data.error ? <Loading what="audit entries" /> : null}
      {data.data ? (
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">At</th>
                <th scope="col">Subject</th>
                <th scope="col">Request</th>
                <th scope="col">Status</th>
                <th scope="col">Workspace</th>
                <th scope="col">Request id</th>
              </tr>
            </thead>
            <tbody>
              {data.data.items.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Time at={a.at} />
                  </td>
                  <td>{a.subject ?? '—'}</td>
                  <td>
                    {a.method} <code>{a.target}</code>
                  </td>
                  <td>{a.status}</td>
                  <td>{a.workspace ?? '—'}</td>
                  <td>
                    <code class="small">{a.request_id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {!data.data.items.length ? <p class="muted">No entry matches.</p> : null}
          {data.data.more && !rid ? (
            <button type="button" onClick={() => setPages(pages + 1)}>
              Load more
            </button>
          ) : null}
        </div>
      ) : null}
    </>
  );
}
