/* The run change log, read up to the horizon (see run_changes.h). */
#include "store/run_changes.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/mem.h"
#include "store/json_rows.h"

static tg_stmt_t stmt_seq =
    TG_STMT("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM run_changes_id_seq");
/* xid8 values as text: they are 64-bit and never wrap */
static tg_stmt_t stmt_snapshot = TG_STMT(
    "SELECT pg_snapshot_xmin(s)::text, pg_snapshot_xmax(s)::text FROM pg_current_snapshot() s");
static tg_stmt_t stmt_pruned = TG_STMT("SELECT upto FROM run_changes_pruned");
/* The runs row gives name, owner and engine, which never change. */
static tg_stmt_t stmt_fetch =
    TG_STMT("SELECT c.id, json_build_object('id', c.id, 'kind', c.kind, 'run_id', c.run_id,"
            " 'workspace', c.workspace, 'name', r.name, 'owner', r.owner, 'engine', r.engine,"
            " 'state', c.state, 'reason', c.reason, 'message', c.message, 'attempt', c.attempt,"
            " 'previous', CASE WHEN c.kind = 'created' THEN NULL ELSE json_build_object("
            "   'state', c.prev_state, 'reason', c.prev_reason, 'attempt', c.prev_attempt) END,"
            " 'at', c.at)::text"
            " FROM run_changes c JOIN runs r ON r.id = c.run_id"
            " WHERE c.workspace = $1 AND c.id > $2::bigint AND c.id <= $3::bigint"
            " ORDER BY c.id LIMIT $4::int");
/* From the bottom of the id order, so each call is one short index range. */
static tg_stmt_t stmt_prune =
    TG_STMT("WITH d AS (DELETE FROM run_changes WHERE id IN (SELECT id FROM run_changes"
            "   ORDER BY id LIMIT $2::int)"
            "  AND at < now() - make_interval(secs => $1::double precision) RETURNING id),"
            " m AS (SELECT max(id) AS upto, count(*) AS n FROM d),"
            " u AS (UPDATE run_changes_pruned p SET upto = greatest(p.upto, m.upto) FROM m"
            "  WHERE m.upto IS NOT NULL)"
            " SELECT n FROM m");

void tg_run_changes_horizon_init(tg_run_changes_horizon_t *h)
{
    h->horizon = -1;
    h->pending = 0;
    h->pending_seq = h->pending_xmax = 0;
}

/* One row of two bigint-like text columns (an xid8 fits a signed 64-bit
 * integer for the next few million years). */
static tg_rc_e changes_two(tg_db_conn_t *conn, tg_stmt_t *stmt, long long *a, long long *b)
{
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, stmt, 0, NULL, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return TG_EINTERNAL;
    }
    *a = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    if (b)
        *b = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_store_run_changes_advance(tg_db_conn_t *conn, tg_run_changes_horizon_t *h)
{
    long long xmin = 0, xmax = 0, seq = 0;
    tg_rc_e rc = TG_OK;
    if (h->pending) {
        rc = changes_two(conn, &stmt_snapshot, &xmin, &xmax);
        if (rc != TG_OK)
            return rc;
        if (xmin >= h->pending_xmax) {
            if (h->pending_seq > h->horizon)
                h->horizon = h->pending_seq;
            h->pending = 0;
        }
    }
    if (h->pending)
        return TG_OK; /* a transaction of the last look is still open */
    /* the sequence first, then a snapshot taken after it */
    rc = changes_two(conn, &stmt_seq, &seq, NULL);
    if (rc == TG_OK)
        rc = changes_two(conn, &stmt_snapshot, &xmin, &xmax);
    if (rc != TG_OK)
        return rc;
    if (xmin >= xmax) { /* nothing was running: final now */
        if (seq > h->horizon)
            h->horizon = seq;
    } else {
        h->pending = 1;
        h->pending_seq = seq;
        h->pending_xmax = xmax;
    }
    return TG_OK;
}

tg_rc_e tg_store_run_changes_pruned(tg_db_conn_t *conn, long long *upto)
{
    *upto = 0;
    return changes_two(conn, &stmt_pruned, upto, NULL);
}

tg_rc_e tg_store_run_changes_fetch(tg_db_conn_t *conn, const char *workspace, long long after,
                                   long long upto, int limit, tg_run_change_row_t **rows, size_t *n)
{
    char a[24], u[24], l[16];
    snprintf(a, sizeof(a), "%lld", after);
    snprintf(u, sizeof(u), "%lld", upto);
    snprintf(l, sizeof(l), "%d", limit);
    const char *vals[] = {workspace, a, u, l};
    *rows = NULL;
    *n = 0;
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_fetch, 4, vals, &rc);
    if (!r)
        return rc;
    int nt = PQntuples(r);
    if (nt > 0) {
        *rows = tg_xcalloc((size_t)nt, sizeof(**rows));
        for (int i = 0; i < nt; i++) {
            (*rows)[i].id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
            (*rows)[i].json = tg_json_text_compact(tg_xstrdup(PQgetvalue(r, i, 1)));
        }
        *n = (size_t)nt;
    }
    PQclear(r);
    return TG_OK;
}

void tg_store_run_changes_free(tg_run_change_row_t *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(rows[i].json);
    free(rows);
}

tg_rc_e tg_store_run_changes_prune(tg_db_conn_t *conn, long retention_s, int batch, long *deleted)
{
    char s[24], b[16];
    snprintf(s, sizeof(s), "%ld", retention_s);
    snprintf(b, sizeof(b), "%d", batch);
    const char *vals[] = {s, b};
    *deleted = 0;
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_prune, 2, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 1)
        *deleted = strtol(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return TG_OK;
}
