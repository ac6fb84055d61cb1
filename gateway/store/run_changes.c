/* The run change log, read up to the horizon (see run_changes.h). */
#include "store/run_changes.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/mem.h"
#include "store/json_rows.h"

static tg_stmt_t stmt_seq =
    TG_STMT("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM run_changes_id_seq");
/* xid8 values as text: they are 64-bit and never wrap. The id is assigned
 * (and committed with the statement): it is above every id handed out
 * before, which a snapshot's xmax is not (see run_changes.h). */
static tg_stmt_t stmt_xid = TG_STMT("SELECT pg_current_xact_id()::text");
static tg_stmt_t stmt_xmin = TG_STMT("SELECT pg_snapshot_xmin(pg_current_snapshot())::text");
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
    h->pending_seq = h->pending_xid = 0;
}

/* The first column of a one-row result as an integer (an xid8 fits a signed
 * 64-bit integer for the next few million years). */
static tg_rc_e changes_one(tg_db_conn_t *conn, tg_stmt_t *stmt, long long *out)
{
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, stmt, 0, NULL, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return TG_EINTERNAL;
    }
    *out = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return TG_OK;
}

/* Step 2 of run_changes.h: once every transaction below the pending X has
 * ended, the pending S is final. */
static tg_rc_e changes_settle(tg_db_conn_t *conn, tg_run_changes_horizon_t *h)
{
    long long xmin = 0;
    tg_rc_e rc = changes_one(conn, &stmt_xmin, &xmin);
    if (rc == TG_OK && xmin >= h->pending_xid) {
        if (h->pending_seq > h->horizon)
            h->horizon = h->pending_seq;
        h->pending = 0;
    }
    return rc;
}

tg_rc_e tg_store_run_changes_advance(tg_db_conn_t *conn, tg_run_changes_horizon_t *h)
{
    tg_rc_e rc = TG_OK;
    if (h->pending) {
        rc = changes_settle(conn, h);
        if (rc != TG_OK || h->pending)
            return rc; /* a transaction older than the last look is still open */
    }
    long long seq = 0, xid = 0;
    rc = changes_one(conn, &stmt_seq, &seq);
    if (rc != TG_OK || seq <= h->horizon)
        return rc; /* nothing new: no transaction id spent */
    /* step 1: the sequence first, then an id assigned after it */
    rc = changes_one(conn, &stmt_xid, &xid);
    if (rc != TG_OK)
        return rc;
    h->pending = 1;
    h->pending_seq = seq;
    h->pending_xid = xid;
    return changes_settle(conn, h); /* at once when nothing older is open */
}

tg_rc_e tg_store_run_changes_pruned(tg_db_conn_t *conn, long long *upto)
{
    *upto = 0;
    return changes_one(conn, &stmt_pruned, upto);
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
