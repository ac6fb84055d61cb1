/* Cluster objects → run states. */
#include "engine/watcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "engine/nodes.h"
#include "engine/recovery.h"
#include "kube/verbs.h"
#include "render/metadata.h"
#include "store/lifecycle.h"
#include "store/recovery.h"

static const char *w_str(const json_t *o, const char *a, const char *b)
{
    const json_t *x = json_object_get(o, a);
    return json_string_value(b ? json_object_get(x, b) : x);
}

/* The condition of `type` in status.conditions, or NULL. */
static const json_t *w_condition(const json_t *obj, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

static int w_true(const json_t *cond)
{
    const char *s = json_string_value(json_object_get(cond, "status"));
    return s && strcmp(s, "True") == 0;
}

static void w_apply(tg_db_conn_t *conn, const char *run_id, int attempt, const char *state,
                    const char *reason, const char *message, const char *source,
                    const json_t *queue_info)
{
    tg_event_t ev = {.state = state, .reason = reason, .message = message, .source = source};
    int applied = 0;
    if (tg_store_run_transition(conn, run_id, attempt, &ev, queue_info, &applied) != TG_OK)
        tg_log_warn("engine", "run %s: could not record %s", run_id, state);
    else if (applied)
        tg_log_info("engine", "run %s attempt %d: %s (%s)", run_id, attempt, state,
                    reason ? reason : "");
}

static const json_t *w_terminated(const json_t *pod);

/* Ask the cluster how the attempt's pods ended: "OOMKilled", "Evicted" or
 * NULL. Used when the Job's failure arrives before its pods' last events. */
static const char *w_pods_reason(tg_kube_client_t *kube, const char *run_id, int attempt)
{
    if (!kube)
        return NULL;
    char selector[160];
    snprintf(selector, sizeof(selector), "%s=%s,%s=%d", TG_LABEL_RUN_ID, run_id, TG_LABEL_ATTEMPT,
             attempt);
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_pods};
    tg_kube_list_opts_t o = {.label_selector = selector};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    const char *why = NULL;
    if (tg_kube_list(kube, &ref, &o, &res) == TG_OK) {
        size_t i;
        json_t *pod;
        json_array_foreach(json_object_get(res.body, "items"), i, pod)
        {
            const char *pr = w_str(pod, "status", "reason");
            const char *tr = json_string_value(json_object_get(w_terminated(pod), "reason"));
            if (tr && !strcmp(tr, "OOMKilled"))
                why = "OOMKilled";
            else if (!why && pr && !strcmp(pr, "Evicted"))
                why = "Evicted";
        }
    }
    tg_kube_result_clean(&res);
    return why;
}

/* An attempt failed: when its pods say why (OOMKilled, Evicted), recovery
 * decides; otherwise the run fails with the object's own reason. */
static void w_failed(tg_kube_client_t *kube, tg_db_conn_t *conn, const char *run_id, int attempt,
                     const char *reason, const char *message, const char *source)
{
    const char *pod_reason = NULL;
    if (tg_store_recovery_pod_reason(conn, run_id, attempt, &pod_reason) == TG_OK && !pod_reason)
        pod_reason = w_pods_reason(kube, run_id, attempt); /* the Pod event may lag */
    /* a pod that failed or was evicted on a faulty node: NodeFault, which does
     * not spend the retry budget (an OOMKill stays the run's own doing) */
    char node_fault[512];
    if ((!pod_reason || !strcmp(pod_reason, "Evicted")) &&
        tg_nodes_attempt_fault(conn, run_id, attempt, node_fault, sizeof(node_fault)) == 1) {
        tg_recovery_on_failure(conn, run_id, attempt, "NodeFault", node_fault, "node");
        return;
    }
    if (pod_reason)
        tg_recovery_on_failure(conn, run_id, attempt, pod_reason, message, "pod");
    else
        w_apply(conn, run_id, attempt, "Failed", reason ? reason : "Failed", message, source, NULL);
}

/* The workload's place in its LocalQueue, from Kueue's visibility API:
 * sets qi.position (1-based) and qi.pending when known. */
static void w_position(tg_kube_client_t *kube, const json_t *wl, json_t *qi)
{
    const char *ns = w_str(wl, "metadata", "namespace");
    const char *lq = w_str(wl, "spec", "queueName");
    const char *name = w_str(wl, "metadata", "name");
    if (!kube || !ns || !lq || !name)
        return;
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_visibility_localqueues,
                         .ns = ns,
                         .name = lq,
                         .sub = "pendingworkloads"};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    if (tg_kube_get(kube, &ref, &res) == TG_OK) {
        const json_t *items = json_object_get(res.body, "items");
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
            const char *n = w_str(it, "metadata", "name");
            if (n && !strcmp(n, name)) {
                json_object_set_new(
                    qi, "position",
                    json_integer(json_integer_value(json_object_get(it, "positionInLocalQueue")) +
                                 1));
                json_object_set_new(qi, "pending",
                                    json_integer((json_int_t)json_array_size(items)));
            }
        }
    }
    tg_kube_result_clean(&res);
}

json_t *tg_watcher_admission(const json_t *wl)
{
    const json_t *adm = json_object_get(json_object_get(wl, "status"), "admission");
    const char *cq = json_string_value(json_object_get(adm, "clusterQueue"));
    json_t *flavors = json_object();
    size_t i;
    json_t *psa;
    json_array_foreach(json_object_get(adm, "podSetAssignments"), i, psa)
    {
        json_object_update(flavors, json_object_get(psa, "flavors"));
    }
    return json_pack("{s:s?, s:s?, s:s, s:o}", "local_queue", w_str(wl, "spec", "queueName"),
                     "workload", w_str(wl, "metadata", "name"), "cluster_queue", cq ? cq : "",
                     "flavors", flavors);
}

/* Workload → Queued / Admitted / Recovering. */
static void w_workload(tg_kube_client_t *kube, tg_db_conn_t *conn, tg_kube_event_type_e type,
                       const json_t *obj)
{
    if (type == TG_KUBE_EV_DELETED)
        return;
    const json_t *owner =
        json_array_get(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), 0);
    const char *ns = w_str(obj, "metadata", "namespace");
    const char *oname = json_string_value(json_object_get(owner, "name"));
    char run_id[37];
    int attempt;
    if (!ns || !oname || tg_store_attempt_by_object(conn, ns, oname, run_id, &attempt) != TG_OK)
        return;
    if (w_true(w_condition(obj, "Finished")))
        return; /* the Job or RayJob says how it ended */
    const json_t *evicted = w_condition(obj, "Evicted");
    const json_t *admitted = w_condition(obj, "Admitted");
    const json_t *reserved = w_condition(obj, "QuotaReserved");
    json_t *qi = json_pack("{s:s?, s:s?}", "local_queue", w_str(obj, "spec", "queueName"),
                           "workload", w_str(obj, "metadata", "name"));
    if (w_true(evicted) && !w_true(admitted)) {
        /* Kueue would requeue the same Job; taugate starts a new attempt
         * instead, when the run's resilience allows it */
        const char *ereason = json_string_value(json_object_get(evicted, "reason"));
        const char *why =
            w_true(w_condition(obj, "Preempted")) || (ereason && !strcmp(ereason, "Preempted"))
                ? "Preempted"
                : "Evicted";
        tg_recovery_on_failure(conn, run_id, attempt, why,
                               json_string_value(json_object_get(evicted, "message")), "kueue");
        json_decref(qi);
        return;
    }
    if (w_true(admitted)) {
        json_decref(qi);
        qi = tg_watcher_admission(obj);
        w_apply(conn, run_id, attempt, "Admitted", "Admitted",
                json_string_value(json_object_get(admitted, "message")), "kueue", qi);
    } else if (!w_true(reserved)) {
        const json_t *why = reserved ? reserved : w_condition(obj, "Pending");
        const char *msg = json_string_value(json_object_get(why, "message"));
        char words[1024];
        w_position(kube, obj, qi);
        json_int_t pos = json_integer_value(json_object_get(qi, "position"));
        json_int_t of = json_integer_value(json_object_get(qi, "pending"));
        if (pos > 0)
            snprintf(words, sizeof(words), "%s; queue position %lld of %lld",
                     msg ? msg : "waiting for quota", (long long)pos, (long long)of);
        else
            snprintf(words, sizeof(words), "%s", msg ? msg : "waiting in the queue for quota");
        json_object_set_new(qi, "message", json_string(words));
        w_apply(conn, run_id, attempt, "Queued",
                why ? json_string_value(json_object_get(why, "reason")) : "Pending", words, "kueue",
                qi);
    }
    json_decref(qi);
}

/* Job or RayJob → terminal states (and deletion by someone else). */
static void w_owner(tg_kube_client_t *kube, tg_db_conn_t *conn, const char *kind,
                    tg_kube_event_type_e type, const json_t *obj)
{
    const char *ns = w_str(obj, "metadata", "namespace");
    const char *name = w_str(obj, "metadata", "name");
    char run_id[37];
    int attempt;
    if (!ns || !name || tg_store_attempt_by_object(conn, ns, name, run_id, &attempt) != TG_OK)
        return;
    const char *src = !strcmp(kind, "Job") ? "job" : "rayjob";
    if (type == TG_KUBE_EV_DELETED) {
        w_apply(conn, run_id, attempt, "Failed", "ObjectDeleted",
                "the run's objects were deleted outside taugate", src, NULL);
        return;
    }
    if (!strcmp(kind, "Job")) {
        const json_t *done = w_condition(obj, "Complete");
        const json_t *failed = w_condition(obj, "Failed");
        if (w_true(done))
            w_apply(conn, run_id, attempt, "Succeeded", "Completed",
                    "every pod finished successfully", src, NULL);
        else if (w_true(failed))
            w_failed(kube, conn, run_id, attempt,
                     json_string_value(json_object_get(failed, "reason")),
                     json_string_value(json_object_get(failed, "message")), src);
        return;
    }
    const char *job = w_str(obj, "status", "jobStatus");
    const char *dep = w_str(obj, "status", "jobDeploymentStatus");
    const char *msg = w_str(obj, "status", "message");
    if (job && !strcmp(job, "SUCCEEDED"))
        w_apply(conn, run_id, attempt, "Succeeded", "Succeeded",
                msg ? msg : "the Ray job succeeded", src, NULL);
    else if ((job && (!strcmp(job, "FAILED") || !strcmp(job, "STOPPED"))) ||
             (dep && !strcmp(dep, "Failed")))
        w_failed(kube, conn, run_id, attempt, dep && !strcmp(dep, "Failed") ? "Failed" : job,
                 msg ? msg : "the Ray job failed", src);
    else if (dep && !strcmp(dep, "Running"))
        w_apply(conn, run_id, attempt, "Running", "RayJobRunning", "the Ray cluster is up", src,
                NULL);
}

/* The first terminated container state of a pod, for exit code and reason. */
static const json_t *w_terminated(const json_t *pod)
{
    size_t i;
    json_t *cs;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "containerStatuses"), i, cs)
    {
        const json_t *t = json_object_get(json_object_get(cs, "state"), "terminated");
        if (t)
            return t;
    }
    return NULL;
}

static void w_pod(tg_db_conn_t *conn, tg_kube_event_type_e type, const json_t *obj)
{
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    const char *run_id = json_string_value(json_object_get(labels, TG_LABEL_RUN_ID));
    const char *att = json_string_value(json_object_get(labels, TG_LABEL_ATTEMPT));
    if (!run_id || !att || type == TG_KUBE_EV_DELETED)
        return;
    const char *node_type = json_string_value(json_object_get(labels, "ray.io/node-type"));
    tg_buf_t names;
    tg_buf_init(&names, 64 * 1024);
    tg_rc_e brc = tg_buf_puts(&names, "{");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "spec"), "containers"), i, c)
    {
        brc |= tg_buf_printf(&names, "%s\"%s\"", i ? "," : "",
                             json_string_value(json_object_get(c, "name")));
    }
    brc |= tg_buf_puts(&names, "}");
    const json_t *term = w_terminated(obj);
    const char *phase = w_str(obj, "status", "phase");
    tg_pod_row_t row = {.run_id = run_id,
                        .attempt = atoi(att),
                        .ns = w_str(obj, "metadata", "namespace"),
                        .pod = w_str(obj, "metadata", "name"),
                        .uid = w_str(obj, "metadata", "uid"),
                        .role = node_type ? node_type : "main",
                        .node = w_str(obj, "spec", "nodeName"),
                        .phase = phase ? phase : "Pending",
                        .containers = brc == TG_OK ? names.data : "{}",
                        .has_exit_code = term != NULL,
                        .exit_code = (int)json_integer_value(json_object_get(term, "exitCode")),
                        .reason = json_string_value(json_object_get(term, "reason")),
                        .started_at = w_str(obj, "status", "startTime"),
                        .finished_at = json_string_value(json_object_get(term, "finishedAt"))};
    if (row.ns && row.pod && row.uid && tg_store_pod_upsert(conn, &row) != TG_OK)
        tg_log_warn("engine", "pod %s/%s: could not be recorded", row.ns, row.pod);
    tg_buf_clean(&names);
    if (phase && !strcmp(phase, "Running"))
        w_apply(conn, run_id, row.attempt, "Running", "PodRunning",
                row.node ? "a pod of the run is running" : "running", "pod", NULL);
}

void tg_watcher_observe(tg_db_pool_t *pool, tg_kube_client_t *kube, const char *kind,
                        tg_kube_event_type_e type, const json_t *obj)
{
    if (type == TG_KUBE_EV_SYNC || type == TG_KUBE_EV_BOOKMARK || !obj)
        return;
    tg_db_conn_t *conn = NULL;
    if (tg_db_checkout(pool, &conn) != TG_OK) {
        tg_log_warn("engine",
                    "watcher: database unavailable; a %s event is deferred to the "
                    "next relist",
                    kind);
        return;
    }
    if (!strcmp(kind, "Workload"))
        w_workload(kube, conn, type, obj);
    else if (!strcmp(kind, "Pod"))
        w_pod(conn, type, obj);
    else
        w_owner(kube, conn, kind, type, obj);
    tg_db_release(pool, conn);
}
