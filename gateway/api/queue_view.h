/* Why pending: GET /v1/workspaces/{ws}/queue (viewer role in the workspace).
 *
 * Lists the workspace's pending runs (Accepted, Queued, Recovering; oldest
 * first, at most 500) in queue order, each with its place in its LocalQueue
 * and ClusterQueue from Kueue's visibility API
 * (.../localqueues/{lq}/pendingworkloads), and explains it in plain words
 * (api/queue_why.h): Kueue's own message, the ClusterQueue's free and
 * pending quota against what the run asks for — naming each short resource
 * and the amount missing — and whether borrowing from the cohort could
 * help.
 *
 *   {workspace, cluster: "ok" | "partial" | "unavailable",
 *    items: [{run_id, name, owner, state, reason, attempt, local_queue,
 *             cluster_queue, position, pending, position_in_cluster_queue,
 *             queued_since, submit_after, kueue_message, requests, quota,
 *             fits, can_borrow, why}],
 *    queues: [{local_queue, cluster_queue, cohort, pending, quota:
 *              [{flavor, resource, nominal, used, free, borrowing_limit,
 *                borrowable}]}]}
 *
 * Positions are 1-based. The live reads use one attempt each with a short
 * timeout; when the cluster cannot be asked, the answer is built from what
 * the engine stored (run messages, queue facts, the database's quotas with
 * no usage) and `cluster` says so. */
#ifndef TG_API_QUEUE_VIEW_H
#define TG_API_QUEUE_VIEW_H

#include "http/request.h"

void tg_api_workspace_queue(tg_req_t *req);

#endif
