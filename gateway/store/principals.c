/* Personal access tokens and workspace roles. */
#include "store/principals.h"

#include <stdio.h>

#include "store/json_rows.h"

static tg_stmt_t stmt_token_lookup = TG_STMT(
    "UPDATE api_tokens SET last_used_at = now()"
    " WHERE token_sha256 = $1 AND revoked_at IS NULL AND expires_at > now()"
    " RETURNING jsonb_build_object('subject', subject, 'workspace', workspace, 'role', role,"
    " 'groups', to_jsonb(minter_groups), 'admin', minter_admin)");
static tg_stmt_t stmt_token_live =
    TG_STMT("SELECT 1 FROM api_tokens"
            " WHERE token_sha256 = $1 AND revoked_at IS NULL AND expires_at > now()");
static tg_stmt_t stmt_token_insert = TG_STMT(
    "INSERT INTO api_tokens (id, token_sha256, subject, name, workspace, role, expires_at,"
    " minter_groups, minter_admin) VALUES ($1::uuid, $2, $3, $4, $5, $6,"
    " now() + make_interval(days => $7::int), $8::text[], $9::bool)"
    " RETURNING jsonb_build_object('id', id, 'name', name, 'workspace', workspace, 'role', role,"
    " 'created_at', created_at, 'expires_at', expires_at)");
static tg_stmt_t stmt_tokens_list = TG_STMT(
    "SELECT jsonb_build_object('id', id, 'name', name, 'workspace', workspace, 'role', role,"
    " 'created_at', created_at, 'expires_at', expires_at, 'revoked_at', revoked_at,"
    " 'last_used_at', last_used_at) FROM api_tokens WHERE subject = $1"
    " ORDER BY created_at DESC LIMIT 200");
static tg_stmt_t stmt_token_revoke =
    TG_STMT("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now())"
            " WHERE id::text = $2 AND subject = $1 RETURNING jsonb_build_object('id', id)");
static tg_stmt_t stmt_member_roles =
    TG_STMT("SELECT jsonb_build_object('exists', EXISTS (SELECT 1 FROM workspaces WHERE name = $1),"
            " 'roles', COALESCE((SELECT jsonb_agg(DISTINCT role) FROM workspace_members"
            "   WHERE workspace = $1 AND ((kind = 'user' AND subject = $2)"
            "   OR (kind = 'group' AND subject = ANY ($3::text[])))), '[]'::jsonb))");
static tg_stmt_t stmt_member_workspaces = TG_STMT(
    "SELECT to_jsonb(x) FROM (SELECT w.name, w.namespace,"
    "  CASE WHEN $4::bool THEN 'admin' ELSE"
    "   (SELECT CASE WHEN bool_or(role = 'admin') THEN 'admin'"
    "                WHEN bool_or(role = 'researcher') THEN 'researcher' ELSE 'viewer' END"
    "    FROM workspace_members m WHERE m.workspace = w.name AND ((m.kind = 'user' AND"
    "    m.subject = $1) OR (m.kind = 'group' AND m.subject = ANY ($2::text[])))) END AS role"
    " FROM workspaces w WHERE $4::bool OR EXISTS (SELECT 1 FROM workspace_members m"
    "  WHERE m.workspace = w.name AND ((m.kind = 'user' AND m.subject = $1)"
    "  OR (m.kind = 'group' AND m.subject = ANY ($2::text[]))))"
    " ORDER BY w.name LIMIT $3::int) x");

tg_rc_e tg_store_token_lookup(tg_db_conn_t *conn, const char *sha256, json_t **out)
{
    const char *vals[] = {sha256};
    return tg_db_json_one(conn, &stmt_token_lookup, 1, vals, out);
}

tg_rc_e tg_store_token_live(tg_db_conn_t *conn, const char *sha256, int *live)
{
    const char *vals[] = {sha256};
    tg_rc_e rc;
    *live = 0;
    PGresult *r = tg_db_exec(conn, &stmt_token_live, 1, vals, &rc);
    if (!r)
        return rc;
    *live = PQntuples(r) > 0;
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_store_token_insert(tg_db_conn_t *conn, const tg_store_token_t *t, json_t **out)
{
    char d[16];
    snprintf(d, sizeof(d), "%d", t->days);
    const char *vals[] = {t->id,   t->sha256,        t->subject,
                          t->name, t->workspace,     t->role,
                          d,       t->minter_groups, t->minter_admin ? "true" : "false"};
    return tg_db_json_one(conn, &stmt_token_insert, 9, vals, out);
}

tg_rc_e tg_store_tokens_list(tg_db_conn_t *conn, const char *subject, json_t **out)
{
    const char *vals[] = {subject};
    return tg_db_json_all(conn, &stmt_tokens_list, 1, vals, out);
}

tg_rc_e tg_store_token_revoke(tg_db_conn_t *conn, const char *subject, const char *id)
{
    const char *vals[] = {subject, id};
    json_t *row = NULL;
    tg_rc_e rc = tg_db_json_one(conn, &stmt_token_revoke, 2, vals, &row);
    json_decref(row);
    return rc;
}

tg_rc_e tg_store_member_roles(tg_db_conn_t *conn, const char *workspace, const char *subject,
                              const char *groups, json_t **roles, int *exists)
{
    const char *vals[] = {workspace, subject, groups};
    json_t *row = NULL;
    tg_rc_e rc = tg_db_json_one(conn, &stmt_member_roles, 3, vals, &row);
    if (rc != TG_OK)
        return rc;
    *exists = json_is_true(json_object_get(row, "exists"));
    *roles = json_incref(json_object_get(row, "roles"));
    json_decref(row);
    return TG_OK;
}

tg_rc_e tg_store_member_workspaces(tg_db_conn_t *conn, const char *subject, const char *groups,
                                   int all, json_t **out)
{
    const char *vals[] = {subject, groups, "1000", all ? "true" : "false"};
    return tg_db_json_all(conn, &stmt_member_workspaces, 4, vals, out);
}
