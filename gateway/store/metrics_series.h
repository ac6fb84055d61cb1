/* One metric series reduced on the server for a chart (GET
 * /v1/runs/{id}/metrics?name=...&max_points=N).
 *
 * A series of at most N points comes whole. A longer one is cut into N/4
 * buckets of consecutive points (by stored order); each bucket keeps its
 * lowest and highest finite values, and its first and last points, or, when
 * it holds non-finite values (NaN, infinities: value null, raw set), its
 * first and last non-finite points in their place. So at most N points come
 * back, the series' extremes are always among them, and no non-finite value
 * disappears from view. One statement; the bucket aggregates read the
 * (run_id, name, id) index once.
 *
 * Ownership: *points is a new reference owned by the caller. */
#ifndef TG_STORE_METRICS_SERIES_H
#define TG_STORE_METRICS_SERIES_H

#include <jansson.h>

#include "store/pool.h"

/* *points: [{id, attempt, step, at, value, raw}] in stored order; *total:
 * the series' length. attempt 0: every attempt. */
tg_rc_e tg_store_metric_series_reduced(tg_db_conn_t *conn, const char *run_id, const char *name,
                                       int attempt, int max_points, json_t **points,
                                       long long *total) TG_MUSTCHECK;

#endif
