/* GET /v1/workspaces/{ws}/quota (viewer): what a workspace may use.
 *
 * For each LocalQueue of the workspace, its ClusterQueue as the cluster
 * reports it (when a cluster is configured) next to the database's desired
 * values:
 *   {workspace, namespace, default_queue, source: "cluster"|"database",
 *    cluster_error?, queues: [{
 *      name, cluster_queue, default, cohort, queueing_strategy, in_cluster,
 *      active: {status, reason, message} | null,
 *      workloads: {pending, reserving, admitted},            LocalQueue status
 *      cluster_queue_workloads: {pending, reserving, admitted},
 *      resources: [{resource, nominal, borrowable, in_use, reserved,
 *                   available, pending}],                   summed over flavors
 *      flavors: [{flavor, resource, nominal, borrowing_limit, lending_limit,
 *                 in_use, borrowed, reserved, in_cluster,
 *                 desired: {nominal, borrowing_limit, lending_limit} | null}]}]}
 * desired is the database's values when they differ from the cluster's (a
 * change not yet carried over, or drift), else null; for a flavor only the
 * database has (in_cluster false) it is always given. Workload counts are
 * {} when the cluster does not say.
 * Quantities are canonical strings. in_use/borrowed come from the
 * ClusterQueue's status.flavorsUsage, reserved from flavorsReservation;
 * pending sums the requests (count x per-pod requests) of the queue's
 * pending Workloads; borrowable is how much more the queue may borrow from
 * its cohort: "0" without a cohort, borrowingLimit - borrowed with one, null
 * when the cohort sets no limit; available is nominal - reserved (not below
 * zero). Without a cluster the numbers are the database's and usage is
 * null. */
#ifndef TG_API_QUOTA_VIEW_H
#define TG_API_QUOTA_VIEW_H

#include "http/request.h"

void tg_api_quota_view(tg_req_t *req);

#endif
