/* A metric series reduced to at most max_points (see metrics_series.h). */
#include "store/metrics_series.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/json_rows.h"

/* Metric values go out through json (not jsonb) so a float8 keeps its own
 * text form; times as store/metrics_store.c writes them. */
#define SERIES_TIME "to_char(m.at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

/* $1 run, $2 name, $3 attempt (0: all), $4 max_points. With n points and
 * n <= $4 every point is kept; otherwise bucket b = i * ($4 / 4) / n. */
static tg_stmt_t stmt_reduced = TG_STMT(
    "WITH p AS (SELECT id, value, row_number() OVER (ORDER BY id) - 1 AS i,"
    "   count(*) OVER () AS n FROM run_metrics"
    "  WHERE run_id = $1::uuid AND name = $2 AND ($3::int = 0 OR attempt = $3::int)),"
    " b AS (SELECT id, value, n, CASE WHEN n <= $4::int THEN i"
    "   ELSE i * greatest($4::int / 4, 1) / n END AS bucket FROM p),"
    " k AS (SELECT bool_or(value IS NULL) AS nf, min(id) AS first_id, max(id) AS last_id,"
    "   min(id) FILTER (WHERE value IS NULL) AS nf_first, max(id) FILTER (WHERE value IS NULL)"
    "   AS nf_last, (array_agg(id ORDER BY value, id) FILTER (WHERE value IS NOT NULL))[1] AS lo,"
    "   (array_agg(id ORDER BY value DESC, id) FILTER (WHERE value IS NOT NULL))[1] AS hi"
    "  FROM b GROUP BY bucket),"
    " keep AS (SELECT DISTINCT x AS id FROM k, LATERAL (VALUES (lo), (hi),"
    "   (CASE WHEN nf THEN nf_first ELSE first_id END),"
    "   (CASE WHEN nf THEN nf_last ELSE last_id END)) v(x) WHERE x IS NOT NULL)"
    " SELECT (SELECT coalesce(max(n), 0) FROM p)::text, coalesce(json_agg(json_build_object("
    "  'id', m.id, 'attempt', m.attempt, 'step', m.step, 'at', " SERIES_TIME ","
    "  'value', m.value, 'raw', m.raw) ORDER BY m.id), '[]')::text"
    " FROM run_metrics m JOIN keep USING (id)"
    " WHERE m.run_id = $1::uuid AND m.name = $2");

tg_rc_e tg_store_metric_series_reduced(tg_db_conn_t *conn, const char *run_id, const char *name,
                                       int attempt, int max_points, json_t **points,
                                       long long *total)
{
    char att[16], mp[16];
    snprintf(att, sizeof(att), "%d", attempt);
    snprintf(mp, sizeof(mp), "%d", max_points);
    const char *vals[] = {run_id, name, att, mp};
    *points = NULL;
    *total = 0;
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_reduced, 4, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 1) {
        *total = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        *points = json_loads(PQgetvalue(r, 0, 1), 0, NULL);
    }
    PQclear(r);
    return *points ? TG_OK : TG_EINTERNAL;
}
