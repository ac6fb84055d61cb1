// The shell: sign-in gate, header with workspace and settings, and the page
// the URL names.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { token, expired, me, isAdmin, signOut } from './state/auth';
import { loadMe } from './state/session';
import { path, match, href, navigate, loc } from './router';
import { connection } from './state/conn';
import { theme, zone, dark } from './state/prefs';
import { ApiError } from './api/problem';
import { ProblemView, Loading } from './ui/common';
import { Login, ReauthDialog } from './pages/Login';
import { Home } from './pages/Home';
import { Runs } from './pages/Runs';
import { RunPage } from './pages/RunPage';
import { lazy } from './ui/lazy';

const Submit = lazy(() => import('./pages/Submit').then((m) => m.Submit), 'the editor');
const Compare = lazy(() => import('./pages/Compare').then((m) => m.Compare), 'the comparison');
const Experiments = lazy(() => import('./pages/Experiments').then((m) => m.Experiments), 'experiments');
const QueuePage = lazy(() => import('./pages/Queue').then((m) => m.QueuePage), 'the queue');
const Quota = lazy(() => import('./pages/Quota').then((m) => m.Quota), 'quota');
const Tokens = lazy(() => import('./pages/Tokens').then((m) => m.Tokens), 'tokens');
const Settings = lazy(() => import('./pages/Settings').then((m) => m.Settings), 'settings');
const Admin = lazy(() => import('./pages/admin/Admin').then((m) => m.Admin), 'the admin pages');

interface Route {
  pattern: string;
  title: string;
  render(p: Record<string, string>): ComponentChildren;
}

const ROUTES: Route[] = [
  { pattern: '/w/:ws', title: 'Home', render: (p) => <Home ws={p['ws']!} /> },
  { pattern: '/w/:ws/runs', title: 'Runs', render: (p) => <Runs ws={p['ws']!} /> },
  { pattern: '/w/:ws/submit', title: 'Submit', render: (p) => <Submit ws={p['ws']!} /> },
  { pattern: '/w/:ws/compare', title: 'Compare', render: (p) => <Compare ws={p['ws']!} /> },
  { pattern: '/w/:ws/experiments', title: 'Experiments', render: (p) => <Experiments ws={p['ws']!} /> },
  { pattern: '/w/:ws/queue', title: 'Queue', render: (p) => <QueuePage ws={p['ws']!} /> },
  { pattern: '/w/:ws/quota', title: 'Quota', render: (p) => <Quota ws={p['ws']!} /> },
  { pattern: '/runs/:id', title: 'Run', render: (p) => <RunPage id={p['id']!} tab="overview" /> },
  { pattern: '/runs/:id/:tab', title: 'Run', render: (p) => <RunPage id={p['id']!} tab={p['tab']!} /> },
  { pattern: '/tokens', title: 'Tokens', render: () => <Tokens /> },
  { pattern: '/settings', title: 'Settings', render: () => <Settings /> },
];

/** The workspace the user is in: the one in the URL, else the last used, else the first. */
export function currentWorkspace(): string | undefined {
  const m = /^\/w\/([^/]+)/.exec(path.value);
  if (m) {
    sessionStorage.setItem('taugate.ws', decodeURIComponent(m[1]!));
    return decodeURIComponent(m[1]!);
  }
  const last = sessionStorage.getItem('taugate.ws');
  const list = me.value?.workspaces ?? [];
  if (last && list.some((w) => w.name === last)) return last;
  return list[0]?.name;
}

function Header() {
  const ws = currentWorkspace();
  const workspaces = me.value?.workspaces ?? [];
  const p = path.value;
  const link = (to: string, label: string, exact = false) => (
    <a href={href(to)} aria-current={(exact ? p === to : p === to || p.startsWith(to + '/')) ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <header class="top">
      <a class="brand" href={href(ws ? `/w/${ws}` : '/')}>
        taugate
      </a>
      {workspaces.length ? (
        <label class="ws-pick">
          <span class="sr-only">Workspace</span>
          <select
            value={ws}
            onChange={(e) => navigate(href(`/w/${(e.target as HTMLSelectElement).value}/runs`))}
          >
            {workspaces.map((w) => (
              <option key={w.name} value={w.name}>
                {w.name} ({w.role})
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <nav aria-label="Main" class="main-nav">
        {ws ? (
          <>
            {link(`/w/${ws}`, 'Home', true)}
            {link(`/w/${ws}/runs`, 'Runs')}
            {link(`/w/${ws}/submit`, 'Submit')}
            {link(`/w/${ws}/experiments`, 'Experiments')}
            {link(`/w/${ws}/queue`, 'Queue')}
            {link(`/w/${ws}/quota`, 'Quota')}
          </>
        ) : null}
        {link('/tokens', 'Tokens')}
        {isAdmin.value ? link('/admin', 'Admin') : null}
      </nav>
      <div class="top-right">
        <span class={`conn conn-${connection.value}`} role="status" aria-live="polite">
          {connection.value}
        </span>
        <button type="button" class="small" onClick={() => (theme.value = dark.value ? 'light' : 'dark')}>
          {dark.value ? 'Light theme' : 'Dark theme'}
        </button>
        <button type="button" class="small" onClick={() => (zone.value = zone.value === 'utc' ? 'local' : 'utc')}>
          {zone.value === 'utc' ? 'Local times' : 'UTC times'}
        </button>
        <a href={href('/settings')} class="small">
          Settings
        </a>
        <button
          type="button"
          class="small"
          onClick={() => {
            signOut();
            navigate(href('/login'));
          }}
        >
          Sign out
        </button>
      </div>
    </header>
  );
}

function Page() {
  const p = path.value;
  if (p === '/' || p === '' || p === '/login') {
    const ws = currentWorkspace();
    if (ws) navigate(href(`/w/${ws}`), { replace: true });
    else if (isAdmin.value) navigate(href('/admin'), { replace: true });
    return <p>You are not a member of any workspace yet. An admin can add you; meanwhile you can manage your <a href={href('/tokens')}>tokens</a>.</p>;
  }
  if (p === '/admin' || p.startsWith('/admin/')) return <Admin path={p} />;
  for (const r of ROUTES) {
    const m = match(r.pattern, p);
    if (m) return <>{r.render(m)}</>;
  }
  return (
    <div role="alert">
      <h1>Not found</h1>
      <p>
        The console has no page at <code>{href(p)}</code>. <a href={href('/')}>Go home</a>.
      </p>
    </div>
  );
}

export function App() {
  const [err, setErr] = useState<ApiError | undefined>(undefined);
  const t = token.value;
  useEffect(() => {
    if (!t) return;
    setErr(undefined);
    loadMe().catch((e: unknown) => setErr(e instanceof ApiError ? e : undefined));
  }, [t]);
  useEffect(() => {
    const titles: Record<string, string> = { '/tokens': 'Tokens', '/settings': 'Settings' };
    const seg = path.value.split('/').filter(Boolean);
    document.title = `${titles[path.value] ?? (seg.length ? seg.slice(-1)[0]!.replace(/^./, (c) => c.toUpperCase()) : 'Console')} · taugate`;
  }, [loc.value]);
  if (!t) return <Login />;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header />
      <main id="main" tabIndex={-1}>
        {err ? <ProblemView error={err} /> : me.value || /^\/(w|runs)\//.test(path.value) ? <Page /> : <Loading what="your workspaces" />}
      </main>
      {expired.value ? <ReauthDialog /> : null}
    </>
  );
}
