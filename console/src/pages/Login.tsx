// Sign in with a token (a PAT `tgp_…` or a JWT), checked against the API
// before it is kept. The page the user asked for stays in the URL.
import { useState } from 'preact/hooks';
import { signIn, expired } from '../state/auth';
import { loadMe } from '../state/session';
import { ApiError } from '../api/problem';
import { ProblemView } from '../ui/common';
import { Dialog } from '../ui/dialog';

function TokenForm({ onDone, idPrefix }: { onDone?: () => void; idPrefix: string }) {
  const [value, setValue] = useState('');
  const [remember, setRemember] = useState(false);
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<ApiError | undefined>(undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    const t = value.trim();
    if (!t) return;
    setBusy(true);
    setErr(undefined);
    try {
      await loadMe(t); // checked before it is kept
      signIn(t, remember);
      onDone?.();
    } catch (x) {
      setErr(x instanceof ApiError ? x : undefined);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="stack">
      <label for={`${idPrefix}-token`}>Access token</label>
      <input
        id={`${idPrefix}-token`}
        type="password"
        autoComplete="off"
        spellcheck={false}
        value={value}
        onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        aria-describedby={`${idPrefix}-hint`}
        required
      />
      <p id={`${idPrefix}-hint`} class="muted small">
        A personal access token (<code>tgp_…</code>) or a JWT from your identity provider. It is kept in this tab's memory only.
      </p>
      <label class="check">
        <input type="checkbox" checked={remember} onChange={(e) => setRemember((e.target as HTMLInputElement).checked)} /> Remember in this browser tab until it closes
      </label>
      <ProblemView error={err} />
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

export function Login() {
  return (
    <main id="main" class="login">
      <h1>taugate console</h1>
      <TokenForm idPrefix="login" />
    </main>
  );
}

/** Shown over the page when the token stopped working (401): sign in again without losing the page. */
export function ReauthDialog() {
  return (
    <Dialog open title="Your session has ended" onClose={() => undefined}>
      <p>The gateway no longer accepts your token (it expired or was revoked). Sign in again to continue where you were.</p>
      <TokenForm idPrefix="reauth" onDone={() => (expired.value = false)} />
    </Dialog>
  );
}
