// RFC 9457 problems as the console shows them: title, detail, the request id
// (instance / X-Request-Id) and every errors[] entry with its line:column.
import type { components } from './schema';

export type Problem = components['schemas']['Problem'];
export type Diagnostic = components['schemas']['Diagnostic'];

export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;
  readonly requestId: string;

  constructor(status: number, problem: Problem, requestId: string) {
    super(`${problem.title}: ${problem.detail}`);
    this.status = status;
    this.problem = problem;
    this.requestId = requestId;
  }
}

function isProblem(v: unknown): v is Problem {
  return typeof v === 'object' && v !== null && 'status' in v && 'title' in v;
}

/** The error an answer that is not 2xx stands for; `body` is its parsed JSON when it had one. */
export function problemOf(res: Response, body: unknown): ApiError {
  const rid = res.headers.get('X-Request-Id') ?? '';
  if (isProblem(body)) return new ApiError(res.status, { ...body, instance: body.instance || rid }, rid);
  return new ApiError(
    res.status,
    { type: 'about:blank', title: res.statusText || `HTTP ${res.status}`, status: res.status, detail: `the server answered ${res.status}`, instance: rid },
    rid,
  );
}

/** A failure before any answer (offline, connection cut) as a problem. */
export function networkProblem(err: unknown): ApiError {
  const detail = err instanceof Error ? err.message : String(err);
  return new ApiError(0, { type: 'about:blank', title: 'Network error', status: 0, detail: `the gateway could not be reached (${detail})`, instance: '' }, '');
}
