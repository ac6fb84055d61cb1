/* Defaulting and validation, as the apiserver's registry strategies and
 * the CRD structural schemas do them. */
#ifndef KS_VALIDATE_H
#define KS_VALIDATE_H

#include <jansson.h>

/* Apply creation/update defaults in place (old is NULL on create). */
void ks_defaults(int rt, json_t *obj, json_t *old);
/* Validate; appends {reason, message, field} causes and returns the count.
 * old is the stored object on update, NULL on create. */
int ks_validate(int rt, json_t *obj, json_t *old, json_t *causes);
/* Unknown fields of a CR against its schema: prunes them from obj and
 * appends each path (".spec.foo") to unknown (an array). */
void ks_prune_unknown(int rt, json_t *obj, json_t *unknown);

/* Pieces shared with validate_deploy.c. Pod spec defaults and checks; job
 * selects a Job template's restartPolicy rules (no default, not Always). */
void ks_pod_spec_defaults(json_t *spec, int job);
void ks_validate_pod_spec(json_t *spec, const char *base, int job, json_t *causes);
/* A cause when the integer at path is present and negative. */
void ks_validate_nonneg(json_t *o, const char *path, json_t *causes);

/* validate_deploy.c: Deployment, PodDisruptionBudget and RBAC kinds. */
void ks_deploy_kinds_defaults(int rt, json_t *obj);
void ks_deploy_kinds_validate(int rt, json_t *obj, json_t *old, json_t *causes);

#endif
