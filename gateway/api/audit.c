/* The audit trail. */
#include "api/audit.h"

#include <string.h>

#include "api/app.h"
#include "api/paging.h"
#include "core/log.h"
#include "http/problem.h"
#include "store/audit_writer.h"

void tg_audit_entry_of(tg_req_t *req, unsigned status, tg_audit_entry_t *e)
{
    *e = (tg_audit_entry_t){.subject = req->principal,
                            .method = req->method_name,
                            .route = req->route ? req->route->path : "unmatched",
                            .target = req->path,
                            .workspace = tg_req_param(req, "ws"),
                            .request_id = req->request_id,
                            .status = (int)status};
}

void tg_audit_after(tg_req_t *req, void *app)
{
    if (!(req->method & (TG_M_POST | TG_M_PUT | TG_M_PATCH | TG_M_DELETE)) || req->audited)
        return;
    tg_audit_entry_t e;
    tg_audit_entry_of(req, req->status, &e);
    if (tg_audit_writer_append(((tg_app_t *)app)->audit, &e) != TG_OK)
        tg_log_error("audit", "not recorded: %s %s -> %u, request %s", req->method_name, req->path,
                     req->status, req->request_id);
}

void tg_api_admin_audit(tg_req_t *req)
{
    tg_page_t page;
    if (tg_page_or_reply(req, &page) != 0)
        return;
    tg_audit_query_t q = {.subject = tg_req_query(req, "subject"),
                          .workspace = tg_req_query(req, "workspace"),
                          .since = tg_req_query(req, "since"),
                          .until = tg_req_query(req, "until"),
                          .limit = page.limit + 1};
    if (tg_page_after_id_or_reply(req, &page, &q.before_id) != 0)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *items = NULL;
    tg_rc_e rc = tg_store_audit_list(conn, &q, &items);
    if (rc == TG_EINVAL) {
        json_t *errors = json_array();
        json_array_append_new(
            errors, tg_problem_error("since", 0, 0, "since and until must be RFC 3339 times"));
        tg_problem(req, rc, errors, "invalid time range");
        return;
    }
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the audit log could not be read");
        return;
    }
    tg_page_reply_fn(req, &page, items, tg_page_id_key, NULL);
}
