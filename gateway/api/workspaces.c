/* Workspaces: the admin API. */
#include "api/workspaces.h"

#include "api/app.h"
#include "api/fields.h"
#include "api/paging.h"
#include "http/problem.h"
#include "store/workspaces.h"

static const tg_field_t ws_fields[] = {
    {"name", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_LABEL, NULL},
    {"namespace", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_LABEL, NULL},
    {"default_queue", TG_F_STRING, 0, 1, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"default_priority", TG_F_STRING, 0, 1, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"default_profile", TG_F_STRING, 0, 1, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"output_root", TG_F_STRING, 0, 1, 1, 1024, TG_FP_NONE, NULL},
    {"ttl_seconds", TG_F_INT, 0, 1, 0, 31536000, TG_FP_NONE, NULL},
    {"log_retention_days", TG_F_INT, 0, 0, 1, 3650, TG_FP_NONE, NULL},
    {"pvcs", TG_F_STRING_ARRAY, 0, 0, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
};
#define WS_NFIELDS ((int)(sizeof(ws_fields) / sizeof(ws_fields[0])))

/* Answer for a store failure that is not a validation problem. */
static void ws_store_problem(tg_req_t *req, tg_rc_e rc, const char *name)
{
    switch (rc) {
    case TG_ENOTFOUND:
        tg_problem(req, rc, NULL, "workspace %s does not exist", name);
        break;
    case TG_EUNAVAILABLE:
        tg_problem(req, rc, NULL, "the database is unavailable; retry shortly");
        tg_resp_header(req, "Retry-After", "1");
        break;
    default:
        tg_problem(req, rc, NULL, "the workspace could not be stored");
    }
}

void tg_api_admin_workspaces_list(tg_req_t *req)
{
    tg_page_t page;
    if (tg_page_or_reply(req, &page) != 0)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *items = NULL;
    tg_rc_e rc = tg_store_workspaces_list(conn, page.after, page.limit + 1, &items);
    if (rc != TG_OK) {
        ws_store_problem(req, rc, "");
        return;
    }
    tg_page_reply(req, &page, items, "name");
}

void tg_api_admin_workspaces_create(tg_req_t *req)
{
    json_t *body = tg_req_json_body_or_reply(req);
    if (!body)
        return;
    json_t *errors = json_array();
    if (tg_fields_check(body, ws_fields, WS_NFIELDS, 0, errors) > 0) {
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the workspace is not valid");
        json_decref(body);
        return;
    }
    json_decref(errors);
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn) {
        json_decref(body);
        return;
    }
    json_t *ws = NULL;
    tg_rc_e rc = tg_store_workspace_insert(conn, body, &ws);
    if (rc == TG_ECONFLICT)
        tg_problem(req, rc, NULL, "a workspace named %s, or one using namespace %s, exists",
                   json_string_value(json_object_get(body, "name")),
                   json_string_value(json_object_get(body, "namespace")));
    else if (rc != TG_OK)
        ws_store_problem(req, rc, json_string_value(json_object_get(body, "name")));
    else {
        tg_resp_json(req, 201, ws);
        tg_resp_header(req, "Location",
                       tg_arena_printf(req->arena, "/v1/admin/workspaces/%s",
                                       json_string_value(json_object_get(body, "name"))));
    }
    json_decref(body);
}

void tg_api_admin_workspace_get(tg_req_t *req)
{
    const char *name = tg_req_param(req, "ws");
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *ws = NULL;
    tg_rc_e rc = tg_store_workspace_get(conn, name, &ws);
    if (rc != TG_OK)
        ws_store_problem(req, rc, name);
    else
        tg_resp_json(req, 200, ws);
}

void tg_api_admin_workspace_patch(tg_req_t *req)
{
    const char *name = tg_req_param(req, "ws");
    json_t *body = tg_req_json_body_or_reply(req);
    if (!body)
        return;
    json_t *errors = json_array();
    int bad = tg_fields_check(body, ws_fields, WS_NFIELDS, 1, errors);
    if (json_object_get(body, "name")) {
        json_array_append_new(errors, tg_problem_error("name", 0, 0,
                                                       "a workspace cannot be renamed"));
        bad++;
    }
    if (bad) {
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the change is not valid");
        json_decref(body);
        return;
    }
    json_decref(errors);
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    json_t *ws = NULL;
    tg_rc_e rc = conn ? tg_store_workspace_update(conn, name, body, &ws) : TG_EUNAVAILABLE;
    if (!conn) {
        /* already answered */
    } else if (rc == TG_ECONFLICT)
        tg_problem(req, rc, NULL, "namespace %s is used by another workspace",
                   json_string_value(json_object_get(body, "namespace")));
    else if (rc != TG_OK)
        ws_store_problem(req, rc, name);
    else
        tg_resp_json(req, 200, ws);
    json_decref(body);
}

void tg_api_admin_workspace_delete(tg_req_t *req)
{
    const char *name = tg_req_param(req, "ws");
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    tg_rc_e rc = tg_store_workspace_delete(conn, name);
    if (rc == TG_ECONFLICT)
        tg_problem(req, rc, NULL,
                   "workspace %s still has runs; runs are kept as evidence, so the workspace "
                   "cannot be deleted",
                   name);
    else if (rc != TG_OK)
        ws_store_problem(req, rc, name);
    else
        tg_resp_bytes(req, 204, NULL, "", 0);
}
