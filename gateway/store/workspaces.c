/* Workspaces in PostgreSQL. */
#include "store/workspaces.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/json_rows.h"

#define WS_COLUMNS                                                                                 \
    "name, namespace, default_queue, default_priority, default_profile, output_root, "            \
    "ttl_seconds, log_retention_days, pvcs, created_at, updated_at"

static tg_stmt_t stmt_list =
    TG_STMT("SELECT to_jsonb(w) FROM (SELECT " WS_COLUMNS " FROM workspaces"
            " WHERE $1::text IS NULL OR name > $1 ORDER BY name LIMIT $2::int) w");
static tg_stmt_t stmt_get =
    TG_STMT("SELECT to_jsonb(w) FROM (SELECT " WS_COLUMNS " FROM workspaces WHERE name = $1) w");
static tg_stmt_t stmt_insert = TG_STMT(
    "WITH r AS (SELECT * FROM jsonb_populate_record(NULL::workspaces, $1::jsonb)),"
    " ins AS (INSERT INTO workspaces (name, namespace, default_queue, default_priority,"
    "   default_profile, output_root, ttl_seconds, log_retention_days, pvcs)"
    "  SELECT name, namespace, default_queue, default_priority, default_profile, output_root,"
    "   ttl_seconds, COALESCE(log_retention_days, 30), COALESCE(pvcs, '{}') FROM r"
    "  RETURNING " WS_COLUMNS ")"
    " SELECT to_jsonb(ins) FROM ins");
static tg_stmt_t stmt_update = TG_STMT(
    "WITH cur AS (SELECT to_jsonb(x) AS j FROM workspaces x WHERE x.name = $1 FOR UPDATE),"
    " r AS (SELECT p.* FROM cur, jsonb_populate_record(NULL::workspaces, cur.j || $2::jsonb) p),"
    " upd AS (UPDATE workspaces w SET namespace = r.namespace, default_queue = r.default_queue,"
    "   default_priority = r.default_priority, default_profile = r.default_profile,"
    "   output_root = r.output_root, ttl_seconds = r.ttl_seconds,"
    "   log_retention_days = COALESCE(r.log_retention_days, 30), pvcs = COALESCE(r.pvcs, '{}'),"
    "   updated_at = now()"
    "  FROM r WHERE w.name = $1 RETURNING w.*)"
    " SELECT to_jsonb(u) FROM (SELECT " WS_COLUMNS " FROM upd) u");
static tg_stmt_t stmt_delete = TG_STMT("DELETE FROM workspaces WHERE name = $1 RETURNING name");

tg_rc_e tg_store_workspaces_list(tg_db_conn_t *conn, const char *after, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", limit);
    const char *vals[] = {after, lim};
    return tg_db_json_all(conn, &stmt_list, 2, vals, out);
}

tg_rc_e tg_store_workspace_get(tg_db_conn_t *conn, const char *name, json_t **out)
{
    const char *vals[] = {name};
    return tg_db_json_one(conn, &stmt_get, 1, vals, out);
}

tg_rc_e tg_store_workspace_insert(tg_db_conn_t *conn, const json_t *ws, json_t **out)
{
    char *doc = json_dumps(ws, JSON_COMPACT);
    const char *vals[] = {doc};
    tg_rc_e rc = tg_db_json_one(conn, &stmt_insert, 1, vals, out);
    free(doc);
    return rc;
}

tg_rc_e tg_store_workspace_update(tg_db_conn_t *conn, const char *name, const json_t *patch,
                                  json_t **out)
{
    char *doc = json_dumps(patch, JSON_COMPACT);
    const char *vals[] = {name, doc};
    tg_rc_e rc = tg_db_json_one(conn, &stmt_update, 2, vals, out);
    free(doc);
    return rc;
}

tg_rc_e tg_store_workspace_delete(tg_db_conn_t *conn, const char *name)
{
    const char *vals[] = {name};
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_delete, 1, vals, &rc);
    if (!r)
        return rc == TG_EUNPROCESSABLE ? TG_ECONFLICT : rc; /* runs reference it */
    rc = PQntuples(r) ? TG_OK : TG_ENOTFOUND;
    PQclear(r);
    return rc;
}
