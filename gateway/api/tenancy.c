/* Researchers' view of tenancy, and personal access tokens. */
#include "api/tenancy.h"

#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/fields.h"
#include "auth/pat.h"
#include "http/problem.h"
#include "store/context.h"
#include "store/principals.h"
#include "store/workspaces.h"

void tg_api_my_workspaces(tg_req_t *req)
{
    const tg_who_t *who = tg_who(req);
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *items = NULL;
    tg_rc_e rc = tg_store_member_workspaces(conn, who->subject, tg_who_groups_literal(req),
                                            who->is_admin || who->pat_admin, &items);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the workspaces could not be listed");
        return;
    }
    if (who->pat_workspace) { /* a token sees only its own workspace, at most at its role */
        for (size_t i = json_array_size(items); i-- > 0;) {
            json_t *w = json_array_get(items, i);
            tg_role_e role = tg_role_parse(json_string_value(json_object_get(w, "role")));
            if (strcmp(json_string_value(json_object_get(w, "name")), who->pat_workspace) != 0)
                json_array_remove(items, i);
            else if (who->pat_role < role)
                json_object_set_new(w, "role", json_string(tg_role_name(who->pat_role)));
        }
    }
    tg_resp_json(req, 200, json_pack("{s:o, s:n}", "items", items, "next_cursor"));
}

void tg_api_my_workspace(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    tg_role_e role = tg_authz_workspace_or_reply(req, ws, TG_ROLE_VIEWER);
    if (role == TG_ROLE_NONE)
        return;
    json_t *row = NULL;
    tg_rc_e rc = tg_store_crud_get(tg_app_db_or_reply(req), &tg_store_workspaces, NULL, ws, &row);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "workspace %s could not be read", ws);
        return;
    }
    json_object_set_new(row, "role", json_string(tg_role_name(role)));
    tg_resp_json(req, 200, row);
}

void tg_api_workspace_profiles(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    tg_db_conn_t *conn = tg_authz_workspace_db_or_reply(req, ws, TG_ROLE_VIEWER);
    if (!conn)
        return;
    json_t *ctx = NULL;
    tg_rc_e rc = tg_store_resolve_context(conn, ws, &ctx);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the profiles could not be read");
        return;
    }
    json_t *items = json_incref(json_object_get(ctx, "profiles"));
    json_decref(ctx);
    tg_resp_json(req, 200, json_pack("{s:o, s:n}", "items", items, "next_cursor"));
}

static const char *const token_roles[] = {"admin", "researcher", "viewer", NULL};
static const tg_field_t token_fields[] = {
    {"name", TG_F_STRING, 1, 0, 1, 128, TG_FP_NONE, NULL},
    {"workspace", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_LABEL, NULL},
    {"role", TG_F_STRING, 1, 0, 0, 0, TG_FP_NONE, token_roles},
    {"expires_in_days", TG_F_INT, 0, 0, 1, 365, TG_FP_NONE, NULL},
};

void tg_api_tokens_create(tg_req_t *req)
{
    const tg_who_t *who = tg_who(req);
    if (who->pat_workspace) {
        tg_problem(req, TG_EFORBIDDEN, NULL, "a personal access token cannot mint tokens");
        return;
    }
    json_t *body = tg_req_json_body_or_reply(req);
    if (!body)
        return;
    json_t *errors = json_array();
    if (tg_fields_check(body, token_fields, 4, 0, errors) > 0) {
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the token request is not valid");
        json_decref(body);
        return;
    }
    json_decref(errors);
    const char *ws = json_string_value(json_object_get(body, "workspace"));
    tg_role_e want = tg_role_parse(json_string_value(json_object_get(body, "role")));
    /* nobody hands out more than they hold */
    if (tg_authz_workspace_or_reply(req, ws, want) == TG_ROLE_NONE) {
        json_decref(body);
        return;
    }
    char secret[96], digest[65], id[TG_UUID_LEN + 1];
    json_t *view = NULL;
    tg_rc_e rc = tg_auth_pat_generate(secret, sizeof(secret));
    if (rc == TG_OK)
        rc = tg_auth_pat_hash(secret, strlen(secret), digest, sizeof(digest));
    tg_uuid_v4(id);
    json_t *days = json_object_get(body, "expires_in_days");
    /* what made the minter a member goes with the token, so that its use is
     * checked against the same membership (authz.c) */
    const tg_store_token_t t = {
        .id = id,
        .sha256 = digest,
        .subject = who->subject,
        .name = json_string_value(json_object_get(body, "name")),
        .workspace = ws,
        .role = tg_role_name(want),
        .minter_groups = tg_who_groups_literal(req),
        .minter_admin = who->is_admin,
        .days = days ? (int)json_integer_value(days) : 90,
    };
    if (rc == TG_OK)
        rc = tg_store_token_insert(tg_app_db_or_reply(req), &t, &view);
    json_decref(body);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the token could not be created");
        return;
    }
    /* the secret is shown once, here, and stored only as its digest */
    json_object_set_new(view, "token", json_string(secret));
    tg_resp_json(req, 201, view);
    tg_resp_header(req, "Cache-Control", "no-store");
}

void tg_api_tokens_list(tg_req_t *req)
{
    json_t *items = NULL;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    tg_rc_e rc = tg_store_tokens_list(conn, tg_who(req)->subject, &items);
    if (rc != TG_OK)
        tg_problem(req, rc, NULL, "the tokens could not be listed");
    else
        tg_resp_json(req, 200, json_pack("{s:o, s:n}", "items", items, "next_cursor"));
}

void tg_api_token_revoke(tg_req_t *req)
{
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    const char *id = tg_req_param(req, "id");
    tg_rc_e rc = tg_store_token_revoke(conn, tg_who(req)->subject, id);
    if (rc == TG_ENOTFOUND)
        tg_problem(req, rc, NULL, "token %s does not exist", id);
    else if (rc != TG_OK)
        tg_problem(req, rc, NULL, "the token could not be revoked");
    else
        tg_resp_bytes(req, 204, NULL, "", 0);
}
