/* The batch/v1 Job controller (Kubernetes 1.32 semantics): pods from the
 * template, suspend/resume, counts, back-off, SuccessCriteriaMet /
 * FailureTarget then Complete / Failed, podFailurePolicy, deadlines, TTL. */
#ifndef KS_JOBS_H
#define KS_JOBS_H

/* One pass over every Job (lock held). */
void ks_jobs_pass(void);
void ks_jobs_shutdown(void);

#endif
