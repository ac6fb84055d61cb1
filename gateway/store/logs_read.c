/* Reading stored logs (see logs_read.h). */
#include "store/logs_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/json_rows.h"

/* $1 run, $2 attempt, $3 pod or NULL, $4 container or NULL */
#define SEL_WHERE                                                                                  \
    " run_id = $1::uuid AND attempt = $2::int AND ($3::text IS NULL OR pod = $3)"                  \
    " AND ($4::text IS NULL OR container = $4)"

static tg_stmt_t stmt_streams = TG_STMT(
    "SELECT coalesce(jsonb_agg(jsonb_build_object('pod', pod, 'container', container, 'seq', 0)"
    " ORDER BY pod, container), '[]')"
    " FROM (SELECT p.pod, c.container FROM run_pods p"
    "  CROSS JOIN LATERAL unnest(p.containers) AS c(container)"
    "  WHERE p.run_id = $1::uuid AND p.attempt = $2::int"
    "  UNION SELECT DISTINCT pod, container FROM log_chunks"
    "  WHERE $5::boolean AND run_id = $1::uuid AND attempt = $2::int) s"
    " WHERE ($3::text IS NULL OR pod = $3) AND ($4::text IS NULL OR container = $4)");

static tg_stmt_t stmt_before = TG_STMT(
    "SELECT coalesce(jsonb_agg(jsonb_build_object('pod', pod, 'container', container, 'seq', s)),"
    " '[]') FROM (SELECT pod, container, max(seq) AS s FROM log_chunks WHERE" SEL_WHERE
    " AND id < $5::bigint GROUP BY pod, container) x");

static tg_stmt_t stmt_since = TG_STMT(
    "SELECT coalesce(jsonb_agg(jsonb_build_object('pod', pod, 'container', container, 'seq', s)),"
    " '[]') FROM (SELECT pod, container, max(seq) AS s FROM log_chunks WHERE" SEL_WHERE
    " AND coalesce(last_at, '-infinity') < $5::timestamptz GROUP BY pod, container) x");

static tg_stmt_t stmt_tail =
    TG_STMT("SELECT id, acc FROM (SELECT id, sum(lines) OVER (ORDER BY id DESC) AS acc"
            " FROM log_chunks WHERE" SEL_WHERE
            " AND ($5::timestamptz IS NULL OR coalesce(last_at, 'infinity') >= $5::timestamptz)) x"
            " WHERE acc >= $6::bigint ORDER BY id DESC LIMIT 1");

static tg_stmt_t stmt_fetch = TG_STMT(
    "SELECT id, pod, container, seq, content FROM ("
    " SELECT c.id, c.pod, c.container, c.seq, c.content,"
    "  sum(octet_length(c.content)) OVER (ORDER BY c.id) AS acc"
    " FROM jsonb_to_recordset($3::jsonb) AS p(pod text, container text, seq int)"
    " CROSS JOIN LATERAL (SELECT k.id, k.pod, k.container, k.seq, k.content FROM log_chunks k"
    "  WHERE k.run_id = $1::uuid AND k.attempt = $2::int AND k.pod = p.pod"
    "  AND k.container = p.container AND k.seq > p.seq ORDER BY k.seq LIMIT $4::int) c"
    " ORDER BY c.id LIMIT $4::int) x"
    " WHERE acc - octet_length(content) < $5::bigint ORDER BY id");

static tg_stmt_t stmt_complete = TG_STMT(
    "SELECT CASE WHEN EXISTS (SELECT 1 FROM run_pods WHERE run_id = $1::uuid"
    "   AND attempt = $2::int AND ($3::text IS NULL OR pod = $3) AND NOT log_done) THEN false"
    " ELSE EXISTS (SELECT 1 FROM runs r WHERE r.id = $1::uuid"
    "   AND (r.state IN ('Succeeded', 'Failed', 'Cancelled') OR r.attempt > $2::int"
    "    OR EXISTS (SELECT 1 FROM run_attempts a WHERE a.run_id = r.id AND a.attempt = $2::int"
    "     AND a.finished_at IS NOT NULL)))"
    " END");

static void sel_vals(const tg_log_sel_t *sel, char *att, size_t attlen, const char **vals)
{
    snprintf(att, attlen, "%d", sel->attempt);
    vals[0] = sel->run_id;
    vals[1] = att;
    vals[2] = sel->pod;
    vals[3] = sel->container;
}

tg_rc_e tg_store_log_streams(tg_db_conn_t *conn, const tg_log_sel_t *sel, int with_chunks,
                             json_t **out)
{
    char att[16];
    const char *vals[5];
    sel_vals(sel, att, sizeof(att), vals);
    vals[4] = with_chunks ? "true" : "false";
    return tg_db_json_one(conn, &stmt_streams, 5, vals, out);
}

tg_rc_e tg_store_log_positions_before(tg_db_conn_t *conn, const tg_log_sel_t *sel,
                                      long long before_id, json_t **out)
{
    char att[16], id[24];
    const char *vals[5];
    sel_vals(sel, att, sizeof(att), vals);
    snprintf(id, sizeof(id), "%lld", before_id);
    vals[4] = id;
    return tg_db_json_one(conn, &stmt_before, 5, vals, out);
}

tg_rc_e tg_store_log_positions_since(tg_db_conn_t *conn, const tg_log_sel_t *sel, const char *since,
                                     json_t **out)
{
    char att[16];
    const char *vals[5];
    sel_vals(sel, att, sizeof(att), vals);
    vals[4] = since;
    return tg_db_json_one(conn, &stmt_since, 5, vals, out);
}

tg_rc_e tg_store_log_tail_start(tg_db_conn_t *conn, const tg_log_sel_t *sel, long n,
                                const char *since, long long *start_id, long *skip)
{
    char att[16], nn[24];
    const char *vals[6];
    sel_vals(sel, att, sizeof(att), vals);
    snprintf(nn, sizeof(nn), "%ld", n);
    vals[4] = since;
    vals[5] = nn;
    *start_id = 0;
    *skip = 0;
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_tail, 6, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 1) {
        *start_id = atoll(PQgetvalue(r, 0, 0));
        *skip = atol(PQgetvalue(r, 0, 1)) - n;
    }
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_store_log_fetch(tg_db_conn_t *conn, const tg_log_sel_t *sel, const json_t *positions,
                           int max_rows, size_t max_bytes, tg_log_chunk_t **out, size_t *n)
{
    char att[16], rows[16], bytes[24];
    snprintf(att, sizeof(att), "%d", sel->attempt);
    snprintf(rows, sizeof(rows), "%d", max_rows);
    snprintf(bytes, sizeof(bytes), "%zu", max_bytes);
    char *pos = json_dumps(positions, JSON_COMPACT);
    const char *vals[] = {sel->run_id, att, pos ? pos : "[]", rows, bytes};
    tg_rc_e rc;
    *out = NULL;
    *n = 0;
    PGresult *r = tg_db_exec(conn, &stmt_fetch, 5, vals, &rc);
    free(pos);
    if (!r)
        return rc;
    int nr = PQntuples(r);
    tg_log_chunk_t *c = tg_xcalloc(nr ? (size_t)nr : 1, sizeof(*c));
    for (int i = 0; i < nr; i++) {
        c[i].id = atoll(PQgetvalue(r, i, 0));
        c[i].pod = tg_xstrdup(PQgetvalue(r, i, 1));
        c[i].container = tg_xstrdup(PQgetvalue(r, i, 2));
        c[i].seq = atol(PQgetvalue(r, i, 3));
        c[i].len = (size_t)PQgetlength(r, i, 4);
        c[i].content = tg_xstrndup(PQgetvalue(r, i, 4), c[i].len);
    }
    PQclear(r);
    *out = c;
    *n = (size_t)nr;
    return TG_OK;
}

void tg_log_chunks_free(tg_log_chunk_t *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].pod);
        free(c[i].container);
        free(c[i].content);
    }
    free(c);
}

tg_rc_e tg_store_log_complete(tg_db_conn_t *conn, const tg_log_sel_t *sel, int *complete)
{
    char att[16];
    const char *vals[4];
    sel_vals(sel, att, sizeof(att), vals);
    tg_rc_e rc;
    *complete = 0;
    PGresult *r = tg_db_exec(conn, &stmt_complete, 3, vals, &rc);
    if (!r)
        return rc;
    *complete = PQntuples(r) == 1 && !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    return TG_OK;
}
