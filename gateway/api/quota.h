/* Quota requests and queue deletion guards.
 *
 * Researchers ask for more quota; platform admins decide:
 *   POST /v1/workspaces/{ws}/quota-requests              researcher
 *        {resource, amount (quantity, > 0), reason (<= 4000), queue?, flavor?}
 *        queue defaults to the workspace's default_queue; the resource must
 *        be covered by the ClusterQueue behind it (flavor, when given, must be
 *        in that resource group). Idempotency-Key supported. 201 + Location.
 *   GET  /v1/workspaces/{ws}/quota-requests[?state=]     viewer (paged)
 *   GET  /v1/workspaces/{ws}/quota-requests/{id}         viewer
 *   GET  /v1/admin/quota-requests[?state=&workspace=]    admin (paged; newest first,
 *                                                        state=pending oldest first)
 *   GET  /v1/admin/quota-requests/{id}                   admin
 *   POST /v1/admin/quota-requests/{id}:approve {decision?}  admin
 *        adds `amount` to the nominal quota of the resource in the
 *        ClusterQueue behind the queue (exact quantity arithmetic), in one
 *        transaction with the state change and an audit entry (target
 *        /v1/admin/cluster-queues/<cq>, detail {quota_request, workspace,
 *        cluster_queue, flavor, resource, amount, nominal_before,
 *        nominal_after}); then kicks the Kueue reconciler.
 *   POST /v1/admin/quota-requests/{id}:reject {decision?}   admin
 * A request already decided answers 409; so does one that can no longer be
 * applied (its queue was deleted, the resource is no longer covered).
 *
 * Queue deletion guard: a LocalQueue or ClusterQueue with admitted work is
 * not deleted (409 saying why). */
#ifndef TG_API_QUOTA_H
#define TG_API_QUOTA_H

#include <stddef.h>

#include "http/request.h"
#include "store/pool.h"

struct tg_kube_client_s;

void tg_api_quota_request_create(tg_req_t *req);
void tg_api_quota_requests_list(tg_req_t *req);
void tg_api_quota_request_get(tg_req_t *req);
void tg_api_admin_quota_requests(tg_req_t *req);
void tg_api_admin_quota_request_get(tg_req_t *req);
void tg_api_admin_quota_approve(tg_req_t *req);
void tg_api_admin_quota_reject(tg_req_t *req);

/* Is a queue busy? `workspace` set: `queue` is that workspace's LocalQueue;
 * NULL: `queue` is a ClusterQueue. Busy means runs in state Admitted or
 * Running use it (runs.resolved policy.queue or the current attempt's
 * queue_info), or the cluster counts admitted or reserving Workloads in it
 * (LocalQueue/ClusterQueue status admittedWorkloads, reservingWorkloads;
 * skipped without a cluster). The database is read first and the request's
 * connection given back before the cluster is asked (one attempt,
 * TG_QUOTA_CLUSTER_TIMEOUT_MS). RET: 1 busy, with `why` saying by what; 0
 * idle; -1 when it cannot be told (database or cluster unreachable), with
 * `why`. */
#define TG_QUOTA_CLUSTER_TIMEOUT_MS 3000
int tg_quota_queue_in_use(tg_req_t *req, const char *workspace, const char *queue, char *why,
                          size_t whylen);

/* Delete guards for api/crud.c (tg_crud_t.before_delete): answer 409 when
 * the queue is busy, 503 when that cannot be told, and return -1; return 0
 * to let the delete go on. `parent` is the workspace (LocalQueues) or NULL. */
int tg_quota_lq_before_delete(tg_req_t *req, const char *parent, const char *key);
int tg_quota_cq_before_delete(tg_req_t *req, const char *parent, const char *key);

#endif
