/* Kueue admission: quota per (flavor, resource) with cohorts, borrowing
 * and lending limits, flavor assignment, StrictFIFO / BestEffortFIFO,
 * classic preemption (withinClusterQueue, reclaimWithinCohort). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "kueue.h"
#include "kueue_int.h"
#include "map.h"
#include "quantity.h"
#include "rtypes.h"
#include "scheduler.h"
#include "selectors.h"
#include "store.h"
#include "util.h"
#include "work.h"

#define KQ_INF LLONG_MAX
/* Admissions per cycle; a cycle that reaches it runs again next round. */
#define KQ_ADMIT_PER_CYCLE 256

typedef struct {
    char flavor[128], res[128];
    long long nominal, borrow, lend, usage;
    int has_borrow, has_lend;
} kq_fr_t;

typedef struct {
    const char *name, *cohort;
    json_t *obj;
    kq_fr_t *fr;
    int nfr;
    int strict;
    const char *within, *reclaim;
    int active;
    char inactive[600];
} kq_cq_t;

typedef struct {
    kq_cq_t *cq;
    int ncq;
} kq_snap_t;

static kq_fr_t *fr_find(kq_cq_t *cq, const char *flavor, const char *res)
{
    for (int i = 0; i < cq->nfr; i++)
        if (!strcmp(cq->fr[i].flavor, flavor) && !strcmp(cq->fr[i].res, res))
            return &cq->fr[i];
    return NULL;
}

static long long local_quota(kq_fr_t *f)
{
    return f->has_lend ? (f->nominal - f->lend > 0 ? f->nominal - f->lend : 0) : 0;
}

static void cohort_sums(kq_snap_t *s, kq_cq_t *cq, kq_fr_t *f, long long *subtree,
                        long long *usage)
{
    *subtree = *usage = 0;
    for (int i = 0; i < s->ncq; i++) {
        kq_cq_t *o = &s->cq[i];
        if (!o->cohort || !ks_streq(o->cohort, cq->cohort))
            continue;
        kq_fr_t *of = fr_find(o, f->flavor, f->res);
        if (!of)
            continue;
        long long lq = local_quota(of);
        *subtree += of->nominal - lq;
        *usage += of->usage - lq > 0 ? of->usage - lq : 0;
    }
}

/* Kueue's available(): what this CQ can still take in this FR. */
static long long available(kq_snap_t *s, kq_cq_t *cq, kq_fr_t *f)
{
    if (!cq->cohort || !cq->cohort[0])
        return f->nominal - f->usage > 0 ? f->nominal - f->usage : 0;
    long long sub, use;
    cohort_sums(s, cq, f, &sub, &use);
    long long lq = local_quota(f);
    long long parent = sub - use;
    long long cap = KQ_INF;
    if (f->has_borrow)
        cap = (f->nominal - lq) - (f->usage - lq > 0 ? f->usage - lq : 0) + f->borrow;
    long long a = (lq - f->usage > 0 ? lq - f->usage : 0) + (parent < cap ? parent : cap);
    return a > 0 ? a : 0;
}

static long long potential(kq_snap_t *s, kq_cq_t *cq, kq_fr_t *f)
{
    if (!cq->cohort || !cq->cohort[0])
        return f->nominal;
    long long sub, use;
    cohort_sums(s, cq, f, &sub, &use);
    long long a = local_quota(f) + sub;
    if (f->has_borrow && f->nominal + f->borrow < a)
        a = f->nominal + f->borrow;
    return a;
}

static kq_cq_t *cq_find(kq_snap_t *s, const char *name)
{
    for (int i = 0; i < s->ncq; i++)
        if (ks_streq(s->cq[i].name, name))
            return &s->cq[i];
    return NULL;
}

static void snap_build(kq_snap_t *s)
{
    json_t **cqs = NULL;
    size_t n = ks_store_list(KS_RT_CLUSTERQUEUES, NULL, &cqs);
    s->ncq = (int)n;
    s->cq = tg_xcalloc(n ? n : 1, sizeof(*s->cq));
    for (size_t i = 0; i < n; i++) {
        kq_cq_t *cq = &s->cq[i];
        cq->obj = json_incref(cqs[i]);
        cq->name = ks_meta_name(cqs[i]);
        cq->cohort = ks_jstr(cqs[i], "spec.cohort");
        cq->strict = ks_streq(ks_jstr(cqs[i], "spec.queueingStrategy"), "StrictFIFO");
        cq->within = ks_jstr(cqs[i], "spec.preemption.withinClusterQueue");
        cq->reclaim = ks_jstr(cqs[i], "spec.preemption.reclaimWithinCohort");
        cq->active = 1;
        const char *sp = ks_jstr(cqs[i], "spec.stopPolicy");
        if (sp && strcmp(sp, "None")) {
            cq->active = 0;
            ks_fmt(cq->inactive, sizeof(cq->inactive), "ClusterQueue %s is inactive", cq->name);
        }
        size_t g;
        json_t *grp;
        json_array_foreach(ks_jget(cqs[i], "spec.resourceGroups"), g, grp)
        {
            size_t f;
            json_t *fl;
            json_array_foreach(json_object_get(grp, "flavors"), f, fl)
            {
                if (!ks_store_get(KS_RT_RESOURCEFLAVORS, NULL, ks_jstr(fl, "name"))) {
                    cq->active = 0;
                    ks_fmt(cq->inactive, sizeof(cq->inactive), "ClusterQueue %s is inactive",
                           cq->name);
                }
                size_t r;
                json_t *rq;
                json_array_foreach(json_object_get(fl, "resources"), r, rq)
                {
                    cq->fr = tg_xrealloc(cq->fr, sizeof(*cq->fr) * (size_t)(cq->nfr + 1));
                    kq_fr_t *x = &cq->fr[cq->nfr++];
                    memset(x, 0, sizeof(*x));
                    ks_strlcpy(x->flavor, ks_jstr(fl, "name"), sizeof(x->flavor));
                    ks_strlcpy(x->res, ks_jstr(rq, "name"), sizeof(x->res));
                    x->nominal = ks_qty_json(json_object_get(rq, "nominalQuota"));
                    x->has_borrow = json_object_get(rq, "borrowingLimit") != NULL;
                    x->borrow = ks_qty_json(json_object_get(rq, "borrowingLimit"));
                    x->has_lend = json_object_get(rq, "lendingLimit") != NULL;
                    x->lend = ks_qty_json(json_object_get(rq, "lendingLimit"));
                    x->usage = kq_usage_of(cq->name, x->flavor, x->res);
                }
            }
        }
    }
    free(cqs);
}

static void snap_free(kq_snap_t *s)
{
    for (int i = 0; i < s->ncq; i++) {
        json_decref(s->cq[i].obj);
        free(s->cq[i].fr);
    }
    free(s->cq);
}

/* Add (sign=+1) or remove (-1) a workload's admitted usage. */
static void apply_usage(kq_snap_t *s, json_t *wl, int sign)
{
    kq_cq_t *cq = cq_find(s, ks_jstr(wl, "status.admission.clusterQueue"));
    if (!cq)
        return;
    size_t i;
    json_t *a;
    json_array_foreach(ks_jget(wl, "status.admission.podSetAssignments"), i, a)
    {
        const char *res;
        json_t *fl;
        json_object_foreach(json_object_get(a, "flavors"), res, fl)
        {
            kq_fr_t *f = fr_find(cq, json_string_value(fl), res);
            if (f)
                f->usage += sign * ks_qty_json(json_object_get(json_object_get(a, "resourceUsage"), res));
        }
    }
}

/* ---- flavor assignment ---- */

enum { M_FIT = 0, M_PREEMPT = 1, M_NOFIT = 2 };

typedef struct {
    char res[16][128];
    char flavor[16][128];
    long long amount[16];
    int n;
} kq_assign_t;

static json_t *group_of(json_t *cq, const char *res)
{
    size_t g;
    json_t *grp;
    json_array_foreach(ks_jget(cq, "spec.resourceGroups"), g, grp)
    {
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(grp, "coveredResources"), i, r) if (ks_streq(json_string_value(r), res)) return grp;
    }
    return NULL;
}

/* Does a podset template fit a flavor's labels and taints? */
static int flavor_matches(json_t *grp, json_t *rf, json_t *tmpl, char *why, size_t n)
{
    json_t *sel = ks_jget(tmpl, "spec.nodeSelector");
    json_t *labels = ks_jget(rf, "spec.nodeLabels");
    const char *k;
    json_t *v;
    json_object_foreach(sel, k, v)
    {
        /* Only keys some flavor of this group uses are considered. */
        int used = 0;
        size_t f;
        json_t *fl;
        json_array_foreach(json_object_get(grp, "flavors"), f, fl)
        {
            json_t *o = ks_store_get(KS_RT_RESOURCEFLAVORS, NULL, ks_jstr(fl, "name"));
            if (json_object_get(ks_jget(o, "spec.nodeLabels"), k))
                used = 1;
        }
        if (used && !ks_streq(json_string_value(json_object_get(labels, k)), json_string_value(v))) {
            ks_fmt(why, n, "flavor %s doesn't match node affinity", ks_meta_name(rf));
            return 0;
        }
    }
    size_t i;
    json_t *taint;
    json_array_foreach(ks_jget(rf, "spec.nodeTaints"), i, taint)
    {
        const char *e = ks_jstr(taint, "effect");
        if (!ks_streq(e, "NoSchedule") && !ks_streq(e, "NoExecute"))
            continue;
        if (ks_tolerates(ks_jget(tmpl, "spec.tolerations"), taint) ||
            ks_tolerates(ks_jget(rf, "spec.tolerations"), taint))
            continue;
        ks_fmt(why, n, "untolerated taint {%s: %s} in flavor %s", ks_jstr(taint, "key"),
               ks_jstr(taint, "value") ? ks_jstr(taint, "value") : "", ks_meta_name(rf));
        return 0;
    }
    return 1;
}

static long long assigned(kq_assign_t *as, const char *flavor, const char *res)
{
    long long t = 0;
    for (int i = 0; i < as->n; i++)
        if (!strcmp(as->flavor[i], flavor) && !strcmp(as->res[i], res))
            t += as->amount[i];
    return t;
}

static void msg_add(tg_buf_t *b, const char *fmt, const char *a1, const char *a2, const char *a3,
                    const char *a4)
{
    int rc = 0;
    if (b->len)
        rc |= tg_buf_puts(b, ", ");
    rc |= tg_buf_printf(b, fmt, a1, a2, a3, a4);
    (void)rc;
}

/* Assign flavors to all podsets of wl in cq. Returns the worst mode and
 * fills `as`; msg gets Kueue's reason text when not M_FIT. */
static int assign_flavors(kq_snap_t *s, kq_cq_t *cq, json_t *wl, kq_assign_t *as, tg_buf_t *msg,
                          json_t *preempt_frs)
{
    int worst = M_FIT;
    memset(as, 0, sizeof(*as));
    size_t p;
    json_t *ps;
    json_array_foreach(ks_jget(wl, "spec.podSets"), p, ps)
    {
        long long count = ks_jint(ps, "count", 1);
        json_t *tmpl = json_object_get(ps, "template");
        json_t *req = ks_pod_requests(ks_jget(tmpl, "spec"));
        if (!json_object_size(req)) {
            json_decref(req);
            continue;
        }
        /* pods counted only when some group covers "pods" */
        if (group_of(cq->obj, "pods"))
            json_object_set_new(req, "pods", json_integer(1000));
        tg_buf_t why;
        tg_buf_init(&why, 8192);
        int ps_mode = M_FIT;
        const char *res;
        json_t *val;
        /* Resources of one group share a flavor; handle group by group. */
        json_t *done = json_object();
        json_object_foreach(req, res, val)
        {
            if (json_object_get(done, res))
                continue;
            json_t *grp = group_of(cq->obj, res);
            if (!grp) {
                msg_add(&why, "resource %s unavailable in ClusterQueue", res, "", "", "");
                ps_mode = M_NOFIT;
                json_object_set_new(done, res, json_true());
                continue;
            }
            int best_mode = M_NOFIT + 1;
            const char *best = NULL;
            size_t f;
            json_t *fl;
            json_array_foreach(json_object_get(grp, "flavors"), f, fl)
            {
                const char *fname = ks_jstr(fl, "name");
                json_t *rf = ks_store_get(KS_RT_RESOURCEFLAVORS, NULL, fname);
                char fwhy[400];
                if (!rf || !flavor_matches(grp, rf, tmpl, fwhy, sizeof(fwhy))) {
                    if (rf)
                        msg_add(&why, "%s", fwhy, "", "", "");
                    continue;
                }
                int fmode = M_FIT;
                size_t ci;
                json_t *cov;
                json_array_foreach(json_object_get(grp, "coveredResources"), ci, cov)
                {
                    const char *cr = json_string_value(cov);
                    json_t *rv = json_object_get(req, cr);
                    if (!rv)
                        continue;
                    kq_fr_t *fr = fr_find(cq, fname, cr);
                    long long need = json_integer_value(rv) * count;
                    long long prev = assigned(as, fname, cr);
                    long long v = need + prev;
                    long long avail = fr ? available(s, cq, fr) : 0;
                    long long pot = fr ? potential(s, cq, fr) : 0;
                    char q1[64], q2[64], q3[64];
                    if (v <= avail)
                        continue;
                    if (v > pot) {
                        ks_qty_fmt(prev, q1, sizeof(q1));
                        ks_qty_fmt(need, q2, sizeof(q2));
                        ks_qty_fmt(pot, q3, sizeof(q3));
                        char m[600];
                        ks_fmt(m, sizeof(m), "insufficient quota for %s in flavor %s, previously "
                               "considered podsets requests (%s) + current podset request (%s) > "
                               "maximum capacity (%s)", cr, fname, q1, q2, q3);
                        msg_add(&why, "%s", m, "", "", "");
                        fmode = M_NOFIT;
                        continue;
                    }
                    int can_preempt = (!ks_streq(cq->within, "Never") && cq->within &&
                                       v <= fr->nominal) ||
                                      (cq->reclaim && !ks_streq(cq->reclaim, "Never"));
                    ks_qty_fmt(v - avail, q1, sizeof(q1));
                    msg_add(&why, "insufficient unused quota for %s in flavor %s, %s more needed",
                            cr, fname, q1, "");
                    if (can_preempt) {
                        if (fmode < M_PREEMPT)
                            fmode = M_PREEMPT;
                        if (preempt_frs)
                            json_array_append_new(preempt_frs,
                                                  json_pack("[s,s]", fname, cr));
                    } else {
                        fmode = M_NOFIT;
                    }
                }
                if (fmode < best_mode) {
                    best_mode = fmode;
                    best = fname;
                }
                if (fmode == M_FIT)
                    break; /* the first flavor that fits (borrowing allowed) */
            }
            json_array_foreach(json_object_get(grp, "coveredResources"), f, fl)
            {
                const char *cr = json_string_value(fl);
                json_object_set_new(done, cr, json_true());
                json_t *rv = json_object_get(req, cr);
                if (!rv || !best || as->n >= 16)
                    continue;
                ks_strlcpy(as->res[as->n], cr, sizeof(as->res[0]));
                ks_strlcpy(as->flavor[as->n], best, sizeof(as->flavor[0]));
                as->amount[as->n] = json_integer_value(rv) * count;
                as->n++;
            }
            if (!best)
                best_mode = M_NOFIT;
            if (best_mode > ps_mode)
                ps_mode = best_mode;
        }
        json_decref(done);
        json_decref(req);
        if (ps_mode != M_FIT && msg->len == 0) {
            int rc = tg_buf_printf(msg, "couldn't assign flavors to pod set %s: %s",
                                   ks_jstr(ps, "name"), why.data ? why.data : "");
            (void)rc;
        }
        tg_buf_clean(&why);
        if (ps_mode > worst)
            worst = ps_mode;
    }
    return worst;
}

/* ---- preemption ---- */

typedef struct {
    json_t *wl;
    kq_cq_t *cq;
    int same_cq;
    long long prio;
    double reserved_at;
    int evicted;
} kq_cand_t;

static int cand_cmp(const void *a, const void *b)
{
    const kq_cand_t *x = a, *y = b;
    if (x->evicted != y->evicted)
        return y->evicted - x->evicted;
    if (x->same_cq != y->same_cq)
        return x->same_cq - y->same_cq;
    if (x->prio != y->prio)
        return x->prio < y->prio ? -1 : 1;
    if (x->reserved_at != y->reserved_at)
        return x->reserved_at > y->reserved_at ? -1 : 1;
    return strcmp(ks_meta_uid(x->wl), ks_meta_uid(y->wl));
}

static int uses_frs(json_t *wl, json_t *frs)
{
    size_t i;
    json_t *a;
    json_array_foreach(ks_jget(wl, "status.admission.podSetAssignments"), i, a)
    {
        const char *res;
        json_t *fl;
        json_object_foreach(json_object_get(a, "flavors"), res, fl)
        {
            size_t k;
            json_t *p;
            json_array_foreach(frs, k, p) if (ks_streq(json_string_value(json_array_get(p, 0)), json_string_value(fl)) && ks_streq(json_string_value(json_array_get(p, 1)), res)) return 1;
        }
    }
    return 0;
}

static int fits_now(kq_snap_t *s, kq_cq_t *cq, json_t *wl)
{
    kq_assign_t as;
    tg_buf_t m;
    tg_buf_init(&m, 8192);
    int mode = assign_flavors(s, cq, wl, &as, &m, NULL);
    tg_buf_clean(&m);
    return mode == M_FIT;
}

/* Choose targets; returns a new array of workloads to evict (may be empty). */
static json_t *find_targets(kq_snap_t *s, kq_cq_t *cq, json_t *wl, json_t *frs, json_t **admitted,
                            size_t nadm)
{
    long long prio = ks_jint(wl, "spec.priority", 0);
    double created = ks_parse_time(ks_jstr(wl, "metadata.creationTimestamp"));
    kq_cand_t *c = tg_xcalloc(nadm ? nadm : 1, sizeof(*c));
    size_t n = 0;
    for (size_t i = 0; i < nadm; i++) {
        json_t *o = admitted[i];
        kq_cq_t *ocq = cq_find(s, ks_jstr(o, "status.admission.clusterQueue"));
        if (!ocq || !uses_frs(o, frs))
            continue;
        long long op = ks_jint(o, "spec.priority", 0);
        int same = ocq == cq;
        if (same) {
            int ok = ks_streq(cq->within, "LowerPriority") && op < prio;
            if (ks_streq(cq->within, "LowerOrNewerEqualPriority"))
                ok = op < prio || (op == prio && ks_parse_time(ks_jstr(
                                                     o, "metadata.creationTimestamp")) > created);
            if (!ok)
                continue;
        } else {
            if (!cq->cohort || !ks_streq(cq->cohort, ocq->cohort))
                continue;
            if (ks_streq(cq->reclaim, "LowerPriority") && op >= prio)
                continue;
            if (!ks_streq(cq->reclaim, "Any") && !ks_streq(cq->reclaim, "LowerPriority"))
                continue;
            /* Only queues borrowing in those resources give quota back. */
            int borrowing = 0;
            size_t k;
            json_t *p;
            json_array_foreach(frs, k, p)
            {
                kq_fr_t *f = fr_find(ocq, json_string_value(json_array_get(p, 0)),
                                     json_string_value(json_array_get(p, 1)));
                if (f && f->usage > f->nominal)
                    borrowing = 1;
            }
            if (!borrowing)
                continue;
        }
        json_t *qr = ks_cond_get(json_object_get(o, "status"), "QuotaReserved");
        c[n].wl = o;
        c[n].cq = ocq;
        c[n].same_cq = same;
        c[n].prio = op;
        c[n].reserved_at = ks_parse_time(ks_jstr(qr, "lastTransitionTime"));
        c[n].evicted = ks_cond_true(json_object_get(o, "status"), "Evicted");
        n++;
    }
    qsort(c, n, sizeof(*c), cand_cmp);
    json_t *targets = json_array();
    size_t used = 0;
    int fit = 0;
    for (; used < n; used++) {
        apply_usage(s, c[used].wl, -1);
        if (fits_now(s, cq, wl)) {
            used++;
            fit = 1;
            break;
        }
    }
    if (!fit) {
        for (size_t i = 0; i < used; i++)
            apply_usage(s, c[i].wl, +1);
        free(c);
        return targets;
    }
    /* Put back from the end while the preemptor still fits. */
    char *keep = tg_xcalloc(used ? used : 1, 1);
    for (size_t i = used; i-- > 0;) {
        apply_usage(s, c[i].wl, +1);
        if (fits_now(s, cq, wl))
            keep[i] = 1; /* not needed */
        else
            apply_usage(s, c[i].wl, -1);
    }
    for (size_t i = 0; i < used; i++) {
        if (!keep[i]) {
            json_array_append(targets, c[i].wl);
            apply_usage(s, c[i].wl, +1); /* quota is freed only once it stops */
        }
    }
    free(keep);
    free(c);
    return targets;
}

static void evict(json_t *target, json_t *preemptor, int same_cq)
{
    if (ks_cond_true(json_object_get(target, "status"), "Evicted"))
        return;
    json_t *owner_ref = json_array_get(ks_jget(preemptor, "metadata.ownerReferences"), 0);
    char msg[700];
    ks_fmt(msg, sizeof(msg), "Preempted to accommodate a workload (UID: %s, JobUID: %s) due to %s",
           ks_meta_uid(preemptor), ks_jstr(owner_ref, "uid") ? ks_jstr(owner_ref, "uid") : "",
           same_cq ? "prioritization in the ClusterQueue" : "reclamation within the cohort");
    json_t *c = ks_copy_for_status(target);
    json_t *st = ks_jobj(c, "status");
    ks_cond_set(st, "Evicted", "True", "Preempted", msg, 0);
    ks_cond_set(st, "Preempted", "True", same_cq ? "InClusterQueue" : "InCohortReclamation", msg, 0);
    ks_event_emit(KS_RT_WORKLOADS, target, "Normal", "Preempted", "%s", msg);
    kq_wl_update(c);
}

/* ---- admission ---- */

static void set_pending(json_t *wl, const char *reason, const char *msg)
{
    /* Most cycles repeat the last verdict: skip the copy then. */
    json_t *st0 = json_object_get(wl, "status");
    json_t *qr = ks_cond_get(st0, "QuotaReserved");
    if (qr && ks_streq(ks_jstr(qr, "status"), "False") && ks_streq(ks_jstr(qr, "reason"), reason) &&
        ks_streq(ks_jstr(qr, "message"), msg) && ks_cond_get(st0, "Admitted"))
        return;
    json_t *c = ks_copy_for_status(wl);
    json_t *st = ks_jobj(c, "status");
    int changed = ks_cond_set(st, "QuotaReserved", "False", reason, msg, 0);
    if (!ks_cond_get(st, "Admitted"))
        ks_cond_set(st, "Admitted", "False", "NoReservation", "The workload has no reservation", 0);
    if (changed)
        ks_event_emit(KS_RT_WORKLOADS, wl, "Warning", "Pending", "%s", msg);
    kq_wl_update(c);
}

static void admit(kq_snap_t *s, kq_cq_t *cq, json_t *wl, kq_assign_t *as)
{
    json_t *c = ks_copy_for_status(wl);
    json_t *st = ks_jobj(c, "status");
    json_t *psa = json_array();
    size_t p;
    json_t *ps;
    int k = 0;
    json_array_foreach(ks_jget(wl, "spec.podSets"), p, ps)
    {
        json_t *fl = json_object(), *usage = json_object();
        json_t *req = ks_pod_requests(ks_jget(ps, "template.spec"));
        long long count = ks_jint(ps, "count", 1);
        const char *res;
        json_t *v;
        json_object_foreach(req, res, v)
        {
            for (int i = 0; i < as->n; i++) {
                if (strcmp(as->res[i], res))
                    continue;
                json_object_set_new(fl, res, json_string(as->flavor[i]));
                char q[64];
                ks_qty_fmt(json_integer_value(v) * count, q, sizeof(q));
                json_object_set_new(usage, res, json_string(q));
                break;
            }
        }
        json_decref(req);
        json_array_append_new(psa, json_pack("{s:s,s:o,s:o,s:I}", "name", ks_jstr(ps, "name"),
                                             "flavors", fl, "resourceUsage", usage, "count",
                                             (json_int_t)count));
        k++;
    }
    json_object_set_new(st, "admission", json_pack("{s:s,s:o}", "clusterQueue", cq->name,
                                                   "podSetAssignments", psa));
    char msg[400];
    ks_fmt(msg, sizeof(msg), "Quota reserved in ClusterQueue %s", cq->name);
    ks_cond_set(st, "QuotaReserved", "True", "QuotaReserved", msg, 0);
    ks_cond_set(st, "Admitted", "True", "Admitted", "The workload is admitted", 0);
    const char *again[] = {"Evicted", "Preempted"};
    for (int i = 0; i < 2; i++) {
        json_t *e = ks_cond_get(st, again[i]);
        if (e && ks_streq(ks_jstr(e, "status"), "True")) {
            char prev[1100];
            ks_fmt(prev, sizeof(prev), "Previously: %s", ks_jstr(e, "message"));
            ks_cond_set(st, again[i], "False", "QuotaReserved", prev, 0);
        }
    }
    ks_event_emit(KS_RT_WORKLOADS, wl, "Normal", "QuotaReserved", "%s", msg);
    ks_event_emit(KS_RT_WORKLOADS, wl, "Normal", "Admitted",
                  "Admitted by ClusterQueue %s, wait time since reservation was 0s", cq->name);
    json_t *stored = NULL;
    ks_store_update(KS_RT_WORKLOADS, c, &stored);
    if (stored)
        apply_usage(s, stored, +1);
}

static int wl_order(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    long long px = ks_jint(x, "spec.priority", 0), py = ks_jint(y, "spec.priority", 0);
    if (px != py)
        return px > py ? -1 : 1;
    int c = strcmp(ks_jstr(x, "metadata.creationTimestamp"), ks_jstr(y, "metadata.creationTimestamp"));
    if (c)
        return c;
    return strcmp(ks_meta_name(x), ks_meta_name(y));
}

/* The ClusterQueue a workload is queued to, or NULL with a reason. */
static const char *route(json_t *wl, char *why, size_t n)
{
    const char *q = ks_jstr(wl, "spec.queueName");
    json_t *lq = ks_store_get(KS_RT_LOCALQUEUES, ks_meta_ns(wl), q);
    if (!lq) {
        ks_fmt(why, n, "LocalQueue %s doesn't exist", q ? q : "");
        return NULL;
    }
    const char *sp = ks_jstr(lq, "spec.stopPolicy");
    if (sp && strcmp(sp, "None")) {
        ks_fmt(why, n, "LocalQueue %s is inactive", q);
        return NULL;
    }
    const char *cqn = ks_jstr(lq, "spec.clusterQueue");
    if (!ks_store_get(KS_RT_CLUSTERQUEUES, NULL, cqn)) {
        ks_fmt(why, n, "ClusterQueue %s doesn't exist", cqn ? cqn : "");
        return NULL;
    }
    return cqn;
}

json_t *ks_kueue_pending(const char *cqname)
{
    /* From the tracked pending set, not a list of every Workload: the
     * visibility API is asked often, and finished Workloads outnumber
     * pending ones. */
    kq_list_t all = kq_pending_list();
    json_t **sel = tg_xcalloc(all.n + 1, sizeof(*sel));
    size_t k = 0;
    char why[300];
    for (size_t i = 0; i < all.n; i++) {
        const char *cq = route(all.items[i], why, sizeof(why));
        if (cq && !strcmp(cq, cqname))
            sel[k++] = all.items[i];
    }
    qsort(sel, k, sizeof(*sel), wl_order);
    json_t *out = json_array();
    for (size_t i = 0; i < k; i++)
        json_array_append(out, sel[i]);
    free(sel);
    kq_list_free(&all);
    return out;
}

void kq_admit_pass(void)
{
    char **refs = NULL;
    size_t nrefs = ks_work_take(KS_WQ_ADMIT, KS_WORK_ALL, &refs);
    if (!nrefs) {
        ks_work_release(refs, nrefs);
        return;
    }
    /* Which queues to run a cycle for: those whose quota or pending set
     * changed (every one after a queue, flavor or namespace change). */
    int all = 0;
    ks_map_t *dirty = ks_map_new(), *alone = ks_map_new();
    char why[700];
    for (size_t i = 0; i < nrefs; i++) {
        int rt;
        json_t *o = strcmp(refs[i], KQ_ADMIT_ALL_REF) ? ks_store_get_ref(refs[i], &rt) : NULL;
        if (!strcmp(refs[i], KQ_ADMIT_ALL_REF)) {
            all = 1;
        } else if (o && rt == KS_RT_CLUSTERQUEUES) {
            ks_map_put(dirty, ks_meta_name(o), (void *)1);
        } else if (o && rt == KS_RT_WORKLOADS) {
            const char *cqn = route(o, why, sizeof(why));
            if (cqn)
                ks_map_put(dirty, cqn, (void *)1);
            else
                ks_map_put(alone, refs[i], (void *)1);
        }
    }
    ks_work_release(refs, nrefs);
    kq_snap_t s;
    memset(&s, 0, sizeof(s));
    snap_build(&s);
    kq_list_t all_pending = kq_pending_list();
    json_t **pending = tg_xcalloc(all_pending.n + 1, sizeof(*pending));
    size_t np = 0;
    for (size_t i = 0; i < all_pending.n; i++) {
        json_t *wl = all_pending.items[i];
        char ref[KS_REF_MAX];
        ks_ref_of(KS_RT_WORKLOADS, wl, ref, sizeof(ref));
        const char *cqn = route(wl, why, sizeof(why));
        if (all || ks_map_get(alone, ref) || (cqn && ks_map_get(dirty, cqn)))
            pending[np++] = wl;
    }
    ks_map_free(dirty);
    ks_map_free(alone);
    qsort(pending, np, sizeof(*pending), wl_order);
    /* Preemption candidates, gathered the first time a cycle needs them. */
    kq_list_t admitted = {NULL, 0};
    int have_admitted = 0;
    char *blocked = tg_xcalloc((size_t)(s.ncq ? s.ncq : 1), 1);
    size_t admitted_now = 0;
    for (size_t i = 0; i < np; i++) {
        json_t *wl = pending[i];
        const char *cqn = route(wl, why, sizeof(why));
        if (!cqn) {
            set_pending(wl, "Inadmissible", why);
            continue;
        }
        kq_cq_t *cq = cq_find(&s, cqn);
        int idx = (int)(cq - s.cq);
        if (!cq || blocked[idx])
            continue; /* StrictFIFO: the head blocks everything behind it */
        if (!cq->active) {
            set_pending(wl, "Inadmissible", cq->inactive);
            continue;
        }
        json_t *nsobj = ks_store_get(KS_RT_NAMESPACES, NULL, ks_meta_ns(wl));
        if (!ks_labelselector_obj_match(ks_jget(cq->obj, "spec.namespaceSelector"),
                                        ks_jget(nsobj, "metadata.labels"))) {
            set_pending(wl, "Inadmissible", "Workload namespace doesn't match ClusterQueue selector");
            if (cq->strict)
                blocked[idx] = 1;
            continue;
        }
        kq_assign_t as;
        tg_buf_t msg;
        tg_buf_init(&msg, 16384);
        json_t *frs = json_array();
        int mode = assign_flavors(&s, cq, wl, &as, &msg, frs);
        if (mode == M_FIT) {
            admit(&s, cq, wl, &as);
            if (++admitted_now == KQ_ADMIT_PER_CYCLE) {
                /* Bounded rounds: the rest in the next one. */
                kq_admit_all();
                tg_buf_clean(&msg);
                json_decref(frs);
                break;
            }
        } else {
            json_t *targets = NULL;
            if (mode == M_PREEMPT) {
                if (!have_admitted) {
                    admitted = kq_reserved_list();
                    have_admitted = 1;
                }
                targets = find_targets(&s, cq, wl, frs, admitted.items, admitted.n);
            }
            if (targets && json_array_size(targets)) {
                size_t t;
                json_t *tw;
                json_array_foreach(targets, t, tw)
                {
                    kq_cq_t *tcq = cq_find(&s, ks_jstr(tw, "status.admission.clusterQueue"));
                    evict(tw, wl, tcq == cq);
                }
                int rc = tg_buf_printf(&msg, ". Pending the preemption of %zu workload(s)",
                                       json_array_size(targets));
                (void)rc;
                /* The preemptor waits at the head for the freed quota. */
                blocked[idx] = 1;
            } else if (cq->strict) {
                blocked[idx] = 1;
            }
            json_decref(targets);
            set_pending(wl, "Pending", msg.data ? msg.data : "");
        }
        json_decref(frs);
        tg_buf_clean(&msg);
    }
    free(blocked);
    free(pending);
    kq_list_free(&all_pending);
    if (have_admitted)
        kq_list_free(&admitted);
    snap_free(&s);
}
