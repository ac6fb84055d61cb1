/* Why pending: quota arithmetic over Kueue objects. */
#include "api/queue_why.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/quota_qty.h"

#define QW_TEXT_MAX 4096

typedef struct {
    const char *flavor, *res;
    int group;
    int64_t nominal, used, blimit, borrowable;
    int64_t lend; /* lendingLimit, -1 when none */
    int has_blimit;
    tg_quota_qty_format_e fmt;
} qw_fr_t;

typedef struct {
    qw_fr_t *v;
    size_t n, cap;
} qw_frs_t;

static const char *qw_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* A quantity from a string or integer. 0 when it parses. */
static int qw_qty(const json_t *v, tg_quota_qty_t *q)
{
    if (json_is_integer(v)) {
        q->milli = (int64_t)json_integer_value(v) * 1000;
        q->format = TG_QUOTA_QTY_DECIMAL_SI;
        return 0;
    }
    const char *s = json_string_value(v);
    return s && tg_quota_qty_parse(s, q) == TG_QUOTA_QTY_OK ? 0 : -1;
}

static void qw_fmt(int64_t milli, tg_quota_qty_format_e f, char *out, size_t n)
{
    tg_quota_qty_t q = {.milli = milli < 0 ? 0 : milli, .format = f};
    if (tg_quota_qty_format(&q, out, n) != TG_QUOTA_QTY_OK)
        snprintf(out, n, "?");
}

static json_t *qw_text(int64_t milli, tg_quota_qty_format_e f)
{
    char t[TG_QUOTA_QTY_MAX_TEXT];
    qw_fmt(milli, f, t, sizeof(t));
    return json_string(t);
}

/* Add a container list's requests into acc ({res: [milli, format]}):
 * summed (sum=1) or the maximum kept. */
static void qw_containers(const json_t *list, json_t *acc, int sum)
{
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c) {
        const json_t *res = json_object_get(c, "resources");
        json_t *seen = json_object();
        for (int pass = 0; pass < 2; pass++) {
            const char *k;
            json_t *v;
            json_object_foreach(json_object_get(res, pass ? "limits" : "requests"), k, v) {
                tg_quota_qty_t q;
                if (json_object_get(seen, k) || qw_qty(v, &q) != 0)
                    continue;
                json_object_set_new(seen, k, json_true());
                json_t *had = json_object_get(acc, k);
                int64_t h = had ? (int64_t)json_integer_value(json_array_get(had, 0)) : 0;
                int64_t nv = sum ? h + q.milli : (q.milli > h ? q.milli : h);
                json_object_set_new(acc, k, json_pack("[I, i]", (json_int_t)nv, (int)q.format));
            }
        }
        json_decref(seen);
    }
}

/* {res: [milli, format]} for the whole workload (new object). */
static json_t *qw_requests(const json_t *wl)
{
    json_t *out = json_object();
    size_t i;
    json_t *ps;
    json_array_foreach(json_object_get(json_object_get(wl, "spec"), "podSets"), i, ps) {
        json_int_t count = json_integer_value(json_object_get(ps, "count"));
        if (count <= 0)
            count = 1;
        const json_t *spec = json_object_get(json_object_get(ps, "template"), "spec");
        json_t *main_sum = json_object(), *init_max = json_object();
        qw_containers(json_object_get(spec, "containers"), main_sum, 1);
        qw_containers(json_object_get(spec, "initContainers"), init_max, 0);
        const char *k;
        json_t *v;
        json_object_foreach(init_max, k, v) {
            json_t *m = json_object_get(main_sum, k);
            if (!m ||
                json_integer_value(json_array_get(v, 0)) > json_integer_value(json_array_get(m, 0)))
                json_object_set(main_sum, k, v);
        }
        json_object_foreach(main_sum, k, v) {
            json_t *had = json_object_get(out, k);
            json_int_t h = had ? json_integer_value(json_array_get(had, 0)) : 0;
            json_object_set_new(out, k,
                                json_pack("[I, O]",
                                          h + count * json_integer_value(json_array_get(v, 0)),
                                          json_array_get(v, 1)));
        }
        json_decref(main_sum);
        json_decref(init_max);
    }
    return out;
}

json_t *tg_queue_why_requests(const json_t *workload)
{
    json_t *r = qw_requests(workload);
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(r, k, v) {
        json_object_set_new(out, k, json_integer(json_integer_value(json_array_get(v, 0))));
    }
    json_decref(r);
    return out;
}

/* Used amount of (flavor, res) from the queue's status. */
static int64_t qw_used(const json_t *cq, const char *flavor, const char *res)
{
    const json_t *st = json_object_get(cq, "status");
    const json_t *list = json_object_get(st, "flavorsReservation");
    if (!json_is_array(list))
        list = json_object_get(st, "flavorsUsage");
    size_t i, j;
    json_t *f, *r;
    json_array_foreach(list, i, f) {
        const char *fn = qw_str(f, "name");
        if (!fn || strcmp(fn, flavor))
            continue;
        json_array_foreach(json_object_get(f, "resources"), j, r) {
            const char *rn = qw_str(r, "name");
            tg_quota_qty_t q;
            if (rn && !strcmp(rn, res) && qw_qty(json_object_get(r, "total"), &q) == 0)
                return q.milli;
        }
    }
    return 0;
}

static void qw_push(qw_frs_t *a, const qw_fr_t *fr)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = tg_xrealloc(a->v, a->cap * sizeof(*a->v));
    }
    a->v[a->n++] = *fr;
}

/* The (flavor, resource) cells of a queue. */
static void qw_cells(const json_t *cq, qw_frs_t *out)
{
    size_t g, f, r;
    json_t *grp, *fl, *rq;
    json_array_foreach(json_object_get(json_object_get(cq, "spec"), "resourceGroups"), g, grp) {
        json_array_foreach(json_object_get(grp, "flavors"), f, fl) {
            const char *fname = qw_str(fl, "name");
            json_array_foreach(json_object_get(fl, "resources"), r, rq) {
                const char *rn = qw_str(rq, "name");
                tg_quota_qty_t nom, bl, ll;
                if (!fname || !rn || qw_qty(json_object_get(rq, "nominalQuota"), &nom) != 0)
                    continue;
                qw_fr_t c = {.flavor = fname,
                             .res = rn,
                             .group = (int)g,
                             .nominal = nom.milli,
                             .used = qw_used(cq, fname, rn),
                             .fmt = nom.format};
                if (qw_qty(json_object_get(rq, "borrowingLimit"), &bl) == 0) {
                    c.has_blimit = 1;
                    c.blimit = bl.milli;
                }
                c.lend = qw_qty(json_object_get(rq, "lendingLimit"), &ll) == 0 ? ll.milli : -1;
                qw_push(out, &c);
            }
        }
    }
}

/* Fill each cell's borrowable from the peers in the same cohort. */
static void qw_borrowable(const json_t *cq, const json_t *peers, qw_frs_t *cells)
{
    const char *cohort = qw_str(json_object_get(cq, "spec"), "cohort");
    const char *self = qw_str(json_object_get(cq, "metadata"), "name");
    for (size_t i = 0; i < cells->n; i++)
        cells->v[i].borrowable = 0;
    if (!cohort || !*cohort)
        return;
    size_t p;
    json_t *peer;
    json_array_foreach(peers, p, peer) {
        const char *pn = qw_str(json_object_get(peer, "metadata"), "name");
        const char *pc = qw_str(json_object_get(peer, "spec"), "cohort");
        if (!pn || (self && !strcmp(pn, self)) || !pc || strcmp(pc, cohort))
            continue;
        qw_frs_t theirs = {0};
        qw_cells(peer, &theirs);
        for (size_t i = 0; i < cells->n; i++)
            for (size_t j = 0; j < theirs.n; j++) {
                qw_fr_t *t = &theirs.v[j];
                if (strcmp(t->flavor, cells->v[i].flavor) || strcmp(t->res, cells->v[i].res))
                    continue;
                int64_t unused = t->nominal - t->used;
                if (unused < 0)
                    unused = 0;
                if (t->lend >= 0 && unused > t->lend)
                    unused = t->lend;
                cells->v[i].borrowable += unused;
            }
        free(theirs.v);
    }
    for (size_t i = 0; i < cells->n; i++) {
        qw_fr_t *c = &cells->v[i];
        if (c->has_blimit) {
            int64_t already = c->used > c->nominal ? c->used - c->nominal : 0;
            int64_t cap = c->blimit - already;
            if (cap < 0)
                cap = 0;
            if (c->borrowable > cap)
                c->borrowable = cap;
        }
    }
}

static void qw_cells_of(const json_t *cq, const json_t *peers, qw_frs_t *cells)
{
    qw_cells(cq, cells);
    qw_borrowable(cq, peers, cells);
}

static int64_t qw_free(const qw_fr_t *c)
{
    return c->nominal > c->used ? c->nominal - c->used : 0;
}

json_t *tg_queue_why_quota(const json_t *cq, const json_t *peers)
{
    qw_frs_t cells = {0};
    qw_cells_of(cq, peers, &cells);
    json_t *out = json_array();
    for (size_t i = 0; i < cells.n; i++) {
        qw_fr_t *c = &cells.v[i];
        json_array_append_new(out,
                              json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "flavor", c->flavor,
                                        "resource", c->res, "nominal", qw_text(c->nominal, c->fmt),
                                        "used", qw_text(c->used, c->fmt), "free",
                                        qw_text(qw_free(c), c->fmt), "borrowing_limit",
                                        c->has_blimit ? qw_text(c->blimit, c->fmt) : json_null(),
                                        "borrowable", qw_text(c->borrowable, c->fmt)));
    }
    free(cells.v);
    return out;
}

/* Does flavor `flavor` of group `g` take every requested resource of the
 * group? mode 0: without borrowing, 1: with. */
static int qw_flavor_fits(const qw_frs_t *cells, int g, const char *flavor, const json_t *req,
                          int mode)
{
    for (size_t i = 0; i < cells->n; i++) {
        const qw_fr_t *c = &cells->v[i];
        if (c->group != g || strcmp(c->flavor, flavor))
            continue;
        json_t *r = json_object_get(req, c->res);
        if (!r)
            continue;
        int64_t want = (int64_t)json_integer_value(json_array_get(r, 0));
        if (want > qw_free(c) + (mode ? c->borrowable : 0))
            return 0;
    }
    return 1;
}

static const char *qw_ws(const char *s)
{
    return s ? s : "";
}

json_t *tg_queue_why(const tg_queue_why_in_t *in)
{
    json_t *req = in->workload ? qw_requests(in->workload) : json_object();
    qw_frs_t cells = {0};
    if (in->cq)
        qw_cells_of(in->cq, in->peers, &cells);
    const char *cq_name = in->cluster_queue ? in->cluster_queue : "?";
    const char *cohort = in->cq ? qw_str(json_object_get(in->cq, "spec"), "cohort") : NULL;
    tg_buf_t why; /* text cut at QW_TEXT_MAX is still an answer */
    tg_buf_init(&why, QW_TEXT_MAX);
    json_t *quota = json_array();
    json_t *requests = json_object();
    int known = in->workload && in->cq && json_object_size(req) > 0;
    int fits = 1, borrow_needed = 0, borrow_helps = 1;

    const char *rk;
    json_t *rv;
    json_object_foreach(req, rk, rv) {
        json_object_set_new(
            requests, rk,
            qw_text(json_integer_value(json_array_get(rv, 0)),
                    (tg_quota_qty_format_e)json_integer_value(json_array_get(rv, 1))));
    }
    tg_buf_t shorts;
    tg_buf_init(&shorts, QW_TEXT_MAX);
    char borrow_note[512] = "";
    if (known) {
        /* resources the queue does not cover at all */
        json_object_foreach(req, rk, rv) {
            int covered = 0;
            for (size_t i = 0; i < cells.n && !covered; i++)
                covered = !strcmp(cells.v[i].res, rk);
            if (!covered && json_integer_value(json_array_get(rv, 0)) > 0) {
                fits = 0;
                borrow_helps = 0;
                tg_buf_printf_cut(&shorts, "%s%s has no quota for %s", shorts.len ? "; " : "",
                                  cq_name, rk);
            }
        }
        int ngroups = 0;
        for (size_t i = 0; i < cells.n; i++)
            if (cells.v[i].group + 1 > ngroups)
                ngroups = cells.v[i].group + 1;
        for (int g = 0; g < ngroups; g++) {
            const char *fit = NULL, *fit_borrow = NULL, *first = NULL;
            int wanted = 0;
            for (size_t i = 0; i < cells.n; i++) {
                if (cells.v[i].group != g)
                    continue;
                wanted |= json_object_get(req, cells.v[i].res) != NULL;
                if (!first)
                    first = cells.v[i].flavor;
                if (!fit && qw_flavor_fits(&cells, g, cells.v[i].flavor, req, 0))
                    fit = cells.v[i].flavor;
                if (!fit_borrow && qw_flavor_fits(&cells, g, cells.v[i].flavor, req, 1))
                    fit_borrow = cells.v[i].flavor;
            }
            if (!wanted)
                continue;
            const char *shown = fit ? fit : fit_borrow ? fit_borrow : first;
            if (!fit) {
                fits = 0;
                if (fit_borrow)
                    borrow_needed = 1;
                else
                    borrow_helps = 0;
            }
            for (size_t i = 0; i < cells.n; i++) {
                qw_fr_t *c = &cells.v[i];
                json_t *r = json_object_get(req, c->res);
                if (c->group != g || !r || strcmp(c->flavor, shown))
                    continue;
                int64_t want = (int64_t)json_integer_value(json_array_get(r, 0));
                int64_t missing = want > qw_free(c) ? want - qw_free(c) : 0;
                char t_want[32], t_free[32], t_nom[32], t_miss[32], t_b[32];
                qw_fmt(want, c->fmt, t_want, sizeof(t_want));
                qw_fmt(qw_free(c), c->fmt, t_free, sizeof(t_free));
                qw_fmt(c->nominal, c->fmt, t_nom, sizeof(t_nom));
                qw_fmt(missing, c->fmt, t_miss, sizeof(t_miss));
                qw_fmt(c->borrowable, c->fmt, t_b, sizeof(t_b));
                json_array_append_new(
                    quota, json_pack("{s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:s}", "flavor",
                                     c->flavor, "resource", c->res, "request", t_want, "nominal",
                                     qw_text(c->nominal, c->fmt), "used", qw_text(c->used, c->fmt),
                                     "free", t_free, "borrowable", t_b, "missing", t_miss));
                if (!missing || fit)
                    continue;
                tg_buf_printf_cut(&shorts,
                                  "%sflavor %s has %s %s free of %s but the run needs %s (%s "
                                  "%s missing)",
                                  shorts.len ? "; " : "", c->flavor, t_free, c->res, t_nom, t_want,
                                  t_miss, c->res);
                if (cohort && *cohort && !borrow_note[0])
                    snprintf(borrow_note, sizeof(borrow_note), "%s %s", t_b, c->res);
            }
        }
    }

    if (!strcmp(qw_ws(in->state), "Accepted")) {
        tg_buf_printf_cut(&why, "Accepted; taugate has not submitted it to the cluster yet");
        if (in->submit_after)
            tg_buf_printf_cut(&why, " (next try at %s)", in->submit_after);
        tg_buf_printf_cut(&why, ".");
    } else if (!strcmp(qw_ws(in->state), "Recovering")) {
        tg_buf_printf_cut(&why, "Recovering after %s; the next attempt is submitted %s%s.",
                          in->reason ? in->reason : "a failure", in->submit_after ? "at " : "soon",
                          qw_ws(in->submit_after));
    } else if (!in->workload && in->live) {
        tg_buf_printf_cut(&why, "Waiting for Kueue to queue its Workload.");
    } else if (!in->workload) {
        tg_buf_printf_cut(&why,
                          "Waiting in ClusterQueue %s (the cluster could not be asked for "
                          "details).",
                          cq_name);
    } else if (!in->cq) {
        tg_buf_printf_cut(&why, "Waiting in ClusterQueue %s (its quota could not be read).",
                          cq_name);
    } else if (!fits) {
        tg_buf_printf_cut(&why, "Not enough quota in ClusterQueue %s: %s.", cq_name,
                          shorts.data ? shorts.data : "");
        if (!cohort || !*cohort)
            tg_buf_printf_cut(&why, " Borrowing is not possible: %s is in no cohort.", cq_name);
        else if (borrow_needed && borrow_helps)
            tg_buf_printf_cut(&why,
                              " Borrowing from cohort %s could cover it (%s unused there); it "
                              "waits for Kueue to admit it.",
                              cohort, borrow_note[0] ? borrow_note : "enough");
        else
            tg_buf_printf_cut(&why, " Borrowing cannot close the gap: cohort %s can lend only %s.",
                              cohort, borrow_note[0] ? borrow_note : "too little");
    } else {
        tg_buf_printf_cut(&why, "Quota is free in ClusterQueue %s; it waits for Kueue to admit it",
                          cq_name);
        if (in->position_in_cq > 1)
            tg_buf_printf_cut(&why, " behind %ld workload(s) ahead in the ClusterQueue",
                              in->position_in_cq - 1);
        tg_buf_printf_cut(&why, ".");
    }
    if (in->position > 0)
        tg_buf_printf_cut(&why, " Position %ld", in->position);
    if (in->position > 0 && in->pending > 0)
        tg_buf_printf_cut(&why, " of %ld", in->pending);
    if (in->position > 0)
        tg_buf_printf_cut(&why, " in LocalQueue %s.", qw_ws(in->local_queue));
    if (in->kueue_message && *in->kueue_message && !strcmp(qw_ws(in->state), "Queued"))
        tg_buf_printf_cut(&why, " Kueue says: %s", in->kueue_message);

    json_t *out =
        json_pack("{s:o, s:o, s:o, s:b, s:s}", "requests", requests, "quota", quota, "fits",
                  known ? json_boolean(fits) : json_null(), "can_borrow",
                  known && borrow_needed && borrow_helps, "why", why.data ? why.data : "");
    tg_buf_clean(&why);
    tg_buf_clean(&shorts);
    free(cells.v);
    json_decref(req);
    return out;
}
