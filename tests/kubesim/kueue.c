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
        json_t *c = json_deep_copy(wl);
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
    json_t *c = json_deep_copy(wl);
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

/* Workloads for every queued job that has none yet. */
static void ensure_workloads(int rt, ks_map_t *by_job)
{
    json_t **jobs = NULL;
    size_t n = ks_store_list(rt, NULL, &jobs);
    for (size_t i = 0; i < n; i++) {
        json_t *job = jobs[i];
        if (!ks_label(job, KQ_QUEUE_LABEL) || managed_by_parent(job) ||
            ks_jget(job, "metadata.deletionTimestamp") || ks_map_get(by_job, ks_meta_uid(job)))
            continue;
        int ok;
        const char *msg;
        if (job_finished(rt, job, &ok, &msg))
            continue;
        char name[320];
        wl_name(rt == KS_RT_JOBS ? "Job" : "RayJob", rt == KS_RT_JOBS ? "batch" : "ray.io", job,
                name, sizeof(name));
        if (ks_store_get(KS_RT_WORKLOADS, ks_meta_ns(job), name))
            continue;
        create_workload(rt, job, name);
    }
    free(jobs);
}

static void queue_status(void);

void ks_kueue_pass(void)
{
    json_t **wls = NULL;
    size_t n = ks_store_list(KS_RT_WORKLOADS, NULL, &wls);
    ks_map_t *by_job = ks_map_new();
    for (size_t i = 0; i < n; i++) {
        json_incref(wls[i]);
        const char *ju = ks_label(wls[i], KQ_JOBUID_LABEL);
        if (ju)
            ks_map_put(by_job, ju, wls[i]);
    }
    ensure_workloads(KS_RT_JOBS, by_job);
    ensure_workloads(KS_RT_RAYJOBS, by_job);
    ks_map_free(by_job);
    for (size_t i = 0; i < n; i++) {
        sync_workload(wls[i]);
        json_decref(wls[i]);
    }
    free(wls);
    kq_admit_pass();
    queue_status();
}

/* ---- ClusterQueue and LocalQueue status ---- */

typedef struct {
    long long pending, reserving, admitted;
    json_t *usage; /* flavor -> {res -> milli} */
} qcount_t;

static qcount_t *qc_get(ks_map_t *m, const char *key)
{
    qcount_t *q = ks_map_get(m, key);
    if (!q) {
        q = tg_xcalloc(1, sizeof(*q));
        q->usage = json_object();
        ks_map_put(m, key, q);
    }
    return q;
}

static int qc_free(const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    qcount_t *q = val;
    json_decref(q->usage);
    free(q);
    return 0;
}

static void add_usage(qcount_t *q, json_t *wl)
{
    size_t i;
    json_t *a;
    json_array_foreach(ks_jget(wl, "status.admission.podSetAssignments"), i, a)
    {
        const char *res;
        json_t *fl;
        json_object_foreach(json_object_get(a, "flavors"), res, fl)
        {
            json_t *f = json_object_get(q->usage, json_string_value(fl));
            if (!f) {
                f = json_object();
                json_object_set_new(q->usage, json_string_value(fl), f);
            }
            long long v = ks_qty_json(ks_jget(a, "resourceUsage") ? json_object_get(
                                                                        ks_jget(a, "resourceUsage"),
                                                                        res)
                                                                  : NULL);
            json_object_set_new(f, res, json_integer(json_integer_value(json_object_get(f, res)) + v));
        }
    }
}

/* flavorsUsage-style array for the flavors/resources a CQ lists. */
static json_t *flavor_usage(json_t *cq, json_t *usage, int lq)
{
    json_t *out = json_array();
    size_t g;
    json_t *grp;
    json_array_foreach(ks_jget(cq, "spec.resourceGroups"), g, grp)
    {
        size_t f;
        json_t *fl;
        json_array_foreach(json_object_get(grp, "flavors"), f, fl)
        {
            const char *fname = ks_jstr(fl, "name");
            json_t *res = json_array();
            size_t r;
            json_t *rq;
            json_array_foreach(json_object_get(fl, "resources"), r, rq)
            {
                const char *rn = ks_jstr(rq, "name");
                long long used = json_integer_value(json_object_get(
                    json_object_get(usage, fname ? fname : ""), rn ? rn : ""));
                long long nom = ks_qty_json(json_object_get(rq, "nominalQuota"));
                char t[64], b[64];
                ks_qty_fmt(used, t, sizeof(t));
                ks_qty_fmt(used > nom ? used - nom : 0, b, sizeof(b));
                if (lq)
                    json_array_append_new(res, json_pack("{s:s?,s:s}", "name", rn, "total", t));
                else
                    json_array_append_new(res, json_pack("{s:s?,s:s,s:s}", "name", rn, "total", t,
                                                         "borrowed", b));
            }
            json_array_append_new(out, json_pack("{s:s?,s:o}", "name", fname, "resources", res));
        }
    }
    return out;
}

static void queue_status(void)
{
    ks_map_t *cqc = ks_map_new(), *lqc = ks_map_new();
    json_t **wls = NULL;
    size_t n = ks_store_list(KS_RT_WORKLOADS, NULL, &wls);
    for (size_t i = 0; i < n; i++) {
        json_t *wl = wls[i];
        char lkey[600];
        ks_fmt(lkey, sizeof(lkey), "%s/%s", ks_meta_ns(wl), ks_jstr(wl, "spec.queueName"));
        json_t *lqo = ks_store_get(KS_RT_LOCALQUEUES, ks_meta_ns(wl), ks_jstr(wl, "spec.queueName"));
        const char *cqn = ks_jstr(wl, "status.admission.clusterQueue");
        if (!cqn)
            cqn = ks_jstr(lqo, "spec.clusterQueue");
        if (kq_wl_finished(wl))
            continue;
        qcount_t *lq = qc_get(lqc, lkey);
        qcount_t *cq = cqn ? qc_get(cqc, cqn) : NULL;
        if (kq_wl_reserved(wl)) {
            lq->reserving++;
            if (cq)
                cq->reserving++;
            if (ks_cond_true(json_object_get(wl, "status"), "Admitted")) {
                lq->admitted++;
                if (cq)
                    cq->admitted++;
            }
            add_usage(lq, wl);
            if (cq)
                add_usage(cq, wl);
        } else if (kq_wl_pending(wl)) {
            lq->pending++;
            if (cq)
                cq->pending++;
        }
    }
    free(wls);
    json_t **cqs = NULL;
    size_t ncq = ks_store_list(KS_RT_CLUSTERQUEUES, NULL, &cqs);
    for (size_t i = 0; i < ncq; i++) {
        qcount_t *q = qc_get(cqc, ks_meta_name(cqs[i]));
        json_t *c = json_deep_copy(cqs[i]);
        json_t *st = ks_jobj(c, "status");
        json_object_set_new(st, "pendingWorkloads", json_integer(q->pending));
        json_object_set_new(st, "reservingWorkloads", json_integer(q->reserving));
        json_object_set_new(st, "admittedWorkloads", json_integer(q->admitted));
        json_object_set_new(st, "flavorsReservation", flavor_usage(cqs[i], q->usage, 0));
        json_object_set_new(st, "flavorsUsage", flavor_usage(cqs[i], q->usage, 0));
        /* Active unless a flavor is missing or the queue is held. */
        char missing[512] = "";
        size_t g;
        json_t *grp;
        json_array_foreach(ks_jget(cqs[i], "spec.resourceGroups"), g, grp)
        {
            size_t f;
            json_t *fl;
            json_array_foreach(json_object_get(grp, "flavors"), f, fl)
            {
                const char *fn = ks_jstr(fl, "name");
                if (fn && !ks_store_get(KS_RT_RESOURCEFLAVORS, NULL, fn)) {
                    size_t l = strlen(missing);
                    ks_fmt(missing + l, sizeof(missing) - l, "%s%s", l ? ", " : "", fn);
                }
            }
        }
        const char *sp = ks_jstr(cqs[i], "spec.stopPolicy");
        if (missing[0]) {
            char msg[700];
            ks_fmt(msg, sizeof(msg), "Can't admit new workloads: references missing "
                   "ResourceFlavor(s): %s.", missing);
            ks_cond_set(st, "Active", "False", "FlavorNotFound", msg, 0);
        } else if (sp && strcmp(sp, "None")) {
            ks_cond_set(st, "Active", "False", "Stopped", "Can't admit new workloads: is stopped.",
                        0);
        } else {
            ks_cond_set(st, "Active", "True", "Ready", "Can admit new workloads", 0);
        }
        ks_store_update(KS_RT_CLUSTERQUEUES, c, NULL);
    }
    json_t **lqs = NULL;
    size_t nlq = ks_store_list(KS_RT_LOCALQUEUES, NULL, &lqs);
    for (size_t i = 0; i < nlq; i++) {
        char lkey[600];
        ks_fmt(lkey, sizeof(lkey), "%s/%s", ks_meta_ns(lqs[i]), ks_meta_name(lqs[i]));
        qcount_t *q = qc_get(lqc, lkey);
        json_t *c = json_deep_copy(lqs[i]);
        json_t *st = ks_jobj(c, "status");
        json_t *cq = ks_store_get(KS_RT_CLUSTERQUEUES, NULL, ks_jstr(lqs[i], "spec.clusterQueue"));
        json_object_set_new(st, "pendingWorkloads", json_integer(q->pending));
        json_object_set_new(st, "reservingWorkloads", json_integer(q->reserving));
        json_object_set_new(st, "admittedWorkloads", json_integer(q->admitted));
        json_object_set_new(st, "flavorsReservation", flavor_usage(cq, q->usage, 1));
        json_object_set_new(st, "flavorUsage", flavor_usage(cq, q->usage, 1));
        if (!cq)
            ks_cond_set(st, "Active", "False", "ClusterQueueDoesNotExist",
                        "Can't submit new workloads to clusterQueue", 0);
        else if (!ks_cond_true(json_object_get(cq, "status"), "Active"))
            ks_cond_set(st, "Active", "False", "ClusterQueueIsInactive",
                        "Can't submit new workloads to clusterQueue", 0);
        else
            ks_cond_set(st, "Active", "True", "Ready", "Can submit new workloads to localQueue", 0);
        ks_store_update(KS_RT_LOCALQUEUES, c, NULL);
    }
    free(cqs);
    free(lqs);
    ks_map_each(cqc, qc_free, NULL);
    ks_map_each(lqc, qc_free, NULL);
    ks_map_free(cqc);
    ks_map_free(lqc);
}
