/* Admission: the Kueue webhooks (suspend queued jobs, RayJob rules) and
 * field-validation of unknown fields, run after defaults and validation. */
#ifndef KS_ADMISSION_H
#define KS_ADMISSION_H

#include <jansson.h>

#include "server.h"

/* Mutate/validate obj (old is NULL on create); store lock held. Returns 0,
 * or -1 after writing the error reply. */
int ks_admission(ks_req_t *r, int rt, json_t *obj, json_t *old);
/* fieldValidation for built-in kinds (the 1.32 types, btypes.h) and CRs
 * (their structural schema): unknown fields give 400 under Strict and a
 * Warning per field under Warn (the default); they are dropped under Warn
 * and Ignore. Run before defaulting. */
int ks_admission_fields(ks_req_t *r, int rt, json_t *obj);

#endif
