/* The Job controller. */
#include "jobs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "events.h"
#include "gc.h"
#include "index.h"
#include "map.h"
#include "podtemplate.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"
#include "validate.h"
#include "work.h"

#define TRACKING       "batch.kubernetes.io/job-tracking"
#define CONTROLLER_UID "batch.kubernetes.io/controller-uid"

/* Job uid -> earliest time a replacement pod may be created. */
static ks_map_t *g_backoff;
/* Job uid -> references of its pods (their controller-uid label). */
static ks_index_t *g_pods;

static int free_val(const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    free(val);
    return 0;
}

void ks_jobs_shutdown(void)
{
    ks_index_free(g_pods);
    g_pods = NULL;
    if (!g_backoff)
        return;
    ks_map_each(g_backoff, free_val, NULL);
    ks_map_free(g_backoff);
    g_backoff = NULL;
}

void ks_jobs_observe(int rt, json_t *old, json_t *obj)
{
    if (rt == KS_RT_JOBS) {
        if (obj)
            ks_work_add_obj(KS_WQ_JOBS, rt, obj);
        return;
    }
    if (rt != KS_RT_PODS)
        return;
    if (!g_pods)
        g_pods = ks_index_new();
    const char *was = ks_label(old, CONTROLLER_UID), *is = ks_label(obj, CONTROLLER_UID);
    char ref[KS_REF_MAX];
    ks_ref_of(rt, obj ? obj : old, ref, sizeof(ref));
    if (was && !ks_streq(was, is))
        ks_index_del(g_pods, was, ref);
    if (is)
        ks_index_add(g_pods, is, ref);
    /* Every pod change may change its job's counts. A pod whose Job is
     * gone is the controller's to release (ks_jobs_pass). */
    int jrt;
    json_t *job = ks_store_get_uid(is ? is : was, &jrt);
    if (job && jrt == KS_RT_JOBS)
        ks_work_add_obj(KS_WQ_JOBS, jrt, job);
    else if (obj && ks_finalizer_has(obj, TRACKING))
        ks_work_add(KS_WQ_JOBS, ref);
}

/* Sync the job again at time t (back-off end, deadline, TTL). */
static void sync_at(json_t *job, double t)
{
    char ref[KS_REF_MAX];
    ks_ref_of(KS_RT_JOBS, job, ref, sizeof(ref));
    ks_work_at(t, KS_WQ_JOBS, ref);
}

static double backoff_get(const char *uid)
{
    double *d = g_backoff ? ks_map_get(g_backoff, uid) : NULL;
    return d ? *d : 0;
}

static void backoff_set(json_t *job, double t)
{
    const char *uid = ks_meta_uid(job);
    sync_at(job, t);
    if (!g_backoff)
        g_backoff = ks_map_new();
    double *d = ks_map_get(g_backoff, uid);
    if (!d) {
        /* Kept for the process lifetime, like the controller's queue. */
        d = tg_xmalloc(sizeof(*d));
        ks_map_put(g_backoff, uid, d);
    }
    *d = t;
}

static int pod_terminal(json_t *p)
{
    const char *ph = ks_jstr(p, "status.phase");
    return ks_streq(ph, "Succeeded") || ks_streq(ph, "Failed");
}

static void create_pod(json_t *job, long index)
{
    char name[300], sfx[8];
    ks_rand_suffix(sfx, sizeof(sfx));
    if (index >= 0)
        snprintf(name, sizeof(name), "%s-%ld-%s", ks_meta_name(job), index, sfx);
    else
        snprintf(name, sizeof(name), "%s-%s", ks_meta_name(job), sfx);
    json_t *pod = ks_pod_from_template(job, "batch/v1", "Job", ks_jget(job, "spec.template"), name);
    json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
    json_object_set_new(meta, "finalizers", json_pack("[s]", TRACKING));
    if (index >= 0) {
        char idx[32];
        snprintf(idx, sizeof(idx), "%ld", index);
        json_object_set_new(ks_jobj(meta, "labels"), "batch.kubernetes.io/job-completion-index",
                            json_string(idx));
        json_object_set_new(ks_jobj(meta, "annotations"),
                            "batch.kubernetes.io/job-completion-index", json_string(idx));
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, "containers"), i, c)
        {
            json_t *env = json_object_get(c, "env");
            if (!json_is_array(env)) {
                env = json_array();
                json_object_set_new(c, "env", env);
            }
            json_array_append_new(
                env, json_pack("{s:s,s:s}", "name", "JOB_COMPLETION_INDEX", "value", idx));
        }
    }
    ks_defaults(KS_RT_PODS, pod, NULL);
    if (ks_store_create(KS_RT_PODS, pod, NULL) == KS_OK)
        ks_event_emit(KS_RT_JOBS, job, "Normal", "SuccessfulCreate", "Created pod: %s", name);
}

/* podFailurePolicy verdict for a failed pod: 0 count, 1 ignore, 2 fail job. */
static int failure_policy(json_t *job, json_t *pod, char *msg, size_t n)
{
    size_t ri;
    json_t *rule;
    json_array_foreach(ks_jget(job, "spec.podFailurePolicy.rules"), ri, rule)
    {
        const char *action = ks_jstr(rule, "action");
        int match = 0;
        json_t *oe = json_object_get(rule, "onExitCodes");
        if (oe) {
            const char *cname = ks_jstr(oe, "containerName");
            const char *op = ks_jstr(oe, "operator");
            size_t ci;
            json_t *cs;
            json_array_foreach(ks_jget(pod, "status.containerStatuses"), ci, cs)
            {
                if (cname && !ks_streq(cname, ks_jstr(cs, "name")))
                    continue;
                json_t *ec = ks_jget(cs, "state.terminated.exitCode");
                if (!ec || json_integer_value(ec) == 0)
                    continue;
                int in = 0;
                size_t vi;
                json_t *v;
                json_array_foreach(json_object_get(oe, "values"), vi,
                                   v) if (json_integer_value(v) == json_integer_value(ec)) in = 1;
                if ((ks_streq(op, "In") && in) || (ks_streq(op, "NotIn") && !in)) {
                    match = 1;
                    snprintf(msg, n,
                             "Container %s for pod %s/%s failed with exit code %lld "
                             "matching %s rule at index %zu",
                             ks_jstr(cs, "name"), ks_meta_ns(pod), ks_meta_name(pod),
                             (long long)json_integer_value(ec), action, ri);
                    break;
                }
            }
        }
        size_t pi;
        json_t *pc;
        json_array_foreach(json_object_get(rule, "onPodConditions"), pi, pc)
        {
            json_t *cond = ks_cond_get(json_object_get(pod, "status"), ks_jstr(pc, "type"));
            const char *want = ks_jstr(pc, "status") ? ks_jstr(pc, "status") : "True";
            if (cond && ks_streq(ks_jstr(cond, "status"), want)) {
                match = 1;
                snprintf(msg, n, "Pod %s/%s has condition %s matching %s rule at index %zu",
                         ks_meta_ns(pod), ks_meta_name(pod), ks_jstr(pc, "type"), action, ri);
            }
        }
        if (!match)
            continue;
        if (ks_streq(action, "Ignore"))
            return 1;
        if (ks_streq(action, "FailJob"))
            return 2;
        return 0;
    }
    return 0;
}

static void sync_job(json_t *job, json_t *pods)
{
    /* Finished, nothing left to count or delete, no TTL: nothing to do.
     * Checked before the copy because most Jobs at scale are like this. */
    json_t *st0 = json_object_get(job, "status");
    if ((ks_cond_true(st0, "Complete") || ks_cond_true(st0, "Failed")) &&
        !ks_jget(job, "spec.ttlSecondsAfterFinished")) {
        int busy = 0;
        size_t k;
        json_t *pp;
        json_array_foreach(pods, k, pp) if (!pod_terminal(pp) || ks_finalizer_has(pp, TRACKING))
            busy = 1;
        if (!busy)
            return;
    }
    json_t *c = ks_copy_for_status(job);
    json_t *st = ks_jobj(c, "status");
    const char *uid = ks_meta_uid(job);
    int suspended = ks_jbool(job, "spec.suspend", 0);
    int finished = ks_cond_true(st, "Complete") || ks_cond_true(st, "Failed");
    long long succeeded = ks_jint(st, "succeeded", 0), failed = ks_jint(st, "failed", 0);
    long long active = 0, terminating = 0, ready = 0;
    char fmsg[600] = "";
    int fail_job = 0;
    int indexed = ks_streq(ks_jstr(job, "spec.completionMode"), "Indexed");
    long long comp = ks_jint(job, "spec.completions", -1);
    char *done_idx = NULL;
    if (indexed && comp > 0 && comp < 100000)
        done_idx = tg_xcalloc((size_t)comp, 1);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        int deleting = ks_jget(p, "metadata.deletionTimestamp") != NULL;
        long idx = (long)strtol(ks_annotation(p, "batch.kubernetes.io/job-completion-index")
                                    ? ks_annotation(p, "batch.kubernetes.io/job-completion-index")
                                    : "-1",
                                NULL, 10);
        if (pod_terminal(p)) {
            if (ks_finalizer_has(p, TRACKING)) {
                json_t *pc = ks_copy_for_status(p);
                ks_finalizer_remove(pc, TRACKING);
                if (ks_streq(ks_jstr(p, "status.phase"), "Succeeded")) {
                    succeeded++;
                } else if (!(suspended && deleting)) {
                    char m[600];
                    int verdict = failure_policy(job, p, m, sizeof(m));
                    if (verdict == 2) {
                        fail_job = 1;
                        ks_strlcpy(fmsg, m, sizeof(fmsg));
                    }
                    if (verdict != 1) {
                        failed++;
                        double base = ks_cfg.backoff_base * pow(2.0, (double)(failed - 1));
                        backoff_set(job, ks_now() + (base > 600 ? 600 : base));
                    }
                }
                ks_store_update(KS_RT_PODS, pc, NULL);
            }
            if (done_idx && idx >= 0 && idx < comp &&
                ks_streq(ks_jstr(p, "status.phase"), "Succeeded"))
                done_idx[idx] = 1;
            continue;
        }
        if (deleting) {
            terminating++;
            continue;
        }
        active++;
        if (ks_cond_true(json_object_get(p, "status"), "Ready"))
            ready++;
    }
    /* Indexed jobs count distinct completed indexes. */
    if (done_idx) {
        long long n = 0;
        for (long long k = 0; k < comp; k++)
            n += done_idx[k];
        if (n > succeeded)
            succeeded = n;
    }
    long long backoff_limit = ks_jint(job, "spec.backoffLimit", 6);
    int stop_pods = finished || suspended || ks_cond_true(st, "FailureTarget") ||
                    ks_cond_true(st, "SuccessCriteriaMet");
    if (!finished && !suspended) {
        if (ks_cond_true(st, "Suspended")) {
            ks_cond_set(st, "Suspended", "False", "JobResumed", "Job resumed", 1);
            json_object_set_new(st, "startTime", ks_json_now());
            ks_event_emit(KS_RT_JOBS, job, "Normal", "Resumed", "Job resumed");
        }
        if (!json_object_get(st, "startTime"))
            json_object_set_new(st, "startTime", ks_json_now());
        long long ads = ks_jint(job, "spec.activeDeadlineSeconds", 0);
        double start = ks_parse_time(ks_jstr(st, "startTime"));
        if (!ks_cond_true(st, "FailureTarget") && !ks_cond_true(st, "SuccessCriteriaMet")) {
            if (fail_job) {
                ks_cond_set(st, "FailureTarget", "True", "PodFailurePolicy", fmsg, 1);
            } else if (failed > backoff_limit) {
                ks_cond_set(st, "FailureTarget", "True", "BackoffLimitExceeded",
                            "Job has reached the specified backoff limit", 1);
            } else if (ads > 0 && start > 0 && ks_now() - start >= (double)ads) {
                ks_cond_set(st, "FailureTarget", "True", "DeadlineExceeded",
                            "Job was active longer than specified deadline", 1);

            } else if ((comp > 0 && succeeded >= comp) ||
                       (comp < 0 && succeeded > 0 && active == 0)) {
                ks_cond_set(st, "SuccessCriteriaMet", "True", "CompletionsReached",
                            "Reached expected number of succeeded pods", 1);
            }
        }
        stop_pods = ks_cond_true(st, "FailureTarget") || ks_cond_true(st, "SuccessCriteriaMet");
        if (!stop_pods && ads > 0 && start > 0)
            sync_at(job, start + (double)ads); /* activeDeadlineSeconds */
    }
    if (stop_pods) {
        json_array_foreach(pods, i, p)
        {
            if (!pod_terminal(p) && !ks_jget(p, "metadata.deletionTimestamp")) {
                ks_delete(KS_RT_PODS, ks_meta_ns(p), ks_meta_name(p), "Background", -1, NULL);
                active--;
                terminating++;
            }
        }
        if (active < 0)
            active = 0;
    }
    if (suspended && !finished) {
        if (ks_cond_set(st, "Suspended", "True", "JobSuspended", "Job suspended", 1))
            ks_event_emit(KS_RT_JOBS, job, "Normal", "Suspended", "Job suspended");
    }
    /* Terminal conditions wait until no pod is active or terminating. */
    if (!finished && active == 0 && terminating == 0) {
        json_t *ft = ks_cond_get(st, "FailureTarget");
        if (ft && ks_streq(ks_jstr(ft, "status"), "True")) {
            ks_cond_set(st, "Failed", "True", ks_jstr(ft, "reason"), ks_jstr(ft, "message"), 1);
            ks_event_emit(KS_RT_JOBS, job, "Warning", ks_jstr(ft, "reason"), "%s",
                          ks_jstr(ft, "message"));
            finished = 1;
        } else if (ks_cond_true(st, "SuccessCriteriaMet")) {
            ks_cond_set(st, "Complete", "True", "CompletionsReached",
                        "Reached expected number of succeeded pods", 1);
            json_object_set_new(st, "completionTime", ks_json_now());
            ks_event_emit(KS_RT_JOBS, job, "Normal", "Completed", "Job completed");
            finished = 1;
        }
    }
    if (!finished && !suspended && !stop_pods) {
        long long par = ks_jint(job, "spec.parallelism", 1);
        long long want = par;
        if (comp > 0 && comp - succeeded < want)
            want = comp - succeeded;
        if (ks_streq(ks_jstr(job, "spec.podReplacementPolicy"), "Failed"))
            want -= terminating;
        if (active < want && ks_now() >= backoff_get(uid)) {
            for (long long k = active; k < want; k++) {
                long index = -1;
                if (done_idx) {
                    /* The lowest index neither done nor running. */
                    for (long long x = 0; x < comp && index < 0; x++) {
                        if (done_idx[x])
                            continue;
                        int busy = 0;
                        json_array_foreach(pods, i, p)
                        {
                            const char *a =
                                ks_annotation(p, "batch.kubernetes.io/job-completion-index");
                            if (a && atol(a) == x && !pod_terminal(p))
                                busy = 1;
                        }
                        if (!busy)
                            index = (long)x;
                    }
                    if (index < 0)
                        break;
                    done_idx[index] = 1; /* claimed for this pass */
                }
                create_pod(job, index);
                active++;
            }
        }
    }
    free(done_idx);
    if (active)
        json_object_set_new(st, "active", json_integer(active));
    else
        json_object_del(st, "active");
    if (succeeded)
        json_object_set_new(st, "succeeded", json_integer(succeeded));
    if (failed)
        json_object_set_new(st, "failed", json_integer(failed));
    json_object_set_new(st, "ready", json_integer(ready));
    json_object_set_new(st, "terminating", json_integer(terminating));
    json_object_set_new(st, "uncountedTerminatedPods", json_object());
    ks_store_update(KS_RT_JOBS, c, NULL);
    /* TTL-after-finished controller. */
    json_t *ttl = ks_jget(job, "spec.ttlSecondsAfterFinished");
    json_t *cur = ks_store_get(KS_RT_JOBS, ks_meta_ns(job), ks_meta_name(job));
    if (ttl && finished && cur && !ks_jget(cur, "metadata.deletionTimestamp")) {
        json_t *cst = json_object_get(cur, "status");
        json_t *fc = ks_cond_get(cst, ks_cond_true(cst, "Complete") ? "Complete" : "Failed");
        double t = ks_parse_time(ks_jstr(fc, "lastTransitionTime"));
        if (t > 0 && ks_now() >= t + (double)json_integer_value(ttl))
            ks_delete(KS_RT_JOBS, ks_meta_ns(job), ks_meta_name(job), "Background", -1, NULL);
        else if (t > 0)
            sync_at(cur, t + (double)json_integer_value(ttl));
    }
}

/* A pod the controller no longer counts, because its Job is being deleted
 * or is gone: its tracking finalizer goes once it is terminal or being
 * deleted, as the Job controller releases it, so that neither the pod nor
 * a foreground deletion of its Job waits on it forever. */
static void release_pod(json_t *p)
{
    if (!ks_finalizer_has(p, TRACKING) ||
        (!pod_terminal(p) && !ks_jget(p, "metadata.deletionTimestamp")))
        return;
    json_t *pc = ks_copy_for_status(p);
    ks_finalizer_remove(pc, TRACKING);
    ks_store_update(KS_RT_PODS, pc, NULL);
}

/* The job's pods: those whose controller-uid label names it. */
static json_t *job_pods(json_t *job)
{
    json_t *pods = json_array();
    char **refs = NULL;
    size_t n = ks_index_members(g_pods, ks_meta_uid(job), &refs);
    for (size_t i = 0; i < n; i++) {
        json_t *p = ks_store_get_ref(refs[i], NULL);
        if (p && ks_streq(ks_label(p, CONTROLLER_UID), ks_meta_uid(job)))
            json_array_append(pods, p);
    }
    ks_index_release(refs, n);
    return pods;
}

void ks_jobs_pass(void)
{
    char **refs = NULL;
    size_t n = ks_work_take(KS_WQ_JOBS, KS_WORK_ROUND, &refs);
    for (size_t i = 0; i < n; i++) {
        int rt;
        json_t *obj = json_incref(ks_store_get_ref(refs[i], &rt));
        if (!obj)
            continue;
        if (rt == KS_RT_PODS) {
            int jrt;
            json_t *owner = ks_store_get_uid(ks_label(obj, CONTROLLER_UID), &jrt);
            if (!owner || jrt != KS_RT_JOBS)
                release_pod(obj);
            json_decref(obj);
            continue;
        }
        json_t *pods = job_pods(obj);
        if (ks_jget(obj, "metadata.deletionTimestamp") &&
            ks_finalizer_has(obj, "foregroundDeletion")) {
            size_t k;
            json_t *p;
            json_array_foreach(pods, k, p) release_pod(p);
        } else {
            sync_job(obj, pods);
        }
        json_decref(pods);
        json_decref(obj);
    }
    ks_work_release(refs, n);
}
