/* What recovery reads and writes: a run's retry facts, new attempts, the
 * inputs to re-render a later attempt. */
#ifndef TG_STORE_RECOVERY_H
#define TG_STORE_RECOVERY_H

#include <jansson.h>

#include "store/pool.h"

/* Lock the run (caller's transaction) and return {state, attempt, resilience,
 * retries_used, namespace, object_kind} (new reference in *out). Retries
 * made for NodeFault or by hand (Resumed) are not counted. */
tg_rc_e tg_store_recovery_facts(tg_db_conn_t *conn, const char *run_id, json_t **out) TG_MUSTCHECK;
/* Open attempt `attempt` (the run's current attempt becomes it) and queue
 * "delete" of the previous attempt's objects now and "retry" after delay_ms.
 * In the caller's transaction. */
tg_rc_e tg_store_recovery_next_attempt(tg_db_conn_t *conn, const char *run_id, int attempt,
                                       const char *ns, const char *object_name,
                                       const char *object_kind, const char *reason,
                                       long delay_ms) TG_MUSTCHECK;
/* A run that ended is opened again (by hand): state Recovering, no end
 * time. In the caller's transaction; the event is the caller's. */
tg_rc_e tg_store_recovery_reopen(tg_db_conn_t *conn, const char *run_id) TG_MUSTCHECK;
/* Everything needed to render `attempt` again: {resolved, config_hash,
 * retry_reason, latest_checkpoint, files: {name: base64}} (new reference). */
tg_rc_e tg_store_recovery_render_inputs(tg_db_conn_t *conn, const char *run_id, int attempt,
                                        json_t **out) TG_MUSTCHECK;
/* Replace the run's current manifests (those of its current attempt). */
tg_rc_e tg_store_recovery_set_manifests(tg_db_conn_t *conn, const char *run_id,
                                        const json_t *manifests) TG_MUSTCHECK;
/* Why the attempt's pods ended badly, if they did: "OOMKilled", "Evicted",
 * or NULL (*reason gets a static string). */
tg_rc_e tg_store_recovery_pod_reason(tg_db_conn_t *conn, const char *run_id, int attempt,
                                     const char **reason) TG_MUSTCHECK;

#endif
