// Workspaces, and per workspace its members and LocalQueues.
import { href } from '../../router';
import { Crud } from './Crud';

const s = (v: unknown) => (v === null || v === undefined ? '—' : Array.isArray(v) ? v.join(', ') : String(v));

export function Workspaces() {
  return (
    <Crud
      title="Workspaces"
      collection="/v1/admin/workspaces"
      keyOf={(w) => String(w['name'])}
      immutable={['name']}
      template={{ name: 'new-workspace', namespace: 'new-workspace', default_queue: null }}
      columns={[
        { label: 'Name', cell: (w) => <a href={href(`/admin/workspaces/${String(w['name'])}`)}>{String(w['name'])}</a> },
        { label: 'Namespace', cell: (w) => s(w['namespace']) },
        { label: 'Default queue', cell: (w) => s(w['default_queue']) },
        { label: 'Default profile', cell: (w) => s(w['default_profile']) },
        { label: 'Log retention (days)', cell: (w) => s(w['log_retention_days']) },
      ]}
    />
  );
}

export function WorkspaceAdmin({ ws }: { ws: string }) {
  return (
    <>
      <p>
        <a href={href('/admin/workspaces')}>All workspaces</a> / {ws} · <a href={href(`/w/${ws}`)}>its home</a>
      </p>
      <Crud
        title="Members"
        collection={`/v1/admin/workspaces/${ws}/members`}
        keyOf={(m) => String(m['id'])}
        immutable={['id', 'workspace', 'kind', 'subject']}
        template={{ kind: 'user', subject: 'someone', role: 'researcher' }}
        columns={[
          { label: 'Kind', cell: (m) => s(m['kind']) },
          { label: 'Subject', cell: (m) => s(m['subject']) },
          { label: 'Role', cell: (m) => s(m['role']) },
        ]}
      />
      <Crud
        title="Queues"
        collection={`/v1/admin/workspaces/${ws}/queues`}
        keyOf={(q) => String(q['name'])}
        immutable={['name', 'workspace']}
        template={{ name: 'new-queue', cluster_queue: 'cluster-queue' }}
        columns={[
          { label: 'LocalQueue', cell: (q) => s(q['name']) },
          { label: 'ClusterQueue', cell: (q) => s(q['cluster_queue']) },
        ]}
      />
    </>
  );
}
