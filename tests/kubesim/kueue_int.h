/* Internal interface between kueue.c (workloads, jobs, queue status) and
 * kueue_admit.c (quota, flavor assignment, preemption, admission). */
#ifndef KS_KUEUE_INT_H
#define KS_KUEUE_INT_H

#include <jansson.h>
#include <stddef.h>

#define KQ_QUEUE_LABEL   "kueue.x-k8s.io/queue-name"
#define KQ_PRIO_LABEL    "kueue.x-k8s.io/priority-class"
#define KQ_JOBUID_LABEL  "kueue.x-k8s.io/job-uid"
#define KQ_PODSET_LABEL  "kueue.x-k8s.io/podset"
#define KQ_FINALIZER     "kueue.x-k8s.io/resource-in-use"

/* Is the workload finished / holding quota / pending? */
int kq_wl_finished(json_t *wl);
int kq_wl_reserved(json_t *wl);
int kq_wl_pending(json_t *wl);
/* Run the admission cycles queued on KS_WQ_ADMIT (kueue_admit.c). */
void kq_admit_pass(void);
/* Change tracking (kueue_track.c): follow a Workload change (pending set,
 * quota usage, which ClusterQueues need a cycle); ask for a cycle over
 * every pending workload (queued as KQ_ADMIT_ALL_REF); the tracked
 * workloads as new references; usage in milli-units. Lock held. */
#define KQ_ADMIT_ALL_REF "*"
typedef struct {
    json_t **items;
    size_t n;
} kq_list_t;
void kq_admit_observe(json_t *old, json_t *obj);
void kq_admit_all(void);
void kq_admit_free(void);
kq_list_t kq_pending_list(void);
kq_list_t kq_reserved_list(void);
void kq_list_free(kq_list_t *l);
long long kq_usage_of(const char *cq, const char *flavor, const char *res);
/* Queue status (kueue_status.c): counters kept from Workload changes;
 * recount after queues come or go; mark queues whose status to write;
 * write the marked ones (lock held). */
void kq_status_observe(json_t *old, json_t *obj);
void kq_status_recount(void);
void kq_status_mark_cqs(void);
void kq_status_mark_lqs(const char *cq);
void kq_status_pass(void);
void kq_status_free(void);
/* Store helpers for workload status (take a copy, edit, store). */
void kq_wl_update(json_t *copy);

#endif
