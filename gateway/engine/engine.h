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
 * The evidence sealer runs apart (engine/evidence.h): it needs no cluster. */
#ifndef TG_ENGINE_ENGINE_H
#define TG_ENGINE_ENGINE_H

#include "core/config.h"
#include "engine/observer.h"
#include "kube/client.h"
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

#endif
