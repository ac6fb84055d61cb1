/* Quota requests, their decision, queue use and GPU usage (see quota.h). */
#include "store/quota.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/json_rows.h"
#include "core/quota_qty.h"

#define QR_COLS                                                                                    \
    "id, workspace, requester, resource, amount, reason, queue, flavor, cluster_queue, state,"     \
    " decided_by, decided_at, decision, applied, created_at"

static tg_stmt_t stmt_queue = TG_STMT(
    "SELECT to_jsonb(t) FROM (SELECT q.name AS queue, q.cluster_queue, c.cohort, c.resource_groups"
    " FROM local_queues q JOIN cluster_queues c ON c.name = q.cluster_queue"
    " WHERE q.workspace = $1 AND q.name = $2) t");

static tg_stmt_t stmt_insert = TG_STMT(
    "WITH ins AS (INSERT INTO quota_requests (id, workspace, requester, resource, amount, reason,"
    " queue, flavor, cluster_queue, idempotency_key, request_hash)"
    " VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *)"
    " SELECT to_jsonb(t) FROM (SELECT " QR_COLS " FROM ins) t");

static tg_stmt_t stmt_by_key =
    TG_STMT("SELECT to_jsonb(t) FROM (SELECT " QR_COLS ", request_hash FROM quota_requests"
            " WHERE workspace = $1 AND requester = $2 AND idempotency_key = $3) t");

static tg_stmt_t stmt_get =
    TG_STMT("SELECT to_jsonb(t) FROM (SELECT " QR_COLS " FROM quota_requests"
            " WHERE id = $1::uuid AND ($2::text IS NULL OR workspace = $2)) t");

static tg_stmt_t stmt_list =
    TG_STMT("SELECT to_jsonb(t) FROM (SELECT " QR_COLS " FROM quota_requests"
            " WHERE ($1::text IS NULL OR workspace = $1) AND ($2::text IS NULL OR state = $2)"
            " AND ($3::uuid IS NULL OR (created_at, id) <"
            "      (SELECT created_at, id FROM quota_requests WHERE id = $3::uuid"
            "       AND ($1::text IS NULL OR workspace = $1)))"
            " ORDER BY created_at DESC, id DESC LIMIT $4::int) t");

static tg_stmt_t stmt_list_asc =
    TG_STMT("SELECT to_jsonb(t) FROM (SELECT " QR_COLS " FROM quota_requests"
            " WHERE ($1::text IS NULL OR workspace = $1) AND ($2::text IS NULL OR state = $2)"
            " AND ($3::uuid IS NULL OR (created_at, id) >"
            "      (SELECT created_at, id FROM quota_requests WHERE id = $3::uuid"
            "       AND ($1::text IS NULL OR workspace = $1)))"
            " ORDER BY created_at, id LIMIT $4::int) t");

static tg_stmt_t stmt_lock =
    TG_STMT("SELECT to_jsonb(t) FROM (SELECT " QR_COLS " FROM quota_requests"
            " WHERE id = $1::uuid FOR UPDATE) t");

static tg_stmt_t stmt_cq_lock =
    TG_STMT("SELECT resource_groups FROM cluster_queues WHERE name = $1 FOR UPDATE");

static tg_stmt_t stmt_cq_set = TG_STMT(
    "UPDATE cluster_queues SET resource_groups = $2::jsonb, updated_at = now() WHERE name = $1");

static tg_stmt_t stmt_decide = TG_STMT(
    "WITH upd AS (UPDATE quota_requests SET state = $2, decided_by = $3, decided_at = now(),"
    " decision = $4, applied = $5::jsonb, cluster_queue = COALESCE($6, cluster_queue),"
    " flavor = COALESCE($7, flavor) WHERE id = $1::uuid AND state = 'pending' RETURNING *)"
    " SELECT to_jsonb(t) FROM (SELECT " QR_COLS " FROM upd) t");

static tg_stmt_t stmt_queue_runs = TG_STMT(
    "SELECT count(*), COALESCE(min(r.id::text), '') FROM runs r"
    " LEFT JOIN run_attempts a ON a.run_id = r.id AND a.attempt = r.attempt"
    " WHERE r.state IN ('Admitted', 'Running') AND ("
    "  ($1::text IS NOT NULL AND r.workspace = $1 AND"
    "   (r.resolved->'policy'->>'queue' = $2 OR a.queue_info->>'local_queue' = $2))"
    "  OR ($1::text IS NULL AND (a.queue_info->>'cluster_queue' = $2 OR EXISTS ("
    "   SELECT 1 FROM local_queues q WHERE q.workspace = r.workspace AND q.cluster_queue = $2"
    "   AND (q.name = r.resolved->'policy'->>'queue' OR q.name = "
    "a.queue_info->>'local_queue')))))");

static tg_stmt_t stmt_usage = TG_STMT(
    "WITH hi AS (SELECT COALESCE($2::timestamptz, now()) AS hi),"
    " bounds AS (SELECT COALESCE($1::timestamptz, hi.hi - interval '30 days') AS lo, hi.hi"
    "   FROM hi),"
    " att AS (SELECT r.workspace, r.owner, a.gpu_count,"
    "   GREATEST(a.started_at, b.lo) AS t0,"
    "   LEAST(COALESCE(a.finished_at,"
    "     (SELECT min(n.created_at) FROM run_attempts n"
    "      WHERE n.run_id = a.run_id AND n.attempt > a.attempt),"
    "     CASE WHEN r.state IN ('Succeeded', 'Failed', 'Cancelled') THEN r.finished_at END,"
    "     now()), b.hi) AS t1"
    "   FROM run_attempts a JOIN runs r ON r.id = a.run_id CROSS JOIN bounds b"
    "   WHERE a.started_at IS NOT NULL AND a.started_at < b.hi"
    "   AND ($3::text IS NULL OR r.workspace = $3)),"
    " gpu AS (SELECT workspace, owner,"
    "   sum(gpu_count * GREATEST(0, extract(epoch FROM t1 - t0)))::float8 AS gpu_seconds,"
    "   count(*) AS attempts FROM att WHERE t1 > t0 GROUP BY workspace, owner),"
    " cnt AS (SELECT r.workspace, r.owner, count(*) AS runs,"
    "   count(*) FILTER (WHERE r.state = 'Succeeded') AS succeeded,"
    "   count(*) FILTER (WHERE r.state = 'Failed') AS failed,"
    "   count(*) FILTER (WHERE r.state = 'Cancelled') AS cancelled,"
    "   count(*) FILTER (WHERE r.state NOT IN ('Succeeded', 'Failed', 'Cancelled')) AS active"
    "   FROM runs r CROSS JOIN bounds b WHERE r.created_at >= b.lo AND r.created_at < b.hi"
    "   AND ($3::text IS NULL OR r.workspace = $3) GROUP BY r.workspace, r.owner),"
    " k AS (SELECT workspace, owner FROM gpu UNION SELECT workspace, owner FROM cnt)"
    " SELECT jsonb_build_object('since', b.lo, 'until', b.hi, 'valid', b.lo < b.hi,"
    "  'rows', COALESCE((SELECT jsonb_agg(jsonb_build_object('workspace', k.workspace,"
    "   'user', k.owner, 'runs', COALESCE(c.runs, 0), 'succeeded', COALESCE(c.succeeded, 0),"
    "   'failed', COALESCE(c.failed, 0), 'cancelled', COALESCE(c.cancelled, 0),"
    "   'active', COALESCE(c.active, 0), 'attempts', COALESCE(g.attempts, 0),"
    "   'gpu_seconds', COALESCE(g.gpu_seconds, 0)) ORDER BY k.workspace, k.owner)"
    "   FROM k LEFT JOIN gpu g USING (workspace, owner) LEFT JOIN cnt c USING (workspace, owner)),"
    "  '[]')) FROM bounds b");

/* ---- arithmetic ---------------------------------------------------------- */

static const json_t *quota_group_of(const json_t *groups, const char *resource)
{
    size_t gi, ci;
    json_t *g, *c;
    json_array_foreach(groups, gi, g) {
        json_array_foreach(json_object_get(g, "covered_resources"), ci, c) {
            if (json_is_string(c) && strcmp(json_string_value(c), resource) == 0)
                return g;
        }
    }
    return NULL;
}

static json_t *quota_flavor_in(const json_t *group, const char *flavor)
{
    size_t fi;
    json_t *f;
    json_array_foreach(json_object_get(group, "flavors"), fi, f) {
        const char *n = json_string_value(json_object_get(f, "name"));
        if (!flavor || (n && strcmp(n, flavor) == 0))
            return f;
    }
    return NULL;
}

tg_rc_e tg_quota_target(const json_t *resource_groups, const char *resource, const char *flavor,
                        const char **out_flavor, char *why, size_t whylen)
{
    *out_flavor = NULL;
    const json_t *g = quota_group_of(resource_groups, resource);
    if (!g) {
        snprintf(why, whylen, "no resource group of the ClusterQueue covers %s", resource);
        return TG_EUNPROCESSABLE;
    }
    json_t *f = quota_flavor_in(g, flavor);
    if (!f) {
        if (flavor)
            snprintf(why, whylen, "flavor %s is not in the resource group that covers %s", flavor,
                     resource);
        else
            snprintf(why, whylen, "the resource group that covers %s has no flavors", resource);
        return TG_EUNPROCESSABLE;
    }
    *out_flavor = json_string_value(json_object_get(f, "name"));
    return *out_flavor ? TG_OK : TG_EUNPROCESSABLE;
}

tg_rc_e tg_quota_add_nominal(json_t *resource_groups, const char *resource, const char *flavor,
                             const char *amount, json_t **applied, char *why, size_t whylen)
{
    *applied = NULL;
    const char *fname = NULL;
    tg_rc_e rc = tg_quota_target(resource_groups, resource, flavor, &fname, why, whylen);
    if (rc != TG_OK)
        return rc;
    json_t *f = quota_flavor_in(quota_group_of(resource_groups, resource), fname);
    json_t *r = NULL;
    size_t ri;
    json_t *x;
    json_array_foreach(json_object_get(f, "resources"), ri, x) {
        const char *n = json_string_value(json_object_get(x, "name"));
        if (n && strcmp(n, resource) == 0)
            r = x;
    }
    if (!r) {
        snprintf(why, whylen, "flavor %s lists no quota for %s", fname, resource);
        return TG_EUNPROCESSABLE;
    }
    const char *before = json_string_value(json_object_get(r, "nominal_quota"));
    char after[TG_QUOTA_QTY_MAX_TEXT];
    tg_quota_qty_t amt;
    if (tg_quota_qty_parse(amount, &amt) != TG_QUOTA_QTY_OK || amt.milli <= 0) {
        snprintf(why, whylen, "amount %s is not a positive quantity", amount);
        return TG_EUNPROCESSABLE;
    }
    tg_quota_qty_rc_e qr =
        tg_quota_qty_add_text(before ? before : "0", amount, after, sizeof(after));
    if (qr != TG_QUOTA_QTY_OK) {
        snprintf(why, whylen, "%s + %s %s", before ? before : "0", amount,
                 qr == TG_QUOTA_QTY_ERANGE ? "is too large" : "is not a quantity sum");
        return TG_EUNPROCESSABLE;
    }
    *applied = json_pack("{s:s, s:s, s:s, s:s?, s:s}", "flavor", fname, "resource", resource,
                         "amount", amount, "nominal_before", before, "nominal_after", after);
    json_object_set_new(r, "nominal_quota", json_string(after));
    return TG_OK;
}

/* ---- requests ------------------------------------------------------------ */

tg_rc_e tg_store_quota_queue(tg_db_conn_t *conn, const char *ws, const char *queue, json_t **out)
{
    const char *vals[] = {ws, queue};
    return tg_db_json_one(conn, &stmt_queue, 2, vals, out);
}

tg_rc_e tg_store_quota_request_insert(tg_db_conn_t *conn, const tg_quota_request_new_t *r,
                                      json_t **out, int *replayed)
{
    *replayed = 0;
    const char *vals[] = {
        r->id,    r->workspace, r->requester,     r->resource,        r->amount,      r->reason,
        r->queue, r->flavor,    r->cluster_queue, r->idempotency_key, r->request_hash};
    tg_rc_e rc = tg_db_json_one(conn, &stmt_insert, 11, vals, out);
    if (rc != TG_ECONFLICT || !r->idempotency_key)
        return rc;
    /* the key was used before: the same request again, or a different one */
    const char *kv[] = {r->workspace, r->requester, r->idempotency_key};
    json_t *prev = NULL;
    rc = tg_db_json_one(conn, &stmt_by_key, 3, kv, &prev);
    if (rc != TG_OK)
        return rc == TG_ENOTFOUND ? TG_ECONFLICT : rc;
    const char *h = json_string_value(json_object_get(prev, "request_hash"));
    if (!h || strcmp(h, r->request_hash) != 0) {
        json_decref(prev);
        return TG_ECONFLICT;
    }
    json_object_del(prev, "request_hash");
    *out = prev;
    *replayed = 1;
    return TG_OK;
}

tg_rc_e tg_store_quota_request_get(tg_db_conn_t *conn, const char *id, const char *ws, json_t **out)
{
    const char *vals[] = {id, ws};
    return tg_db_json_one(conn, &stmt_get, 2, vals, out);
}

tg_rc_e tg_store_quota_requests_list(tg_db_conn_t *conn, const tg_quota_request_query_t *q,
                                     json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", q->limit);
    const char *vals[] = {q->workspace, q->state, q->after_id, lim};
    return tg_db_json_all(conn, q->oldest_first ? &stmt_list_asc : &stmt_list, 4, vals, out);
}

/* Grow the ClusterQueue behind a request; in the caller's transaction. */
static tg_rc_e quota_apply(tg_db_conn_t *conn, const json_t *req, json_t **applied,
                           const char **cq_out, char *why, size_t whylen)
{
    const char *ws = json_string_value(json_object_get(req, "workspace"));
    const char *queue = json_string_value(json_object_get(req, "queue"));
    json_t *lq = NULL, *groups = NULL;
    PGresult *r = NULL;
    tg_rc_e rc = tg_store_quota_queue(conn, ws, queue ? queue : "", &lq);
    if (rc == TG_ENOTFOUND) {
        snprintf(why, whylen, "queue %s of workspace %s no longer exists", queue ? queue : "?", ws);
        rc = TG_ECONFLICT;
    }
    if (rc != TG_OK)
        goto out;
    const char *cq = json_string_value(json_object_get(lq, "cluster_queue"));
    const char *cv[] = {cq};
    r = tg_db_exec(conn, &stmt_cq_lock, 1, cv, &rc);
    if (!r)
        goto out;
    if (PQntuples(r) != 1) {
        snprintf(why, whylen, "ClusterQueue %s no longer exists", cq);
        rc = TG_ECONFLICT;
        goto out;
    }
    groups = json_loads(PQgetvalue(r, 0, 0), 0, NULL);
    if (!groups) {
        rc = TG_EINTERNAL;
        goto out;
    }
    rc = tg_quota_add_nominal(groups, json_string_value(json_object_get(req, "resource")),
                              json_string_value(json_object_get(req, "flavor")),
                              json_string_value(json_object_get(req, "amount")), applied, why,
                              whylen);
    if (rc != TG_OK) {
        /* the queue changed since the request was made */
        rc = TG_ECONFLICT;
        goto out;
    }
    char *text = json_dumps(groups, JSON_COMPACT);
    const char *sv[] = {cq, text};
    rc = tg_db_run(conn, &stmt_cq_set, 2, sv);
    free(text);
    if (rc == TG_OK) {
        json_object_set_new(*applied, "cluster_queue", json_string(cq));
        *cq_out = json_string_value(json_object_get(*applied, "cluster_queue"));
    }
out:
    PQclear(r);
    json_decref(groups);
    json_decref(lq);
    return rc;
}

tg_rc_e tg_store_quota_decide(tg_db_conn_t *conn, const char *id, int approve,
                              const char *decided_by, const char *decision,
                              const tg_audit_entry_t *audit, json_t **out, char *why, size_t whylen)
{
    *out = NULL;
    json_t *req = NULL, *applied = NULL;
    char *applied_text = NULL;
    const char *cq = NULL;
    tg_rc_e rc = tg_db_begin(conn);
    if (rc != TG_OK)
        return rc;
    const char *iv[] = {id};
    rc = tg_db_json_one(conn, &stmt_lock, 1, iv, &req);
    if (rc != TG_OK)
        goto out;
    const char *state = json_string_value(json_object_get(req, "state"));
    if (!state || strcmp(state, "pending") != 0) {
        snprintf(why, whylen, "quota request %s was already %s by %s", id,
                 state ? state : "decided",
                 json_string_value(json_object_get(req, "decided_by"))
                     ? json_string_value(json_object_get(req, "decided_by"))
                     : "someone");
        rc = TG_ECONFLICT;
        goto out;
    }
    if (approve && (rc = quota_apply(conn, req, &applied, &cq, why, whylen)) != TG_OK)
        goto out;
    applied_text = applied ? json_dumps(applied, JSON_COMPACT) : NULL;
    const char *dv[] = {id,
                        approve ? "approved" : "rejected",
                        decided_by,
                        decision,
                        applied_text,
                        cq,
                        applied ? json_string_value(json_object_get(applied, "flavor")) : NULL};
    rc = tg_db_json_one(conn, &stmt_decide, 7, dv, out);
    if (rc == TG_ENOTFOUND) { /* decided meanwhile (the row lock makes this unlikely) */
        snprintf(why, whylen, "quota request %s was decided meanwhile", id);
        rc = TG_ECONFLICT;
    }
    if (rc != TG_OK)
        goto out;
    if (audit && applied) {
        tg_audit_entry_t e = *audit;
        char target[400];
        snprintf(target, sizeof(target), "/v1/admin/cluster-queues/%s", cq);
        if (!e.target)
            e.target = target;
        if (!e.workspace)
            e.workspace = json_string_value(json_object_get(req, "workspace"));
        json_t *detail = json_deep_copy(applied);
        json_object_set_new(detail, "quota_request", json_string(id));
        json_object_set(detail, "workspace", json_object_get(req, "workspace"));
        e.detail = detail;
        rc = tg_store_audit_append(conn, &e);
        json_decref(detail);
        if (rc != TG_OK)
            goto out;
    }
    rc = tg_db_commit(conn);
out:
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        json_decref(*out);
        *out = NULL;
    }
    free(applied_text);
    json_decref(applied);
    json_decref(req);
    return rc;
}

/* ---- queue use and usage ------------------------------------------------- */

tg_rc_e tg_store_quota_queue_runs(tg_db_conn_t *conn, const char *ws, const char *queue,
                                  long *count, char example[37])
{
    *count = 0;
    example[0] = '\0';
    const char *vals[] = {ws, queue};
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_queue_runs, 2, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 1) {
        *count = atol(PQgetvalue(r, 0, 0));
        snprintf(example, 37, "%s", PQgetvalue(r, 0, 1));
    }
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_store_quota_usage(tg_db_conn_t *conn, const char *since, const char *until,
                             const char *ws, json_t **out)
{
    const char *vals[] = {since, until, ws};
    return tg_db_json_one(conn, &stmt_usage, 3, vals, out);
}
