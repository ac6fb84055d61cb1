/* Recovery: what happens when an attempt ends badly.
 *
 * With the run's `resilience` (max_retries, retry_on — default Preempted and
 * Evicted —, backoff_initial doubling up to backoff_max), a failure whose
 * reason is in retry_on starts attempt n+1 after the backoff: the run goes
 * Recovering, the old attempt's objects are deleted, and the new attempt is
 * rendered with its own object names and TAU_RESUME_FROM (the latest
 * checkpoint, else resilience.checkpoint_path), TAU_RETRY_ATTEMPT,
 * TAU_RETRY_MAX and TAU_RETRY_REASON. NodeFault is always retried and does
 * not spend the budget. Anything else fails the run with the reason. The
 * timers live in the outbox (not_before), so they survive restarts. */
#ifndef TG_ENGINE_RECOVERY_H
#define TG_ENGINE_RECOVERY_H

#include "store/pool.h"

/* Attempt `attempt` of the run ended for `reason` (with the source's words in
 * `message`). Runs its own transaction. */
tg_rc_e tg_recovery_on_failure(tg_db_conn_t *conn, const char *run_id, int attempt,
                               const char *reason, const char *message, const char *source);

/* Start a new attempt of a Failed run by hand. TG_ECONFLICT when the run has
 * not failed, or its last attempt was OOMKilled and `force` is 0 (why says
 * which). */
tg_rc_e tg_recovery_resume(tg_db_conn_t *conn, const char *run_id, const char *who, int force,
                           char *why, size_t whylen);

#endif
