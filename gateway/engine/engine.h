/* The engine: background loops that carry accepted runs to the cluster and
 * follow them there. Any number of replicas may run it at once: the outbox
 * is claimed with FOR UPDATE SKIP LOCKED, and state transitions are
 * idempotent (store/lifecycle.h), so no leader is needed for these loops.
 *
 *   submitters (engine_submitters threads): outbox rows → the Kubernetes
 *     API (engine/submitter.h), woken by tg_engine_kick or every
 *     engine_poll_ms;
 *   the observer (engine/observer.h): informers with caches, workers that
 *     apply what the cluster shows to the runs, and the resync pass.
 * The evidence sealer runs apart (evidence/sealer.h): it needs no cluster.
 *
 * This header is all of the engine that api/ may include: starting and
 * stopping it (main.c), and the few commands a request hands to it, below
 * the tg_engine_* calls. The other engine/ headers are the engine's own. */
#ifndef TG_ENGINE_ENGINE_H
#define TG_ENGINE_ENGINE_H

#include <stddef.h>

#include "core/config.h"
#include "core/status.h"
#include "engine/observer.h"
#include "kube/client.h"
#include "kube/result.h"
#include "store/pool.h"

typedef struct tg_engine_s tg_engine_t;

/* Start the loops. NULL with a message when they cannot start. pool and
 * kube are borrowed and must outlive the engine. */
tg_engine_t *tg_engine_start(const tg_config_t *cfg, tg_db_pool_t *pool, tg_kube_client_t *kube,
                             char *err, size_t errlen);
/* Wake the submitters now (a run was just accepted on this replica). */
void tg_engine_kick(tg_engine_t *e);
/* The observer, for cached look-ups (borrowed; NULL-safe: NULL for NULL). */
tg_observer_t *tg_engine_observer(tg_engine_t *e);
/* Stop every loop and wait for them; NULL-safe. */
void tg_engine_stop(tg_engine_t *e);

/* Kueue reconciler (engine/reconcile.h; the loop is tg_app_t.reconcile).
 * Run a step soon (after an admin change). A no-op without a loop (NULL);
 * on a replica that is not the leader the leader catches up within
 * interval_s. */
typedef struct tg_reconcile_loop_s tg_reconcile_loop_t;
void tg_reconcile_kick(tg_reconcile_loop_t *rl);
/* 1 while this loop holds the reconciler lock (0 for NULL). */
int tg_reconcile_is_leader(tg_reconcile_loop_t *rl);

/* Recovery (engine/recovery.c): what happens when an attempt ends badly.
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

/* Attempt `attempt` of the run ended for `reason` (with the source's words in
 * `message`). Runs its own transaction. */
tg_rc_e tg_recovery_on_failure(tg_db_conn_t *conn, const char *run_id, int attempt,
                               const char *reason, const char *message, const char *source);

/* A resume asked for by hand. */
typedef struct {
    const char *run_id;
    const char *who; /* named in the run's event */
    int force;       /* resume even though the last attempt was OOMKilled */
} tg_recovery_resume_t;

/* Start a new attempt of a Failed run by hand. TG_ECONFLICT when the run has
 * not failed, or its last attempt was OOMKilled and the resume is not forced
 * (why says which). */
tg_rc_e tg_recovery_resume(tg_db_conn_t *conn, const tg_recovery_resume_t *ask, char *why,
                           size_t whylen);

/* Nodes (engine/node_health.h, engine/node_policy.h). The annotations a
 * cordon leaves on a Node, whoever cordoned it (the automation or an admin
 * through api/node_ops.c). */
#define TG_NODE_ANN_CORDONED_BY "taugate.io/cordoned-by"
#define TG_NODE_ANN_REASON      "taugate.io/cordon-reason"
#define TG_NODE_ANN_AT          "taugate.io/cordoned-at"
/* "admin" or "drain" when a platform admin cordoned the node through the API
 * (api/node_ops.c): the automation never takes that cordon back. Absent for
 * the automation's own cordons. */
#define TG_NODE_ANN_SOURCE "taugate.io/cordon-source"
/* When a platform admin last uncordoned the node: the automation leaves a
 * fault that began before it alone (it cordons again only for a new one). */
#define TG_NODE_ANN_UNCORDONED_AT "taugate.io/uncordoned-at"

/* Evict one pod (policy/v1 Eviction; a delete when the server has no
 * eviction subresource). A pod already gone is TG_OK. res (initialised by
 * the caller) says what the cluster answered: 429 when a
 * PodDisruptionBudget refuses. Shared by the node policy and the drain of
 * api/node_ops.c. */
tg_rc_e tg_node_evict_pod(tg_kube_client_t *kube, const char *ns, const char *pod,
                          tg_kube_result_t *res);

#endif
