// Platform administration: overview, the quota-request inbox, workspaces,
// catalog, policies, fleet and nodes, usage and the audit log.
import { api, ok } from '../../api/client';
import { useFetch } from '../../lib/data';
import { href, match } from '../../router';
import { ProblemView, Loading, Section, Time, UsageBar } from '../../ui/common';
import { lazy } from '../../ui/lazy';
import { Requests } from './Requests';
import { Workspaces, WorkspaceAdmin } from './Workspaces';

const Catalog = lazy(() => import('./Catalog').then((m) => m.Catalog), 'the catalog');
const Policies = lazy(() => import('./Policies').then((m) => m.Policies), 'policies');
const Nodes = lazy(() => import('./Nodes').then((m) => m.Nodes), 'nodes');
const NodePage = lazy(() => import('./Nodes').then((m) => m.NodePage), 'the node');
const Usage = lazy(() => import('./Usage').then((m) => m.Usage), 'usage');
const Audit = lazy(() => import('./Usage').then((m) => m.Audit), 'the audit log');

const SECTIONS = [
  ['/admin', 'Overview'],
  ['/admin/quota-requests', 'Quota requests'],
  ['/admin/workspaces', 'Workspaces'],
  ['/admin/catalog', 'Catalog'],
  ['/admin/policies', 'Policies'],
  ['/admin/nodes', 'Fleet and nodes'],
  ['/admin/usage', 'Usage'],
  ['/admin/audit', 'Audit log'],
] as const;

function Overview() {
  const fleet = useFetch((signal) => ok(api.GET('/v1/admin/fleet', { signal })), [], { pollMs: 15000 });
  const pending = useFetch((signal) => ok(api.GET('/v1/admin/quota-requests', { params: { query: { state: 'pending', limit: 200 } }, signal })), []);
  const drift = useFetch((signal) => ok(api.GET('/v1/admin/drift', { signal })), []);
  const audit = useFetch((signal) => ok(api.GET('/v1/admin/audit', { params: { query: { limit: 10 } }, signal })), []);
  const t = fleet.data?.totals;
  return (
    <>
      <div class="stats">
        <a class="stat" href={href('/admin/nodes')}>
          <span class="stat-n">{t ? `${t.healthy_nodes ?? 0}/${t.nodes}` : '…'}</span> healthy nodes
        </a>
        <a class="stat" href={href('/admin/nodes')}>
          <span class="stat-n">{t ? t.cordoned_nodes ?? 0 : '…'}</span> cordoned
        </a>
        <a class="stat" href={href('/admin/nodes')}>
          <span class="stat-n">{t ? `${t.gpus.allocated}/${t.gpus.allocatable}` : '…'}</span> GPUs allocated
        </a>
        <a class="stat" href={href('/admin/quota-requests')}>
          <span class="stat-n">{pending.data ? pending.data.items.length : '…'}</span> pending quota requests
        </a>
        <a class="stat" href={href('/admin/catalog')}>
          <span class="stat-n">{drift.data ? drift.data.items.filter((d) => !d.resolved_at).length : '…'}</span> drifted objects
        </a>
      </div>
      <ProblemView error={fleet.error ?? pending.error ?? drift.error} />
      {t ? (
        <Section title="GPU use">
          <UsageBar used={t.gpus.allocated} total={t.gpus.allocatable} label="GPUs allocated of allocatable" />
          <p class="muted small">Observed <Time at={fleet.data?.observed_at ?? null} />. {t.running_runs ?? 0} runs running.</p>
        </Section>
      ) : null}
      <Section title="Latest audit entries" actions={<a href={href('/admin/audit')}>The audit log</a>}>
        {!audit.data ? <Loading what="audit entries" /> : null}
        <ul class="plain">
          {audit.data?.items.map((a) => (
            <li key={a.id}>
              <Time at={a.at} /> {a.subject ?? 'anonymous'} {a.method} <code>{a.target}</code> → {a.status}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}

export function Admin({ path }: { path: string }) {
  let body;
  let m;
  if (path === '/admin') body = <Overview />;
  else if (path === '/admin/quota-requests') body = <Requests />;
  else if (path === '/admin/workspaces') body = <Workspaces />;
  else if ((m = match('/admin/workspaces/:ws', path))) body = <WorkspaceAdmin ws={m['ws']!} />;
  else if (path === '/admin/catalog') body = <Catalog />;
  else if (path === '/admin/policies') body = <Policies />;
  else if (path === '/admin/nodes') body = <Nodes />;
  else if ((m = match('/admin/nodes/:name', path))) body = <NodePage name={m['name']!} />;
  else if (path === '/admin/usage') body = <Usage />;
  else if (path === '/admin/audit') body = <Audit />;
  else body = <p role="alert">No admin page at {path}.</p>;
  const title = SECTIONS.find(([p]) => p === path)?.[1] ?? 'Administration';
  return (
    <div class="page admin">
      <nav class="tabs" aria-label="Administration">
        {SECTIONS.map(([p, label]) => (
          <a key={p} href={href(p)} aria-current={path === p || (p !== '/admin' && path.startsWith(p + '/')) ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <h1>{title}</h1>
      {body}
    </div>
  );
}
