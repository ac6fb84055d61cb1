/* The nodes loop: GPU fleet health and the automated response to GPU faults.
 *
 * Leadership. One replica at a time runs it: the loop holds the PostgreSQL
 * session advisory lock pg_try_advisory_lock(1952544103, 1315923045) on a
 * dedicated libpq connection (outside the pool, so it adds no pool series to
 * /metrics and holds no request slot), and checks every 5 s (pg_locks) that
 * it still holds it. Its work borrows one connection from the daemon's pool
 * per flush. The lock goes with the session: if the process dies or the
 * connection breaks, another replica takes over within lock_retry_s and
 * starts from a fresh list.
 *
 * While leader it runs two informers (kube/informer.h): Nodes, and every Pod
 * in the cluster (only bound, unfinished pods that request GPUs are kept:
 * node → GPUs allocated). Callbacks only update an in-memory cache and mark
 * the node dirty; the loop thread then
 *   1. writes the node's row (store/nodes.h) when anything but a heartbeat
 *      changed, with a `health` node_event when its health changed;
 *   2. applies the policy to it (engine/node_policy.h): cordon an Unhealthy
 *      node, note and optionally recover the taugate runs on it, uncordon it
 *      when healthy again if taugate cordoned it.
 * Every resync_s seconds every node that is not Healthy, or that taugate
 * cordoned, is looked at again, so a missed event or an action the cluster
 * refused is retried. After a full list, nodes that are gone are removed
 * from the table.
 *
 * Thread-safety: start and stop are not concurrent with each other; the
 * query functions may be called from any thread. */
#ifndef TG_ENGINE_NODES_H
#define TG_ENGINE_NODES_H

#include <stddef.h>

#include "kube/client.h"
#include "store/pool.h"

/* Default health rules (engine/node_health.h syntax): Node Problem
 * Detector-style GPU conditions published by DCGM or a GPU health checker. */
#define TG_NODES_DEFAULT_CONDITIONS                                                                \
    "GpuUnhealthy,XidErrors,EccErrors,NVLinkDown,InfinibandDown,DcgmHealthProblem,"                \
    "GPUHealthy=False,XIDError*,GPUECCDouble*,GPUNVLink*,IBLinkDown"
#define TG_NODES_DEFAULT_CLASS_LABELS "taugate.io/gpu-class,nvidia.com/gpu.product"

typedef struct tg_nodes_config_s {
    const char *conninfo;     /* database URL for the lock connection (copied) */
    long connect_timeout_s;   /* for the lock connection */
    const char *conditions;   /* health rules; NULL → TG_NODES_DEFAULT_CONDITIONS */
    const char *class_labels; /* node labels naming the GPU class; NULL → default */
    int auto_cordon;          /* cordon a node that turns Unhealthy */
    int evict_on_fault;       /* evict taugate's pods there and recover their runs */
    int uncordon_on_recovery; /* uncordon when healthy again, if taugate cordoned it */
    long resync_s;            /* look at faulty and cordoned nodes again (0 → 30) */
    long lock_retry_s;        /* how often a follower tries for the lock (0 → 1) */
    const char *identity;     /* this replica in annotations and history; NULL: host:pid */
} tg_nodes_config_t;

/* Check a configuration without starting anything (the rule syntax).
 * RET: 0, or -1 with err. */
int tg_nodes_config_check(const tg_nodes_config_t *cfg, char *err, size_t errlen);

/* The loop: kept by the daemon beside the application context. */
typedef struct tg_nodes_s tg_nodes_t;

/* Start the loop thread. `pool` (borrowed for the loop's SQL, one
 * connection at a time) and `kube` must outlive it. Registers the
 * Prometheus series taugate_nodes_leader and taugate_nodes_cache.
 * RET: the loop (stop it with tg_nodes_stop), or NULL with err (a bad
 * rule, no thread). */
tg_nodes_t *tg_nodes_start(const tg_nodes_config_t *cfg, tg_db_pool_t *pool, tg_kube_client_t *kube,
                           char *err, size_t errlen);
/* Stop the loop and its informers, wait for them, release the lock, free
 * it. NULL is fine. */
void tg_nodes_stop(tg_nodes_t *nl);
/* 1 while this loop holds the nodes lock (0 for NULL). */
int tg_nodes_is_leader(tg_nodes_t *nl);

/* For the watcher (engine/watcher.c, when an attempt fails): was attempt
 * `attempt` of the run hit by a node fault (it ran on a node noted faulty,
 * or has a pod on a node that is Unhealthy or NotReady now)? Works on any
 * replica (it reads the nodes table).
 * RET: 1 with a message such as "gpu-node-1 is unhealthy: XidErrors=True
 * (XidError79)" in msg; 0 when not; -1 when the database could not say. */
int tg_nodes_attempt_fault(tg_db_conn_t *conn, const char *run_id, int attempt, char *msg,
                           size_t msglen);

#endif
