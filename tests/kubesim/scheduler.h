/* kube-scheduler: binds pending pods to nodes that fit (requests incl.
 * GPUs, nodeSelector, required node affinity, taints/tolerations, cordon,
 * readiness), and evicts pods from nodes with untolerated NoExecute taints. */
#ifndef KS_SCHEDULER_H
#define KS_SCHEDULER_H

#include <jansson.h>

/* Track node usage and queue the pods a store change affects (store.h
 * observer); bind or check the queued pods (lock held). */
void ks_sched_observe(int rt, json_t *old, json_t *obj);
void ks_sched_pass(void);
void ks_sched_shutdown(void);
/* Does the toleration list tolerate the taint? */
int ks_tolerates(json_t *tolerations, json_t *taint);

#endif
