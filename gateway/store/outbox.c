/* The outbox (see outbox.h). */
#include "store/outbox.h"

#include <stdio.h>

#include "store/json_rows.h"

static tg_stmt_t stmt_claim =
    TG_STMT("SELECT jsonb_build_object('id', o.id, 'run_id', o.run_id, 'attempt', o.attempt,"
            " 'action', o.action, 'tries', o.tries, 'state', r.state, 'manifests', r.manifests,"
            " 'namespace', a.namespace, 'object_name', a.object_name,"
            " 'object_kind', a.object_kind)"
            " FROM outbox o JOIN runs r ON r.id = o.run_id"
            " LEFT JOIN run_attempts a ON a.run_id = o.run_id AND a.attempt = o.attempt"
            /* in the order of the outbox_ready index (not_before, id), so
             * the first due rows end the scan: ordering by id alone sorted
             * every due row on each claim */
            " WHERE o.id IN (SELECT id FROM outbox WHERE not_before <= now()"
            "                ORDER BY not_before, id LIMIT $1::int FOR UPDATE SKIP LOCKED)"
            " ORDER BY o.not_before, o.id");
static tg_stmt_t stmt_done = TG_STMT("DELETE FROM outbox WHERE id = $1::bigint");
static tg_stmt_t stmt_retry =
    TG_STMT("UPDATE outbox SET tries = tries + 1, last_error = $3,"
            " not_before = now() + make_interval(secs => $2::double precision / 1000)"
            " WHERE id = $1::bigint");
static tg_stmt_t stmt_add =
    TG_STMT("INSERT INTO outbox (run_id, attempt, action) VALUES ($1::uuid, $2::int, $3)");
static tg_stmt_t stmt_add_after = TG_STMT(
    "INSERT INTO outbox (run_id, attempt, action, not_before)"
    " VALUES ($1::uuid, $2::int, $3, now() + make_interval(secs => $4::double precision / 1000))");
static tg_stmt_t stmt_drop_creates =
    /* Rows a submitter holds are skipped, never waited for: it locks outbox then
     * run, while a cancel holds the run; the submitter sees the state and the
     * queued delete cleans up whatever it created. */
    TG_STMT("DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE run_id = $1::uuid"
            " AND action IN ('create', 'retry') FOR UPDATE SKIP LOCKED)");

tg_rc_e tg_store_outbox_claim(tg_db_conn_t *conn, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", limit);
    const char *vals[] = {lim};
    return tg_db_json_all(conn, &stmt_claim, 1, vals, out);
}

tg_rc_e tg_store_outbox_done(tg_db_conn_t *conn, long id)
{
    char ids[24];
    snprintf(ids, sizeof(ids), "%ld", id);
    const char *vals[] = {ids};
    return tg_db_run(conn, &stmt_done, 1, vals);
}

tg_rc_e tg_store_outbox_retry(tg_db_conn_t *conn, long id, long delay_ms, const char *error)
{
    char ids[24], delay[24];
    snprintf(ids, sizeof(ids), "%ld", id);
    snprintf(delay, sizeof(delay), "%ld", delay_ms);
    const char *vals[] = {ids, delay, error};
    return tg_db_run(conn, &stmt_retry, 3, vals);
}

tg_rc_e tg_store_outbox_add(tg_db_conn_t *conn, const char *run_id, int attempt, const char *action)
{
    char a[16];
    snprintf(a, sizeof(a), "%d", attempt);
    const char *vals[] = {run_id, a, action};
    return tg_db_run(conn, &stmt_add, 3, vals);
}

tg_rc_e tg_store_outbox_add_after(tg_db_conn_t *conn, const char *run_id, int attempt,
                                  const char *action, long delay_ms)
{
    char a[16], delay[24];
    snprintf(a, sizeof(a), "%d", attempt);
    snprintf(delay, sizeof(delay), "%ld", delay_ms);
    const char *vals[] = {run_id, a, action, delay};
    return tg_db_run(conn, &stmt_add_after, 4, vals);
}

tg_rc_e tg_store_outbox_drop_creates(tg_db_conn_t *conn, const char *run_id)
{
    const char *vals[] = {run_id};
    return tg_db_run(conn, &stmt_drop_creates, 1, vals);
}
