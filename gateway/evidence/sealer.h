/* The evidence sealer: turns each ended run into a sealed record.
 *
 * A sealer thread runs on every replica, with or without a cluster: a run
 * is queued (table evidence_queue, filled by a trigger) when it ends,
 * however it ended (a run cancelled before it reached any cluster
 * included), and sealed once the logs of its pods are collected, or
 * `log_grace_s` after it finished so a lost pod cannot hold the seal back
 * for ever. A run still waiting for logs is put back until its grace ends
 * (a pod's log_done brings it forward), so waiting runs cost nothing.
 * Sealing: build the record (store/evidence.h), add its "seal" section
 * {algorithm, key_id, sealed_at, ephemeral (only when true: no
 * evidence_signing_key was configured)}, take the canonical text, its
 * sha256 and the Ed25519 signature of the canonical bytes, and, in one
 * transaction, record the key in the key history (store/evidence_keys.h),
 * insert the row and dequeue the run. Replicas claim runs with SKIP LOCKED
 * and the insert is ON CONFLICT DO NOTHING, so each run gets exactly one
 * record. A run whose record cannot be built is retried a minute later
 * (evidence_queue.last_error says why). */
#ifndef TG_ENGINE_EVIDENCE_H
#define TG_ENGINE_EVIDENCE_H

#include "evidence/signer.h"
#include "engine/observer.h"
#include "store/pool.h"

#define TG_EVIDENCE_LOG_GRACE_S 60 /* default for the evidence_log_grace_s setting */
#define TG_EVIDENCE_BATCH       16 /* runs sealed per call at most */

/* Seal the runs that are due. `signer` must hold a private key (borrowed).
 * `obs` (borrowed, NULL without a cluster) is asked for the Workload of an
 * attempt that ran but whose admission the watcher had not recorded yet (a
 * run whose Workload is gone is sealed with a note in its queue facts
 * instead), and whether the run's pods are all applied.
 * RET: how many runs this call sealed or put back to wait for their logs (0
 * when none was due), or -1 when the database was unavailable. */
int tg_evidence_seal_pending(tg_db_pool_t *pool, tg_observer_t *obs, const tg_signer_t *signer,
                             long log_grace_s);

typedef struct tg_sealer_s tg_sealer_t;
/* Start the sealer thread: tg_evidence_seal_pending, again at once while it
 * finds work, else once a second. Everything is borrowed and must outlive
 * the sealer. NULL when the thread cannot start. */
tg_sealer_t *tg_evidence_sealer_start(tg_db_pool_t *pool, tg_observer_t *obs,
                                      const tg_signer_t *signer, long log_grace_s);
/* Stop and free; NULL-safe. */
void tg_evidence_sealer_stop(tg_sealer_t *s);

/* Seal one run now if it has ended and is not sealed yet, whatever its logs
 * (used by tests and tools). RET: TG_OK (sealed now or already),
 * TG_ECONFLICT when it has not ended, TG_ENOTFOUND, or a database error. */
tg_rc_e tg_evidence_seal_run(tg_db_conn_t *conn, const tg_signer_t *signer,
                             const char *run_id) TG_MUSTCHECK;

#endif
