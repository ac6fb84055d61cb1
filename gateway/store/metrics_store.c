/* Reading reported metrics and checkpoints (see metrics_store.h). */
#include "store/metrics_store.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/json_rows.h"

/* Metric values go out through json (not jsonb) so a float8 keeps its own
 * text form (1e+300), which jansson reads as a real. */
#define TIME_JSON(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

static tg_stmt_t stmt_summaries = TG_STMT(
    "SELECT coalesce(json_agg(s ORDER BY s->>'name'), '[]') FROM ("
    " SELECT json_build_object('name', name, 'count', count(*),"
    "  'non_finite', count(*) FILTER (WHERE value IS NULL),"
    "  'min', min(value), 'max', max(value), 'min_step', min(step), 'max_step', max(step),"
    "  'latest', (array_agg(json_build_object('attempt', attempt, 'step', step,"
    "   'at', " TIME_JSON(
        "at") ", 'value', value, 'raw', raw)"
              "   ORDER BY attempt DESC, at DESC, id DESC))[1]) AS s"
              " FROM run_metrics WHERE run_id = $1::uuid AND ($2::int = 0 OR attempt = $2::int)"
              " GROUP BY name) x");

static tg_stmt_t stmt_points =
    TG_STMT("SELECT coalesce(json_agg(json_build_object('id', id, 'attempt', attempt, 'step', step,"
            " 'at', " TIME_JSON(
                "at") ", 'value', value, 'raw', raw) ORDER BY id), '[]')"
                      " FROM (SELECT * FROM run_metrics WHERE run_id = $1::uuid AND name = $2"
                      "  AND ($3::int = 0 OR attempt = $3::int) AND id > $4::bigint ORDER BY id "
                      "LIMIT $5::int) x");

static tg_stmt_t stmt_checkpoints = TG_STMT(
    "SELECT coalesce(jsonb_agg(jsonb_build_object('attempt', attempt, 'items', items)"
    " ORDER BY attempt DESC), '[]') FROM ("
    " SELECT attempt, jsonb_agg(jsonb_build_object('path', path, 'step', step,"
    "  'at', " TIME_JSON("at") ") ORDER BY at DESC, step DESC NULLS LAST, path) AS items"
                               " FROM run_checkpoints WHERE run_id = $1::uuid GROUP BY attempt) x");

static tg_stmt_t stmt_latest =
    TG_STMT("SELECT path FROM run_checkpoints WHERE run_id = $1::uuid"
            " ORDER BY at DESC, attempt DESC, step DESC NULLS LAST LIMIT 1");

tg_rc_e tg_store_metric_summaries(tg_db_conn_t *conn, const char *run_id, int attempt, json_t **out)
{
    char att[16];
    snprintf(att, sizeof(att), "%d", attempt);
    const char *vals[] = {run_id, att};
    return tg_db_json_one(conn, &stmt_summaries, 2, vals, out);
}

tg_rc_e tg_store_metric_points(tg_db_conn_t *conn, const char *run_id, const char *name,
                               int attempt, long long after_id, int limit, json_t **out)
{
    char att[16], after[24], lim[16];
    snprintf(att, sizeof(att), "%d", attempt);
    snprintf(after, sizeof(after), "%lld", after_id);
    snprintf(lim, sizeof(lim), "%d", limit);
    const char *vals[] = {run_id, name, att, after, lim};
    return tg_db_json_one(conn, &stmt_points, 5, vals, out);
}

tg_rc_e tg_store_checkpoints_list(tg_db_conn_t *conn, const char *run_id, json_t **out)
{
    const char *vals[] = {run_id};
    return tg_db_json_one(conn, &stmt_checkpoints, 1, vals, out);
}

tg_rc_e tg_store_checkpoint_latest(tg_db_conn_t *conn, const char *run_id, char **path)
{
    const char *vals[] = {run_id};
    tg_rc_e rc;
    *path = NULL;
    PGresult *r = tg_db_exec(conn, &stmt_latest, 1, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 1)
        *path = tg_xstrdup(PQgetvalue(r, 0, 0));
    else
        rc = TG_ENOTFOUND;
    PQclear(r);
    return rc;
}
