/* Cluster objects → run states. */
#include "engine/watcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "engine/nodes.h"
#include "engine/positions.h"
#include "engine/engine.h"
#include "kube/path.h"
#include "kube/verbs.h"
#include "render/metadata.h"
#include "store/lifecycle.h"
#include "store/recovery.h"

/* How long a look-up in the cluster may take before the cache's answer
 * stands. */
#define W_LOOKUP_MS 2000

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
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c) {
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

static tg_rc_e w_transition(tg_db_conn_t *conn, const char *run_id, int attempt,
                            const tg_event_t *ev, const json_t *queue_info,
                            const tg_event_t *admission, const json_t *admission_info)
{
    int applied = 0;
    tg_rc_e rc = tg_store_run_transition(conn, run_id, attempt, ev, queue_info, admission,
                                         admission_info, &applied);
    if (rc != TG_OK)
        tg_log_warn("engine", "run %s: could not record %s (%s); it will be tried again", run_id,
                    ev->state, tg_rc_slug(rc));
    else if (applied)
        tg_log_info("engine", "run %s attempt %d: %s (%s)", run_id, attempt, ev->state,
                    ev->reason ? ev->reason : "");
    return rc;
}

static tg_rc_e w_apply(tg_db_conn_t *conn, const char *run_id, int attempt, const char *state,
                       const char *reason, const char *message, const char *source,
                       const json_t *queue_info)
{
    tg_event_t ev = {.state = state, .reason = reason, .message = message, .source = source};
    return w_transition(conn, run_id, attempt, &ev, queue_info, NULL, NULL);
}

/* A run seen Running or Succeeded (from its pod or its Job): workers apply
 * objects in any order, so its Workload's admission may not be applied yet.
 * What the Workload cache shows of it (owner: the Job or RayJob) is recorded
 * with it, as Kueue's admission rather than an implied one. */
static tg_rc_e w_apply_seen(const tg_watcher_env_t *env, tg_db_conn_t *conn, const char *run_id,
                            int attempt, const char *state, const char *reason, const char *message,
                            const char *source, const char *ns, const char *owner)
{
    json_t *wl = NULL;
    char key[512];
    if (env->workloads && ns && owner && tg_kube_cache_key(ns, owner, key, sizeof(key)) == 0) {
        json_t *all = tg_kube_cache_by_index(env->workloads, key);
        wl = json_incref(json_array_get(all, 0));
        json_decref(all);
    }
    /* a finished Workload keeps its admission */
    const json_t *cond = w_condition(wl, "Admitted");
    const char *cq = json_string_value(json_object_get(
        json_object_get(json_object_get(wl, "status"), "admission"), "clusterQueue"));
    int admitted = w_true(cond) || (cq && *cq);
    const char *words = json_string_value(json_object_get(cond, "message"));
    tg_event_t adm = {.state = "Admitted",
                      .reason = "Admitted",
                      .message = words ? words : "admitted by Kueue",
                      .source = "kueue"};
    json_t *qi = admitted ? tg_watcher_admission(wl) : NULL;
    tg_event_t ev = {.state = state, .reason = reason, .message = message, .source = source};
    tg_rc_e rc = w_transition(conn, run_id, attempt, &ev, NULL, admitted ? &adm : NULL, qi);
    json_decref(qi);
    json_decref(wl);
    return rc;
}

static const json_t *w_terminated(const json_t *pod);
static tg_rc_e w_pod(const tg_watcher_env_t *env, tg_db_conn_t *conn, tg_kube_event_type_e type,
                     const json_t *obj);

/* A pod's attempt, from its label (-1 without one). */
static int w_pod_attempt(const json_t *pod)
{
    const char *att = json_string_value(json_object_get(
        json_object_get(json_object_get(pod, "metadata"), "labels"), TG_LABEL_ATTEMPT));
    return att ? atoi(att) : -1;
}

/* The attempt's pods as the cluster has them now (by label, one list call):
 * a new reference to the items, or NULL when they cannot be read. Used when
 * the informer's pods lag the Job's end. */
static json_t *w_cluster_pods(const tg_watcher_env_t *env, const char *ns, const char *run_id,
                              int attempt)
{
    char selector[160];
    if (!env->kube || !ns ||
        snprintf(selector, sizeof(selector), "%s=%s,%s=%d", TG_LABEL_RUN_ID, run_id,
                 TG_LABEL_ATTEMPT, attempt) >= (int)sizeof(selector))
        return NULL;
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_pods, .ns = ns};
    tg_kube_list_opts_t lo = {.label_selector = selector, .timeout_ms = W_LOOKUP_MS};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    json_t *items = tg_kube_list(env->kube, &ref, &lo, &res) == TG_OK
                        ? json_incref(json_object_get(res.body, "items"))
                        : NULL;
    tg_kube_result_clean(&res);
    return items;
}

/* How one attempt's pods ended, from a list of pods: "OOMKilled", "Evicted"
 * or NULL. *settled: 1 when the list holds pods of the attempt and every one
 * of them has ended. */
static const char *w_pods_end(const json_t *pods, int attempt, int *settled)
{
    const char *why = NULL;
    int seen = 0, running = 0;
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod) {
        if (w_pod_attempt(pod) != attempt)
            continue;
        seen++;
        const char *phase = w_str(pod, "status", "phase");
        if (!phase || (strcmp(phase, "Failed") && strcmp(phase, "Succeeded")))
            running++;
        const char *pr = w_str(pod, "status", "reason");
        const char *tr = json_string_value(json_object_get(w_terminated(pod), "reason"));
        if (tr && !strcmp(tr, "OOMKilled"))
            why = "OOMKilled";
        else if (!why && pr && !strcmp(pr, "Evicted"))
            why = "Evicted";
    }
    *settled = seen > 0 && running == 0;
    return why;
}

/* How the attempt's pods ended: "OOMKilled", "Evicted" or NULL. Used when
 * the Job's failure is applied before its pods' last events: the Job and
 * its pods come on different watches, so the informer's pods may not have
 * ended yet. Then the attempt's pods are read from the cluster (by label,
 * once per failed attempt), and if that fails the cache's answer stands. */
static const char *w_pods_reason(const tg_watcher_env_t *env, const char *ns, const char *run_id,
                                 int attempt)
{
    int settled = 0;
    const char *why = NULL;
    if (env->pods) {
        json_t *pods = tg_kube_cache_by_index(env->pods, run_id);
        why = w_pods_end(pods, attempt, &settled);
        json_decref(pods);
    }
    if (why || settled)
        return why;
    json_t *pods = w_cluster_pods(env, ns, run_id, attempt);
    if (pods)
        why = w_pods_end(pods, attempt, &settled);
    json_decref(pods);
    return why;
}

/* Record the attempt's pods before its success is, when none is recorded
 * yet: the Job and its pods come on different watches, and a run that ended
 * with no pod recorded would have a log that is "complete" with nothing in
 * it (the log collector works from the recorded pods; their own events
 * update the rows later). The informer's pods of the attempt, or when it
 * has none, the cluster's (by label). */
static tg_rc_e w_record_pods(const tg_watcher_env_t *env, tg_db_conn_t *conn, const char *ns,
                             const char *run_id, int attempt)
{
    json_t *pods = env->pods ? tg_kube_cache_by_index(env->pods, run_id) : NULL;
    size_t seen = 0, i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
        seen += w_pod_attempt(pod) == attempt;
    if (!seen) {
        json_decref(pods);
        pods = w_cluster_pods(env, ns, run_id, attempt);
    }
    tg_rc_e rc = TG_OK;
    json_array_foreach(pods, i, pod) {
        if (rc == TG_OK && w_pod_attempt(pod) == attempt)
            rc = w_pod(env, conn, TG_KUBE_EV_MODIFIED, pod);
    }
    json_decref(pods);
    return rc;
}

/* An attempt failed: when its pods say why (OOMKilled, Evicted), recovery
 * decides; otherwise the run fails with the object's own reason. */
static tg_rc_e w_failed(const tg_watcher_env_t *env, tg_db_conn_t *conn, const char *ns,
                        const char *run_id, int attempt, const char *reason, const char *message,
                        const char *source)
{
    const char *pod_reason = NULL;
    tg_rc_e rc = tg_store_recovery_pod_reason(conn, run_id, attempt, &pod_reason);
    if (rc != TG_OK)
        return rc;
    if (!pod_reason)
        pod_reason = w_pods_reason(env, ns, run_id, attempt); /* the Pod event may lag */
    /* a pod that failed or was evicted on a faulty node: NodeFault, which does
     * not spend the retry budget (an OOMKill stays the run's own doing) */
    char node_fault[512];
    if (!pod_reason || !strcmp(pod_reason, "Evicted")) {
        int fault = tg_nodes_attempt_fault(conn, run_id, attempt, node_fault, sizeof(node_fault));
        if (fault < 0)
            return TG_EUNAVAILABLE;
        if (fault == 1)
            return tg_recovery_on_failure(conn, run_id, attempt, "NodeFault", node_fault, "node");
    }
    if (pod_reason)
        return tg_recovery_on_failure(conn, run_id, attempt, pod_reason, message, "pod");
    return w_apply(conn, run_id, attempt, "Failed", reason ? reason : "Failed", message, source,
                   NULL);
}

json_t *tg_watcher_admission(const json_t *wl)
{
    const json_t *adm = json_object_get(json_object_get(wl, "status"), "admission");
    const char *cq = json_string_value(json_object_get(adm, "clusterQueue"));
    json_t *flavors = json_object();
    size_t i;
    json_t *psa;
    json_array_foreach(json_object_get(adm, "podSetAssignments"), i, psa) {
        json_object_update(flavors, json_object_get(psa, "flavors"));
    }
    return json_pack("{s:s?, s:s?, s:s, s:o}", "local_queue", w_str(wl, "spec", "queueName"),
                     "workload", w_str(wl, "metadata", "name"), "cluster_queue", cq ? cq : "",
                     "flavors", flavors);
}

/* Workload → Queued / Admitted / Recovering. */
static tg_rc_e w_workload(const tg_watcher_env_t *env, tg_db_conn_t *conn,
                          tg_kube_event_type_e type, const json_t *obj)
{
    if (type == TG_KUBE_EV_DELETED)
        return TG_OK;
    const json_t *owner =
        json_array_get(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), 0);
    const char *ns = w_str(obj, "metadata", "namespace");
    const char *oname = json_string_value(json_object_get(owner, "name"));
    char run_id[37];
    int attempt;
    if (!ns || !oname)
        return TG_OK;
    if (w_true(w_condition(obj, "Finished")))
        return TG_OK; /* the Job or RayJob says how it ended */
    const json_t *evicted = w_condition(obj, "Evicted");
    const json_t *admitted = w_condition(obj, "Admitted");
    const json_t *reserved = w_condition(obj, "QuotaReserved");
    /* reserved, not yet admitted: nothing to record (and no look-up) */
    if (w_true(reserved) && !w_true(admitted) && !w_true(evicted))
        return TG_OK;
    tg_rc_e rc = tg_store_attempt_by_object(conn, ns, oname, run_id, &attempt, NULL);
    if (rc != TG_OK)
        return rc == TG_ENOTFOUND ? TG_OK : rc; /* not one of ours */
    if (w_true(evicted) && !w_true(admitted)) {
        /* Kueue would requeue the same Job; taugate starts a new attempt
         * instead, when the run's resilience allows it */
        const char *ereason = json_string_value(json_object_get(evicted, "reason"));
        const char *why =
            w_true(w_condition(obj, "Preempted")) || (ereason && !strcmp(ereason, "Preempted"))
                ? "Preempted"
                : "Evicted";
        return tg_recovery_on_failure(conn, run_id, attempt, why,
                                      json_string_value(json_object_get(evicted, "message")),
                                      "kueue");
    }
    if (w_true(admitted)) {
        json_t *qi = tg_watcher_admission(obj);
        rc = w_apply(conn, run_id, attempt, "Admitted", "Admitted",
                     json_string_value(json_object_get(admitted, "message")), "kueue", qi);
        json_decref(qi);
        return rc;
    }
    const json_t *why = reserved ? reserved : w_condition(obj, "Pending");
    const char *msg = json_string_value(json_object_get(why, "message"));
    const char *lq = w_str(obj, "spec", "queueName");
    const char *wl = w_str(obj, "metadata", "name");
    long pos = 0, of = 0;
    char words[1024];
    tg_positions_lookup(env->positions, env->kube, ns, lq, wl, &pos, &of);
    if (pos > 0)
        snprintf(words, sizeof(words), "%s; queue position %ld of %ld",
                 msg ? msg : "waiting for quota", pos, of);
    else
        snprintf(words, sizeof(words), "%s", msg ? msg : "waiting in the queue for quota");
    json_t *qi =
        json_pack("{s:s?, s:s?, s:s}", "local_queue", lq, "workload", wl, "message", words);
    if (pos > 0) {
        json_object_set_new(qi, "position", json_integer(pos));
        json_object_set_new(qi, "pending", json_integer(of));
    }
    rc = w_apply(conn, run_id, attempt, "Queued",
                 why ? json_string_value(json_object_get(why, "reason")) : "Pending", words,
                 "kueue", qi);
    json_decref(qi);
    return rc;
}

/* Whether a Job or RayJob shows something w_owner records: its deletion, its
 * end, or a RayJob's cluster up. Checked before the run is looked up, so
 * the churn of a running object costs no round trip. */
static int w_owner_news(const char *kind, tg_kube_event_type_e type, const json_t *obj)
{
    if (type == TG_KUBE_EV_DELETED)
        return 1;
    if (!strcmp(kind, "Job"))
        return w_true(w_condition(obj, "Complete")) || w_true(w_condition(obj, "Failed"));
    const char *job = w_str(obj, "status", "jobStatus");
    const char *dep = w_str(obj, "status", "jobDeploymentStatus");
    return (job &&
            (!strcmp(job, "SUCCEEDED") || !strcmp(job, "FAILED") || !strcmp(job, "STOPPED"))) ||
           (dep && (!strcmp(dep, "Failed") || !strcmp(dep, "Running")));
}

/* Job or RayJob → terminal states (and deletion by someone else). */
static tg_rc_e w_owner(const tg_watcher_env_t *env, tg_db_conn_t *conn, const char *kind,
                       tg_kube_event_type_e type, const json_t *obj)
{
    const char *ns = w_str(obj, "metadata", "namespace");
    const char *name = w_str(obj, "metadata", "name");
    char run_id[37];
    int attempt;
    if (!ns || !name || !w_owner_news(kind, type, obj))
        return TG_OK;
    int has_pods = 0;
    tg_rc_e rc = tg_store_attempt_by_object(conn, ns, name, run_id, &attempt, &has_pods);
    if (rc != TG_OK)
        return rc == TG_ENOTFOUND ? TG_OK : rc;
    const char *src = !strcmp(kind, "Job") ? "job" : "rayjob";
    if (type == TG_KUBE_EV_DELETED)
        return w_apply(conn, run_id, attempt, "Failed", "ObjectDeleted",
                       "the run's objects were deleted outside taugate", src, NULL);
    if (!strcmp(kind, "Job")) {
        const json_t *done = w_condition(obj, "Complete");
        const json_t *failed = w_condition(obj, "Failed");
        if (w_true(done)) {
            rc = has_pods ? TG_OK : w_record_pods(env, conn, ns, run_id, attempt);
            return rc != TG_OK ? rc
                               : w_apply_seen(env, conn, run_id, attempt, "Succeeded", "Completed",
                                              "every pod finished successfully", src, ns, name);
        }
        if (w_true(failed))
            return w_failed(env, conn, ns, run_id, attempt,
                            json_string_value(json_object_get(failed, "reason")),
                            json_string_value(json_object_get(failed, "message")), src);
        return TG_OK;
    }
    const char *job = w_str(obj, "status", "jobStatus");
    const char *dep = w_str(obj, "status", "jobDeploymentStatus");
    const char *msg = w_str(obj, "status", "message");
    if (job && !strcmp(job, "SUCCEEDED")) {
        rc = has_pods ? TG_OK : w_record_pods(env, conn, ns, run_id, attempt);
        return rc != TG_OK ? rc
                           : w_apply_seen(env, conn, run_id, attempt, "Succeeded", "Succeeded",
                                          msg ? msg : "the Ray job succeeded", src, ns, name);
    }
    if ((job && (!strcmp(job, "FAILED") || !strcmp(job, "STOPPED"))) ||
        (dep && !strcmp(dep, "Failed")))
        return w_failed(env, conn, ns, run_id, attempt,
                        dep && !strcmp(dep, "Failed") ? "Failed" : job,
                        msg ? msg : "the Ray job failed", src);
    if (dep && !strcmp(dep, "Running"))
        return w_apply_seen(env, conn, run_id, attempt, "Running", "RayJobRunning",
                            "the Ray cluster is up", src, ns, name);
    return TG_OK;
}

/* The first terminated container state of a pod, for exit code and reason. */
static const json_t *w_terminated(const json_t *pod)
{
    size_t i;
    json_t *cs;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "containerStatuses"), i,
                       cs) {
        const json_t *t = json_object_get(json_object_get(cs, "state"), "terminated");
        if (t)
            return t;
    }
    return NULL;
}

static tg_rc_e w_pod(const tg_watcher_env_t *env, tg_db_conn_t *conn, tg_kube_event_type_e type,
                     const json_t *obj)
{
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    const char *run_id = json_string_value(json_object_get(labels, TG_LABEL_RUN_ID));
    const char *att = json_string_value(json_object_get(labels, TG_LABEL_ATTEMPT));
    if (!run_id || !att || type == TG_KUBE_EV_DELETED)
        return TG_OK;
    const char *node_type = json_string_value(json_object_get(labels, "ray.io/node-type"));
    tg_buf_t names;
    tg_buf_init(&names, 64 * 1024);
    int names_ok = tg_buf_puts(&names, "{") == TG_OK;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "spec"), "containers"), i, c) {
        names_ok =
            names_ok && tg_buf_printf(&names, "%s\"%s\"", i ? "," : "",
                                      json_string_value(json_object_get(c, "name"))) == TG_OK;
    }
    names_ok = names_ok && tg_buf_puts(&names, "}") == TG_OK;
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
                        .containers = names_ok ? names.data : "{}", /* 64 KiB of names: not a pod */
                        .has_exit_code = term != NULL,
                        .exit_code = (int)json_integer_value(json_object_get(term, "exitCode")),
                        .reason = json_string_value(json_object_get(term, "reason")),
                        .started_at = w_str(obj, "status", "startTime"),
                        .finished_at = json_string_value(json_object_get(term, "finishedAt"))};
    tg_rc_e rc = TG_OK;
    if (row.ns && row.pod && row.uid)
        rc = tg_store_pod_upsert(conn, &row);
    tg_buf_clean(&names);
    if (rc != TG_OK) {
        tg_log_warn("engine", "pod %s/%s: could not be recorded (%s); it will be tried again",
                    row.ns, row.pod, tg_rc_slug(rc));
        return rc;
    }
    if (phase && !strcmp(phase, "Running")) {
        /* a Job's pods name it as their owner (a RayJob's name its RayCluster) */
        const json_t *owner =
            json_array_get(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), 0);
        const char *okind = json_string_value(json_object_get(owner, "kind"));
        const char *oname = okind && !strcmp(okind, "Job")
                                ? json_string_value(json_object_get(owner, "name"))
                                : NULL;
        rc = w_apply_seen(env, conn, run_id, row.attempt, "Running", "PodRunning",
                          row.node ? "a pod of the run is running" : "running", "pod", row.ns,
                          oname);
    }
    return rc;
}

tg_rc_e tg_watcher_apply(tg_db_conn_t *conn, const tg_watcher_env_t *env, const char *kind,
                         tg_kube_event_type_e type, const json_t *obj)
{
    if (type == TG_KUBE_EV_SYNC || type == TG_KUBE_EV_BOOKMARK || !obj)
        return TG_OK;
    if (!strcmp(kind, "Workload"))
        return w_workload(env, conn, type, obj);
    if (!strcmp(kind, "Pod"))
        return w_pod(env, conn, type, obj);
    return w_owner(env, conn, kind, type, obj);
}
