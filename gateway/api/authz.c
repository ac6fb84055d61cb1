/* Workspace roles. */
#include "api/authz.h"

#include <string.h>

#include "api/app.h"
#include "core/buf.h"
#include "http/problem.h"
#include "store/tenancy_cache.h"

static const char *const role_names[] = {"none", "viewer", "researcher", "admin"};

const tg_who_t *tg_who(const tg_req_t *req)
{
    return req->auth;
}

tg_role_e tg_role_parse(const char *s)
{
    for (int r = TG_ROLE_VIEWER; s && r <= TG_ROLE_ADMIN; r++)
        if (strcmp(s, role_names[r]) == 0)
            return (tg_role_e)r;
    return TG_ROLE_NONE;
}

const char *tg_role_name(tg_role_e r)
{
    return role_names[r <= TG_ROLE_ADMIN ? r : 0];
}

const char *tg_who_groups_literal(tg_req_t *req)
{
    const tg_who_t *who = tg_who(req);
    const char *literal = "{}"; /* when the groups do not fit in 1 MiB */
    tg_buf_t b;
    tg_buf_init(&b, 1 << 20);
    if (tg_buf_puts(&b, "{") != TG_OK)
        goto done;
    for (int i = 0; who && i < who->ngroups; i++) {
        if (tg_buf_puts(&b, i ? ",\"" : "\"") != TG_OK)
            goto done;
        for (const char *p = who->groups[i]; *p; p++) {
            if ((*p == '"' || *p == '\\') && tg_buf_append(&b, "\\", 1) != TG_OK)
                goto done;
            if (tg_buf_append(&b, p, 1) != TG_OK)
                goto done;
        }
        if (tg_buf_puts(&b, "\"") != TG_OK)
            goto done;
    }
    if (tg_buf_puts(&b, "}") != TG_OK)
        goto done;
    literal = tg_arena_strdup(req->arena, b.data);
done:
    tg_buf_clean(&b);
    return literal;
}

tg_role_e tg_authz_role_from(const tg_who_t *who, const char *ws, const json_t *roles, int exists)
{
    tg_role_e have = TG_ROLE_NONE;
    size_t i;
    json_t *r;
    json_array_foreach(roles, i, r) {
        tg_role_e x = tg_role_parse(json_string_value(r));
        if (x > have)
            have = x;
    }
    if (who->is_admin || who->pat_admin)
        have = TG_ROLE_ADMIN;
    if (who->pat_workspace) {
        /* a token never reaches past its workspace, nor above its role (which
         * was at most its minter's there); its minter's membership is read
         * again by the caller, through the groups stored with it, so removing
         * that membership stops the token */
        if (strcmp(who->pat_workspace, ws) != 0)
            have = TG_ROLE_NONE;
        else if (who->pat_role < have)
            have = who->pat_role;
    }
    return exists ? have : TG_ROLE_NONE;
}

int tg_authz_role_or_reply(tg_req_t *req, const char *ws, tg_role_e *have)
{
    const tg_who_t *who = tg_who(req);
    *have = TG_ROLE_NONE;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return -1;
    json_t *roles = NULL;
    int exists = 0;
    tg_rc_e rc = tg_tenancy_roles(((tg_app_t *)tg_req_app(req))->tenancy, conn, ws, who->subject,
                                  tg_who_groups_literal(req), &roles, &exists);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the workspace roles could not be read");
        return -1;
    }
    *have = tg_authz_role_from(who, ws, roles, exists);
    json_decref(roles);
    return 0;
}

tg_role_e tg_authz_workspace_or_reply(tg_req_t *req, const char *ws, tg_role_e need)
{
    tg_role_e have;
    if (tg_authz_role_or_reply(req, ws, &have) != 0)
        return TG_ROLE_NONE;
    if (have == TG_ROLE_NONE) {
        tg_problem(req, TG_ENOTFOUND, NULL, "workspace %s does not exist", ws);
        return TG_ROLE_NONE;
    }
    if (have < need) {
        tg_problem(req, TG_EFORBIDDEN, NULL, "this needs the %s role in workspace %s; you are %s",
                   tg_role_name(need), ws, tg_role_name(have));
        return TG_ROLE_NONE;
    }
    return have;
}

tg_db_conn_t *tg_authz_workspace_db_or_reply(tg_req_t *req, const char *ws, tg_role_e need)
{
    if (tg_authz_workspace_or_reply(req, ws, need) == TG_ROLE_NONE)
        return NULL;
    return tg_app_db_or_reply(req);
}
