/* POST /v1/admin/nodes/{name}:cordon, :uncordon and :drain (see
 * node_ops.h). */
#include "api/node_ops.h"

#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/audit.h"
#include "api/authz.h"
#include "api/fields.h"
#include "core/ids.h"
#include "core/log.h"
#include "engine/engine.h"
#include "http/problem.h"
#include "kube/verbs.h"
#include "store/audit_writer.h"
#include "store/node_ops.h"
#include "store/nodes.h"

#define NODE_HISTORY     50
#define DRAIN_MAX_PODS   1000
#define NODE_NAME_MAX    253
#define REASON_MAX_BYTES 512

typedef enum { OP_CORDON, OP_UNCORDON, OP_DRAIN } node_op_e;

static const char *const op_names[] = {"cordon", "uncordon", "drain"};

/* The request's audit row, written here (with the reason) instead of by the
 * after hook. `detail` borrowed. */
static void node_audit(tg_req_t *req, const json_t *detail)
{
    tg_audit_entry_t e;
    tg_audit_entry_of(req, req->status ? req->status : 500, &e);
    e.detail = detail;
    if (tg_audit_writer_append(((tg_app_t *)tg_req_app(req))->audit, &e) == TG_OK)
        req->audited = 1;
}

/* The body: {reason} (required but for uncordon) and, for a drain,
 * grace_period_seconds. RET: the body (new reference, {} for an empty
 * uncordon), or NULL answered. */
static json_t *node_body_or_reply(tg_req_t *req, node_op_e op)
{
    static const tg_field_t fields[] = {
        {"reason", TG_F_STRING, 1, 0, 1, REASON_MAX_BYTES, TG_FP_NONE, NULL},
        {"grace_period_seconds", TG_F_INT, 0, 0, 0, 3600, TG_FP_NONE, NULL},
    };
    if (op == OP_UNCORDON && req->body.len == 0)
        return json_object();
    json_t *body = tg_req_json_body_or_reply(req);
    if (!body)
        return NULL;
    json_t *errors = json_array();
    if (!json_is_object(body))
        json_array_append_new(errors, tg_problem_error("", 0, 0, "must be a JSON object"));
    else
        tg_fields_check(body, fields, op == OP_DRAIN ? 2 : 1, op == OP_UNCORDON, errors);
    if (json_array_size(errors)) {
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the %s request is not valid", op_names[op]);
        json_decref(body);
        return NULL;
    }
    json_decref(errors);
    return body;
}

/* A Kubernetes failure as a problem: 404 for a node that is not there. */
static void node_kube_problem(tg_req_t *req, const char *node, const tg_kube_result_t *res,
                              const char *what)
{
    if (res->reason == TG_KUBE_R_NOT_FOUND)
        tg_problem(req, TG_ENOTFOUND, NULL, "node %s is not in the cluster", node);
    else
        tg_problem(req, TG_EUPSTREAM, NULL, "the cluster refused to %s node %s: %s", what, node,
                   res->message ? res->message : "no answer");
}

/* Patch the Node: cordon with taugate's annotations, or uncordon and drop
 * them (noting when, so the automation leaves the current fault alone). */
static tg_rc_e node_patch(tg_app_t *app, const char *node, node_op_e op, const char *by,
                          const char *reason, const char *at, tg_kube_result_t *res)
{
    json_t *patch =
        op == OP_UNCORDON
            ? json_pack("{s:{s:n}, s:{s:{s:n, s:n, s:n, s:n, s:s}}}", "spec", "unschedulable",
                        "metadata", "annotations", TG_NODE_ANN_CORDONED_BY, TG_NODE_ANN_REASON,
                        TG_NODE_ANN_AT, TG_NODE_ANN_SOURCE, TG_NODE_ANN_UNCORDONED_AT, at)
            : json_pack("{s:{s:b}, s:{s:{s:s, s:s, s:s, s:s, s:n}}}", "spec", "unschedulable", 1,
                        "metadata", "annotations", TG_NODE_ANN_CORDONED_BY, by, TG_NODE_ANN_REASON,
                        reason, TG_NODE_ANN_AT, at, TG_NODE_ANN_SOURCE,
                        op == OP_DRAIN ? "drain" : "admin", TG_NODE_ANN_UNCORDONED_AT);
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_nodes, .name = node};
    tg_rc_e rc = tg_kube_merge_patch(app->kube, &ref, patch, NULL, res);
    json_decref(patch);
    return rc;
}

/* ---- drain ---- */

/* A pod a drain leaves where it is: a DaemonSet's, or a static (mirror) pod. */
static int drain_skips(const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    if (json_object_get(json_object_get(meta, "annotations"), "kubernetes.io/config.mirror"))
        return 1;
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, o) {
        const char *kind = json_string_value(json_object_get(o, "kind"));
        if (kind && !strcmp(kind, "DaemonSet"))
            return 1;
    }
    return 0;
}

static int drain_collect(json_t *item, void *arg)
{
    json_t *pods = arg;
    if (json_array_size(pods) < DRAIN_MAX_PODS)
        json_array_append(pods, item);
    return 0;
}

static int drain_cmp(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = strcmp(json_string_value(json_object_get(x, "namespace")),
                   json_string_value(json_object_get(y, "namespace")));
    return c ? c
             : strcmp(json_string_value(json_object_get(x, "pod")),
                      json_string_value(json_object_get(y, "pod")));
}

/* The taugate run of namespace/pod among `runs` (tg_store_node_run_pods). */
static const json_t *drain_run_of(const json_t *runs, const char *ns, const char *pod)
{
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        if (!strcmp(json_string_value(json_object_get(r, "namespace")), ns) &&
            !strcmp(json_string_value(json_object_get(r, "pod")), pod))
            return r;
    }
    return NULL;
}

/* The runs with pods on the node move to a new attempt elsewhere first
 * (NodeFault: their retry budget is not spent), each once. */
static tg_rc_e drain_recover(tg_req_t *req, const char *node, const json_t *runs,
                             const char *message)
{
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return TG_EUNAVAILABLE;
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        const char *run_id = json_string_value(json_object_get(r, "run_id"));
        const json_t *prev = i ? json_array_get(runs, i - 1) : NULL;
        if (prev && !strcmp(json_string_value(json_object_get(prev, "run_id")), run_id))
            continue;
        int attempt = (int)json_integer_value(json_object_get(r, "attempt"));
        tg_rc_e rc = tg_recovery_on_failure(conn, run_id, attempt, "NodeFault", message, "node");
        if (rc == TG_EUNAVAILABLE)
            return rc;
        if (rc != TG_OK)
            tg_log_warn("nodes", "drain of %s: run %s could not be moved: %s", node, run_id,
                        tg_rc_slug(rc));
    }
    tg_app_db_release(req); /* no connection held over the evictions */
    return TG_OK;
}

/* Evict every pod of the list; *out gets one PodEviction each. */
static json_t *drain_evict(tg_app_t *app, const json_t *pods, const json_t *runs)
{
    json_t *out = json_array();
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod) {
        const json_t *meta = json_object_get(pod, "metadata");
        const char *ns = json_string_value(json_object_get(meta, "namespace"));
        const char *name = json_string_value(json_object_get(meta, "name"));
        const char *phase =
            json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
        if (!ns || !name)
            continue;
        const json_t *run = drain_run_of(runs, ns, name);
        const char *outcome = "evicted";
        json_t *message = json_null();
        if (drain_skips(pod)) {
            outcome = "skipped";
            message = json_string("DaemonSet and static pods stay on a drained node");
        } else if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))) {
            outcome = "gone";
            message = json_sprintf("the pod has ended (%s)", phase);
        } else {
            tg_kube_result_t res;
            tg_kube_result_init(&res);
            if (tg_node_evict_pod(app->kube, ns, name, &res) != TG_OK) {
                outcome = res.http_code == 429 ? "blocked" : "failed";
                message = json_string(res.message ? res.message : "no answer");
            }
            tg_kube_result_clean(&res);
        }
        json_array_append_new(
            out, json_pack("{s:s, s:s, s:O, s:s, s:o}", "namespace", ns, "pod", name, "run_id",
                           run ? json_object_get(run, "run_id") : json_null(), "outcome", outcome,
                           "message", message ? message : json_null()));
    }
    size_t n = json_array_size(out);
    json_t **arr = tg_xcalloc(n + 1, sizeof(*arr));
    for (i = 0; i < n; i++)
        arr[i] = json_incref(json_array_get(out, i));
    qsort(arr, n, sizeof(*arr), drain_cmp);
    json_array_clear(out);
    for (i = 0; i < n; i++)
        json_array_append_new(out, arr[i]);
    free(arr);
    return out;
}

/* ---- the operations ---- */

static void node_op(tg_req_t *req, node_op_e op)
{
    tg_app_t *app = tg_req_app(req);
    const char *node = tg_req_param(req, "name");
    const char *by = tg_who(req)->subject;
    json_t *body = NULL, *pods = NULL, *runs = NULL, *evictions = NULL, *view = NULL;
    json_t *detail = NULL;
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    if (!node || !*node || strlen(node) > NODE_NAME_MAX) {
        tg_problem(req, TG_ENOTFOUND, NULL, "node %s is not in the cluster", node ? node : "");
        goto out;
    }
    if (!(body = node_body_or_reply(req, op)))
        goto out;
    const char *reason = json_string_value(json_object_get(body, "reason"));
    detail =
        json_pack("{s:s, s:s, s:s?}", "node", node, "operation", op_names[op], "reason", reason);
    if (!app->kube) {
        tg_problem(req, TG_EUNAVAILABLE, NULL, "no cluster is configured");
        goto out;
    }
    char at[40];
    tg_time_rfc3339(tg_now_wall_us(), at, sizeof(at));
    /* the cluster first, with no database connection held */
    if (node_patch(app, node, op, by, reason, at, &res) != TG_OK) {
        node_kube_problem(req, node, &res, op_names[op]);
        goto out;
    }
    if (op == OP_DRAIN) {
        pods = json_array();
        char sel[300];
        snprintf(sel, sizeof(sel), "spec.nodeName=%s", node);
        tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_pods};
        tg_kube_list_opts_t lo = {.field_selector = sel, .limit = 500};
        tg_kube_result_clean(&res);
        tg_kube_result_init(&res);
        if (tg_kube_list_all(app->kube, &ref, &lo, drain_collect, pods, NULL, 0, &res) != TG_OK) {
            node_kube_problem(req, node, &res, "list the pods of");
            goto out;
        }
        tg_db_conn_t *conn = tg_app_db_or_reply(req);
        if (!conn)
            goto out;
        tg_rc_e rc = tg_store_node_run_pods(conn, node, &runs);
        char message[900];
        snprintf(message, sizeof(message), "node %s is drained by %s: %s", node, by, reason);
        if (rc == TG_OK)
            rc = drain_recover(req, node, runs, message);
        if (rc != TG_OK) {
            tg_problem(req, rc, NULL, "the runs on node %s could not be moved", node);
            goto out;
        }
        evictions = drain_evict(app, pods, runs);
    }
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        goto out;
    tg_node_event_t ev = {.node = node,
                          .kind = op_names[op],
                          .reason = op == OP_UNCORDON ? "Uncordoned" : "Cordoned",
                          .message = reason ? reason : "uncordoned by a platform admin",
                          .ok = 1,
                          .actor = by,
                          .data = detail};
    tg_rc_e rc = tg_store_node_cordon_set(conn, node, op == OP_UNCORDON ? NULL : by, reason, at,
                                          op == OP_DRAIN ? "drain" : "admin");
    if (rc == TG_OK)
        rc = tg_store_node_event(conn, &ev);
    if (rc == TG_OK)
        rc = tg_store_node_get(conn, node, NODE_HISTORY, &view);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "node %s was %sed in the cluster, but the record failed", node,
                   op_names[op]);
        goto out;
    }
    json_object_del(view, "history"); /* the answer is a Node, not a NodeDetail */
    if (op == OP_DRAIN) {
        json_object_set(detail, "pods", evictions);
        tg_resp_json(req, 200, json_pack("{s:O, s:O}", "node", view, "pods", evictions));
    } else {
        tg_resp_json(req, 200, json_incref(view));
    }
    tg_log_info("nodes", "%s %sed by %s", node, op_names[op], by);
out:
    node_audit(req, detail);
    tg_kube_result_clean(&res);
    json_decref(detail);
    json_decref(view);
    json_decref(evictions);
    json_decref(runs);
    json_decref(pods);
    json_decref(body);
}

void tg_api_node_cordon(tg_req_t *req)
{
    node_op(req, OP_CORDON);
}

void tg_api_node_uncordon(tg_req_t *req)
{
    node_op(req, OP_UNCORDON);
}

void tg_api_node_drain(tg_req_t *req)
{
    node_op(req, OP_DRAIN);
}
