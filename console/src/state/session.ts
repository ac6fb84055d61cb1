// Who the token belongs to: their workspaces and whether they are a
// platform admin (the admin API answers them, 403 to others).
import { api, ok } from '../api/client';
import { ApiError } from '../api/problem';
import { me, type Me } from './auth';

export async function loadMe(): Promise<Me> {
  const adminProbe = ok(api.GET('/v1/admin/workspaces', { params: { query: { limit: 1 } } })).then(
    () => true,
    (e: unknown) => {
      if (e instanceof ApiError && (e.status === 403 || e.status === 404)) return false;
      throw e;
    },
  );
  const [list, admin] = await Promise.all([ok(api.GET('/v1/workspaces')), adminProbe]);
  const m: Me = { admin, workspaces: list.items.map((w) => ({ name: w.name, role: w.role })) };
  me.value = m;
  return m;
}
