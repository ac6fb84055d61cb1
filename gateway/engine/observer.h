/* The observer: how the engine follows the cluster, level-triggered.
 *
 * Four informers (kube/informer.h) list and watch Workloads, and Jobs,
 * RayJobs and Pods labelled app.kubernetes.io/managed-by=taugate, each
 * into a cache of the fields the watcher reads (Workloads indexed by their
 * owner, Pods by run id). An informer event only queues the object's key
 * (engine/workqueue.h); workers take keys, read the object as the cache
 * holds it NOW, and apply it (engine/watcher.h). A key whose application
 * was committed is acknowledged in the cache at that resourceVersion; one
 * that failed (database down, pool exhausted, a statement error) is queued
 * again with back-off, and is not acknowledged: an event not committed is
 * not handled.
 *
 * Every resync_s seconds a resync pass
 *   1. queues every cached object whose current version is not
 *      acknowledged (whatever was missed for any reason: an outage, a crash
 *      of a worker's transaction, a queue dropped by a restart);
 *   2. compares every unfinished run (store: runs that have not ended, by
 *      id pages over an index) with the caches: an attempt whose Job or
 *      RayJob the cache shows finished is applied again, and one whose
 *      object is missing from a listed cache on two passes in a row (and
 *      has no outbox work pending) is applied as deleted.
 * Informers relist after a 410 or a broken watch, so a restarted API
 * server is read afresh; their caches then hold what the cluster holds.
 *
 * Per-run cost does not grow with the number of runs: lookups are by key or
 * index in memory, the resync reads unfinished runs in pages, and nothing
 * lists a namespace per run.
 *
 * Prometheus: taugate_engine_queue_depth, taugate_engine_cache_objects,
 * taugate_engine_cache_bytes, taugate_engine_apply_total{result},
 * taugate_engine_resync_repairs_total.
 *
 * Thread-safety: start and stop from one thread; the readers from any. */
#ifndef TG_ENGINE_OBSERVER_H
#define TG_ENGINE_OBSERVER_H

#include <jansson.h>

#include "kube/client.h"
#include "store/pool.h"

typedef struct tg_observer_s tg_observer_t;

typedef struct tg_observer_config_s {
    int workers;   /* threads applying changes (0 → 2) */
    long resync_s; /* seconds between resync passes (0 → 30) */
} tg_observer_config_t;

/* Start the informers, the workers and the resync thread. pool and kube
 * are borrowed and must outlive the observer. */
tg_observer_t *tg_observer_start(tg_db_pool_t *pool, tg_kube_client_t *kube,
                                 const tg_observer_config_t *cfg);
/* Stop every thread and free. NULL-safe. */
void tg_observer_stop(tg_observer_t *o);

/* ---- cached look-ups (any thread; NULL-safe on o) ----------------------- */

/* The Workload owned by Job/RayJob `owner` in namespace ns, projected
 * (metadata, spec.queueName, status conditions and admission) into *wl (a
 * NEW reference): from the cache, or, when the Workload watch is failing
 * (the cache may lack it), from the cluster by Kueue's job-uid label.
 * RET: 1 found; 0 it does not exist; -1 the cluster cannot tell now. */
int tg_observer_find_workload(tg_observer_t *o, const char *ns, const char *owner, json_t **wl);
/* How many cached pods of the run hold a version not yet committed to the
 * store (their last events are still being applied). */
size_t tg_observer_pods_unsettled(tg_observer_t *o, const char *run_id);

#endif
