/* Kueue ClusterQueue and LocalQueue status: pending, reserving and
 * admitted counts and flavor usage. The counts are kept from Workload
 * changes (each workload adds what it counts for and takes back what it
 * counted before), so writing a queue's status never rescans workloads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kueue_int.h"
#include "map.h"
#include "quantity.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"
#include "work.h"

typedef struct {
    long long pending, reserving, admitted;
    json_t *usage; /* flavor -> {res -> milli} */
} qcount_t;

static ks_map_t *g_cqc; /* ClusterQueue name -> qcount_t */
static ks_map_t *g_lqc; /* "ns/name" -> qcount_t */

/* What one workload counts for. */
typedef struct {
    char lkey[600];
    char cq[256];
    int reserving, admitted, pending;
} contrib_t;

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

static void maps_reset(void)
{
    if (g_cqc) {
        ks_map_each(g_cqc, qc_free, NULL);
        ks_map_each(g_lqc, qc_free, NULL);
        ks_map_free(g_cqc);
        ks_map_free(g_lqc);
    }
    g_cqc = ks_map_new();
    g_lqc = ks_map_new();
}

void kq_status_free(void)
{
    if (!g_cqc)
        return;
    ks_map_each(g_cqc, qc_free, NULL);
    ks_map_each(g_lqc, qc_free, NULL);
    ks_map_free(g_cqc);
    ks_map_free(g_lqc);
    g_cqc = g_lqc = NULL;
}

static void add_usage(qcount_t *q, json_t *wl, int sign)
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
            long long v = ks_qty_json(json_object_get(json_object_get(a, "resourceUsage"), res));
            json_object_set_new(
                f, res, json_integer(json_integer_value(json_object_get(f, res)) + sign * v));
        }
    }
}

/* 0 when the workload counts for nothing (absent or finished). */
static int contrib_of(json_t *wl, contrib_t *c)
{
    if (!wl || kq_wl_finished(wl))
        return 0;
    memset(c, 0, sizeof(*c));
    const char *q = ks_jstr(wl, "spec.queueName");
    ks_fmt(c->lkey, sizeof(c->lkey), "%s/%s", ks_meta_ns(wl), q);
    const char *cqn = ks_jstr(wl, "status.admission.clusterQueue");
    if (!cqn)
        cqn = ks_jstr(ks_store_get(KS_RT_LOCALQUEUES, ks_meta_ns(wl), q), "spec.clusterQueue");
    ks_strlcpy(c->cq, cqn ? cqn : "", sizeof(c->cq));
    if (kq_wl_reserved(wl)) {
        c->reserving = 1;
        c->admitted = ks_cond_true(json_object_get(wl, "status"), "Admitted");
    } else {
        c->pending = kq_wl_pending(wl);
    }
    return 1;
}

static void mark(int rt, const char *ns, const char *name)
{
    char ref[KS_REF_MAX];
    ks_ref_fmt(ref, sizeof(ref), rt, ns, name);
    ks_work_add(KS_WQ_QSTATUS, ref);
}

static void apply(const contrib_t *c, json_t *wl, int sign)
{
    qcount_t *lq = qc_get(g_lqc, c->lkey);
    qcount_t *cq = c->cq[0] ? qc_get(g_cqc, c->cq) : NULL;
    lq->reserving += sign * c->reserving;
    lq->admitted += sign * c->admitted;
    lq->pending += sign * c->pending;
    if (c->reserving)
        add_usage(lq, wl, sign);
    if (cq) {
        cq->reserving += sign * c->reserving;
        cq->admitted += sign * c->admitted;
        cq->pending += sign * c->pending;
        if (c->reserving)
            add_usage(cq, wl, sign);
        mark(KS_RT_CLUSTERQUEUES, NULL, c->cq);
    }
    mark(KS_RT_LOCALQUEUES, ks_meta_ns(wl), ks_jstr(wl, "spec.queueName"));
}

void kq_status_observe(json_t *old, json_t *obj)
{
    if (!g_cqc)
        maps_reset();
    contrib_t a, b;
    int ha = contrib_of(old, &a), hb = contrib_of(obj, &b);
    if (ha && hb && !memcmp(&a, &b, sizeof(a)) &&
        (!a.reserving ||
         json_equal(ks_jget(old, "status.admission"), ks_jget(obj, "status.admission"))))
        return;
    if (ha)
        apply(&a, old, -1);
    if (hb)
        apply(&b, obj, +1);
}

static int count_one(json_t *wl, void *arg)
{
    (void)arg;
    contrib_t c;
    if (contrib_of(wl, &c))
        apply(&c, wl, +1);
    return 0;
}

static int mark_one(json_t *o, void *arg)
{
    ks_work_add_obj(KS_WQ_QSTATUS, *(int *)arg, o);
    return 0;
}

void kq_status_recount(void)
{
    maps_reset();
    ks_store_each(KS_RT_WORKLOADS, count_one, NULL);
    kq_status_mark_cqs();
    int rt = KS_RT_LOCALQUEUES;
    ks_store_each(rt, mark_one, &rt);
}

void kq_status_mark_cqs(void)
{
    int rt = KS_RT_CLUSTERQUEUES;
    ks_store_each(rt, mark_one, &rt);
}

static int mark_lq_of(json_t *lq, void *arg)
{
    if (ks_streq(ks_jstr(lq, "spec.clusterQueue"), arg))
        ks_work_add_obj(KS_WQ_QSTATUS, KS_RT_LOCALQUEUES, lq);
    return 0;
}

void kq_status_mark_lqs(const char *cq)
{
    ks_store_each(KS_RT_LOCALQUEUES, mark_lq_of, (void *)cq);
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
                long long used = json_integer_value(
                    json_object_get(json_object_get(usage, fname ? fname : ""), rn ? rn : ""));
                long long nom = ks_qty_json(json_object_get(rq, "nominalQuota"));
                char t[64], b[64];
                ks_qty_fmt(used, t, sizeof(t));
                ks_qty_fmt(used > nom ? used - nom : 0, b, sizeof(b));
                if (lq)
                    json_array_append_new(res, json_pack("{s:s?,s:s}", "name", rn, "total", t));
                else
                    json_array_append_new(
                        res, json_pack("{s:s?,s:s,s:s}", "name", rn, "total", t, "borrowed", b));
            }
            json_array_append_new(out, json_pack("{s:s?,s:o}", "name", fname, "resources", res));
        }
    }
    return out;
}

static void write_cq(json_t *cqo)
{
    qcount_t *q = qc_get(g_cqc, ks_meta_name(cqo));
    json_t *c = ks_copy_for_status(cqo);
    json_t *st = ks_jobj(c, "status");
    json_object_set_new(st, "pendingWorkloads", json_integer(q->pending));
    json_object_set_new(st, "reservingWorkloads", json_integer(q->reserving));
    json_object_set_new(st, "admittedWorkloads", json_integer(q->admitted));
    json_object_set_new(st, "flavorsReservation", flavor_usage(cqo, q->usage, 0));
    json_object_set_new(st, "flavorsUsage", flavor_usage(cqo, q->usage, 0));
    /* Active unless a flavor is missing or the queue is held. */
    char missing[512] = "";
    size_t g;
    json_t *grp;
    json_array_foreach(ks_jget(cqo, "spec.resourceGroups"), g, grp)
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
    const char *sp = ks_jstr(cqo, "spec.stopPolicy");
    if (missing[0]) {
        char msg[700];
        ks_fmt(msg, sizeof(msg),
               "Can't admit new workloads: references missing ResourceFlavor(s): %s.", missing);
        ks_cond_set(st, "Active", "False", "FlavorNotFound", msg, 0);
    } else if (sp && strcmp(sp, "None")) {
        ks_cond_set(st, "Active", "False", "Stopped", "Can't admit new workloads: is stopped.", 0);
    } else {
        ks_cond_set(st, "Active", "True", "Ready", "Can admit new workloads", 0);
    }
    ks_store_update(KS_RT_CLUSTERQUEUES, c, NULL);
}

static void write_lq(json_t *lqo)
{
    char lkey[600];
    ks_fmt(lkey, sizeof(lkey), "%s/%s", ks_meta_ns(lqo), ks_meta_name(lqo));
    qcount_t *q = qc_get(g_lqc, lkey);
    json_t *c = ks_copy_for_status(lqo);
    json_t *st = ks_jobj(c, "status");
    json_t *cq = ks_store_get(KS_RT_CLUSTERQUEUES, NULL, ks_jstr(lqo, "spec.clusterQueue"));
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

void kq_status_pass(void)
{
    if (!g_cqc)
        maps_reset();
    char **refs = NULL;
    size_t n = ks_work_take(KS_WQ_QSTATUS, KS_WORK_ALL, &refs);
    for (size_t i = 0; i < n; i++) {
        int rt;
        json_t *o = json_incref(ks_store_get_ref(refs[i], &rt));
        if (o && rt == KS_RT_CLUSTERQUEUES)
            write_cq(o);
        else if (o && rt == KS_RT_LOCALQUEUES)
            write_lq(o);
        json_decref(o);
    }
    ks_work_release(refs, n);
}
