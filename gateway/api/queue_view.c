/* GET /v1/workspaces/{ws}/queue. */
#include "api/queue_view.h"

#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/queue_why.h"
#include "render/kueue.h"
#include "http/problem.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/verbs.h"
#include "store/queue_view.h"

#define QV_TIMEOUT_MS 3000L

typedef struct {
    tg_kube_client_t *kube;
    int asked, failed;
    int workloads_read; /* the namespace's Workloads were listed */
} qv_live_t;

static const char *qv_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* One GET, one attempt, a short timeout. The body (new reference) or NULL. */
static json_t *qv_get(qv_live_t *lv, const tg_kube_ref_t *ref)
{
    if (!lv->kube)
        return NULL;
    lv->asked++;
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    json_t *body = NULL;
    if (tg_kube_get_once(lv->kube, ref, QV_TIMEOUT_MS, &res) == TG_OK)
        body = tg_kube_result_take_body(&res);
    else if (res.reason != TG_KUBE_R_NOT_FOUND)
        lv->failed++;
    tg_kube_result_clean(&res);
    return body;
}

/* Workloads of the namespace by the name of the Job/RayJob owning them. */
static int qv_workload_item(json_t *item, void *arg)
{
    const json_t *owner =
        json_array_get(json_object_get(json_object_get(item, "metadata"), "ownerReferences"), 0);
    const char *name = qv_str(owner, "name");
    if (name)
        json_object_set(arg, name, item);
    return 0;
}

static json_t *qv_workloads(qv_live_t *lv, const char *ns)
{
    json_t *by_owner = json_object();
    if (!lv->kube || !ns)
        return by_owner;
    lv->asked++;
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_workloads, .ns = ns};
    tg_kube_list_opts_t o = {.limit = 500, .timeout_ms = QV_TIMEOUT_MS};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    if (tg_kube_list_all(lv->kube, &ref, &o, qv_workload_item, by_owner, NULL, 0, &res) != TG_OK)
        lv->failed++;
    else
        lv->workloads_read = 1;
    tg_kube_result_clean(&res);
    return by_owner;
}

/* The visibility entry of a run's workload in its LocalQueue, or NULL. */
static const json_t *qv_visible(const json_t *items, const char *wl_name, const char *owner)
{
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        const json_t *meta = json_object_get(it, "metadata");
        const char *n = qv_str(meta, "name");
        const char *o = qv_str(json_array_get(json_object_get(meta, "ownerReferences"), 0), "name");
        if ((wl_name && n && !strcmp(n, wl_name)) || (owner && o && !strcmp(o, owner)))
            return it;
    }
    return NULL;
}

/* Kueue's reason for keeping the workload: QuotaReserved=False's message. */
static const char *qv_kueue_message(const json_t *wl)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(wl, "status"), "conditions"), i, c) {
        const char *t = qv_str(c, "type");
        if (t && !strcmp(t, "QuotaReserved") && qv_str(c, "status") &&
            strcmp(qv_str(c, "status"), "True"))
            return qv_str(c, "message");
    }
    return NULL;
}

static long qv_int(const json_t *o, const char *k)
{
    return (long)json_integer_value(json_object_get(o, k));
}

static int qv_cmp(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    long px = qv_int(x, "position"), py = qv_int(y, "position");
    if ((px > 0) != (py > 0))
        return px > 0 ? -1 : 1;
    if (px != py)
        return px < py ? -1 : 1;
    const char *cx = qv_str(x, "queued_since"), *cy = qv_str(y, "queued_since");
    return strcmp(cx ? cx : "", cy ? cy : "");
}

/* Sort items in place by queue position, then age. */
static void qv_sort(json_t *items)
{
    size_t n = json_array_size(items);
    if (n < 2)
        return;
    json_t **v = tg_xcalloc(n, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(items, i));
    qsort(v, n, sizeof(*v), qv_cmp);
    json_array_clear(items);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(items, v[i]);
    free(v);
}

/* The ClusterQueue: live when the cluster answers, else rendered from its
 * database row (no status: nothing used). Borrowed from `cqs`. */
static const json_t *qv_cluster_queue(qv_live_t *lv, json_t *cqs, const json_t *rows,
                                      const char *name)
{
    if (!name)
        return NULL;
    json_t *have = json_object_get(cqs, name);
    if (have)
        return json_is_object(have) ? have : NULL;
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_clusterqueues, .name = name};
    json_t *cq = qv_get(lv, &ref);
    if (!cq && json_object_get(rows, name))
        cq = tg_render_kueue_cluster_queue(json_object_get(rows, name));
    json_object_set_new(cqs, name, cq ? cq : json_null());
    return cq;
}

/* Every ClusterQueue with status, when one of ours has a cohort. */
static json_t *qv_peers(qv_live_t *lv, const json_t *cqs)
{
    int cohorts = 0;
    const char *k;
    json_t *cq;
    json_object_foreach((json_t *)cqs, k, cq) {
        const char *c = qv_str(json_object_get(cq, "spec"), "cohort");
        cohorts |= c && *c;
    }
    if (!cohorts || !lv->kube)
        return json_array();
    lv->asked++;
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_clusterqueues};
    tg_kube_list_opts_t o = {.timeout_ms = QV_TIMEOUT_MS};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    json_t *items = NULL;
    if (tg_kube_list(lv->kube, &ref, &o, &res) == TG_OK)
        items = json_incref(json_object_get(res.body, "items"));
    else
        lv->failed++;
    tg_kube_result_clean(&res);
    return json_is_array(items) ? items : (json_decref(items), json_array());
}

static json_t *qv_item(const json_t *run, const json_t *wl, const json_t *vis_items,
                       const json_t *cq, const json_t *peers, int live)
{
    const json_t *qi = json_object_get(run, "queue_info");
    const char *state = qv_str(run, "state");
    const json_t *vis = qv_visible(
        vis_items, wl ? qv_str(json_object_get(wl, "metadata"), "name") : qv_str(qi, "workload"),
        qv_str(run, "object_name"));
    long position = vis ? qv_int(vis, "positionInLocalQueue") + 1 : qv_int(qi, "position");
    long pending = vis_items ? (long)json_array_size(vis_items) : qv_int(qi, "pending");
    long pos_cq = vis ? qv_int(vis, "positionInClusterQueue") + 1 : 0;
    const char *kmsg = wl ? qv_kueue_message(wl) : NULL;
    if (!kmsg && state && !strcmp(state, "Queued"))
        kmsg = qv_str(run, "message");
    int queued = state && !strcmp(state, "Queued");
    tg_queue_why_in_t in = {.state = state,
                            .reason = qv_str(run, "reason"),
                            .kueue_message = kmsg,
                            .local_queue = qv_str(run, "local_queue"),
                            .cluster_queue = qv_str(run, "cluster_queue"),
                            .submit_after = qv_str(run, "submit_after"),
                            .position = queued ? position : 0,
                            .pending = queued ? pending : 0,
                            .position_in_cq = queued ? pos_cq : 0,
                            .workload = wl,
                            .cq = cq,
                            .peers = peers,
                            .live = live};
    json_t *why = tg_queue_why(&in);
    json_t *item = json_pack(
        "{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:o, s:o, s:o, s:O, s:O, s:s?}", "run_id",
        json_object_get(run, "id"), "name", json_object_get(run, "name"), "owner",
        json_object_get(run, "owner"), "state", json_object_get(run, "state"), "reason",
        json_object_get(run, "reason") ? json_object_get(run, "reason") : json_null(), "attempt",
        json_object_get(run, "attempt"), "local_queue",
        json_object_get(run, "local_queue") ? json_object_get(run, "local_queue") : json_null(),
        "cluster_queue",
        json_object_get(run, "cluster_queue") ? json_object_get(run, "cluster_queue") : json_null(),
        "position", queued && position > 0 ? json_integer(position) : json_null(), "pending",
        queued && pending > 0 ? json_integer(pending) : json_null(), "position_in_cluster_queue",
        queued && pos_cq > 0 ? json_integer(pos_cq) : json_null(), "queued_since",
        json_object_get(run, "attempt_created_at") ? json_object_get(run, "attempt_created_at")
                                                   : json_object_get(run, "created_at"),
        "submit_after",
        json_object_get(run, "submit_after") ? json_object_get(run, "submit_after") : json_null(),
        "kueue_message", kmsg);
    json_object_update(item, why);
    json_decref(why);
    return item;
}

void tg_api_workspace_queue(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    tg_db_conn_t *conn = tg_authz_workspace_db_or_reply(req, ws, TG_ROLE_VIEWER);
    if (!conn)
        return;
    json_t *view = NULL;
    tg_rc_e rc = tg_store_queue_view(conn, ws, &view);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL,
                   rc == TG_ENOTFOUND ? "workspace %s does not exist"
                                      : "the queue of %s could not be read",
                   ws);
        return;
    }
    /* everything from here on is the cluster's: no pooled connection waits
     * on it */
    tg_app_db_release(req);
    tg_app_t *app = tg_req_app(req);
    qv_live_t lv = {.kube = app->kube};
    const char *ns = qv_str(view, "namespace");
    const json_t *runs = json_object_get(view, "runs");
    const json_t *rows = json_object_get(view, "cluster_queues");

    /* what the cluster says: pending positions per LocalQueue, Workloads,
     * ClusterQueues with their usage */
    json_t *vis = json_object();
    json_t *lqs = json_object(); /* local queue -> cluster queue */
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(view, "local_queues"), i, x) {
        json_object_set(lqs, qv_str(x, "name"), json_object_get(x, "cluster_queue"));
    }
    json_array_foreach(runs, i, x) {
        const char *lq = qv_str(x, "local_queue");
        if (lq && !json_object_get(lqs, lq))
            json_object_set(lqs, lq,
                            json_object_get(x, "cluster_queue")
                                ? json_object_get(x, "cluster_queue")
                                : json_null());
    }
    const char *lq;
    json_t *cqn;
    json_object_foreach(lqs, lq, cqn) {
        tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_visibility_localqueues,
                             .ns = ns,
                             .name = lq,
                             .sub = "pendingworkloads"};
        json_t *summary = qv_get(&lv, &ref);
        json_t *items = json_object_get(summary, "items");
        if (json_is_array(items))
            json_object_set(vis, lq, items);
        json_decref(summary);
    }
    json_t *wls = json_array_size(runs) ? qv_workloads(&lv, ns) : json_object();
    json_t *cqs = json_object();
    json_object_foreach(lqs, lq, cqn) {
        qv_cluster_queue(&lv, cqs, rows, json_string_value(cqn));
    }
    json_array_foreach(runs, i, x) {
        qv_cluster_queue(&lv, cqs, rows, qv_str(x, "cluster_queue"));
    }
    json_t *peers = qv_peers(&lv, cqs);

    json_t *items = json_array();
    json_array_foreach(runs, i, x) {
        const char *obj = qv_str(x, "object_name");
        const json_t *wl = obj ? json_object_get(wls, obj) : NULL;
        const char *cq_name = qv_str(x, "cluster_queue");
        const json_t *cq = cq_name ? json_object_get(cqs, cq_name) : NULL;
        const char *run_lq = qv_str(x, "local_queue");
        json_array_append_new(items,
                              qv_item(x, wl, run_lq ? json_object_get(vis, run_lq) : NULL,
                                      json_is_object(cq) ? cq : NULL, peers, lv.workloads_read));
    }
    qv_sort(items);

    json_t *queues = json_array();
    json_array_foreach(json_object_get(view, "local_queues"), i, x) {
        const char *name = qv_str(x, "name");
        const char *cq_name = qv_str(x, "cluster_queue");
        const json_t *cq = cq_name ? json_object_get(cqs, cq_name) : NULL;
        json_t *v = json_object_get(vis, name);
        json_array_append_new(
            queues,
            json_pack("{s:s, s:s?, s:s?, s:o, s:o}", "local_queue", name, "cluster_queue", cq_name,
                      "cohort",
                      json_is_object(cq) ? qv_str(json_object_get(cq, "spec"), "cohort") : NULL,
                      "pending", v ? json_integer((json_int_t)json_array_size(v)) : json_null(),
                      "quota", json_is_object(cq) ? tg_queue_why_quota(cq, peers) : json_array()));
    }
    const char *cluster = !lv.kube               ? "unavailable"
                          : lv.failed == 0       ? "ok"
                          : lv.failed < lv.asked ? "partial"
                                                 : "unavailable";
    tg_resp_json(req, 200,
                 json_pack("{s:s, s:s, s:o, s:o}", "workspace", ws, "cluster", cluster, "items",
                           items, "queues", queues));
    json_decref(peers);
    json_decref(cqs);
    json_decref(wls);
    json_decref(lqs);
    json_decref(vis);
    json_decref(view);
}
