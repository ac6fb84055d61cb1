/* Kueue change tracking: from every Workload change, the pending and
 * quota-holding sets, the usage of each (ClusterQueue, flavor, resource)
 * by quota-holding workloads, and which ClusterQueues need an admission
 * cycle (KS_WQ_ADMIT). Admission (kueue_admit.c) then never rescans the
 * store. */
#include <stdlib.h>
#include <string.h>

#include "kueue_int.h"
#include "map.h"
#include "quantity.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"
#include "work.h"

static ks_map_t *g_pending;  /* ref -> (void *)1 */
static ks_map_t *g_reserved; /* ref -> (void *)1 */
static ks_map_t *g_usage;    /* "cq\x1fflavor\x1fres" -> long long * */

static void usage_key(const char *cq, const char *flavor, const char *res, char *out, size_t n)
{
    ks_fmt(out, n, "%s\x1f%s\x1f%s", cq ? cq : "", flavor ? flavor : "", res ? res : "");
}

long long kq_usage_of(const char *cq, const char *flavor, const char *res)
{
    char key[600];
    usage_key(cq, flavor, res, key, sizeof(key));
    long long *u = g_usage ? ks_map_get(g_usage, key) : NULL;
    return u ? *u : 0;
}

/* Add (sign +1) or remove (-1) a quota-holding workload's usage. */
static void usage_track(json_t *wl, int sign)
{
    const char *cq = ks_jstr(wl, "status.admission.clusterQueue");
    size_t i;
    json_t *a;
    json_array_foreach(ks_jget(wl, "status.admission.podSetAssignments"), i, a)
    {
        const char *res;
        json_t *fl;
        json_object_foreach(json_object_get(a, "flavors"), res, fl)
        {
            char key[600];
            usage_key(cq, json_string_value(fl), res, key, sizeof(key));
            long long *u = ks_map_get(g_usage, key);
            if (!u) {
                u = tg_xcalloc(1, sizeof(*u));
                ks_map_put(g_usage, key, u);
            }
            *u += sign * ks_qty_json(json_object_get(json_object_get(a, "resourceUsage"), res));
        }
    }
}

static void set_track(ks_map_t *set, const char *ref, int in)
{
    if (in)
        ks_map_put(set, ref, (void *)1);
    else
        ks_map_del(set, ref);
}

/* Admission for the workload's ClusterQueue must run again; a workload
 * that routes nowhere is looked at alone. */
static void dirty_for(json_t *wl, const char *ref)
{
    const char *cq = ks_jstr(wl, "status.admission.clusterQueue");
    if (!cq) {
        json_t *lq = ks_store_get(KS_RT_LOCALQUEUES, ks_meta_ns(wl), ks_jstr(wl, "spec.queueName"));
        cq = ks_jstr(lq, "spec.clusterQueue");
    }
    char cref[KS_REF_MAX];
    if (cq) {
        ks_ref_fmt(cref, sizeof(cref), KS_RT_CLUSTERQUEUES, NULL, cq);
        ks_work_add(KS_WQ_ADMIT, cref);
    } else {
        ks_work_add(KS_WQ_ADMIT, ref);
    }
}

typedef struct {
    const char *cohort;
} cohort_ctx_t;

static int add_if_cohort(json_t *cq, void *arg)
{
    cohort_ctx_t *c = arg;
    if (ks_streq(ks_jstr(cq, "spec.cohort"), c->cohort))
        ks_work_add_obj(KS_WQ_ADMIT, KS_RT_CLUSTERQUEUES, cq);
    return 0;
}

/* Quota moved in this ClusterQueue: it and its cohort may admit more. */
static void dirty_quota(const char *cqname)
{
    char ref[KS_REF_MAX];
    ks_ref_fmt(ref, sizeof(ref), KS_RT_CLUSTERQUEUES, NULL, cqname);
    ks_work_add(KS_WQ_ADMIT, ref);
    const char *cohort = ks_jstr(ks_store_get(KS_RT_CLUSTERQUEUES, NULL, cqname), "spec.cohort");
    if (cohort && cohort[0]) {
        cohort_ctx_t c = {cohort};
        ks_store_each(KS_RT_CLUSTERQUEUES, add_if_cohort, &c);
    }
}

void kq_admit_observe(json_t *old, json_t *obj)
{
    if (!g_pending) {
        g_pending = ks_map_new();
        g_reserved = ks_map_new();
        g_usage = ks_map_new();
    }
    char ref[KS_REF_MAX];
    ks_ref_of(KS_RT_WORKLOADS, obj ? obj : old, ref, sizeof(ref));
    int op = old && kq_wl_pending(old), np = obj && kq_wl_pending(obj);
    int orr = old && kq_wl_reserved(old), nr = obj && kq_wl_reserved(obj);
    set_track(g_pending, ref, np);
    set_track(g_reserved, ref, nr);
    json_t *oa = ks_jget(old, "status.admission"), *na = ks_jget(obj, "status.admission");
    if (orr != nr || (orr && oa != na && !json_equal(oa, na))) {
        if (orr) {
            usage_track(old, -1);
            dirty_quota(ks_jstr(old, "status.admission.clusterQueue"));
        }
        if (nr) {
            usage_track(obj, +1);
            dirty_quota(ks_jstr(obj, "status.admission.clusterQueue"));
        }
    }
    /* Status-only changes of a pending workload (the cycle's own messages)
     * change nothing admission looks at. */
    json_t *os = ks_jget(old, "spec"), *ns = ks_jget(obj, "spec");
    if (op != np || (np && os != ns && !json_equal(os, ns)))
        dirty_for(np ? obj : old, ref);
}

void kq_admit_all(void)
{
    ks_work_add(KS_WQ_ADMIT, KQ_ADMIT_ALL_REF);
}

static int free_usage(const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    free(val);
    return 0;
}

void kq_admit_free(void)
{
    ks_map_free(g_pending);
    ks_map_free(g_reserved);
    g_pending = g_reserved = NULL;
    if (g_usage) {
        ks_map_each(g_usage, free_usage, NULL);
        ks_map_free(g_usage);
        g_usage = NULL;
    }
}

static int collect_ref(const char *key, void *val, void *arg)
{
    (void)val;
    kq_list_t *l = arg;
    json_t *wl = ks_store_get_ref(key, NULL);
    if (wl)
        l->items[l->n++] = json_incref(wl);
    return 0;
}

/* Workloads of a tracking set (new references). */
static kq_list_t set_objects(ks_map_t *set)
{
    kq_list_t l = {tg_xcalloc((set ? ks_map_len(set) : 0) + 1, sizeof(json_t *)), 0};
    if (set)
        ks_map_each(set, collect_ref, &l);
    return l;
}

void kq_list_free(kq_list_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        json_decref(l->items[i]);
    free(l->items);
}

kq_list_t kq_pending_list(void)
{
    return set_objects(g_pending);
}

kq_list_t kq_reserved_list(void)
{
    return set_objects(g_reserved);
}
