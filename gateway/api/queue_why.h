/* Why a run is pending, in plain words: the quota arithmetic behind
 * GET /v1/workspaces/{ws}/queue (api/queue_view.c). Pure functions over the
 * Kueue objects (Workload, ClusterQueue v1beta1) the handler fetched.
 *
 * A workload's request is, per resource, the sum over its pod sets of
 * count × the pod's effective request (max(sum of containers, max of init
 * containers), a container's limit standing in for a missing request).
 * For the ClusterQueue, per flavor and resource:
 *   free        = max(0, nominalQuota - used), used from
 *                 status.flavorsReservation (else flavorsUsage);
 *   borrowable  = what the other ClusterQueues of its cohort leave unused
 *                 (each at most its lendingLimit), capped by this queue's
 *                 borrowingLimit less what it already borrows; 0 without a
 *                 cohort;
 *   missing     = max(0, request - free).
 * The workload fits a flavor when every covered resource it asks for has
 * missing 0, and fits by borrowing when request <= free + borrowable. The
 * text names the first flavor of each resource group the workload does not
 * fit, every short resource with the amount missing (in the notation of the
 * quota, e.g. "5m cpu", "3Gi memory", "2 nvidia.com/gpu"), and whether
 * borrowing could close the gap.
 *
 * jansson: inputs borrowed, results new references. Thread-safe. */
#ifndef TG_API_QUEUE_WHY_H
#define TG_API_QUEUE_WHY_H

#include <jansson.h>

typedef struct tg_queue_why_in_s {
    const char *state;         /* Accepted, Queued, Recovering */
    const char *reason;        /* the run's reason (e.g. the recovery reason) */
    const char *kueue_message; /* Kueue's QuotaReserved/Pending message, or NULL */
    const char *local_queue, *cluster_queue;
    const char *submit_after; /* when the outbox submits it next (RFC 3339), or NULL */
    long position;            /* 1-based in the LocalQueue; 0 unknown */
    long pending;             /* pending workloads in the LocalQueue; 0 unknown */
    long position_in_cq;      /* 1-based in the ClusterQueue; 0 unknown */
    const json_t *workload;   /* the Kueue Workload, or NULL */
    const json_t *cq;         /* the ClusterQueue (with status when live), or NULL */
    const json_t *peers;      /* array of the ClusterQueues (with status), or NULL */
    int live;                 /* the cluster's Workloads could be read */
} tg_queue_why_in_t;

/* The workload's total request per resource in milli-units:
 * {resource: integer} (new object; empty when unknown). */
json_t *tg_queue_why_requests(const json_t *workload);

/* The ClusterQueue's quota per flavor and resource: [{flavor, resource,
 * nominal, used, free, borrowing_limit (or null), borrowable}] with
 * quantities as Kubernetes texts (new array). */
json_t *tg_queue_why_quota(const json_t *cq, const json_t *peers);

/* The analysis of one pending run: {requests: {resource: text}, quota:
 * [{flavor, resource, request, nominal, used, free, borrowable, missing}],
 * fits (true|false|null when unknown), can_borrow (true|false), why}
 * (new object). */
json_t *tg_queue_why(const tg_queue_why_in_t *in);

#endif
