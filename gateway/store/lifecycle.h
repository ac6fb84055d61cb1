/* What the engine reads and writes as runs move: run state transitions
 * (with their events), attempts and pods; the outbox is store/outbox.h.
 *
 * Run states move forward only: Accepted < Queued < Admitted < Running <
 * Succeeded | Failed | Cancelled. Recovering may be entered from any state
 * that has not ended. A transition that would go backwards, repeat the
 * current state, concern an older attempt, or touch an ended run is ignored,
 * so several replicas (or a relisting watch) applying the same observation
 * produce one event. */
#ifndef TG_STORE_LIFECYCLE_H
#define TG_STORE_LIFECYCLE_H

#include <jansson.h>

#include "store/events.h"
#include "store/pool.h"

/* The run and attempt owning a Job/RayJob, by namespace and object name.
 * *run_id: 37-byte buffer; *has_pods (may be NULL): 1 when a pod of the
 * attempt is recorded. TG_ENOTFOUND when it is not ours. */
tg_rc_e tg_store_attempt_by_object(tg_db_conn_t *conn, const char *ns, const char *name,
                                   char run_id[37], int *attempt, int *has_pods) TG_MUSTCHECK;

/* Set a run's reason and message while it is in `state` (nothing happens
 * in another state, when the message is already that, or over a node
 * fault's note): what it waits for, in words. No event is recorded: the
 * state does not change. */
tg_rc_e tg_store_run_words(tg_db_conn_t *conn, const char *run_id, const char *state,
                           const char *reason, const char *message) TG_MUSTCHECK;
/* A run whose reason is WaitingForCluster (and still Accepted) gets these
 * words instead: what it waited for has come. */
tg_rc_e tg_store_run_waited(tg_db_conn_t *conn, const char *run_id, const char *reason,
                            const char *message) TG_MUSTCHECK;
/* Every Accepted run gets reason WaitingForCluster with `message` (no
 * cluster is configured). */
tg_rc_e tg_store_runs_without_cluster(tg_db_conn_t *conn, const char *message) TG_MUSTCHECK;

/* Runs that have not ended, by id after `after` (NULL or "" for the first
 * page), at most `limit`: *out = [{id, attempt, state, namespace,
 * object_name, object_kind (of the current attempt; null before one is
 * rendered), pending (an outbox row is waiting for the run)}] (new
 * reference). */
tg_rc_e tg_store_unfinished_page(tg_db_conn_t *conn, const char *after, int limit,
                                 json_t **out) TG_MUSTCHECK;

/* Move a run's `attempt` to `ev->state` (see the rules above), in one
 * transaction with its event. *applied tells whether anything changed.
 * `queue_info` (borrowed, may be NULL) replaces the attempt's queue facts.
 * A run seen Running or Succeeded before it was seen Admitted gets the
 * states it skipped as implied events, except the admission when the
 * caller passes what the cluster shows of it: `admission` (may be NULL) is
 * then recorded, and `admission_info` (borrowed, may be NULL) are its queue
 * facts. */
tg_rc_e tg_store_run_transition(tg_db_conn_t *conn, const char *run_id, int attempt,
                                const tg_event_t *ev, const json_t *queue_info,
                                const tg_event_t *admission, const json_t *admission_info,
                                int *applied) TG_MUSTCHECK;
/* The same without an admission, inside the caller's transaction. */
tg_rc_e tg_store_run_transition_locked(tg_db_conn_t *conn, const char *run_id, int attempt,
                                       const tg_event_t *ev, const json_t *queue_info,
                                       int *applied) TG_MUSTCHECK;

typedef struct {
    const char *run_id;
    int attempt;
    const char *ns, *pod, *uid, *role, *node, *phase, *reason;
    const char *containers; /* PostgreSQL array literal */
    int has_exit_code, exit_code;
    const char *started_at, *finished_at; /* RFC 3339 or NULL */
} tg_pod_row_t;

/* Record what a pod looks like now (insert or update), with its attempt's
 * nodes and exit code, in one statement. */
tg_rc_e tg_store_pod_upsert(tg_db_conn_t *conn, const tg_pod_row_t *p) TG_MUSTCHECK;

#endif
