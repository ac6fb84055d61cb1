// Policies: the rules, each rule's version history with a line diff, the
// effective policy, and a reload of the policy files.
import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { ApiError } from '../../api/problem';
import { useFetch } from '../../lib/data';
import { ProblemView, Loading, Section, Time } from '../../ui/common';
import { Dialog } from '../../ui/dialog';
import { lineDiff } from '../../lib/diff';

function Versions({ id }: { id: string }) {
  const v = useFetch((signal) => ok(api.GET('/v1/admin/policies/{id}/versions', { params: { path: { id } }, signal })), [id]);
  if (v.error) return <ProblemView error={v.error} />;
  if (!v.data) return <Loading what="versions" />;
  const items = [...v.data.items].sort((a, b) => a.version - b.version);
  return (
    <ol class="versions">
      {items.map((ver, i) => {
        const prev = i ? JSON.stringify(items[i - 1]!.rule, null, 2) : '';
        const cur = ver.rule ? JSON.stringify(ver.rule, null, 2) : '';
        return (
          <li key={ver.version}>
            <p>
              <strong>Version {ver.version}</strong> ({ver.change}) by {ver.changed_by ?? '—'} <Time at={ver.changed_at} /> {ver.enabled ? '' : '(disabled)'}
            </p>
            <pre class="code diff" tabIndex={0}>
              {lineDiff(prev, cur).map((d, k) => (
                <span key={k} class={d.op === '+' ? 'add' : d.op === '-' ? 'del' : undefined}>
                  {d.op} {d.line}
                  {'\n'}
                </span>
              ))}
            </pre>
          </li>
        );
      })}
    </ol>
  );
}

export function Policies() {
  const list = useFetch((signal) => ok(api.GET('/v1/admin/policies', { signal })), []);
  const eff = useFetch((signal) => ok(api.GET('/v1/admin/policies:effective', { signal })), []);
  const [history, setHistory] = useState<string | null>(null);
  const [msg, setMsg] = useState('');
  const [err, setErr] = useState<ApiError | undefined>(undefined);
  const reload = async () => {
    setErr(undefined);
    try {
      await ok(api.POST('/v1/admin/policies:reload'));
      setMsg('Policies reloaded.');
      eff.reload();
    } catch (x) {
      if (x instanceof ApiError) setErr(x);
    }
  };
  return (
    <>
      <Section title="Rules" actions={<button type="button" class="small" onClick={() => void reload()}>Reload policy files</button>}>
        <p role="status">{msg}</p>
        <ProblemView error={err ?? list.error} />
        {!list.data && !list.error ? <Loading what="policies" /> : null}
        {list.data?.items.length ? (
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Version</th>
                <th scope="col">Enabled</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="sr-only">History</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((p) => (
                <tr key={p.id}>
                  <td>
                    <code>{p.id}</code>
                  </td>
                  <td>{p.version}</td>
                  <td>{p.enabled ? 'yes' : 'no'}</td>
                  <td>
                    <Time at={p.updated_at} /> by {p.updated_by ?? '—'}
                  </td>
                  <td>
                    <button type="button" class="small" aria-label={`History of ${p.id}`} onClick={() => setHistory(p.id)}>
                      History
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : list.data ? (
          <p class="muted">No rule is kept in the database; the policy files apply.</p>
        ) : null}
      </Section>
      <Section title="Effective policy">
        <ProblemView error={eff.error} />
        {eff.data ? (
          <pre class="code" tabIndex={0}>
            {JSON.stringify(eff.data, null, 2)}
          </pre>
        ) : null}
      </Section>
      <Dialog open={history !== null} title={`History of ${history ?? ''}`} onClose={() => setHistory(null)}>
        {history ? <Versions id={history} /> : null}
      </Dialog>
    </>
  );
}
