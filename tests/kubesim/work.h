/* Work queues: which objects each controller looks at next.
 *
 * Controllers do not rescan the store. Each one observes every published
 * change (store.h) and queues references ("rt\x1fns\x1fname", ks_ref_fmt)
 * to the objects that change affects; timers queue a reference when
 * something is due (a simulated container's end, a back-off, a deadline);
 * a pass takes only what is queued. A reference is queued at most once
 * until it is taken. Lock held for every call. */
#ifndef KS_WORK_H
#define KS_WORK_H

#include <jansson.h>
#include <stddef.h>

typedef enum {
    KS_WQ_GC = 0,    /* objects with ownerReferences, owners being deleted */
    KS_WQ_QUEUED,    /* Jobs and RayJobs that may need a Workload */
    KS_WQ_WORKLOADS, /* Workloads to sync with their jobs */
    KS_WQ_ADMIT,     /* ClusterQueues (and unroutable Workloads) to admit for */
    KS_WQ_QSTATUS,   /* ClusterQueues and LocalQueues whose status to write */
    KS_WQ_JOBS,      /* batch/v1 Jobs */
    KS_WQ_DEPLOY,    /* Deployments and ReplicaSets */
    KS_WQ_SCHED,     /* pods to bind or to check against NoExecute taints */
    KS_WQ_KUBELET,   /* pods whose containers to start, finish or report */
    KS_WQ_COUNT
} ks_wq_e;

void ks_work_init(void);
void ks_work_free(void);
void ks_work_add(int q, const char *ref);
void ks_work_add_obj(int q, int rt, json_t *obj);
/* Up to max references queued on q, oldest first; free with
 * ks_work_release. Controllers take a round's share (KS_WORK_ROUND) so
 * that no round holds the store lock for long. */
#define KS_WORK_ROUND 256
#define KS_WORK_ALL   ((size_t)-1)
size_t ks_work_take(int q, size_t max, char ***refs);
void ks_work_release(char **refs, size_t n);
/* Is anything queued? */
int ks_work_pending(void);
/* Is ref queued on any queue? */
int ks_work_queued(const char *ref);
/* Queue ref on q at time `when` (ks_now() clock). */
void ks_work_at(double when, int q, const char *ref);
/* Queue what is due by now; returns seconds until the next timer, or a
 * negative value when none is set. */
double ks_work_timers(double now);

#endif
