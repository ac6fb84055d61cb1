/* KubeRay (v1.7): RayJob state machine, RayCluster with head/worker pods
 * and head Service, the entrypoint run in the head, submitter Job. */
#ifndef KS_RAYJOB_H
#define KS_RAYJOB_H

/* Any RayJob or RayCluster to reconcile? Then the loop polls the pass. */
int ks_rayjob_active(void);
/* One pass over every RayJob and RayCluster (lock held). */
void ks_rayjob_pass(void);

#endif
