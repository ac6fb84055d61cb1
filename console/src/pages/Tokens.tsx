// Personal access tokens: create (the secret shown once), list, revoke.
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { ApiError } from '../api/problem';
import { useFetch } from '../lib/data';
import { me } from '../state/auth';
import { ProblemView, Loading, Section, Time, CopyButton } from '../ui/common';
import { Dialog } from '../ui/dialog';

type Role = 'viewer' | 'researcher' | 'admin';

export function Tokens() {
  const list = useFetch((signal) => ok(api.GET('/v1/tokens', { signal })), []);
  const workspaces = me.value?.workspaces ?? [];
  const [name, setName] = useState('');
  const [ws, setWs] = useState(workspaces[0]?.name ?? '');
  const [role, setRole] = useState<Role>('researcher');
  const [days, setDays] = useState('90');
  const [err, setErr] = useState<ApiError | undefined>(undefined);
  const [created, setCreated] = useState<string | null>(null);
  const [revoke, setRevoke] = useState<{ id: string; name: string } | null>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setErr(undefined);
    try {
      const t = await ok(api.POST('/v1/tokens', { body: { name, workspace: ws, role, expires_in_days: Number(days) } }));
      setCreated(t.token);
      setName('');
      list.reload();
    } catch (x) {
      if (x instanceof ApiError) setErr(x);
    }
  };
  const doRevoke = async () => {
    if (!revoke) return;
    try {
      await ok(api.DELETE('/v1/tokens/{id}', { params: { path: { id: revoke.id } } }));
      setRevoke(null);
      list.reload();
    } catch (x) {
      if (x instanceof ApiError) setErr(x);
    }
  };
  return (
    <div class="page">
      <h1>Access tokens</h1>
      <Section title="New token">
        <form class="row-form" onSubmit={create}>
          <label>
            Name
            <input value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} required />
          </label>
          <label>
            Workspace
            <select value={ws} onChange={(e) => setWs((e.target as HTMLSelectElement).value)}>
              {workspaces.map((w) => (
                <option key={w.name} value={w.name}>
                  {w.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Role
            <select value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as Role)}>
              <option value="viewer">viewer</option>
              <option value="researcher">researcher</option>
              <option value="admin">admin</option>
            </select>
          </label>
          <label>
            Days valid
            <input type="number" min={1} max={365} value={days} onInput={(e) => setDays((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit" class="primary">
            Create token
          </button>
        </form>
        <ProblemView error={err} />
      </Section>
      <Section title="Your tokens">
        <ProblemView error={list.error} />
        {!list.data && !list.error ? <Loading what="tokens" /> : null}
        {list.data?.items.length ? (
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Workspace</th>
                <th scope="col">Role</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((t) => (
                <tr key={t.id}>
                  <td>{t.name}</td>
                  <td>{t.workspace}</td>
                  <td>{t.role}</td>
                  <td>
                    <Time at={t.created_at} />
                  </td>
                  <td>
                    <Time at={t.expires_at} />
                  </td>
                  <td>
                    <Time at={t.last_used_at} />
                  </td>
                  <td>
                    {t.revoked_at ? (
                      <span class="muted">revoked</span>
                    ) : (
                      <button type="button" class="small danger" onClick={() => setRevoke({ id: t.id, name: t.name })}>
                        Revoke {t.name}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : list.data ? (
          <p class="muted">No tokens.</p>
        ) : null}
      </Section>
      <Dialog open={created !== null} title="Your new token" onClose={() => setCreated(null)} actions={<button type="button" class="primary" onClick={() => setCreated(null)}>I have copied it</button>}>
        <p>This is the only time the token is shown. Copy it now.</p>
        <p>
          <code class="wrap secret">{created}</code> <CopyButton text={created ?? ''} label="Copy the token" />
        </p>
      </Dialog>
      <Dialog
        open={revoke !== null}
        title={`Revoke ${revoke?.name ?? ''}?`}
        onClose={() => setRevoke(null)}
        actions={
          <>
            <button type="button" onClick={() => setRevoke(null)}>
              Keep it
            </button>
            <button type="button" class="danger" onClick={() => void doRevoke()}>
              Revoke
            </button>
          </>
        }
      >
        <p>Anything using this token stops working at once.</p>
      </Dialog>
    </div>
  );
}
