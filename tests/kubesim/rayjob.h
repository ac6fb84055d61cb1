/* KubeRay (v1.7): RayJob state machine, RayCluster with head/worker pods
 * and head Service, the entrypoint run in the head, submitter Job. */
#ifndef KS_RAYJOB_H
#define KS_RAYJOB_H

/* One pass (lock held). */
void ks_rayjob_pass(void);

#endif
