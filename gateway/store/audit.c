/* The audit trail. */
#include "store/audit.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/json_rows.h"

static tg_stmt_t stmt_append = TG_STMT(
    "INSERT INTO audit_log (subject, method, route, target, workspace, status, request_id, detail)"
    " VALUES ($1, $2, $3, $4, $5, $6::int, $7, $8::jsonb)");
static tg_stmt_t stmt_list = TG_STMT(
    "SELECT to_jsonb(a) FROM (SELECT id, at, subject, method, route, target, workspace, status,"
    " request_id, detail FROM audit_log"
    " WHERE ($1::text IS NULL OR subject = $1) AND ($2::text IS NULL OR workspace = $2)"
    " AND ($3::timestamptz IS NULL OR at >= $3::timestamptz)"
    " AND ($4::timestamptz IS NULL OR at < $4::timestamptz)"
    " AND ($5::bigint = 0 OR id < $5::bigint)"
    " ORDER BY id DESC LIMIT $6::int) a");

tg_rc_e tg_store_audit_append(tg_db_conn_t *conn, const tg_audit_entry_t *e)
{
    char status[16];
    snprintf(status, sizeof(status), "%d", e->status);
    char *detail = e->detail ? json_dumps(e->detail, JSON_COMPACT) : NULL;
    const char *vals[] = {e->subject,   e->method, e->route,      e->target,
                          e->workspace, status,    e->request_id, detail ? detail : "{}"};
    tg_rc_e rc = tg_db_run(conn, &stmt_append, 8, vals);
    free(detail);
    return rc;
}

tg_rc_e tg_store_audit_list(tg_db_conn_t *conn, const tg_audit_query_t *q, json_t **out)
{
    char before[24], lim[16];
    snprintf(before, sizeof(before), "%ld", q->before_id);
    snprintf(lim, sizeof(lim), "%d", q->limit);
    const char *vals[] = {q->subject, q->workspace, q->since, q->until, before, lim};
    return tg_db_json_all(conn, &stmt_list, 6, vals, out);
}
