/* The watcher: follows the cluster objects of taugate's runs (Workloads,
 * Jobs, RayJobs, Pods) with list-then-watch informers and turns what it sees
 * into run state transitions, each recorded as a run_event with its source.
 *
 *   Workload pending (QuotaReserved not true)  → Queued, with Kueue's message
 *   Workload Admitted                          → Admitted, with flavors
 *   Workload Evicted / Preempted               → Recovering (Kueue requeues it)
 *   a pod Running                              → Running
 *   Job Complete / RayJob SUCCEEDED            → Succeeded
 *   Job Failed / RayJob FAILED                 → Failed, with the reason
 *   our object deleted by someone else         → Failed (ObjectDeleted)
 *
 * Pods are also recorded in run_pods (node, phase, exit code) for logs and
 * evidence. */
#ifndef TG_ENGINE_WATCHER_H
#define TG_ENGINE_WATCHER_H

#include <jansson.h>

#include "kube/client.h"
#include "kube/watch.h"
#include "store/pool.h"

/* One observed object of the given kind ("Workload", "Job", "RayJob", "Pod")
 * applied to the store. Exposed for tests; the informers call it. */
void tg_watcher_observe(tg_db_pool_t *pool, tg_kube_client_t *kube, const char *kind,
                        tg_kube_event_type_e type, const json_t *obj);

/* The admission facts of a Workload, as run_attempts.queue_info keeps them:
 * {local_queue, workload, cluster_queue, flavors: {resource: flavor}}
 * (cluster_queue "" and flavors {} when it holds no admission). Shared by
 * the watcher and the sealer, which reads them when the watch lagged.
 * RET: new reference. */
json_t *tg_watcher_admission(const json_t *wl);

#endif
