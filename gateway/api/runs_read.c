/* Reading runs: GET /v1/runs/{id} and /v1/runs/{id}/events. */
#include "api/runs_read.h"

#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/etag.h"
#include "http/problem.h"
#include "store/events.h"
#include "store/runs.h"

static void runs_query_error(tg_req_t *req, const char *param, const char *msg)
{
    json_t *errors = json_array();
    json_array_append_new(errors, tg_problem_error(param, 0, 0, msg));
    tg_problem(req, TG_EINVAL, errors, "invalid query parameter %s", param);
}

/* The caller's role on a run of workspace `ws` (NULL: no such run), or an
 * answer and -1: another tenant's run is answered exactly like a missing
 * one, and too small a role is a 403. */
static int run_role_or_reply(tg_req_t *req, const char *id, const char *ws, tg_role_e need,
                             tg_role_e *have)
{
    *have = TG_ROLE_NONE;
    if (ws && tg_authz_role_or_reply(req, ws, have) != 0)
        return -1;
    if (*have == TG_ROLE_NONE) {
        tg_problem(req, TG_ENOTFOUND, NULL, "run %s does not exist", id);
        return -1;
    }
    if (*have < need) {
        tg_problem(req, TG_EFORBIDDEN, NULL, "this needs the %s role in the run's workspace",
                   tg_role_name(need));
        return -1;
    }
    return 0;
}

json_t *tg_api_run_load_or_reply(tg_req_t *req, tg_role_e need, tg_role_e *role)
{
    const char *id = tg_req_param(req, "id");
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return NULL;
    json_t *run = NULL;
    tg_rc_e rc = tg_uuid_valid(id) ? tg_store_run_get(conn, id, &run) : TG_ENOTFOUND;
    if (rc != TG_OK && rc != TG_ENOTFOUND) {
        tg_problem(req, rc, NULL, "the run could not be read");
        return NULL;
    }
    tg_role_e have;
    if (run_role_or_reply(req, id, json_string_value(json_object_get(run, "workspace")), need,
                          &have) != 0) {
        json_decref(run);
        return NULL;
    }
    if (role)
        *role = have;
    return run;
}

tg_db_conn_t *tg_api_run_readable_or_reply(tg_req_t *req)
{
    json_t *run = tg_api_run_load_or_reply(req, TG_ROLE_VIEWER, NULL);
    if (!run)
        return NULL;
    json_decref(run);
    return tg_app_db_or_reply(req);
}

/* The hottest read: PostgreSQL's JSON text goes out as it came in. */
void tg_api_run_get(tg_req_t *req)
{
    const char *id = tg_req_param(req, "id");
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    char *ws = NULL, *text = NULL;
    tg_rc_e rc = tg_uuid_valid(id) ? tg_store_run_get_text(conn, id, &ws, &text) : TG_ENOTFOUND;
    tg_role_e have;
    if (rc != TG_OK && rc != TG_ENOTFOUND)
        tg_problem(req, rc, NULL, "the run could not be read");
    else if (run_role_or_reply(req, id, ws, TG_ROLE_VIEWER, &have) == 0)
        tg_resp_conditional(req, "application/json", text, strlen(text), NULL, "private, no-cache");
    free(ws);
    free(text);
}

void tg_api_run_events(tg_req_t *req)
{
    long after = 0;
    const char *a = tg_req_query(req, "after");
    if (a) {
        char *end = NULL;
        after = strtol(a, &end, 10);
        if (!*a || *end || after < 0) {
            runs_query_error(req, "after", "must be an event sequence number");
            return;
        }
    }
    tg_db_conn_t *conn = tg_api_run_readable_or_reply(req);
    if (!conn)
        return;
    json_t *events = NULL;
    tg_rc_e rc = tg_store_events_list(conn, tg_req_param(req, "id"), after, 1000, &events);
    if (rc != TG_OK)
        tg_problem(req, rc, NULL, "the events could not be read");
    else
        tg_resp_json_conditional(req, json_pack("{s:o}", "items", events), "private, no-cache");
}
