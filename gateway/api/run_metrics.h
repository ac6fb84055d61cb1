/* A run's reported metrics and checkpoints (from TAU_METRIC and
 * TAU_CHECKPOINT marker lines; see docs/workload-markers.md).
 *
 * GET /v1/runs/{id}/metrics[?attempt=N]
 *   200 {"items": [{name, count, non_finite, min, max, min_step, max_step,
 *                   latest: {attempt, step, at, value, raw}}]}
 *   min/max are over finite values; a non-finite point has value null and
 *   raw set to what the workload wrote ("NaN", "inf"...).
 * GET /v1/runs/{id}/metrics?name=X[&attempt=N][&limit=L][&cursor=C]
 *   200 {"name": X, "items": [{id, attempt, step, at, value, raw}],
 *        "next_cursor": C | null}   points in the order they were stored;
 *   limit 1..5000 (default 1000).
 * GET /v1/runs/{id}/checkpoints
 *   200 {"latest": {path} | null,
 *        "items": [{attempt, items: [{path, step, at}]}]}
 *   attempts newest first, each attempt's checkpoints newest first.
 *
 * Errors: 400 (bad parameters, all listed), 404 (no such run or another
 * tenant's), 503 (database). */
#ifndef TG_API_RUN_METRICS_H
#define TG_API_RUN_METRICS_H

#include "http/request.h"

void tg_api_run_metrics(tg_req_t *req);
void tg_api_run_checkpoints(tg_req_t *req);

#endif
