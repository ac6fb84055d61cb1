/* A workspace's quota: its queues' ClusterQueues, live and desired. */
#include "api/quota_view.h"

#include <stdio.h>
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "http/problem.h"
#include "kube/verbs.h"
#include "store/quota.h"
#include "core/quota_qty.h"
#include "store/workspaces.h"

#define QV_TIMEOUT_MS 5000 /* the request path does not wait long on the cluster */
#define QV_MAX_RES    64

typedef struct {
    tg_kube_client_t *kube; /* NULL without a cluster, or after it failed once */
    char error[300];
    json_t *workloads; /* the namespace's Workloads (array), fetched on first use */
    const char *ns;
} qv_ctx_t;

typedef struct {
    char name[256];
    tg_quota_qty_t nominal, in_use, reserved, borrowable;
    int have_nominal, have_usage, have_borrowable, unlimited;
} qv_res_t;

/* ---- cluster reads ------------------------------------------------------- */

static void qv_fail(qv_ctx_t *c, const tg_kube_result_t *res)
{
    snprintf(c->error, sizeof(c->error), "the cluster could not be read: %s",
             res->message ? res->message : tg_kube_reason_name(res->reason));
    c->kube = NULL; /* do not wait on it again in this request */
}

/* GET one object; NULL when absent or unreadable. */
static json_t *qv_get(qv_ctx_t *c, const tg_kube_gvr_t *gvr, const char *ns, const char *name)
{
    if (!c->kube)
        return NULL;
    tg_kube_ref_t ref = {.gvr = gvr, .ns = ns, .name = name};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    json_t *out = NULL;
    if (tg_kube_get_once(c->kube, &ref, QV_TIMEOUT_MS, &res) == TG_OK)
        out = tg_kube_result_take_body(&res);
    else if (res.reason != TG_KUBE_R_NOT_FOUND)
        qv_fail(c, &res);
    tg_kube_result_clean(&res);
    return out;
}

static int qv_collect(json_t *item, void *arg)
{
    json_array_append((json_t *)arg, item);
    return 0;
}

/* The namespace's Workloads (borrowed from the context), or NULL. */
static const json_t *qv_workloads(qv_ctx_t *c)
{
    if (c->workloads || !c->kube)
        return c->workloads;
    json_t *items = json_array();
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_workloads, .ns = c->ns};
    tg_kube_list_opts_t o = {.limit = 500, .timeout_ms = QV_TIMEOUT_MS};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    if (tg_kube_list_all(c->kube, &ref, &o, qv_collect, items, NULL, 0, &res) == TG_OK) {
        c->workloads = items;
    } else {
        qv_fail(c, &res);
        json_decref(items);
    }
    tg_kube_result_clean(&res);
    return c->workloads;
}

/* ---- helpers ------------------------------------------------------------- */

static const char *qv_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static json_t *qv_canon(const json_t *v)
{
    char in[64], out[TG_QUOTA_QTY_MAX_TEXT];
    if (json_is_integer(v))
        snprintf(in, sizeof(in), "%lld", (long long)json_integer_value(v));
    else if (json_is_string(v))
        snprintf(in, sizeof(in), "%s", json_string_value(v));
    else
        return json_null();
    if (tg_quota_qty_canonical(in, out, sizeof(out)) != TG_QUOTA_QTY_OK)
        return json_string(in);
    return json_string(out);
}

static json_t *qv_fmt(const tg_quota_qty_t *q)
{
    char out[TG_QUOTA_QTY_MAX_TEXT];
    return tg_quota_qty_format(q, out, sizeof(out)) == TG_QUOTA_QTY_OK ? json_string(out)
                                                                       : json_null();
}

static int qv_parse(const json_t *v, tg_quota_qty_t *q)
{
    char in[64];
    if (json_is_integer(v))
        snprintf(in, sizeof(in), "%lld", (long long)json_integer_value(v));
    else if (json_is_string(v))
        snprintf(in, sizeof(in), "%s", json_string_value(v));
    else
        return -1;
    return tg_quota_qty_parse(in, q) == TG_QUOTA_QTY_OK ? 0 : -1;
}

/* {name, total, borrowed} of (flavor, resource) in a flavorsUsage-style array. */
static const json_t *qv_usage_of(const json_t *arr, const char *flavor, const char *res)
{
    size_t i, j;
    json_t *f, *r;
    json_array_foreach(arr, i, f) {
        const char *fn = qv_str(f, "name");
        if (!fn || strcmp(fn, flavor) != 0)
            continue;
        json_array_foreach(json_object_get(f, "resources"), j, r) {
            const char *rn = qv_str(r, "name");
            if (rn && strcmp(rn, res) == 0)
                return r;
        }
    }
    return NULL;
}

/* The resource entry of (flavor, resource) in snake_case resource_groups. */
static const json_t *qv_db_resource(const json_t *groups, const char *flavor, const char *res)
{
    size_t gi, fi, ri;
    json_t *g, *f, *r;
    json_array_foreach(groups, gi, g)
        json_array_foreach(json_object_get(g, "flavors"), fi, f) {
            const char *fn = qv_str(f, "name");
            if (!fn || strcmp(fn, flavor) != 0)
                continue;
            json_array_foreach(json_object_get(f, "resources"), ri, r) {
                const char *rn = qv_str(r, "name");
                if (rn && strcmp(rn, res) == 0)
                    return r;
            }
        }
    return NULL;
}

static json_t *qv_desired(const json_t *r)
{
    if (!r)
        return json_null();
    return json_pack("{s:o, s:o, s:o}", "nominal", qv_canon(json_object_get(r, "nominal_quota")),
                     "borrowing_limit", qv_canon(json_object_get(r, "borrowing_limit")),
                     "lending_limit", qv_canon(json_object_get(r, "lending_limit")));
}

static qv_res_t *qv_res(qv_res_t *acc, int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(acc[i].name, name) == 0)
            return &acc[i];
    if (*n >= QV_MAX_RES)
        return NULL;
    qv_res_t *r = &acc[(*n)++];
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    return r;
}

static void qv_add(tg_quota_qty_t *sum, int *have, const tg_quota_qty_t *v)
{
    tg_quota_qty_t s;
    if (!*have) {
        *sum = *v;
        *have = 1;
    } else if (tg_quota_qty_add(sum, v, &s) == TG_QUOTA_QTY_OK) {
        *sum = s;
    }
}

/* Account one flavor entry into the per-resource summary. */
static void qv_account(qv_res_t *acc, int *nacc, const char *res, const json_t *e, int cohort)
{
    qv_res_t *r = qv_res(acc, nacc, res);
    if (!r)
        return;
    tg_quota_qty_t q;
    if (qv_parse(json_object_get(e, "nominal"), &q) == 0)
        qv_add(&r->nominal, &r->have_nominal, &q);
    if (qv_parse(json_object_get(e, "in_use"), &q) == 0) {
        tg_quota_qty_t rs = {0, q.format};
        (void)qv_parse(json_object_get(e, "reserved"), &rs);
        int h = r->have_usage;
        qv_add(&r->in_use, &h, &q);
        h = r->have_usage;
        qv_add(&r->reserved, &h, &rs);
        r->have_usage = 1;
    }
    /* borrowable: 0 without a cohort; limit - borrowed; unlimited without a limit */
    if (!cohort)
        return;
    if (qv_parse(json_object_get(e, "borrowing_limit"), &q) != 0) {
        r->unlimited = 1;
        return;
    }
    tg_quota_qty_t used = {0, q.format};
    (void)qv_parse(json_object_get(e, "borrowed"), &used);
    tg_quota_qty_t b = {q.milli > used.milli ? q.milli - used.milli : 0, q.format};
    qv_add(&r->borrowable, &r->have_borrowable, &b);
}

/* ---- one queue ----------------------------------------------------------- */

static json_t *qv_counts(const json_t *status)
{
    if (!status)
        return json_object(); /* unknown */
    return json_pack(
        "{s:I, s:I, s:I}", "pending",
        (json_int_t)json_integer_value(json_object_get(status, "pendingWorkloads")), "reserving",
        (json_int_t)json_integer_value(json_object_get(status, "reservingWorkloads")), "admitted",
        (json_int_t)json_integer_value(json_object_get(status, "admittedWorkloads")));
}

static json_t *qv_active(const json_t *status)
{
    size_t i;
    json_t *cond;
    json_array_foreach(json_object_get(status, "conditions"), i, cond) {
        const char *t = qv_str(cond, "type");
        if (t && strcmp(t, "Active") == 0)
            return json_pack("{s:s?, s:s?, s:s?}", "status", qv_str(cond, "status"), "reason",
                             qv_str(cond, "reason"), "message", qv_str(cond, "message"));
    }
    return json_null();
}

/* Pending requests (resource → milli) of a queue's Workloads that hold no quota. */
static void qv_pending(qv_ctx_t *c, const char *lq, qv_res_t *pend, int *npend)
{
    size_t i, p, k;
    json_t *wl, *ps, *ctr;
    json_array_foreach(qv_workloads(c), i, wl) {
        const json_t *spec = json_object_get(wl, "spec");
        const char *qn = qv_str(spec, "queueName");
        if (!qn || strcmp(qn, lq) != 0)
            continue;
        int held = 0;
        json_array_foreach(json_object_get(json_object_get(wl, "status"), "conditions"), k, ctr) {
            const char *t = qv_str(ctr, "type"), *s = qv_str(ctr, "status");
            if (t && s && strcmp(s, "True") == 0 &&
                (!strcmp(t, "QuotaReserved") || !strcmp(t, "Finished")))
                held = 1;
        }
        if (held)
            continue;
        json_array_foreach(json_object_get(spec, "podSets"), p, ps) {
            json_int_t count = json_integer_value(json_object_get(ps, "count"));
            const json_t *pod = json_object_get(json_object_get(ps, "template"), "spec");
            json_array_foreach(json_object_get(pod, "containers"), k, ctr) {
                const json_t *rs = json_object_get(ctr, "resources");
                const json_t *req = json_object_get(rs, "requests");
                if (!json_object_size(req))
                    req = json_object_get(rs, "limits");
                const char *rn;
                json_t *rv;
                json_object_foreach((json_t *)req, rn, rv) {
                    tg_quota_qty_t q;
                    qv_res_t *r = qv_res(pend, npend, rn);
                    if (!r || qv_parse(rv, &q) != 0)
                        continue;
                    if (__builtin_mul_overflow(q.milli, (int64_t)(count > 0 ? count : 1), &q.milli))
                        continue;
                    qv_add(&r->nominal, &r->have_nominal, &q);
                }
            }
        }
    }
}

static json_t *qv_flavors(const json_t *live_cq, const json_t *db, int *in_cluster)
{
    json_t *out = json_array();
    const json_t *st = json_object_get(live_cq, "status");
    const json_t *dbg = json_object_get(db, "resource_groups");
    size_t gi, fi, ri;
    json_t *g, *f, *r;
    *in_cluster = live_cq != NULL;
    json_array_foreach(json_object_get(json_object_get(live_cq, "spec"), "resourceGroups"), gi, g)
        json_array_foreach(json_object_get(g, "flavors"), fi, f) {
            const char *fn = qv_str(f, "name");
            json_array_foreach(json_object_get(f, "resources"), ri, r) {
                const char *rn = qv_str(r, "name");
                if (!fn || !rn)
                    continue;
                const json_t *u = qv_usage_of(json_object_get(st, "flavorsUsage"), fn, rn);
                const json_t *v = qv_usage_of(json_object_get(st, "flavorsReservation"), fn, rn);
                json_t *e =
                    json_pack("{s:s, s:s, s:o, s:o, s:o}", "flavor", fn, "resource", rn, "nominal",
                              qv_canon(json_object_get(r, "nominalQuota")), "borrowing_limit",
                              qv_canon(json_object_get(r, "borrowingLimit")), "lending_limit",
                              qv_canon(json_object_get(r, "lendingLimit")));
                /* desired says something only when it differs from the cluster */
                json_t *want = qv_desired(qv_db_resource(dbg, fn, rn));
                json_t *have =
                    json_pack("{s:O, s:O, s:O}", "nominal", json_object_get(e, "nominal"),
                              "borrowing_limit", json_object_get(e, "borrowing_limit"),
                              "lending_limit", json_object_get(e, "lending_limit"));
                if (json_equal(want, have)) {
                    json_decref(want);
                    want = json_null();
                }
                json_decref(have);
                json_object_set_new(e, "in_use", qv_canon(json_object_get(u, "total")));
                json_object_set_new(e, "borrowed", qv_canon(json_object_get(u, "borrowed")));
                json_object_set_new(e, "reserved", qv_canon(json_object_get(v, "total")));
                json_object_set_new(e, "in_cluster", json_true());
                json_object_set_new(e, "desired", want);
                json_array_append_new(out, e);
            }
        }
    /* what the database wants that the cluster does not show */
    json_array_foreach(dbg, gi, g)
        json_array_foreach(json_object_get(g, "flavors"), fi, f) {
            const char *fn = qv_str(f, "name");
            json_array_foreach(json_object_get(f, "resources"), ri, r) {
                const char *rn = qv_str(r, "name");
                int seen = 0;
                size_t k;
                json_t *e;
                json_array_foreach(out, k, e)
                    seen |= !strcmp(qv_str(e, "flavor"), fn ? fn : "") &&
                            !strcmp(qv_str(e, "resource"), rn ? rn : "");
                if (seen || !fn || !rn)
                    continue;
                json_array_append_new(
                    out,
                    json_pack("{s:s, s:s, s:o, s:o, s:o, s:n, s:n, s:n, s:b, s:o}", "flavor", fn,
                              "resource", rn, "nominal",
                              qv_canon(json_object_get(r, "nominal_quota")), "borrowing_limit",
                              qv_canon(json_object_get(r, "borrowing_limit")), "lending_limit",
                              qv_canon(json_object_get(r, "lending_limit")), "in_use", "borrowed",
                              "reserved", "in_cluster", 0, "desired", qv_desired(r)));
            }
        }
    return out;
}

/* One queue: `db` its stored ClusterQueue (borrowed), then the cluster. */
static json_t *qv_queue(qv_ctx_t *c, const json_t *lqrow, const json_t *db,
                        const char *default_queue)
{
    const char *name = qv_str(lqrow, "name"), *cqn = qv_str(lqrow, "cluster_queue");
    json_t *live_lq = qv_get(c, &tg_kube_gvr_localqueues, c->ns, name);
    json_t *live_cq = qv_get(c, &tg_kube_gvr_clusterqueues, NULL, cqn);
    const json_t *cq_spec = json_object_get(live_cq, "spec");
    const char *cohort = live_cq ? qv_str(cq_spec, "cohort") : qv_str(db, "cohort");
    int in_cluster = 0;
    json_t *flavors = qv_flavors(live_cq, db, &in_cluster);

    qv_res_t acc[QV_MAX_RES], pend[QV_MAX_RES];
    int nacc = 0, npend = 0;
    size_t i;
    json_t *e;
    json_array_foreach(flavors, i, e)
        qv_account(acc, &nacc, qv_str(e, "resource"), e, cohort && *cohort);
    if (c->kube)
        qv_pending(c, name, pend, &npend);
    json_t *resources = json_array();
    for (int k = 0; k < nacc; k++) {
        qv_res_t *r = &acc[k];
        qv_res_t *p = NULL;
        for (int j = 0; j < npend; j++)
            if (!strcmp(pend[j].name, r->name))
                p = &pend[j];
        tg_quota_qty_t avail = {0, r->nominal.format};
        if (r->have_usage && r->nominal.milli > r->reserved.milli)
            avail.milli = r->nominal.milli - r->reserved.milli;
        tg_quota_qty_t zero = {0, r->nominal.format};
        json_t *borrowable = !(cohort && *cohort)                  ? qv_fmt(&zero)
                             : r->unlimited || !r->have_borrowable ? json_null()
                                                                   : qv_fmt(&r->borrowable);
        json_t *pending_q = p ? qv_fmt(&p->nominal) : (c->workloads ? qv_fmt(&zero) : json_null());
        json_array_append_new(
            resources,
            json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "resource", r->name, "nominal",
                      r->have_nominal ? qv_fmt(&r->nominal) : json_null(), "borrowable", borrowable,
                      "in_use", r->have_usage ? qv_fmt(&r->in_use) : json_null(), "reserved",
                      r->have_usage ? qv_fmt(&r->reserved) : json_null(), "available",
                      r->have_usage ? qv_fmt(&avail) : json_null(), "pending", pending_q));
    }
    const char *strategy = live_cq ? qv_str(cq_spec, "queueingStrategy") : NULL;
    if (!strategy)
        strategy = qv_str(db, "queueing_strategy");
    json_t *q = json_pack(
        "{s:s, s:s?, s:b, s:s?, s:s, s:b, s:o, s:o, s:o, s:o, s:o}", "name", name, "cluster_queue",
        cqn, "default", default_queue && !strcmp(default_queue, name), "cohort",
        cohort && *cohort ? cohort : NULL, "queueing_strategy",
        strategy ? strategy : "BestEffortFIFO", "in_cluster", in_cluster && live_lq != NULL,
        "active", qv_active(json_object_get(live_cq, "status")), "workloads",
        qv_counts(json_object_get(live_lq, "status")), "cluster_queue_workloads",
        qv_counts(json_object_get(live_cq, "status")), "resources", resources, "flavors", flavors);
    json_decref(live_lq);
    json_decref(live_cq);
    return q;
}

void tg_api_quota_view(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    tg_db_conn_t *conn = tg_authz_workspace_db_or_reply(req, ws, TG_ROLE_VIEWER);
    if (!conn)
        return;
    tg_app_t *app = tg_req_app(req);
    json_t *wsrow = NULL, *lqs = NULL;
    tg_rc_e rc = tg_store_crud_get(conn, &tg_store_workspaces, NULL, ws, &wsrow);
    if (rc == TG_OK)
        rc = tg_store_crud_list(conn, &tg_store_local_queues, ws, NULL, 200, &lqs);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the quota of workspace %s could not be read", ws);
        json_decref(wsrow);
        return;
    }
    /* the database first, whole; then the connection goes back to the pool
     * before the cluster is asked anything */
    json_t *stored = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(lqs, i, row) {
        json_t *db = NULL;
        if (tg_store_quota_queue(conn, ws, qv_str(row, "name"), &db) != TG_OK)
            db = json_object();
        json_array_append_new(stored, db);
    }
    tg_app_db_release(req);
    qv_ctx_t c = {.kube = app->kube, .ns = qv_str(wsrow, "namespace")};
    const char *dq = qv_str(wsrow, "default_queue");
    json_t *queues = json_array();
    json_array_foreach(lqs, i, row) {
        json_array_append_new(queues, qv_queue(&c, row, json_array_get(stored, i), dq));
    }
    json_decref(stored);
    json_t *out = json_pack("{s:s, s:s?, s:s?, s:s, s:o}", "workspace", ws, "namespace", c.ns,
                            "default_queue", dq, "source",
                            app->kube && !c.error[0] ? "cluster" : "database", "queues", queues);
    if (c.error[0])
        json_object_set_new(out, "cluster_error", json_string(c.error));
    json_decref(c.workloads);
    json_decref(lqs);
    json_decref(wsrow);
    tg_resp_json(req, 200, out);
}
