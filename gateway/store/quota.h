/* Quotas in the database: researchers' quota requests and their decision
 * (which grows a ClusterQueue's nominal quota in the same transaction), the
 * runs that keep a queue busy, and GPU usage from run records.
 *
 * jansson: OUT values are NEW references owned by the caller; IN values are
 * BORROWED unless a comment says otherwise. */
#ifndef TG_STORE_QUOTA_H
#define TG_STORE_QUOTA_H

#include <jansson.h>
#include <stddef.h>

#include "store/audit.h"
#include "store/pool.h"

/* ---- the quota arithmetic a decision applies (pure) ---------------------- */

/* Add `amount` to the nominal_quota of `resource` in `resource_groups` (the
 * cluster_queues.resource_groups JSON, MODIFIED IN PLACE): in `flavor` when
 * given, else in the first flavor of the group that covers the resource
 * (Kueue tries a group's flavors in order, so the first is the one work
 * lands on). The sum is exact and keeps the nominal quota's notation
 * (core/quota_qty.h). OUT: *applied = {flavor, resource, amount,
 * nominal_before, nominal_after} (new reference). RET: TG_OK;
 * TG_EUNPROCESSABLE with `why` when no group covers the resource, the flavor
 * is not in that group, or a quantity does not parse or overflows. */
tg_rc_e tg_quota_add_nominal(json_t *resource_groups, const char *resource, const char *flavor,
                             const char *amount, json_t **applied, char *why,
                             size_t whylen) TG_MUSTCHECK;

/* Which flavor of `resource_groups` a request for `resource` (optionally in
 * `flavor`) would grow. OUT: *out_flavor, borrowed from resource_groups.
 * RET: TG_OK or TG_EUNPROCESSABLE with `why`. */
tg_rc_e tg_quota_target(const json_t *resource_groups, const char *resource, const char *flavor,
                        const char **out_flavor, char *why, size_t whylen) TG_MUSTCHECK;

/* ---- quota requests ------------------------------------------------------ */

/* A workspace's queue and the ClusterQueue behind it:
 * {queue, cluster_queue, cohort, resource_groups}. TG_ENOTFOUND when the
 * workspace has no such LocalQueue. */
tg_rc_e tg_store_quota_queue(tg_db_conn_t *conn, const char *ws, const char *queue,
                             json_t **out) TG_MUSTCHECK;

typedef struct {
    const char *id; /* new UUID */
    const char *workspace, *requester, *resource, *amount, *reason;
    const char *queue, *flavor, *cluster_queue;
    const char *idempotency_key, *request_hash; /* both or neither */
} tg_quota_request_new_t;

/* Insert a pending request; OUT: *out = the row (see the list for fields).
 * With an idempotency key already used by the same requester in the
 * workspace: TG_OK with *replayed = 1 and the original row when the request
 * hash matches, TG_ECONFLICT when it does not. */
tg_rc_e tg_store_quota_request_insert(tg_db_conn_t *conn, const tg_quota_request_new_t *r,
                                      json_t **out, int *replayed) TG_MUSTCHECK;

/* One request, within `ws` when it is not NULL. TG_ENOTFOUND otherwise. */
tg_rc_e tg_store_quota_request_get(tg_db_conn_t *conn, const char *id, const char *ws,
                                   json_t **out) TG_MUSTCHECK;

typedef struct {
    const char *workspace; /* NULL: every workspace */
    const char *state;     /* pending | approved | rejected; NULL: all */
    const char *after_id;  /* cursor: the last id of the previous page */
    int oldest_first;      /* 1: oldest first (a decision queue); 0: newest first */
    int limit;
} tg_quota_request_query_t;

/* [{id, workspace, requester, resource, amount, reason, queue, flavor,
 * cluster_queue, state, decided_by, decided_at, decision, applied,
 * created_at}] ordered by (created_at, id). A cursor id that does not exist
 * yields an empty page. */
tg_rc_e tg_store_quota_requests_list(tg_db_conn_t *conn, const tg_quota_request_query_t *q,
                                     json_t **out) TG_MUSTCHECK;

/* Decide a pending request in one transaction. Approval finds the request's
 * LocalQueue and its ClusterQueue (locked), adds the amount to the nominal
 * quota (tg_quota_add_nominal), stores the new resource_groups, marks the
 * request approved with `applied`, and appends `audit` (its detail is filled
 * here: {quota_request, workspace, cluster_queue, flavor, resource, amount,
 * nominal_before, nominal_after}; a NULL target becomes
 * /v1/admin/cluster-queues/<cq>, a NULL workspace the request's). Rejection only marks it rejected.
 * OUT: *out = the decided row. RET: TG_OK; TG_ENOTFOUND; TG_ECONFLICT with
 * `why` when it was already decided or can no longer be applied (queue gone,
 * resource no longer covered, the sum would overflow); database errors.
 * Nothing is kept unless everything succeeded. */
tg_rc_e tg_store_quota_decide(tg_db_conn_t *conn, const char *id, int approve,
                              const char *decided_by, const char *decision,
                              const tg_audit_entry_t *audit, json_t **out, char *why,
                              size_t whylen) TG_MUSTCHECK;

/* ---- queues in use ------------------------------------------------------- */

/* Runs in state Admitted or Running that use a LocalQueue (`ws` set) or any
 * LocalQueue of a ClusterQueue (`ws` NULL, `queue` is the ClusterQueue),
 * judged by the run's resolved policy.queue and its current attempt's
 * queue_info. OUT: *count, and one run id into example[37] ("" when none). */
tg_rc_e tg_store_quota_queue_runs(tg_db_conn_t *conn, const char *ws, const char *queue,
                                  long *count, char example[37]) TG_MUSTCHECK;

/* ---- usage --------------------------------------------------------------- */

/* GPU time and run counts per workspace and user over [since, until)
 * (RFC 3339; until defaults to now, since to until - 30 days), optionally
 * for one workspace. GPU time of an attempt is gpu_count x the overlap of
 * [started_at, end) with the range, where end is finished_at, else the start
 * of the next attempt, else the run's end, else now. Runs are counted by
 * created_at within the range.
 * OUT: {since, until, valid (false when since >= until), rows: [{workspace,
 * user, runs, succeeded, failed, cancelled, active, attempts, gpu_seconds}]}.
 * RET: TG_EINVAL for a malformed time. */
tg_rc_e tg_store_quota_usage(tg_db_conn_t *conn, const char *since, const char *until,
                             const char *ws, json_t **out) TG_MUSTCHECK;

#endif
