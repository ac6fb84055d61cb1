/* Reading runs: GET /v1/workspaces/{ws}/runs, /v1/runs/{id}, /v1/runs/{id}/events. */
#include "api/runs_read.h"

#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/paging.h"
#include "http/problem.h"
#include "store/events.h"
#include "store/runs.h"

static const char *const run_states[] = {"Accepted", "Queued",     "Admitted",
                                         "Running",  "Recovering", "Succeeded",
                                         "Failed",   "Cancelled",  NULL};

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

/* Cursor text is "<created_at>|<id>" of the last run shown. */
static const char *runs_cursor(tg_req_t *req, const json_t *run)
{
    const char *at = json_string_value(json_object_get(run, "created_at"));
    const char *id = json_string_value(json_object_get(run, "id"));
    return tg_arena_printf(req->arena, "%s|%s", at ? at : "", id ? id : "");
}

tg_db_conn_t *tg_api_run_readable_or_reply(tg_req_t *req)
{
    json_t *run = tg_api_run_load_or_reply(req, TG_ROLE_VIEWER, NULL);
    if (!run)
        return NULL;
    json_decref(run);
    return tg_app_db_or_reply(req);
}

void tg_api_runs_list(tg_req_t *req)
{
    tg_page_t page;
    if (tg_page_or_reply(req, &page) != 0)
        return;
    tg_run_query_t q = {.workspace = tg_req_param(req, "ws"), .limit = page.limit + 1};
    q.state = tg_req_query(req, "state");
    q.owner = tg_req_query(req, "owner");
    q.engine = tg_req_query(req, "engine");
    q.name = tg_req_query(req, "name");
    q.created_after = tg_req_query(req, "since");
    q.created_before = tg_req_query(req, "until");
    if (q.state) {
        int ok = 0;
        for (const char *const *s = run_states; *s; s++)
            ok |= strcmp(*s, q.state) == 0;
        if (!ok) {
            runs_query_error(req, "state",
                             "must be Accepted, Queued, Admitted, Running, Recovering, "
                             "Succeeded, Failed or Cancelled");
            return;
        }
    }
    if (q.engine && strcmp(q.engine, "job") && strcmp(q.engine, "rayjob")) {
        runs_query_error(req, "engine", "must be job or rayjob");
        return;
    }
    if (page.after) {
        char *bar = strchr(page.after, '|');
        if (!bar || !tg_uuid_valid(bar + 1)) {
            runs_query_error(req, "cursor", "is not a cursor this server issued");
            return;
        }
        q.cursor_time = tg_arena_strndup(req->arena, page.after, (size_t)(bar - page.after));
        q.cursor_id = bar + 1;
    }
    if (tg_authz_workspace_or_reply(req, q.workspace, TG_ROLE_VIEWER) == TG_ROLE_NONE)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    tg_rc_e rc = TG_OK;
    json_t *items = NULL;
    if (rc == TG_OK)
        rc = tg_store_runs_list(conn, &q, &items);
    if (rc == TG_EINVAL) {
        runs_query_error(req, q.created_after ? "since" : "until",
                         "must be an RFC 3339 time such as 2026-12-01T00:00:00Z");
        return;
    }
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the runs could not be listed");
        return;
    }
    tg_page_reply_fn(req, &page, items, runs_cursor);
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
        tg_resp_bytes(req, 200, "application/json", text, strlen(text));
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
        tg_resp_json(req, 200, json_pack("{s:o}", "items", events));
}
