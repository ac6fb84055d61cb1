/* The outbox (table outbox): the cluster actions a run's attempts wait for
 * ("create", "retry", "delete"), written in the transaction that decides
 * them, so a crash between deciding and doing loses nothing. Submitters
 * (engine/submitter.h) claim due rows with FOR UPDATE SKIP LOCKED, carry
 * them out, and delete them, or put them back with a delay.
 *
 * Two statements reach the table inside larger ones: the submission
 * (store/runs.c inserts the first "create" in the run's one INSERT) and the
 * queue view (store/queue_view.c reads a run's next due row).
 *
 * jansson: returned values are NEW references. */
#ifndef TG_STORE_OUTBOX_H
#define TG_STORE_OUTBOX_H

#include <jansson.h>

#include "store/pool.h"

/* Claim up to `limit` due outbox rows inside the caller's transaction (other
 * replicas skip them). *out: [{id, run_id, attempt, action, tries, state,
 * manifests (the run's current ones), namespace, object_name, object_kind
 * (of the row's attempt)}] (new reference). */
tg_rc_e tg_store_outbox_claim(tg_db_conn_t *conn, int limit, json_t **out) TG_MUSTCHECK;
tg_rc_e tg_store_outbox_done(tg_db_conn_t *conn, long id) TG_MUSTCHECK;
/* Try again after delay_ms, recording why. */
tg_rc_e tg_store_outbox_retry(tg_db_conn_t *conn, long id, long delay_ms,
                              const char *error) TG_MUSTCHECK;
/* Queue a cluster action for a run's attempt ("create" or "delete"). */
tg_rc_e tg_store_outbox_add(tg_db_conn_t *conn, const char *run_id, int attempt,
                            const char *action) TG_MUSTCHECK;
/* The same, due delay_ms from now (a retry's backoff). */
tg_rc_e tg_store_outbox_add_after(tg_db_conn_t *conn, const char *run_id, int attempt,
                                  const char *action, long delay_ms) TG_MUSTCHECK;
/* Drop a run's pending creates (it was cancelled before reaching the cluster). */
tg_rc_e tg_store_outbox_drop_creates(tg_db_conn_t *conn, const char *run_id) TG_MUSTCHECK;

#endif
