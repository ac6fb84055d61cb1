/* The Deployment and ReplicaSet controllers, and the scale subresource.
 *
 * A Deployment owns one ReplicaSet per pod template (named after the
 * template's hash, labelled pod-template-hash, with a revision
 * annotation); the current one is scaled to spec.replicas and older ones
 * to zero at once (both strategies behave like a rollout with unbounded
 * surge), and old ReplicaSets beyond revisionHistoryLimit are deleted.
 * A ReplicaSet keeps spec.replicas pods that are neither terminal nor
 * being deleted. Both write their status (replicas, ready, available,
 * updated, conditions) from what they own. Lock held for every call. */
#ifndef KS_DEPLOY_H
#define KS_DEPLOY_H

#include <jansson.h>

#include "api.h"

void ks_deploy_observe(int rt, json_t *old, json_t *obj);
void ks_deploy_pass(void);
void ks_deploy_shutdown(void);
/* GET, PUT and PATCH of deployments/NAME/scale and replicasets/NAME/scale
 * (autoscaling/v1 Scale). Takes the lock itself. */
void ks_deploy_scale(ks_req_t *r, ks_target_t *t);

#endif
