/* Recovery of failed attempts. */
#include "core/run_state.h"
#include "engine/engine.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "render/common.h"
#include "tauyaml/units.h"
#include "store/lifecycle.h"
#include "store/recovery.h"

#define RECOVERY_DEFAULT_INITIAL_MS 30000L
#define RECOVERY_DEFAULT_MAX_MS     300000L

static long recovery_duration_ms(const json_t *resilience, const char *key, long dflt)
{
    int64_t ns = 0;
    const char *s = json_string_value(json_object_get(resilience, key));
    if (!s || tg_tauyaml_duration_parse(s, &ns) != 0 || ns < 0)
        return dflt;
    return (long)(ns / 1000000);
}

static int recovery_retry_on(const json_t *resilience, const char *reason)
{
    if (!strcmp(reason, "NodeFault"))
        return 1;
    const json_t *on = json_object_get(resilience, "retry_on");
    if (!json_is_array(on)) /* TauGrid's default */
        return !strcmp(reason, "Preempted") || !strcmp(reason, "Evicted");
    size_t i;
    json_t *x;
    json_array_foreach(on, i, x) {
        if (json_is_string(x) && !strcmp(json_string_value(x), reason))
            return 1;
    }
    return 0;
}

/* Open the next attempt (in the caller's transaction). */
static tg_rc_e recovery_next(tg_db_conn_t *conn, const char *run_id, const json_t *facts,
                             const char *reason, long delay_ms)
{
    int next = (int)json_integer_value(json_object_get(facts, "attempt")) + 1;
    char name[64];
    if (tg_render_object_name(run_id, (unsigned)next, name, sizeof(name)) != 0)
        return TG_EINTERNAL;
    return tg_store_recovery_next_attempt(
        conn, run_id, next, json_string_value(json_object_get(facts, "namespace")), name,
        json_string_value(json_object_get(facts, "object_kind")), reason, delay_ms);
}

/* Open the transaction a recovery decision is taken in, and read the run's
 * facts in it (*facts: new reference). */
static tg_rc_e recovery_begin(tg_db_conn_t *conn, const char *run_id, json_t **facts)
{
    tg_rc_e rc = tg_db_begin(conn);
    return rc == TG_OK ? tg_store_recovery_facts(conn, run_id, facts) : rc;
}

tg_rc_e tg_recovery_on_failure(tg_db_conn_t *conn, const char *run_id, int attempt,
                               const char *reason, const char *message, const char *source)
{
    json_t *facts = NULL;
    tg_rc_e rc = recovery_begin(conn, run_id, &facts);
    if (rc != TG_OK)
        goto out;
    const char *state = json_string_value(json_object_get(facts, "state"));
    if (json_integer_value(json_object_get(facts, "attempt")) != attempt ||
        tg_run_state_ended(state) || !strcmp(state, "Recovering"))
        goto out; /* already handled, or about an older attempt */

    const json_t *res = json_object_get(facts, "resilience");
    json_int_t max = json_integer_value(json_object_get(res, "max_retries"));
    json_int_t used = json_integer_value(json_object_get(facts, "retries_used"));
    int node_fault = !strcmp(reason, "NodeFault");
    char msg[512];
    int applied = 0;
    if (!recovery_retry_on(res, reason) || (!node_fault && used >= max)) {
        if (!recovery_retry_on(res, reason))
            snprintf(msg, sizeof(msg), "%s%s%s (not in resilience.retry_on)", reason,
                     message ? ": " : "", message ? message : "");
        else
            snprintf(msg, sizeof(msg),
                     "%s; the retry budget (resilience.max_retries = %lld) is "
                     "spent",
                     message ? message : reason, (long long)max);
        tg_event_t ev = {.state = "Failed", .reason = reason, .message = msg, .source = source};
        rc = tg_store_run_transition_locked(conn, run_id, attempt, &ev, NULL, &applied);
        goto out;
    }
    long initial = recovery_duration_ms(res, "backoff_initial", RECOVERY_DEFAULT_INITIAL_MS);
    long cap = recovery_duration_ms(res, "backoff_max", RECOVERY_DEFAULT_MAX_MS);
    long delay = initial;
    for (json_int_t i = 0; i < used && delay < cap; i++)
        delay *= 2;
    if (delay > cap)
        delay = cap;
    snprintf(msg, sizeof(msg), "%s%s%s; attempt %d starts in %lds%s", reason, message ? ": " : "",
             message ? message : "", attempt + 1, delay / 1000,
             node_fault ? " (a node fault does not spend the retry budget)" : "");
    tg_event_t ev = {.state = "Recovering", .reason = reason, .message = msg, .source = source};
    rc = tg_store_run_transition_locked(conn, run_id, attempt, &ev, NULL, &applied);
    if (rc == TG_OK && applied)
        rc = recovery_next(conn, run_id, facts, reason, node_fault ? 0 : delay);
out:
    if (rc == TG_OK)
        rc = tg_db_commit(conn);
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        tg_log_warn("engine", "run %s: recovery after %s failed; will see it again", run_id,
                    reason);
    }
    json_decref(facts);
    return rc;
}

tg_rc_e tg_recovery_resume(tg_db_conn_t *conn, const tg_recovery_resume_t *ask, char *why,
                           size_t whylen)
{
    const char *run_id = ask->run_id;
    json_t *facts = NULL;
    const char *oom = NULL;
    tg_rc_e rc = recovery_begin(conn, run_id, &facts);
    if (rc != TG_OK)
        goto out;
    const char *state = json_string_value(json_object_get(facts, "state"));
    int attempt = (int)json_integer_value(json_object_get(facts, "attempt"));
    if (strcmp(state, "Failed") != 0) {
        snprintf(why, whylen, "only a Failed run can be resumed; this one is %s", state);
        rc = TG_ECONFLICT;
        goto out;
    }
    rc = tg_store_recovery_pod_reason(conn, run_id, attempt, &oom);
    if (rc == TG_OK && oom && !strcmp(oom, "OOMKilled") && !ask->force) {
        snprintf(why, whylen,
                 "the last attempt was OOMKilled and would likely fail the same way; "
                 "raise compute.memory or resume with force");
        rc = TG_ECONFLICT;
        goto out;
    }
    if (rc == TG_OK)
        rc = tg_store_recovery_reopen(conn, run_id);
    if (rc == TG_OK) {
        char msg[256];
        snprintf(msg, sizeof(msg), "resumed by %s as attempt %d", ask->who, attempt + 1);
        tg_event_t ev = {
            .state = "Recovering", .reason = "Resumed", .message = msg, .source = "user"};
        rc = tg_store_event_append_locked(conn, run_id, &ev); /* facts locked the run */
    }
    if (rc == TG_OK)
        rc = recovery_next(conn, run_id, facts, "Resumed", 0);
out:
    if (rc == TG_OK)
        rc = tg_db_commit(conn);
    else
        tg_db_rollback(conn);
    json_decref(facts);
    return rc;
}
