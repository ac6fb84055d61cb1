/* Quota requests, their decision, and queue deletion guards (see quota.h). */
#include "api/quota.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/fields.h"
#include "api/paging.h"
#include "core/digest.h"
#include "core/ids.h"
#include "engine/engine.h"
#include "http/problem.h"
#include "http/router.h"
#include "kube/verbs.h"
#include "store/audit.h"
#include "store/quota.h"
#include "core/quota_qty.h"
#include "store/workspaces.h"

static const tg_field_t qr_fields[] = {
    {"resource", TG_F_STRING, 1, 0, 1, 253, TG_FP_NONE, NULL},
    {"amount", TG_F_STRING, 1, 0, 1, 64, TG_FP_NONE, NULL},
    {"reason", TG_F_STRING, 1, 0, 1, 4000, TG_FP_NONE, NULL},
    {"queue", TG_F_STRING, 0, 0, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"flavor", TG_F_STRING, 0, 0, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
};

static const tg_field_t decision_fields[] = {
    {"decision", TG_F_STRING, 0, 0, 0, 4000, TG_FP_NONE, NULL},
};

static const char *const qr_states[] = {"pending", "approved", "rejected", NULL};

static void quota_err(json_t *errors, const char *path, const char *msg)
{
    json_array_append_new(errors, tg_problem_error(path, 0, 0, msg));
}

/* A resource name: a Kubernetes resource such as cpu, memory, nvidia.com/gpu. */
static int quota_resource_ok(const char *s)
{
    if (!*s)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '-' || *p == '_' || *p == '/'))
            return 0;
    return 1;
}

static const char *quota_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* ?state= is one of the states, or absent; else answers 400. */
static int quota_state_or_reply(tg_req_t *req, const char **state)
{
    *state = tg_req_query(req, "state");
    if (!*state || !**state) {
        *state = NULL;
        return 0;
    }
    for (const char *const *s = qr_states; *s; s++)
        if (!strcmp(*s, *state))
            return 0;
    json_t *errors = json_array();
    quota_err(errors, "state", "must be pending, approved or rejected");
    tg_problem(req, TG_EINVAL, errors, "invalid query parameter state");
    return -1;
}

/* The cursor of a request list is the last id shown; it must be a UUID. */
static int quota_cursor_or_reply(tg_req_t *req, const tg_page_t *page)
{
    if (!page->after || tg_uuid_valid(page->after))
        return 0;
    json_t *errors = json_array();
    quota_err(errors, "cursor", "is not a cursor this server issued");
    tg_problem(req, TG_EINVAL, errors, "invalid query parameter cursor");
    return -1;
}

/* ---- create -------------------------------------------------------------- */

/* Check the body; resolve queue, ClusterQueue and flavor. Answers and
 * returns -1 on a problem. OUT: the resolved names (arena memory). */
static int quota_resolve_or_reply(tg_req_t *req, tg_db_conn_t *conn, const char *ws,
                                  const json_t *body, const char **queue, const char **cq,
                                  const char **flavor)
{
    json_t *errors = json_array(), *wsrow = NULL, *lq = NULL;
    int ret = -1;
    int bad = tg_fields_check(body, qr_fields, (int)TG_ARRAY_LEN(qr_fields), 0, errors);
    const char *res = quota_str(body, "resource"), *amt = quota_str(body, "amount");
    if (res && !quota_resource_ok(res)) {
        quota_err(errors, "resource",
                  "must be a resource name such as cpu, memory or nvidia.com/gpu");
        bad++;
    }
    tg_quota_qty_t q;
    if (amt && (tg_quota_qty_parse(amt, &q) != TG_QUOTA_QTY_OK || q.milli <= 0)) {
        quota_err(errors, "amount", "must be a positive Kubernetes quantity such as 8 or 64Gi");
        bad++;
    }
    if (bad) {
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the quota request is not valid (%d problem%s)",
                   bad, bad == 1 ? "" : "s");
        errors = NULL;
        goto out;
    }
    *queue = quota_str(body, "queue");
    tg_rc_e rc = TG_OK;
    if (!*queue) {
        rc = tg_store_crud_get(conn, &tg_store_workspaces, NULL, ws, &wsrow);
        *queue = quota_str(wsrow, "default_queue");
    }
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "workspace %s could not be read", ws);
        goto out;
    }
    if (!*queue) {
        quota_err(errors, "queue", "the workspace has no default queue; name one");
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the quota request names no queue");
        errors = NULL;
        goto out;
    }
    *queue = tg_arena_printf(req->arena, "%s", *queue);
    rc = tg_store_quota_queue(conn, ws, *queue, &lq);
    if (rc == TG_ENOTFOUND) {
        quota_err(errors, "queue",
                  tg_arena_printf(req->arena, "workspace %s has no queue %s", ws, *queue));
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the quota request names an unknown queue");
        errors = NULL;
        goto out;
    }
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the queue could not be read");
        goto out;
    }
    char why[300];
    const char *f = NULL;
    if (tg_quota_target(json_object_get(lq, "resource_groups"), res, quota_str(body, "flavor"), &f,
                        why, sizeof(why)) != TG_OK) {
        quota_err(errors, quota_str(body, "flavor") ? "flavor" : "resource",
                  tg_arena_printf(req->arena, "%s (ClusterQueue %s behind queue %s)", why,
                                  quota_str(lq, "cluster_queue"), *queue));
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the quota request cannot apply to queue %s",
                   *queue);
        errors = NULL;
        goto out;
    }
    *cq = tg_arena_printf(req->arena, "%s", quota_str(lq, "cluster_queue"));
    *flavor = tg_arena_printf(req->arena, "%s", f);
    ret = 0;
out:
    json_decref(errors);
    json_decref(wsrow);
    json_decref(lq);
    return ret;
}

void tg_api_quota_request_create(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    if (tg_authz_workspace_or_reply(req, ws, TG_ROLE_RESEARCHER) == TG_ROLE_NONE)
        return;
    const char *key;
    if (tg_req_idempotency_key_or_reply(req, &key) != 0)
        return;
    json_t *body = tg_req_json_body_or_reply(req);
    if (!body)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    const char *queue = NULL, *cq = NULL, *flavor = NULL;
    if (!conn || quota_resolve_or_reply(req, conn, ws, body, &queue, &cq, &flavor) != 0) {
        json_decref(body);
        return;
    }
    char id[TG_UUID_LEN + 1], hash[65];
    tg_uuid_v4(id);
    tg_sha256_hex(req->body.data, req->body.len, hash);
    tg_quota_request_new_t r = {.id = id,
                                .workspace = ws,
                                .requester = tg_who(req)->subject,
                                .resource = quota_str(body, "resource"),
                                .amount = quota_str(body, "amount"),
                                .reason = quota_str(body, "reason"),
                                .queue = queue,
                                .flavor = quota_str(body, "flavor") ? flavor : NULL,
                                .cluster_queue = cq,
                                .idempotency_key = key,
                                .request_hash = key ? hash : NULL};
    json_t *row = NULL;
    int replayed = 0;
    tg_rc_e rc = tg_store_quota_request_insert(conn, &r, &row, &replayed);
    json_decref(body);
    if (rc == TG_ECONFLICT) {
        tg_problem(req, rc, NULL,
                   "Idempotency-Key %s was already used with a different request; use a new key",
                   key ? key : "");
        return;
    }
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the quota request could not be stored");
        return;
    }
    const char *loc = tg_arena_printf(req->arena, "/v1/workspaces/%s/quota-requests/%s", ws,
                                      quota_str(row, "id"));
    tg_resp_json(req, 201, row);
    tg_resp_header(req, "Location", loc);
    if (replayed)
        tg_resp_header(req, "Idempotency-Replayed", "true");
}

/* ---- reads --------------------------------------------------------------- */

static const char *quota_id_key(tg_req_t *req, const json_t *row, void *arg)
{
    (void)arg;
    (void)req;
    return quota_str(row, "id");
}

static void quota_list(tg_req_t *req, const char *ws, int admin)
{
    tg_page_t page;
    const char *state;
    if (tg_page_or_reply(req, &page) != 0 || quota_cursor_or_reply(req, &page) != 0 ||
        quota_state_or_reply(req, &state) != 0)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    /* admins decide pending requests first come, first served */
    tg_quota_request_query_t q = {.workspace = ws,
                                  .state = state,
                                  .after_id = page.after,
                                  .oldest_first = admin && state && !strcmp(state, "pending"),
                                  .limit = page.limit + 1};
    json_t *items = NULL;
    tg_rc_e rc = tg_store_quota_requests_list(conn, &q, &items);
    if (rc != TG_OK)
        tg_problem(req, rc, NULL, "the quota requests could not be listed");
    else
        tg_page_reply_fn(req, &page, items, quota_id_key, NULL);
}

void tg_api_quota_requests_list(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    if (tg_authz_workspace_or_reply(req, ws, TG_ROLE_VIEWER) == TG_ROLE_NONE)
        return;
    quota_list(req, ws, 0);
}

void tg_api_admin_quota_requests(tg_req_t *req)
{
    const char *ws = tg_req_query(req, "workspace");
    quota_list(req, ws && *ws ? ws : NULL, 1);
}

static void quota_get(tg_req_t *req, const char *ws)
{
    const char *id = tg_req_param(req, "id");
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *row = NULL;
    tg_rc_e rc = tg_uuid_valid(id) ? tg_store_quota_request_get(conn, id, ws, &row) : TG_ENOTFOUND;
    if (rc == TG_ENOTFOUND)
        tg_problem(req, rc, NULL, "quota request %s does not exist", id);
    else if (rc != TG_OK)
        tg_problem(req, rc, NULL, "the quota request could not be read");
    else
        tg_resp_json(req, 200, row);
}

void tg_api_quota_request_get(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    if (tg_authz_workspace_or_reply(req, ws, TG_ROLE_VIEWER) == TG_ROLE_NONE)
        return;
    quota_get(req, ws);
}

void tg_api_admin_quota_request_get(tg_req_t *req)
{
    quota_get(req, NULL);
}

/* ---- decisions ----------------------------------------------------------- */

static void quota_decide(tg_req_t *req, int approve)
{
    const char *id = tg_req_param(req, "id");
    json_t *body = NULL;
    if (req->body.len > 0) { /* the body is optional: {decision?} */
        if (!(body = tg_req_json_body_or_reply(req)))
            return;
        json_t *errors = json_array();
        int bad =
            tg_fields_check(body, decision_fields, (int)TG_ARRAY_LEN(decision_fields), 0, errors);
        if (bad) {
            tg_problem(req, TG_EUNPROCESSABLE, errors, "the decision is not valid");
            json_decref(body);
            return;
        }
        json_decref(errors);
    }
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn || !tg_uuid_valid(id)) {
        if (conn)
            tg_problem(req, TG_ENOTFOUND, NULL, "quota request %s does not exist", id);
        json_decref(body);
        return;
    }
    tg_audit_entry_t audit = {.subject = tg_who(req)->subject,
                              .method = req->method_name,
                              .route = req->route ? req->route->path : "quota-approval",
                              .target = NULL, /* the ClusterQueue, filled in by the store */
                              .workspace = NULL,
                              .request_id = req->request_id,
                              .status = 200};
    char why[512] = "";
    json_t *row = NULL;
    tg_rc_e rc = tg_store_quota_decide(conn, id, approve, tg_who(req)->subject,
                                       quota_str(body, "decision"), &audit, &row, why, sizeof(why));
    json_decref(body);
    if (rc == TG_ENOTFOUND)
        tg_problem(req, rc, NULL, "quota request %s does not exist", id);
    else if (rc == TG_ECONFLICT)
        tg_problem(req, rc, NULL, "%s", why[0] ? why : "the quota request was already decided");
    else if (rc != TG_OK)
        tg_problem(req, rc, NULL, "the quota request could not be %s",
                   approve ? "approved" : "rejected");
    else {
        tg_resp_json(req, 200, row);
        if (approve)
            tg_reconcile_kick(
                tg_app_of(req)->reconcile); /* carry the new quota to the cluster now */
    }
}

void tg_api_admin_quota_approve(tg_req_t *req)
{
    quota_decide(req, 1);
}

void tg_api_admin_quota_reject(tg_req_t *req)
{
    quota_decide(req, 0);
}

/* ---- queues in use ------------------------------------------------------- */

/* Admitted + reserving Workloads the cluster counts for a queue; -1 when
 * the cluster cannot be read (why filled), 0 when the queue is not there.
 * One attempt within TG_QUOTA_CLUSTER_TIMEOUT_MS: an admin waits seconds,
 * not the client's minutes of retries, for a cluster that does not answer. */
static long quota_cluster_busy(tg_kube_client_t *kube, const tg_kube_gvr_t *gvr, const char *ns,
                               const char *name, char *why, size_t whylen)
{
    tg_kube_ref_t ref = {.gvr = gvr, .ns = ns, .name = name};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    long n = 0;
    if (tg_kube_get_once(kube, &ref, TG_QUOTA_CLUSTER_TIMEOUT_MS, &res) == TG_OK) {
        const json_t *st = json_object_get(res.body, "status");
        n = (long)json_integer_value(json_object_get(st, "admittedWorkloads")) +
            (long)json_integer_value(json_object_get(st, "reservingWorkloads"));
    } else if (res.reason != TG_KUBE_R_NOT_FOUND) {
        snprintf(why, whylen, "the cluster could not be asked whether it is in use: %s",
                 res.message ? res.message : tg_kube_reason_name(res.reason));
        n = -1;
    }
    tg_kube_result_clean(&res);
    return n;
}

int tg_quota_queue_in_use(tg_req_t *req, const char *workspace, const char *queue, char *why,
                          size_t whylen)
{
    tg_app_t *app = tg_req_app(req);
    long runs = 0, busy = 0;
    char example[37];
    why[0] = '\0';
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    json_t *ws = NULL;
    const char *ns = NULL;
    if (!conn || tg_store_quota_queue_runs(conn, workspace, queue, &runs, example) != TG_OK) {
        snprintf(why, whylen, "the database could not say whether it is in use");
        return -1;
    }
    if (app->kube && workspace &&
        tg_store_crud_get(conn, &tg_store_workspaces, NULL, workspace, &ws) == TG_OK)
        ns = quota_str(ws, "namespace");
    /* nothing below needs the database: no pooled connection waits on the
     * cluster */
    tg_app_db_release(req);
    if (app->kube && (!workspace || ns))
        busy = quota_cluster_busy(app->kube,
                                  workspace ? &tg_kube_gvr_localqueues : &tg_kube_gvr_clusterqueues,
                                  ns, queue, why, whylen);
    json_decref(ws);
    if (busy < 0)
        return -1;
    if (!runs && !busy)
        return 0;
    char a[160] = "", b[160] = "";
    if (busy)
        snprintf(a, sizeof(a), "the cluster counts %ld admitted or reserving workload(s) in it",
                 busy);
    if (runs)
        snprintf(b, sizeof(b), "%ld run(s) using it are Admitted or Running (e.g. run %s)", runs,
                 example);
    snprintf(why, whylen, "%s%s%s; wait for them to finish or cancel them first", a,
             busy && runs ? " and " : "", b);
    return 1;
}

static int quota_guard(tg_req_t *req, const char *ws, const char *key, const char *kind)
{
    char why[512];
    int used = tg_quota_queue_in_use(req, ws, key, why, sizeof(why));
    if (used == 0)
        return 0;
    if (used > 0) {
        tg_problem(req, TG_ECONFLICT, NULL, "%s %s has admitted work: %s", kind, key, why);
    } else {
        tg_problem(req, TG_EUNAVAILABLE, NULL, "%s %s was not deleted: %s", kind, key, why);
        tg_resp_header(req, "Retry-After", "5");
    }
    return -1;
}

int tg_quota_lq_before_delete(tg_req_t *req, const char *parent, const char *key)
{
    return quota_guard(req, parent, key, "queue");
}

int tg_quota_cq_before_delete(tg_req_t *req, const char *parent, const char *key)
{
    (void)parent;
    return quota_guard(req, NULL, key, "cluster queue");
}
