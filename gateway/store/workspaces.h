/* Workspaces in PostgreSQL. Values in and out are JSON objects with the
 * columns of the workspaces table. */
#ifndef TG_STORE_WORKSPACES_H
#define TG_STORE_WORKSPACES_H

#include <jansson.h>

#include "store/pool.h"

/* Up to `limit` workspaces after `after` (a name; NULL from the start). */
tg_rc_e tg_store_workspaces_list(tg_db_conn_t *conn, const char *after, int limit,
                                 json_t **out) TG_MUSTCHECK;
tg_rc_e tg_store_workspace_get(tg_db_conn_t *conn, const char *name, json_t **out) TG_MUSTCHECK;
/* TG_ECONFLICT when the name or namespace is taken. */
tg_rc_e tg_store_workspace_insert(tg_db_conn_t *conn, const json_t *ws, json_t **out) TG_MUSTCHECK;
/* Merge `patch` into the stored row (a JSON null clears a field). */
tg_rc_e tg_store_workspace_update(tg_db_conn_t *conn, const char *name, const json_t *patch,
                                  json_t **out) TG_MUSTCHECK;
/* TG_ECONFLICT while runs of the workspace exist (they are evidence). */
tg_rc_e tg_store_workspace_delete(tg_db_conn_t *conn, const char *name) TG_MUSTCHECK;

#endif
