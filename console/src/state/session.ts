// Who the token belongs to: their workspaces and whether they are a
// platform admin (the admin API answers them, 403 to others).
import { api, ok } from '../api/client';
import { ApiError } from '../api/problem';
import { me, type Me } from './auth';

/** Load who holds `withToken` (default: the kept token) and keep it in `me`. */
export async function loadMe(withToken?: string): Promise<Me> {
  const headers = withToken ? { Authorization: `Bearer ${withToken}` } : {};
  const adminProbe = ok(api.GET('/v1/admin/workspaces', { params: { query: { limit: 1 } }, headers })).then(
    () => true,
    (e: unknown) => {
      if (e instanceof ApiError && (e.status === 403 || e.status === 404)) return false;
      throw e;
    },
  );
  const [list, admin] = await Promise.all([ok(api.GET('/v1/workspaces', { headers })), adminProbe]);
  const m: Me = { admin, workspaces: list.items.map((w) => ({ name: w.name, role: w.role })) };
  me.value = m;
  return m;
}
