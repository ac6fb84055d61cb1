// The typed API client: openapi-fetch over the types generated from
// openapi.yaml (src/api/schema.d.ts, `npm run gen`), with the token added
// and every non-2xx answer turned into an ApiError carrying its problem.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { authHeaders, expired, token } from '../state/auth';
import { ApiError, networkProblem, problemOf } from './problem';
import { noteResponse } from '../state/conn';

const auth: Middleware = {
  onRequest({ request }) {
    // A call may bring its own token (sign-in checks one before keeping it).
    for (const [k, v] of Object.entries(authHeaders())) if (!request.headers.has(k)) request.headers.set(k, v);
    return request;
  },
  onResponse({ request, response }) {
    noteResponse(true);
    if (response.status === 401 && token.value && request.headers.get('Authorization') === `Bearer ${token.value}`) expired.value = true;
    return response;
  },
  onError({ error }) {
    noteResponse(false);
    return networkProblem(error);
  },
};

export const api = createClient<paths>({ baseUrl: location.origin });
api.use(auth);

/** The data of an openapi-fetch answer, or throws its ApiError. */
export async function ok<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r;
  try {
    r = await p;
  } catch (e) {
    if (e instanceof ApiError) throw e;
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw networkProblem(e);
  }
  if (r.error !== undefined || !r.response.ok) throw problemOf(r.response, r.error);
  return r.data as T;
}

/** A raw fetch with the token (text logs, multipart, streams). Throws ApiError on non-2xx. */
export async function rawFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  for (const [k, v] of Object.entries(authHeaders())) headers.set(k, v);
  let res: Response;
  try {
    res = await fetch(path, { ...init, headers });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    noteResponse(false);
    throw networkProblem(e);
  }
  noteResponse(true);
  if (res.status === 401 && token.value) expired.value = true;
  if (!res.ok) {
    let body: unknown = null;
    try {
      body = await res.json();
    } catch {
      /* not JSON */
    }
    throw problemOf(res, body);
  }
  return res;
}
