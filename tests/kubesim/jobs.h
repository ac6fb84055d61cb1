/* The batch/v1 Job controller (Kubernetes 1.32 semantics): pods from the
 * template, suspend/resume, counts, back-off, SuccessCriteriaMet /
 * FailureTarget then Complete / Failed, podFailurePolicy, deadlines, TTL. */
#ifndef KS_JOBS_H
#define KS_JOBS_H

#include <jansson.h>

/* Queue the Jobs a store change affects (store.h observer); sync the
 * queued ones (lock held). */
void ks_jobs_observe(int rt, json_t *old, json_t *obj);
void ks_jobs_pass(void);
void ks_jobs_shutdown(void);

#endif
