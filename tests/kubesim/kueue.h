/* Kueue (v0.14, v1beta1): Workloads for queued Jobs and RayJobs, admission
 * cycles with quota, flavors, cohorts and preemption, job start/stop, and
 * ClusterQueue / LocalQueue status. */
#ifndef KS_KUEUE_H
#define KS_KUEUE_H

#include <jansson.h>

/* Queue what a store change asks of Kueue (store.h observer); one pass
 * over what is queued: Workloads for new jobs, Workload/job sync,
 * admission cycles, queue status (lock held). */
void ks_kueue_observe(int rt, json_t *old, json_t *obj);
void ks_kueue_pass(void);
void ks_kueue_shutdown(void);
/* Pending workloads of a ClusterQueue in queue order (new reference: an
 * array of borrowed-then-increfed Workload objects). */
json_t *ks_kueue_pending(const char *cq);

#endif
