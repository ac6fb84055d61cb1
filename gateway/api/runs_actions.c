/* Cancelling a run: whatever state it is in, the run becomes Cancelled now
 * and its objects are deleted from the cluster by the engine (background
 * propagation). A run that has ended cannot be cancelled (409). */
#include "api/runs_actions.h"

#include "core/run_state.h"
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/runs_read.h"
#include "engine/engine.h"
#include "http/problem.h"
#include "store/lifecycle.h"
#include "store/outbox.h"
#include "store/runs.h"

void tg_api_run_cancel(tg_req_t *req)
{
    tg_role_e role = TG_ROLE_NONE;
    json_t *run = tg_api_run_load_or_reply(req, TG_ROLE_RESEARCHER, &role);
    if (!run)
        return;
    const tg_who_t *who = tg_who(req);
    const char *id = json_string_value(json_object_get(run, "id"));
    const char *state = json_string_value(json_object_get(run, "state"));
    const char *owner = json_string_value(json_object_get(run, "owner"));
    int attempt = (int)json_integer_value(json_object_get(run, "attempt"));
    if (role < TG_ROLE_ADMIN && strcmp(owner, who->subject) != 0) {
        tg_problem(req, TG_EFORBIDDEN, NULL,
                   "researchers may cancel only their own runs; this one is %s's", owner);
        goto out;
    }
    if (tg_run_state_ended(state)) {
        tg_problem(req, TG_ECONFLICT, NULL, "run %s has already ended (%s); nothing to cancel", id,
                   state);
        goto out;
    }
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    const char *msg = tg_arena_printf(req->arena, "cancelled by %s", who->subject);
    tg_event_t ev = {
        .state = "Cancelled", .reason = "CancelledByUser", .message = msg, .source = "user"};
    int applied = 0;
    tg_rc_e rc = tg_db_begin(conn);
    if (rc == TG_OK)
        rc = tg_store_run_transition_locked(conn, id, attempt, &ev, NULL, &applied);
    if (rc == TG_OK && applied)
        rc = tg_store_outbox_drop_creates(conn, id);
    if (rc == TG_OK && applied)
        rc = tg_store_outbox_add(conn, id, attempt, "delete");
    if (rc == TG_OK)
        rc = tg_db_commit(conn);
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        tg_problem(req, rc, NULL, "the run could not be cancelled; retry");
        goto out;
    }
    if (!applied) { /* it ended between our read and our lock */
        tg_problem(req, TG_ECONFLICT, NULL, "run %s has already ended; nothing to cancel", id);
        goto out;
    }
    tg_engine_kick(((tg_app_t *)tg_req_app(req))->engine);
    json_t *now = NULL;
    if (tg_store_run_get(conn, id, &now) == TG_OK)
        tg_resp_json(req, 200, now);
    else
        tg_problem(req, TG_EINTERNAL, NULL, "the run was cancelled but could not be read back");
out:
    json_decref(run);
}

void tg_api_run_resume(tg_req_t *req)
{
    tg_role_e role = TG_ROLE_NONE;
    json_t *run = tg_api_run_load_or_reply(req, TG_ROLE_RESEARCHER, &role);
    json_t *body = NULL;
    if (!run)
        return;
    const tg_who_t *who = tg_who(req);
    const char *id = json_string_value(json_object_get(run, "id"));
    const char *owner = json_string_value(json_object_get(run, "owner"));
    if (role < TG_ROLE_ADMIN && strcmp(owner, who->subject) != 0) {
        tg_problem(req, TG_EFORBIDDEN, NULL,
                   "researchers may resume only their own runs; this one is %s's", owner);
        goto out;
    }
    int force = 0;
    if (req->body.len) {
        body = tg_req_json_body_or_reply(req);
        if (!body)
            goto out;
        json_t *f = json_object_get(body, "force");
        if ((f && !json_is_boolean(f)) || json_object_size(body) > (f ? 1u : 0u)) {
            json_t *errors = json_array();
            json_array_append_new(errors,
                                  tg_problem_error("force", 0, 0, "the body is {\"force\": bool}"));
            tg_problem(req, TG_EUNPROCESSABLE, errors, "the resume request is not valid");
            goto out;
        }
        force = json_is_true(f);
    }
    char why[256] = "";
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    tg_recovery_resume_t ask = {.run_id = id, .who = who->subject, .force = force};
    tg_rc_e rc = tg_recovery_resume(conn, &ask, why, sizeof(why));
    if (rc == TG_ECONFLICT) {
        tg_problem(req, rc, NULL, "%s", why);
        goto out;
    }
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the run could not be resumed; retry");
        goto out;
    }
    /* read back before waking the engine: the answer is the state the
     * resume made, not whatever the submitter has made of it since */
    json_t *now = NULL;
    if (tg_store_run_get(conn, id, &now) == TG_OK)
        tg_resp_json(req, 202, now);
    else
        tg_problem(req, TG_EINTERNAL, NULL, "the run was resumed but could not be read back");
    tg_engine_kick(((tg_app_t *)tg_req_app(req))->engine);
out:
    json_decref(body);
    json_decref(run);
}
