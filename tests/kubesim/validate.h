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

#endif
