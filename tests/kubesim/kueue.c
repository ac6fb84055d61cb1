/* Kueue: Workloads for queued Jobs and RayJobs, job start/stop, finish,
 * eviction follow-up, queue status and pending positions. */
#include "kueue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "gc.h"
#include "kueue_int.h"
#include "map.h"
#include "quantity.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"
#include "work.h"

/* Job uid -> reference of its Workload (the job-uid label). */
static ks_map_t *g_wl_by_job;

int kq_wl_finished(json_t *wl)
{
    return ks_cond_true(json_object_get(wl, "status"), "Finished");
}

int kq_wl_reserved(json_t *wl)
{
    return ks_jget(wl, "status.admission") != NULL && !kq_wl_finished(wl);
}

int kq_wl_pending(json_t *wl)
{
    return !ks_jget(wl, "status.admission") && !kq_wl_finished(wl) &&
           ks_jbool(wl, "spec.active", 1) && !ks_jget(wl, "metadata.deletionTimestamp");
}

void kq_wl_update(json_t *copy)
{
    ks_store_update(KS_RT_WORKLOADS, copy, NULL);
}

/* Workload name: lower(kind)-name-sha1(kind\ngroup\nname\nuid)[:5]. */
static void wl_name(const char *kind, const char *group, json_t *job, char *out, size_t n)
{
    char buf[1024], hex[64], lk[32], prefix[300];
    ks_fmt(buf, sizeof(buf), "%s\n%s\n%s\n%s", kind, group, ks_meta_name(job), ks_meta_uid(job));
    ks_sha1_hex(buf, strlen(buf), hex, sizeof(hex));
    ks_lower(lk, kind, sizeof(lk));
    ks_fmt(prefix, sizeof(prefix), "%s-%s", lk, ks_meta_name(job));
    if (strlen(prefix) > 247)
        prefix[247] = '\0';
    ks_fmt(out, n, "%s-%.5s", prefix, hex);
}

/* A pod template with the job-controller labels removed. */
static json_t *podset_template(json_t *tmpl)
{
    json_t *t = json_deep_copy(tmpl ? tmpl : json_object());
    json_t *labels = ks_jget(t, "metadata.labels");
    const char *drop[] = {"job-name", "controller-uid", "batch.kubernetes.io/job-name",
                          "batch.kubernetes.io/controller-uid"};
    for (size_t i = 0; i < 4; i++)
        json_object_del(labels, drop[i]);
    return t;
}

static json_t *podsets_for_job(json_t *job)
{
    long long par = ks_jint(job, "spec.parallelism", 1);
    long long comp = ks_jint(job, "spec.completions", par);
    long long count = par < comp ? par : comp;
    return json_pack("[{s:s,s:I,s:o}]", "name", "main", "count", (json_int_t)count, "template",
                     podset_template(ks_jget(job, "spec.template")));
}

static json_t *podsets_for_rayjob(json_t *rj)
{
    json_t *ps = json_array();
    json_t *head = ks_jget(rj, "spec.rayClusterSpec.headGroupSpec.template");
    json_array_append_new(ps, json_pack("{s:s,s:i,s:o}", "name", "head", "count", 1, "template",
                                        podset_template(head)));
    size_t i;
    json_t *wg;
    json_array_foreach(ks_jget(rj, "spec.rayClusterSpec.workerGroupSpecs"), i, wg)
    {
        json_t *rep = json_object_get(wg, "replicas");
        long long count = (rep ? json_integer_value(rep) : 1) * ks_jint(wg, "numOfHosts", 1);
        json_array_append_new(ps, json_pack("{s:s?,s:I,s:o}", "name", ks_jstr(wg, "groupName"),
                                            "count", (json_int_t)count, "template",
                                            podset_template(json_object_get(wg, "template"))));
    }
    const char *mode = ks_jstr(rj, "spec.submissionMode");
    if (!mode || !strcmp(mode, "K8sJobMode")) {
        json_t *tmpl = ks_jget(rj, "spec.submitterPodTemplate");
        json_t *t;
        if (tmpl) {
            t = podset_template(tmpl);
        } else {
            const char *img = ks_jstr(json_array_get(ks_jget(head, "spec.containers"), 0),
                                      "image");
            t = json_pack("{s:{s:[{s:s,s:s,s:{s:{s:s,s:s},s:{s:s,s:s}}}],s:s}}", "spec",
                          "containers", "name", "ray-job-submitter", "image", img ? img : "ray",
                          "resources", "requests", "cpu", "500m", "memory", "200Mi", "limits",
                          "cpu", "1", "memory", "1Gi", "restartPolicy", "Never");
        }
        json_array_append_new(ps, json_pack("{s:s,s:i,s:o}", "name", "submitter", "count", 1,
                                            "template", t));
    }
    return ps;
}

/* Create the Workload for a queued job; returns 0, or -1 when Kueue could
 * not build it (missing priority class). */
static int create_workload(int rt, json_t *job, const char *name)
{
    const char *kind = rt == KS_RT_JOBS ? "Job" : "RayJob";
    const char *gv = rt == KS_RT_JOBS ? "batch/v1" : "ray.io/v1";
    const char *pc = ks_label(job, KQ_PRIO_LABEL);
    long long prio = 0;
    if (pc) {
        json_t *wpc = ks_store_get(KS_RT_WPCS, NULL, pc);
        if (!wpc)
            return -1;
        prio = ks_jint(wpc, "value", 0);
    }
    json_t *wl = json_pack(
        "{s:s,s:s,s:{s:s,s:s,s:{s:s},s:[{s:s,s:s,s:s,s:s,s:b,s:b}],s:[s]},s:{s:s,s:b,s:I,s:o}}",
        "apiVersion", "kueue.x-k8s.io/v1beta1", "kind", "Workload", "metadata", "name", name,
        "namespace", ks_meta_ns(job), "labels", KQ_JOBUID_LABEL, ks_meta_uid(job),
        "ownerReferences", "apiVersion", gv, "kind", kind, "name", ks_meta_name(job), "uid",
        ks_meta_uid(job), "controller", 1, "blockOwnerDeletion", 1, "finalizers", KQ_FINALIZER,
        "spec", "queueName", ks_label(job, KQ_QUEUE_LABEL), "active", 1, "priority",
        (json_int_t)prio, "podSets", rt == KS_RT_JOBS ? podsets_for_job(job)
                                                      : podsets_for_rayjob(job));
    if (!wl)
        return -1;
    if (pc) {
        ks_jset(wl, "spec.priorityClassName", json_string(pc));
        ks_jset(wl, "spec.priorityClassSource",
                json_string("kueue.x-k8s.io/workloadpriorityclass"));
    } else {
        ks_jset(wl, "spec.priorityClassSource", json_string(""));
    }
    if (ks_store_create(KS_RT_WORKLOADS, wl, NULL) == KS_OK)
        ks_event_emit(rt, job, "Normal", "CreatedWorkload", "Created Workload: %s/%s",
                      ks_meta_ns(job), name);
    return 0;
}

/* Owned by another object Kueue manages (RayJob's cluster, submitter)? */
static int managed_by_parent(json_t *job)
{
    size_t i;
    json_t *ref;
    json_array_foreach(ks_jget(job, "metadata.ownerReferences"), i, ref)
    {
        if (ks_jbool(ref, "controller", 0))
            return 1;
    }
    return 0;
}

static int job_finished(int rt, json_t *job, int *ok, const char **msg)
{
    if (rt == KS_RT_JOBS) {
        json_t *st = json_object_get(job, "status");
        json_t *c = ks_cond_get(st, "Complete");
        if (c && ks_streq(ks_jstr(c, "status"), "True")) {
            *ok = 1;
            *msg = ks_jstr(c, "message");
            return 1;
        }
        c = ks_cond_get(st, "Failed");
        if (c && ks_streq(ks_jstr(c, "status"), "True")) {
            *ok = 0;
            *msg = ks_jstr(c, "message");
            return 1;
        }
        return 0;
    }
    const char *ds = ks_jstr(job, "status.jobDeploymentStatus");
    if (ks_streq(ds, "Complete") || ks_streq(ds, "Failed")) {
        *ok = ks_streq(ks_jstr(job, "status.jobStatus"), "SUCCEEDED");
        *msg = ks_jstr(job, "status.message");
        if (!*msg)
            *msg = *ok ? "Job finished successfully" : "Job failed";
        return 1;
    }
    return 0;
}

static int job_stopped(int rt, json_t *job)
{
    if (rt == KS_RT_JOBS)
        return ks_jbool(job, "spec.suspend", 0) && ks_jint(job, "status.active", 0) == 0 &&
               ks_jint(job, "status.terminating", 0) == 0;
    const char *ds = ks_jstr(job, "status.jobDeploymentStatus");
    return ks_jbool(job, "spec.suspend", 0) && (ks_streq(ds, "Suspended") || !ds || !ds[0]);
}

/* Templates in a job that carry a podset: (path, podset name). */
static int job_templates(int rt, json_t *job, const char **paths, const char **names,
                         char bufs[][128], int max)
{
    int n = 0;
    if (rt == KS_RT_JOBS) {
        paths[0] = "spec.template";
        names[0] = "main";
        return 1;
    }
    paths[n] = "spec.rayClusterSpec.headGroupSpec.template";
    names[n++] = "head";
    size_t i;
    json_t *wg;
    json_array_foreach(ks_jget(job, "spec.rayClusterSpec.workerGroupSpecs"), i, wg)
    {
        if (n >= max - 1)
            break;
        ks_fmt(bufs[n], 128, "spec.rayClusterSpec.workerGroupSpecs.%zu.template", i);
        paths[n] = bufs[n];
        names[n++] = ks_jstr(wg, "groupName");
    }
    paths[n] = "spec.submitterPodTemplate";
    names[n++] = "submitter";
    return n;
}

/* Borrowed template at a path that may index an array ("a.3.b"). */
static json_t *tmpl_at(json_t *job, const char *path)
{
    char buf[200];
    ks_strlcpy(buf, path, sizeof(buf));
    json_t *cur = job;
    char *p = buf;
    while (cur && p) {
        char *dot = strchr(p, '.');
        if (dot)
            *dot = '\0';
        if (json_is_array(cur))
            cur = json_array_get(cur, (size_t)strtoul(p, NULL, 10));
        else
            cur = json_object_get(cur, p);
        p = dot ? dot + 1 : NULL;
    }
    return cur;
}

/* Start: unsuspend and merge the flavors' node labels and tolerations. */
static void start_job(int rt, json_t *job, json_t *wl)
{
    json_t *c = json_deep_copy(job);
    const char *paths[10], *names[10];
    char bufs[10][128];
    int n = job_templates(rt, c, paths, names, bufs, 10);
    for (int i = 0; i < n; i++) {
        json_t *t = tmpl_at(c, paths[i]);
        if (!json_is_object(t))
            continue;
        json_t *assign = NULL;
        size_t k;
        json_t *a;
        json_array_foreach(ks_jget(wl, "status.admission.podSetAssignments"), k, a) if (ks_streq(ks_jstr(a, "name"), names[i])) assign = a;
        if (!assign)
            continue;
        json_object_set_new(ks_jobj(t, "metadata.labels"), KQ_PODSET_LABEL,
                            json_string(names[i]));
        const char *res;
        json_t *fl;
        json_object_foreach(json_object_get(assign, "flavors"), res, fl)
        {
            json_t *rf = ks_store_get(KS_RT_RESOURCEFLAVORS, NULL, json_string_value(fl));
            const char *lk;
            json_t *lv;
            json_t *ns = ks_jobj(t, "spec.nodeSelector");
            json_object_foreach(ks_jget(rf, "spec.nodeLabels"), lk, lv) if (!json_object_get(ns, lk)) json_object_set(ns, lk, lv);
            if (!json_object_size(ns))
                ks_jdel(t, "spec.nodeSelector");
            size_t ti;
            json_t *tol;
            json_array_foreach(ks_jget(rf, "spec.tolerations"), ti, tol)
            {
                json_t *tl = ks_jget(t, "spec.tolerations");
                if (!json_is_array(tl)) {
                    tl = json_array();
                    ks_jset(t, "spec.tolerations", tl);
                }
                int dup = 0;
                size_t x;
                json_t *e;
                json_array_foreach(tl, x, e) if (json_equal(e, tol)) dup = 1;
                if (!dup)
                    json_array_append(tl, tol);
            }
        }
    }
    ks_jset(c, "spec.suspend", json_false());
    ks_store_update(rt, c, NULL);
    ks_event_emit(rt, job, "Normal", "Started", "Admitted by clusterQueue %s",
                  ks_jstr(wl, "status.admission.clusterQueue"));
}

/* Stop: suspend, restore templates from the workload's podsets, clear
 * status.startTime so scheduling fields may change again. */
static void stop_job(int rt, json_t *job, json_t *wl, const char *why)
{
    json_t *c = json_deep_copy(job);
    const char *paths[10], *names[10];
    char bufs[10][128];
    int n = job_templates(rt, c, paths, names, bufs, 10);
    for (int i = 0; i < n; i++) {
        json_t *t = tmpl_at(c, paths[i]);
        json_t *orig = NULL;
        size_t k;
        json_t *ps;
        json_array_foreach(ks_jget(wl, "spec.podSets"), k, ps) if (ks_streq(ks_jstr(ps, "name"), names[i])) orig = json_object_get(ps, "template");
        if (!json_is_object(t) || !orig)
            continue;
        json_object_del(ks_jget(t, "metadata.labels"), KQ_PODSET_LABEL);
        json_t *v = ks_jget(orig, "spec.nodeSelector");
        if (v)
            ks_jset(t, "spec.nodeSelector", json_deep_copy(v));
        else
            ks_jdel(t, "spec.nodeSelector");
        v = ks_jget(orig, "spec.tolerations");
        if (v)
            ks_jset(t, "spec.tolerations", json_deep_copy(v));
        else
            ks_jdel(t, "spec.tolerations");
    }
    ks_jset(c, "spec.suspend", json_true());
    if (rt == KS_RT_JOBS)
        ks_jdel(c, "status.startTime");
    ks_store_update(rt, c, NULL);
    ks_event_emit(rt, job, "Normal", "Stopped", "%s", why);
}

static void sync_workload(json_t *wl)
{
    int rt = -1;
    json_t *owner = NULL;
    json_t *ref = json_array_get(ks_jget(wl, "metadata.ownerReferences"), 0);
    if (ref)
        owner = ks_store_get_uid(ks_jstr(ref, "uid"), &rt);
    if (ks_jget(wl, "metadata.deletionTimestamp")) {
        if (owner && !ks_jget(owner, "metadata.deletionTimestamp") && rt >= 0 &&
            !ks_jbool(owner, "spec.suspend", 0))
            stop_job(rt, owner, wl, "Workload is deleted");
        json_t *c = ks_copy_for_status(wl);
        if (ks_finalizer_remove(c, KQ_FINALIZER))
            kq_wl_update(c);
        else
            json_decref(c);
        return;
    }
    if (!owner || (rt != KS_RT_JOBS && rt != KS_RT_RAYJOBS))
        return; /* the garbage collector removes orphans */
    if (kq_wl_finished(wl) && !ks_finalizer_has(wl, KQ_FINALIZER))
        return; /* done; skip the copy */
    json_t *c = ks_copy_for_status(wl);
    json_t *st = ks_jobj(c, "status");
    int ok = 0;
    const char *msg = NULL;
    if (!kq_wl_finished(wl) && job_finished(rt, owner, &ok, &msg)) {
        ks_cond_set(st, "Finished", "True", ok ? "Succeeded" : "Failed", msg ? msg : "", 0);
        ks_finalizer_remove(c, KQ_FINALIZER);
        kq_wl_update(c);
        return;
    }
    if (kq_wl_finished(wl)) {
        if (ks_finalizer_remove(c, KQ_FINALIZER))
            kq_wl_update(c);
        else
            json_decref(c);
        return;
    }
    /* Priority label changes flow to the Workload. */
    const char *pc = ks_label(owner, KQ_PRIO_LABEL);
    json_t *wpc = pc ? ks_store_get(KS_RT_WPCS, NULL, pc) : NULL;
    if (wpc)
        ks_jset(c, "spec.priority", json_integer(ks_jint(wpc, "value", 0)));
    int evicted = ks_cond_true(st, "Evicted");
    int admitted = ks_cond_true(st, "Admitted");
    int active = ks_jbool(wl, "spec.active", 1);
    if (!active && !evicted && ks_jget(wl, "status.admission")) {
        ks_cond_set(st, "Evicted", "True", "Deactivated", "The workload is deactivated", 0);
        evicted = 1;
    }
    if (evicted && ks_jget(wl, "status.admission")) {
        if (!ks_jbool(owner, "spec.suspend", 0)) {
            json_t *ev = ks_cond_get(st, "Evicted");
            stop_job(rt, owner, wl, ks_jstr(ev, "message") ? ks_jstr(ev, "message") : "Evicted");
        } else if (job_stopped(rt, owner)) {
            json_t *ev = ks_cond_get(st, "Evicted");
            const char *reason = ks_jstr(ev, "reason");
            char emsg[1024];
            ks_strlcpy(emsg, ks_jstr(ev, "message") ? ks_jstr(ev, "message") : "", sizeof(emsg));
            json_object_del(st, "admission");
            ks_cond_set(st, "QuotaReserved", "False", "Pending", emsg, 0);
            ks_cond_set(st, "Admitted", "False", "NoReservation", "The workload has no reservation",
                        0);
            int requeue = ks_streq(reason, "Preempted") || ks_streq(reason, "NodeFailures");
            ks_cond_set(st, "Requeued", requeue ? "True" : "False", reason ? reason : "",
                        emsg, 0);
            json_t *stats = ks_jobj(st, "schedulingStats");
            json_t *evs = json_object_get(stats, "evictions");
            if (!json_is_array(evs)) {
                evs = json_array();
                json_object_set_new(stats, "evictions", evs);
            }
            json_array_append_new(evs, json_pack("{s:s,s:s,s:i}", "reason", reason ? reason : "",
                                                 "underlyingCause", "", "count", 1));
        }
    } else if (admitted && !evicted && ks_jbool(owner, "spec.suspend", 0)) {
        start_job(rt, owner, wl);
    } else if (!admitted && !ks_jbool(owner, "spec.suspend", 0) && !job_finished(rt, owner, &ok, &msg)) {
        stop_job(rt, owner, wl, "Not admitted by cluster queue");
    }
    kq_wl_update(c);
}

/* A Workload for a queued job that has none yet. */
static void ensure_workload(int rt, json_t *job)
{
    if (!ks_label(job, KQ_QUEUE_LABEL) || managed_by_parent(job) ||
        ks_jget(job, "metadata.deletionTimestamp") || ks_map_get(g_wl_by_job, ks_meta_uid(job)))
        return;
    int ok;
    const char *msg;
    if (job_finished(rt, job, &ok, &msg))
        return;
    char name[320];
    wl_name(rt == KS_RT_JOBS ? "Job" : "RayJob", rt == KS_RT_JOBS ? "batch" : "ray.io", job, name,
            sizeof(name));
    if (ks_store_get(KS_RT_WORKLOADS, ks_meta_ns(job), name))
        return;
    create_workload(rt, job, name);
}

/* ---- what each store change asks of Kueue ---- */

static int queue_all(json_t *o, void *arg)
{
    int *qrt = arg;
    ks_work_add_obj(qrt[0], qrt[1], o);
    return 0;
}

static void queue_every(int q, int rt)
{
    int qrt[2] = {q, rt};
    ks_store_each(rt, queue_all, qrt);
}

static void observe_workload(json_t *old, json_t *obj)
{
    json_t *w = obj ? obj : old;
    const char *ju = ks_label(w, KQ_JOBUID_LABEL);
    char ref[KS_REF_MAX];
    ks_ref_of(KS_RT_WORKLOADS, w, ref, sizeof(ref));
    if (obj) {
        if (ju && !old)
            free(ks_map_put(g_wl_by_job, ju, tg_xstrdup(ref)));
        ks_work_add(KS_WQ_WORKLOADS, ref);
    } else if (ju) {
        const char *cur = ks_map_get(g_wl_by_job, ju);
        if (cur && !strcmp(cur, ref))
            free(ks_map_del(g_wl_by_job, ju));
        /* The job may need a new one. */
        int jrt;
        json_t *job = ks_store_get_uid(ju, &jrt);
        if (job)
            ks_work_add_obj(KS_WQ_QUEUED, jrt, job);
    }
    kq_admit_observe(old, obj);
    kq_status_observe(old, obj);
}

/* Did anything admission depends on change (not just status)? */
static int spec_moved(json_t *old, json_t *obj)
{
    return !old || !obj || ks_jint(old, "metadata.generation", 0) !=
                               ks_jint(obj, "metadata.generation", 0) ||
           !ks_jget(old, "metadata.deletionTimestamp") != !ks_jget(obj, "metadata.deletionTimestamp");
}

void ks_kueue_observe(int rt, json_t *old, json_t *obj)
{
    if (!g_wl_by_job)
        g_wl_by_job = ks_map_new();
    json_t *o = obj ? obj : old;
    switch (rt) {
    case KS_RT_WORKLOADS:
        observe_workload(old, obj);
        break;
    case KS_RT_JOBS:
    case KS_RT_RAYJOBS: {
        if (obj && ks_label(obj, KQ_QUEUE_LABEL))
            ks_work_add_obj(KS_WQ_QUEUED, rt, obj);
        const char *wref = ks_map_get(g_wl_by_job, ks_meta_uid(o));
        if (wref)
            ks_work_add(KS_WQ_WORKLOADS, wref);
        break;
    }
    case KS_RT_WPCS:
        /* Priorities flow to every workload; a missing class may exist now. */
        queue_every(KS_WQ_QUEUED, KS_RT_JOBS);
        queue_every(KS_WQ_QUEUED, KS_RT_RAYJOBS);
        queue_every(KS_WQ_WORKLOADS, KS_RT_WORKLOADS);
        kq_admit_all();
        break;
    case KS_RT_CLUSTERQUEUES:
        if (spec_moved(old, obj))
            kq_admit_all();
        if (!old || !obj)
            kq_status_recount();
        else if (spec_moved(old, obj))
            ks_work_add_obj(KS_WQ_QSTATUS, rt, obj);
        /* LocalQueues report whether their ClusterQueue is active. */
        kq_status_mark_lqs(ks_meta_name(o));
        break;
    case KS_RT_LOCALQUEUES:
        if (spec_moved(old, obj)) {
            kq_admit_all();
            kq_status_recount();
        }
        break;
    case KS_RT_RESOURCEFLAVORS:
        if (spec_moved(old, obj)) {
            kq_admit_all();
            kq_status_mark_cqs();
        }
        break;
    case KS_RT_NAMESPACES: {
        json_t *ol = ks_jget(old, "metadata.labels"), *nl = ks_jget(obj, "metadata.labels");
        if (!old || !obj || !json_equal(ol, nl))
            kq_admit_all();
        break;
    }
    default:
        break;
    }
}

static int free_str(const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    free(val);
    return 0;
}

void ks_kueue_shutdown(void)
{
    if (g_wl_by_job) {
        ks_map_each(g_wl_by_job, free_str, NULL);
        ks_map_free(g_wl_by_job);
        g_wl_by_job = NULL;
    }
    kq_admit_free();
    kq_status_free();
}

void ks_kueue_pass(void)
{
    char **refs = NULL;
    size_t n = ks_work_take(KS_WQ_QUEUED, KS_WORK_ROUND, &refs);
    for (size_t i = 0; i < n; i++) {
        int rt;
        json_t *job = ks_store_get_ref(refs[i], &rt);
        if (job && (rt == KS_RT_JOBS || rt == KS_RT_RAYJOBS))
            ensure_workload(rt, job);
    }
    ks_work_release(refs, n);
    n = ks_work_take(KS_WQ_WORKLOADS, KS_WORK_ROUND, &refs);
    for (size_t i = 0; i < n; i++) {
        json_t *wl = json_incref(ks_store_get_ref(refs[i], NULL));
        if (wl)
            sync_workload(wl);
        json_decref(wl);
    }
    ks_work_release(refs, n);
    kq_admit_pass();
    kq_status_pass();
}
