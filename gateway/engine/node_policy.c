/* Cordon, note, recover, evict, uncordon. */
#include "engine/node_policy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "core/log.h"
#include "engine/node_health.h"
#include "engine/platform_metrics.h"
#include "engine/engine.h"
#include "kube/verbs.h"
#include "store/audit.h"
#include "store/nodes.h"

#define NP_SUBJECT "system:taugate"

static const char *np_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* A database failure that means the connection is gone. */
static int np_broken(tg_rc_e rc)
{
    return rc == TG_EUNAVAILABLE;
}

static tg_rc_e np_audit(tg_db_conn_t *conn, const char *route, const char *target,
                        const char *workspace, int status, const json_t *detail)
{
    char rid[TG_UUID_LEN + 8];
    char uuid[TG_UUID_LEN + 1];
    tg_uuid_v4(uuid);
    snprintf(rid, sizeof(rid), "engine-%s", uuid);
    tg_audit_entry_t e = {.subject = NP_SUBJECT,
                          .method = "ENGINE",
                          .route = route,
                          .target = target,
                          .workspace = workspace,
                          .request_id = rid,
                          .status = status,
                          .detail = detail};
    return tg_store_audit_append(conn, &e);
}

/* node_event + audit row for one action; `detail` borrowed. */
static tg_rc_e np_record(const tg_node_policy_t *p, tg_db_conn_t *conn, const char *node,
                         const char *kind, const char *route, const char *target,
                         const char *workspace, int ok, long http_code, const char *reason,
                         const char *message, const json_t *detail)
{
    tg_node_event_t ev = {.node = node,
                          .kind = kind,
                          .reason = reason,
                          .message = message,
                          .ok = ok,
                          .actor = p->identity,
                          .data = detail};
    tg_rc_e rc = tg_store_node_event(conn, &ev);
    int status = ok ? 200 : (http_code >= 400 && http_code < 600 ? (int)http_code : 502);
    if (rc == TG_OK)
        rc = np_audit(conn, route, target, workspace, status, detail);
    return rc;
}

static tg_rc_e np_cordon(const tg_node_policy_t *p, tg_db_conn_t *conn, tg_kube_client_t *kube,
                         const char *node, const char *problem)
{
    char at[40];
    tg_time_rfc3339(tg_now_wall_us(), at, sizeof(at));
    char reason[512];
    snprintf(reason, sizeof(reason), "%s", problem);
    json_t *patch = json_pack("{s:{s:b}, s:{s:{s:s, s:s, s:s}}}", "spec", "unschedulable", 1,
                              "metadata", "annotations", TG_NODE_ANN_CORDONED_BY, p->identity,
                              TG_NODE_ANN_REASON, reason, TG_NODE_ANN_AT, at);
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_nodes, .name = node};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    tg_rc_e krc = tg_kube_merge_patch(kube, &ref, patch, NULL, &res);
    json_t *detail = json_pack("{s:s, s:s, s:s, s:s?}", "node", node, "problem", problem, "by",
                               p->identity, "error", krc == TG_OK ? NULL : res.message);
    char target[300];
    snprintf(target, sizeof(target), "nodes/%s", node);
    if (krc == TG_OK)
        tg_log_info("nodes", "cordoned %s: %s", node, problem);
    else
        tg_log_warn("nodes", "could not cordon %s: %s", node, res.message ? res.message : "");
    tg_rc_e rc = np_record(p, conn, node, "cordon", "node.cordon", target, NULL, krc == TG_OK,
                           res.http_code, "Unhealthy", problem, detail);
    json_decref(detail);
    json_decref(patch);
    tg_kube_result_clean(&res);
    return rc;
}

static tg_rc_e np_uncordon(const tg_node_policy_t *p, tg_db_conn_t *conn, tg_kube_client_t *kube,
                           const json_t *row)
{
    const char *node = np_str(row, "name");
    json_t *patch =
        json_pack("{s:{s:n}, s:{s:{s:n, s:n, s:n}}}", "spec", "unschedulable", "metadata",
                  "annotations", TG_NODE_ANN_CORDONED_BY, TG_NODE_ANN_REASON, TG_NODE_ANN_AT);
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_nodes, .name = node};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    tg_rc_e krc = tg_kube_merge_patch(kube, &ref, patch, NULL, &res);
    json_t *detail = json_pack(
        "{s:s, s:s?, s:s?, s:s?}", "node", node, "cordoned_by", np_str(row, "cordoned_by"),
        "cordon_reason", np_str(row, "cordon_reason"), "error", krc == TG_OK ? NULL : res.message);
    char target[300];
    snprintf(target, sizeof(target), "nodes/%s", node);
    if (krc == TG_OK)
        tg_log_info("nodes", "uncordoned %s: healthy again", node);
    else
        tg_log_warn("nodes", "could not uncordon %s: %s", node, res.message ? res.message : "");
    tg_rc_e rc = np_record(p, conn, node, "uncordon", "node.uncordon", target, NULL, krc == TG_OK,
                           res.http_code, "Healthy", "the node is healthy again", detail);
    json_decref(detail);
    json_decref(patch);
    tg_kube_result_clean(&res);
    return rc;
}

/* POST pods/{name}/eviction; a server without the subresource gets a delete. */
tg_rc_e tg_node_evict_pod(tg_kube_client_t *kube, const char *ns, const char *pod,
                          tg_kube_result_t *res)
{
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_pods, .ns = ns, .name = pod, .sub = "eviction"};
    char *path = tg_kube_path(&ref);
    json_t *body = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "policy/v1", "kind",
                             "Eviction", "metadata", "name", pod, "namespace", ns);
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!path || !text) {
        free(path);
        free(text);
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "invalid pod name");
        return res->rc;
    }
    tg_kube_req_t req = {.verb = TG_KUBE_VERB_CREATE,
                         .method = "POST",
                         .path = path,
                         .content_type = "application/json",
                         .body = text,
                         .body_len = strlen(text),
                         .retry = TG_KUBE_RETRY_SAFE};
    tg_rc_e rc = tg_kube_request(kube, &req, res);
    free(path);
    free(text);
    if (rc != TG_OK &&
        (res->reason == TG_KUBE_R_METHOD_NOT_ALLOWED ||
         (res->reason == TG_KUBE_R_NOT_FOUND && res->http_code == 404 && !res->status))) {
        tg_kube_ref_t pref = {.gvr = &tg_kube_gvr_pods, .ns = ns, .name = pod};
        rc = tg_kube_delete(kube, &pref, TG_KUBE_PROPAGATION_BACKGROUND, -1, NULL, res);
    }
    if (rc != TG_OK && res->reason == TG_KUBE_R_NOT_FOUND)
        rc = TG_OK; /* already gone */
    return rc;
}

static tg_rc_e np_evict(const tg_node_policy_t *p, tg_db_conn_t *conn, tg_kube_client_t *kube,
                        const char *node, const json_t *pod)
{
    const char *ns = np_str(pod, "namespace");
    const char *name = np_str(pod, "pod");
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    tg_rc_e krc = tg_node_evict_pod(kube, ns, name, &res);
    json_t *detail =
        json_pack("{s:s, s:s?, s:s?, s:s?, s:O?, s:s?}", "node", node, "namespace", ns, "pod", name,
                  "run_id", np_str(pod, "run_id"), "attempt", json_object_get(pod, "attempt"),
                  "error", krc == TG_OK ? NULL : res.message);
    char target[600];
    snprintf(target, sizeof(target), "pods/%s/%s", ns ? ns : "", name ? name : "");
    if (krc != TG_OK)
        tg_log_warn("nodes", "could not evict %s from %s: %s", target, node,
                    res.message ? res.message : "");
    tg_rc_e rc =
        np_record(p, conn, node, "evict", "node.evict", target, np_str(pod, "workspace"),
                  krc == TG_OK, res.http_code, "NodeFault", "evicted from a faulty node", detail);
    json_decref(detail);
    tg_kube_result_clean(&res);
    return rc;
}

/* The runs on an Unhealthy node: note each attempt once; with evict_on_fault
 * recover it (once) and evict its pods there. */
static tg_rc_e np_runs(const tg_node_policy_t *p, tg_db_conn_t *conn, tg_kube_client_t *kube,
                       const json_t *row, const char *problem)
{
    const char *node = np_str(row, "name");
    json_t *pods = NULL;
    tg_rc_e rc = tg_store_node_run_pods(conn, node, &pods);
    if (rc != TG_OK)
        goto out;
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod) {
        const char *run_id = np_str(pod, "run_id");
        int attempt = (int)json_integer_value(json_object_get(pod, "attempt"));
        const json_t *prev = i ? json_array_get(pods, i - 1) : NULL;
        int first_pod = !prev || strcmp(np_str(prev, "run_id"), run_id) != 0;
        char msg[768];
        snprintf(msg, sizeof(msg), "%s is unhealthy: %s", node, problem);
        if (first_pod) {
            int claimed = 0, applied = 0;
            rc = tg_store_node_fault_claim(conn, run_id, attempt, node, problem, &claimed);
            if (rc == TG_OK && claimed) {
                char note[900];
                snprintf(note, sizeof(note), "node_fault: %s%s", msg,
                         p->evict_on_fault ? "; the attempt is moved to another node"
                                           : "; the run keeps running there");
                json_t *data =
                    json_pack("{s:{s:s, s:s, s:s?, s:s?, s:i, s:s}}", "node_fault", "node", node,
                              "problem", problem, "since", np_str(row, "health_since"), "gpu_class",
                              np_str(row, "gpu_class"), "attempt", attempt, "action",
                              p->evict_on_fault ? "recover" : "none");
                rc = tg_store_node_fault_note(conn, run_id, attempt, note, data, !p->evict_on_fault,
                                              &applied);
                if (rc == TG_OK && applied) {
                    tg_log_info("nodes", "run %s attempt %d is on faulty node %s", run_id, attempt,
                                node);
                    tg_node_event_t ev = {.node = node,
                                          .kind = "note",
                                          .reason = "NodeFault",
                                          .message = note,
                                          .ok = 1,
                                          .actor = p->identity,
                                          .data = data};
                    rc = tg_store_node_event(conn, &ev);
                }
                json_decref(data);
            }
            if (rc == TG_OK && p->evict_on_fault) {
                int first = 0;
                rc = tg_store_node_fault_recovered(conn, run_id, attempt, node, &first);
                if (rc == TG_OK && first) {
                    tg_rc_e rrc =
                        tg_recovery_on_failure(conn, run_id, attempt, "NodeFault", msg, "node");
                    json_t *detail = json_pack("{s:s, s:s, s:i, s:s, s:s?}", "run_id", run_id,
                                               "node", node, "attempt", attempt, "problem", problem,
                                               "workspace", np_str(pod, "workspace"));
                    char target[64];
                    snprintf(target, sizeof(target), "runs/%s", run_id);
                    rc = np_record(p, conn, node, "recover", "run.node_fault", target,
                                   np_str(pod, "workspace"), rrc == TG_OK, 500, "NodeFault", msg,
                                   detail);
                    json_decref(detail);
                    if (np_broken(rrc))
                        rc = rrc;
                }
            }
        }
        if (rc == TG_OK && p->evict_on_fault)
            rc = np_evict(p, conn, kube, node, pod);
        if (rc != TG_OK)
            break;
    }
out:
    json_decref(pods);
    return rc;
}

/* A platform admin uncordoned the node after this fault began (see
 * node_policy.h): leave it schedulable. Condition times have whole seconds,
 * so a fault must have begun in an earlier second than the uncordon: one
 * that began in the same second counts as new (the safe side). */
static int np_admin_accepted(const json_t *row)
{
    const char *at = np_str(row, "uncordoned_at");
    const char *since = np_str(row, "health_since");
    double a = at ? tg_platform_metrics_parse_time(at) : -1;
    double s = since ? tg_platform_metrics_parse_time(since) : -1;
    return a >= 0 && s >= 0 && s < floor(a);
}

/* Cordoned by a platform admin: never the automation's to take back. */
static int np_admin_cordon(const json_t *row)
{
    const char *src = np_str(row, "cordon_source");
    return src && (!strcmp(src, "admin") || !strcmp(src, "drain"));
}

tg_rc_e tg_node_policy_apply(const tg_node_policy_t *p, tg_db_conn_t *conn, tg_kube_client_t *kube,
                             const json_t *row)
{
    const char *health = np_str(row, "health");
    const char *node = np_str(row, "name");
    int unschedulable = json_is_true(json_object_get(row, "unschedulable"));
    const char *by = np_str(row, "cordoned_by");
    tg_rc_e rc = TG_OK;
    if (!health || !node)
        return TG_OK;
    if (!strcmp(health, "Unhealthy") && !np_admin_accepted(row)) {
        char problem[512];
        tg_node_problem_text(row, problem, sizeof(problem));
        if (p->auto_cordon && !unschedulable)
            rc = np_cordon(p, conn, kube, node, problem);
        if (rc == TG_OK)
            rc = np_runs(p, conn, kube, row, problem);
    } else if (!strcmp(health, "Healthy") && by && p->uncordon_on_recovery &&
               !np_admin_cordon(row)) {
        rc = np_uncordon(p, conn, kube, row);
    }
    if (rc != TG_OK && !np_broken(rc))
        tg_log_warn("nodes", "%s: the policy step failed; it is tried again at the next resync",
                    node);
    return rc;
}
