/* Kueue drift, as the reconciler recorded it. */
#include "api/drift.h"

#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/paging.h"
#include "auth/b64url.h"
#include "engine/reconcile.h"
#include "http/problem.h"
#include "store/kueue_sync.h"

static const char *drift_cursor(tg_req_t *req, const json_t *row)
{
    return tg_arena_printf(req->arena, "%lld", json_integer_value(json_object_get(row, "id")));
}

static void drift_bad(tg_req_t *req, const char *param, const char *msg)
{
    json_t *errors = json_array();
    json_array_append_new(errors, tg_problem_error(param, 0, 0, msg));
    tg_problem(req, TG_EINVAL, errors, "invalid query parameter %s", param);
}

void tg_api_admin_drift(tg_req_t *req)
{
    tg_page_t page;
    if (tg_page_or_reply(req, &page) != 0)
        return;
    tg_drift_query_t q = {.state = tg_req_query(req, "state"),
                          .kind = tg_req_query(req, "kind"),
                          .name = tg_req_query(req, "name"),
                          .limit = page.limit + 1};
    if (!q.state || !*q.state)
        q.state = "open";
    if (strcmp(q.state, "open") && strcmp(q.state, "resolved") && strcmp(q.state, "all")) {
        drift_bad(req, "state", "must be open, resolved or all");
        return;
    }
    if (q.kind && !*q.kind)
        q.kind = NULL;
    if (q.name && !*q.name)
        q.name = NULL;
    if (page.after) {
        char *end = NULL;
        q.before_id = strtol(page.after, &end, 10);
        if (*end || q.before_id <= 0) {
            drift_bad(req, "cursor", "is not a cursor this server issued");
            return;
        }
    }
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *items = NULL, *sync = NULL;
    tg_rc_e rc = tg_store_drift_list(conn, &q, &items);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the drift report could not be read");
        return;
    }
    rc = tg_store_kueue_sync_get(conn, &sync);
    if (rc != TG_OK && rc != TG_ENOTFOUND) {
        json_decref(items);
        tg_problem(req, rc, NULL, "the drift report could not be read");
        return;
    }
    json_t *next = json_null();
    if (json_array_size(items) > (size_t)page.limit) {
        json_array_remove(items, (size_t)page.limit);
        const char *k = drift_cursor(req, json_array_get(items, (size_t)page.limit - 1));
        char *enc = tg_auth_b64url_encode((const unsigned char *)k, strlen(k));
        json_decref(next);
        next = json_string(enc);
        free(enc);
    }
    tg_resp_json(req, 200,
                 json_pack("{s:o, s:o, s:o, s:b}", "items", items, "next_cursor", next, "sync",
                           sync ? sync : json_null(), "leader", tg_reconcile_is_leader()));
}
