/* The audit trail: one append-only row per mutating request. */
#ifndef TG_STORE_AUDIT_H
#define TG_STORE_AUDIT_H

#include <jansson.h>

#include "store/pool.h"

typedef struct {
    const char *subject; /* NULL when unauthenticated */
    const char *method, *route, *target, *workspace, *request_id;
    int status;
    const json_t *detail; /* borrowed; NULL for {} */
} tg_audit_entry_t;

tg_rc_e tg_store_audit_append(tg_db_conn_t *conn, const tg_audit_entry_t *e) TG_MUSTCHECK;

/* The same entry as a row for tg_store_audit_append_rows, stamped `at`
 * (RFC 3339): a new reference, or NULL when a string is not UTF-8. */
json_t *tg_store_audit_row(const tg_audit_entry_t *e, const char *at);
/* Append rows (an array from tg_store_audit_row) in one statement, in
 * order. */
tg_rc_e tg_store_audit_append_rows(tg_db_conn_t *conn, json_t *rows) TG_MUSTCHECK;

typedef struct {
    const char *subject, *workspace, *since, *until;
    long before_id; /* cursor: entries with a smaller id; 0 from the newest */
    int limit;
} tg_audit_query_t;

/* Newest first: [{id, at, subject, method, route, target, workspace, status,
 * request_id, detail}]. */
tg_rc_e tg_store_audit_list(tg_db_conn_t *conn, const tg_audit_query_t *q,
                            json_t **out) TG_MUSTCHECK;

#endif
