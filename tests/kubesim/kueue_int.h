/* Internal interface between kueue.c (workloads, jobs, queue status) and
 * kueue_admit.c (quota, flavor assignment, preemption, admission). */
#ifndef KS_KUEUE_INT_H
#define KS_KUEUE_INT_H

#include <jansson.h>

#define KQ_QUEUE_LABEL   "kueue.x-k8s.io/queue-name"
#define KQ_PRIO_LABEL    "kueue.x-k8s.io/priority-class"
#define KQ_JOBUID_LABEL  "kueue.x-k8s.io/job-uid"
#define KQ_PODSET_LABEL  "kueue.x-k8s.io/podset"
#define KQ_FINALIZER     "kueue.x-k8s.io/resource-in-use"

/* Is the workload finished / holding quota / pending? */
int kq_wl_finished(json_t *wl);
int kq_wl_reserved(json_t *wl);
int kq_wl_pending(json_t *wl);
/* Run admission over every ClusterQueue (lock held). */
void kq_admit_pass(void);
/* Store helpers for workload status (take a copy, edit, store). */
void kq_wl_update(json_t *copy);

#endif
