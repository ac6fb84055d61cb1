/* GET /v1/runs/{id}/logs: a run's stored pod logs, plain or as Server-Sent
 * Events, optionally followed as they arrive.
 *
 * Query parameters (all optional):
 *   follow=true|false   keep streaming new lines until the attempt's log is
 *                       complete (every pod log_done and the attempt over),
 *                       or no line came for the idle timeout
 *   tail=N              only the last N stored lines (0..10000000), then new
 *                       ones with follow
 *   since=T             lines at or after T: RFC 3339 ("2026-01-02T03:04:05Z")
 *                       or a Go duration back from now ("10m", "1h30m")
 *   attempt=N           which attempt (default: the run's current attempt)
 *   pod=NAME, container=NAME   only that pod / container
 *   timestamps=true     keep each line's kubelet RFC3339Nano timestamp
 *   prefix=true|false   prefix lines with "[pod/container] " (default: when
 *                       the selection covers more than one container)
 *
 * Answers. text/plain; charset=utf-8 (one log line per line), or with
 * "Accept: text/event-stream" SSE: one event per stored chunk, `id:` the
 * chunk id and one `data:` line per log line (a CR inside a line becomes a
 * space), and a final `event: end` with data {"reason": "complete" | "idle" |
 * "shutdown" | "overflow"} when the stream ends on purpose. A client that
 * reconnects with `Last-Event-ID: <id>` resumes after that chunk (tail is
 * then ignored; since and the filters still apply). Lines are ordered by
 * chunk id: one container's lines keep their order; lines of different
 * containers interleave by when they were stored.
 *
 * Errors: 400 (every bad parameter listed in errors[]), 404 (no such run, or
 * another tenant's), 503 (database away, log streaming not running, or too
 * many followers; Retry-After set).
 *
 * Streaming never holds an HTTP worker thread: see api/run_logs_stream.h. */
#ifndef TG_API_RUN_LOGS_H
#define TG_API_RUN_LOGS_H

#include "http/request.h"

void tg_api_run_logs(tg_req_t *req);

#endif
