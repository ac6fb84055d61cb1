/* Reading a run's reported metrics and checkpoints (tables run_metrics and
 * run_checkpoints, written by the log collector from marker lines).
 *
 * Ownership: JSON results are new references owned by the caller. */
#ifndef TG_STORE_METRICS_STORE_H
#define TG_STORE_METRICS_STORE_H

#include <jansson.h>

#include "core/mem.h"
#include "store/pool.h"

/* One summary per metric name, sorted by name:
 *   {name, count, non_finite, min, max, min_step, max_step,
 *    latest: {attempt, step, at, value, raw}}
 * min/max over finite values (null when none); latest is the point of the
 * newest attempt with the newest time (then the last stored). attempt 0
 * means every attempt. */
tg_rc_e tg_store_metric_summaries(tg_db_conn_t *conn, const char *run_id, int attempt,
                                  json_t **out) TG_MUSTCHECK;

/* The points of one metric in the order they were stored, after point id
 * `after_id` (0: from the first), at most `limit`: an array of
 * {id, attempt, step, at, value, raw} (value null and raw set for
 * non-finite points). attempt 0 means every attempt. */
tg_rc_e tg_store_metric_points(tg_db_conn_t *conn, const char *run_id, const char *name,
                               int attempt, long long after_id, int limit,
                               json_t **out) TG_MUSTCHECK;

/* Checkpoints grouped by attempt, newest attempt first, each newest first:
 * [{attempt, items: [{path, step, at}]}]. */
tg_rc_e tg_store_checkpoints_list(tg_db_conn_t *conn, const char *run_id,
                                  json_t **out) TG_MUSTCHECK;

/* The path of the run's newest checkpoint over all attempts (by report time,
 * then step), for TAU_RESUME_FROM. *path is malloc'd (caller frees).
 * TG_ENOTFOUND when the run reported none. */
tg_rc_e tg_store_checkpoint_latest(tg_db_conn_t *conn, const char *run_id,
                                   char **path) TG_MUSTCHECK;

#endif
