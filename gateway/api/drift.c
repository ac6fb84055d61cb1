/* Kueue drift, as the reconciler recorded it. */
#include "api/drift.h"

#include <string.h>

#include "api/app.h"
#include "api/paging.h"
#include "engine/engine.h"
#include "http/problem.h"
#include "store/kueue_sync.h"

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
    if (tg_page_after_id_or_reply(req, &page, &q.before_id) != 0)
        return;
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
    json_t *next = tg_page_next(req, &page, items, tg_page_id_key, NULL);
    tg_resp_json(req, 200,
                 json_pack("{s:o, s:o, s:o, s:b}", "items", items, "next_cursor", next, "sync",
                           sync ? sync : json_null(), "leader",
                           tg_reconcile_is_leader(tg_app_of(req)->reconcile)));
}
