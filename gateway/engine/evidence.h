/* The evidence sealer: turns each ended run into a sealed record.
 *
 * Called by the engine loop about once a second on every replica. A run is
 * queued (table evidence_queue, filled by a trigger) when it ends and sealed
 * once the logs of its pods are collected, or `log_grace_s` after it
 * finished so a lost pod cannot hold the seal back for ever. Sealing: build
 * the record (store/evidence.h), add its "seal" section {algorithm, key_id,
 * sealed_at}, take the canonical text, its sha256 and the Ed25519 signature
 * of the canonical bytes, and insert the row and dequeue the run in one
 * transaction. Replicas claim runs with SKIP LOCKED and the insert is
 * ON CONFLICT DO NOTHING, so each run gets exactly one record. A run whose
 * record cannot be built is retried a minute later (evidence_queue.last_error
 * says why). */
#ifndef TG_ENGINE_EVIDENCE_H
#define TG_ENGINE_EVIDENCE_H

#include "core/signer.h"
#include "kube/client.h"
#include "store/pool.h"

#define TG_EVIDENCE_LOG_GRACE_S 60 /* default for the evidence_log_grace_s setting */
#define TG_EVIDENCE_BATCH       16 /* runs sealed per call at most */

/* Seal the runs that are due. `signer` must hold a private key (borrowed).
 * `kube` (borrowed, may be NULL) is asked for the Workload of an attempt
 * that ran but whose admission the watcher had not recorded yet; a run whose
 * Workload is gone is sealed with a note in its queue facts instead.
 * RET: how many runs this call sealed (0 when none was due), or -1 when the
 * database was unavailable (call again later). */
int tg_evidence_seal_pending(tg_db_pool_t *pool, tg_kube_client_t *kube, const tg_signer_t *signer,
                             long log_grace_s);

/* Seal one run now if it has ended and is not sealed yet, whatever its logs
 * (used by tests and tools). RET: TG_OK (sealed now or already),
 * TG_ECONFLICT when it has not ended, TG_ENOTFOUND, or a database error. */
tg_rc_e tg_evidence_seal_run(tg_db_conn_t *conn, const tg_signer_t *signer,
                             const char *run_id) TG_MUSTCHECK;

#endif
