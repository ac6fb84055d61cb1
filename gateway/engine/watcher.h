/* The watcher: turns what the cluster objects of taugate's runs (Workloads,
 * Jobs, RayJobs, Pods) say into run state transitions, each recorded as a
 * run_event with its source.
 *
 *   Workload pending (QuotaReserved not true)  → Queued, with Kueue's message
 *   Workload Admitted                          → Admitted, with flavors
 *   Workload Evicted / Preempted, not Admitted → recovery (engine/recovery.c)
 *   a pod Running                              → Running
 *   Job Complete / RayJob SUCCEEDED            → Succeeded
 *   Job Failed / RayJob FAILED                 → recovery when the pods say
 *                                                why (OOMKilled, Evicted, a
 *                                                faulty node), else Failed
 *                                                with the object's reason
 *   our object deleted by someone else         → Failed (ObjectDeleted)
 *
 * Recovery, not Kueue, decides what an eviction leads to: Recovering and
 * attempt n+1 with new object names when the run's resilience allows it,
 * else Failed. Pods are also recorded in run_pods (node, phase, exit code)
 * for logs and evidence. The observer (engine/observer.h) calls the watcher
 * for each changed object of its informers' caches, and again for any it
 * could not commit. */
#ifndef TG_ENGINE_WATCHER_H
#define TG_ENGINE_WATCHER_H

#include <jansson.h>

#include "kube/cache.h"
#include "engine/positions.h"
#include "kube/client.h"
#include "kube/watch.h"
#include "store/pool.h"

/* What the watcher may consult besides the database (all borrowed, may
 * be NULL): the cluster and the queue positions' answers, for queue
 * positions and an attempt's pods; the Pod informer's cache
 * (indexed by run id), for how an attempt's pods ended; the Workload
 * informer's cache (indexed by namespace/owner), for the admission of a
 * run seen running or ended before its Workload's event was applied. */
typedef struct tg_watcher_env_s {
    tg_kube_client_t *kube;
    tg_positions_t *positions;
    tg_kube_cache_t *pods;
    tg_kube_cache_t *workloads;
} tg_watcher_env_t;

/* Apply one object of the given kind ("Workload", "Job", "RayJob", "Pod"),
 * as its cache holds it now (type DELETED: it is gone; obj is then a stub
 * with metadata.namespace and name), to the store. Idempotent: applying the
 * same object twice records nothing new. obj is borrowed.
 * RET: TG_OK once what it says is committed (or it is not one of taugate's
 * objects); otherwise the store's error, and the caller must apply it again
 * later (TG_EUNAVAILABLE: the database could not be reached). */
tg_rc_e tg_watcher_apply(tg_db_conn_t *conn, const tg_watcher_env_t *env, const char *kind,
                         tg_kube_event_type_e type, const json_t *obj);

/* The admission facts of a Workload, as run_attempts.queue_info keeps them:
 * {local_queue, workload, cluster_queue, flavors: {resource: flavor}}
 * (cluster_queue "" and flavors {} when it holds no admission). Shared by
 * the watcher and the sealer, which reads them when the watch lagged.
 * RET: new reference. */
json_t *tg_watcher_admission(const json_t *wl);

#endif
