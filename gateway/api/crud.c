/* Generic REST handlers for admin resources. */
#include "api/crud.h"

#include <string.h>

#include "api/app.h"
#include "api/paging.h"
#include "engine/engine.h"
#include "http/problem.h"
#include "http/router.h"
#include "store/workspaces.h"

static const tg_crud_t *crud_of(tg_req_t *req)
{
    return req->route->arg;
}

static const char *crud_parent(tg_req_t *req, const tg_crud_t *c)
{
    return c->parent_param ? tg_req_param(req, c->parent_param) : NULL;
}

static void crud_store_problem(tg_req_t *req, const tg_crud_t *c, tg_rc_e rc, const char *key)
{
    switch (rc) {
    case TG_ENOTFOUND:
        tg_problem(req, rc, NULL, "%s %s does not exist", c->kind, key ? key : "");
        break;
    case TG_EUNAVAILABLE:
        tg_problem(req, rc, NULL, "the database is unavailable; retry shortly");
        tg_resp_header(req, "Retry-After", "1");
        break;
    case TG_ECONFLICT:
        tg_problem(req, rc, NULL, "%s %s already exists", c->kind, key ? key : "");
        break;
    case TG_EUNPROCESSABLE:
        tg_problem(req, rc, NULL, "%s", c->bad_ref ? c->bad_ref : "a referenced object is missing");
        break;
    default:
        tg_problem(req, rc, NULL, "the %s could not be stored", c->kind);
    }
}

/* For nested resources, a missing parent is a 404 of the parent. */
static int crud_parent_exists_or_reply(tg_req_t *req, tg_db_conn_t *conn, const tg_crud_t *c)
{
    if (!c->parent_param)
        return 1;
    json_t *ws = NULL;
    tg_rc_e rc = tg_store_crud_get(conn, &tg_store_workspaces, NULL, crud_parent(req, c), &ws);
    json_decref(ws);
    if (rc == TG_OK)
        return 1;
    if (rc == TG_ENOTFOUND)
        tg_problem(req, rc, NULL, "workspace %s does not exist", crud_parent(req, c));
    else
        crud_store_problem(req, c, rc, NULL);
    return 0;
}

void tg_crud_list(tg_req_t *req)
{
    const tg_crud_t *c = crud_of(req);
    tg_page_t page;
    if (tg_page_or_reply(req, &page) != 0)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn || !crud_parent_exists_or_reply(req, conn, c))
        return;
    json_t *items = NULL;
    tg_rc_e rc =
        tg_store_crud_list(conn, c->stmts, crud_parent(req, c), page.after, page.limit + 1, &items);
    if (rc != TG_OK)
        crud_store_problem(req, c, rc, NULL);
    else
        tg_page_reply(req, &page, items, c->key_field);
}

/* Parse and check a body; answers and returns NULL when it is not valid. */
static json_t *crud_body_or_reply(tg_req_t *req, const tg_crud_t *c, int partial)
{
    json_t *body = tg_req_json_body_or_reply(req);
    if (!body)
        return NULL;
    json_t *errors = json_array();
    int bad = tg_fields_check(body, c->fields, c->nfields, partial, errors);
    if (partial && c->immutable)
        for (const char *const *f = c->immutable; *f; f++)
            if (json_object_get(body, *f)) {
                json_array_append_new(
                    errors, tg_problem_error(*f, 0, 0, "cannot be changed; delete and recreate"));
                bad++;
            }
    if (!bad && c->check)
        bad += c->check(req, body, partial, errors);
    if (bad) {
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the %s is not valid (%d problem%s)", c->kind,
                   bad, bad == 1 ? "" : "s");
        json_decref(body);
        return NULL;
    }
    json_decref(errors);
    return body;
}

static const char *crud_key_of(const tg_crud_t *c, const json_t *row)
{
    return json_string_value(json_object_get(row, c->key_field));
}

void tg_crud_create(tg_req_t *req)
{
    const tg_crud_t *c = crud_of(req);
    json_t *body = crud_body_or_reply(req, c, 0);
    if (!body)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    json_t *row = NULL;
    if (conn && crud_parent_exists_or_reply(req, conn, c)) {
        tg_rc_e rc = tg_store_crud_insert(conn, c->stmts, crud_parent(req, c), body, &row);
        if (rc != TG_OK) {
            crud_store_problem(req, c, rc, json_string_value(json_object_get(body, "name")));
        } else {
            const char *coll = c->parent_param
                                   ? tg_arena_printf(req->arena, c->collection, crud_parent(req, c))
                                   : c->collection;
            const char *loc = tg_arena_printf(req->arena, "%s/%s", coll, crud_key_of(c, row));
            tg_resp_json(req, 201, row);
            tg_resp_header(req, "Location", loc);
            if (c->kueue)
                tg_reconcile_kick(tg_app_of(req)->reconcile);
        }
    }
    json_decref(body);
}

void tg_crud_get(tg_req_t *req)
{
    const tg_crud_t *c = crud_of(req);
    const char *key = tg_req_param(req, c->key_param);
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *row = NULL;
    tg_rc_e rc = tg_store_crud_get(conn, c->stmts, crud_parent(req, c), key, &row);
    if (rc != TG_OK)
        crud_store_problem(req, c, rc, key);
    else
        tg_resp_json(req, 200, row);
}

void tg_crud_patch(tg_req_t *req)
{
    const tg_crud_t *c = crud_of(req);
    const char *key = tg_req_param(req, c->key_param);
    json_t *body = crud_body_or_reply(req, c, 1);
    if (!body)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    json_t *row = NULL;
    if (conn) {
        tg_rc_e rc = tg_store_crud_update(conn, c->stmts, crud_parent(req, c), key, body, &row);
        if (rc == TG_ECONFLICT)
            tg_problem(req, rc, NULL, "the change conflicts with another %s", c->kind);
        else if (rc != TG_OK)
            crud_store_problem(req, c, rc, key);
        else {
            tg_resp_json(req, 200, row);
            if (c->kueue)
                tg_reconcile_kick(tg_app_of(req)->reconcile);
        }
    }
    json_decref(body);
}

void tg_crud_delete(tg_req_t *req)
{
    const tg_crud_t *c = crud_of(req);
    const char *key = tg_req_param(req, c->key_param);
    if (c->before_delete && c->before_delete(req, crud_parent(req, c), key) != 0)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    tg_rc_e rc = tg_store_crud_delete(conn, c->stmts, crud_parent(req, c), key);
    if (rc == TG_ECONFLICT)
        tg_problem(req, rc, NULL, "%s %s is in use: %s", c->kind, key,
                   c->in_use ? c->in_use : "other objects refer to it");
    else if (rc != TG_OK)
        crud_store_problem(req, c, rc, key);
    else {
        tg_resp_bytes(req, 204, NULL, "", 0);
        if (c->kueue)
            tg_reconcile_kick(tg_app_of(req)->reconcile);
    }
}
