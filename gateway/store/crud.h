/* Create/read/list/update/delete for tables that hold one admin resource per
 * row, keyed by name (optionally under a parent, the workspace).
 *
 * Every statement answers with to_jsonb of the row, so the API layer sees
 * JSON objects whose fields are the table's columns. Statements take:
 *   list   ([parent,] after, limit)      get    ([parent,] key)
 *   insert ([parent,] doc jsonb)          update ([parent,] key, patch jsonb)
 *   delete ([parent,] key)
 * where [parent,] is present for nested resources. A JSON null in a patch
 * clears a column; a missing field keeps it. */
#ifndef TG_STORE_CRUD_H
#define TG_STORE_CRUD_H

#include <jansson.h>

#include "store/pool.h"

typedef struct tg_crud_stmts_s {
    int nested;
    tg_stmt_t list, get, insert, update, del;
} tg_crud_stmts_t;

tg_rc_e tg_store_crud_list(tg_db_conn_t *conn, tg_crud_stmts_t *s, const char *parent,
                           const char *after, int limit, json_t **out) TG_MUSTCHECK;
tg_rc_e tg_store_crud_get(tg_db_conn_t *conn, tg_crud_stmts_t *s, const char *parent,
                          const char *key, json_t **out) TG_MUSTCHECK;
/* TG_ECONFLICT on a duplicate key; TG_EUNPROCESSABLE when a reference
 * (the parent, a queue...) does not exist. */
tg_rc_e tg_store_crud_insert(tg_db_conn_t *conn, tg_crud_stmts_t *s, const char *parent,
                             const json_t *doc, json_t **out) TG_MUSTCHECK;
tg_rc_e tg_store_crud_update(tg_db_conn_t *conn, tg_crud_stmts_t *s, const char *parent,
                             const char *key, const json_t *patch, json_t **out) TG_MUSTCHECK;
/* TG_ECONFLICT when other rows still reference it. */
tg_rc_e tg_store_crud_delete(tg_db_conn_t *conn, tg_crud_stmts_t *s, const char *parent,
                             const char *key) TG_MUSTCHECK;

#endif
