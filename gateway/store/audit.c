/* The audit trail. */
#include "store/audit.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/json_rows.h"

static tg_stmt_t stmt_append = TG_STMT(
    "INSERT INTO audit_log (subject, method, route, target, workspace, status, request_id, detail)"
    " VALUES ($1, $2, $3, $4, $5, $6::int, $7, $8::jsonb)");
/* Many entries in one statement, in the order given. */
static tg_stmt_t stmt_append_many = TG_STMT(
    "INSERT INTO audit_log (at, subject, method, route, target, workspace, status, request_id,"
    " detail) SELECT x.at, x.subject, x.method, x.route, x.target, x.workspace, x.status,"
    " x.request_id, x.detail FROM jsonb_to_recordset($1::jsonb) AS x(i int, at timestamptz,"
    " subject text, method text, route text, target text, workspace text, status int,"
    " request_id text, detail jsonb) ORDER BY x.i");
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

json_t *tg_store_audit_row(const tg_audit_entry_t *e, const char *at)
{
    json_t *detail = e->detail ? json_incref((json_t *)e->detail) : json_object();
    return json_pack("{s:s, s:s?, s:s, s:s, s:s, s:s?, s:i, s:s, s:o}", "at", at, "subject",
                     e->subject, "method", e->method, "route", e->route, "target", e->target,
                     "workspace", e->workspace, "status", e->status, "request_id", e->request_id,
                     "detail", detail);
}

tg_rc_e tg_store_audit_append_rows(tg_db_conn_t *conn, json_t *rows)
{
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
        json_object_set_new(row, "i", json_integer((json_int_t)i));
    char *text = json_dumps(rows, JSON_COMPACT);
    if (!text)
        return TG_EINTERNAL;
    const char *vals[] = {text};
    tg_rc_e rc = tg_db_run(conn, &stmt_append_many, 1, vals);
    free(text);
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
