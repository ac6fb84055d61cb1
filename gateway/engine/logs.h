/* The log collector: follows the logs of every running pod container the
 * watcher recorded in run_pods and keeps them in log_chunks, with the
 * metric and checkpoint markers found in them (engine/markers.h).
 *
 * Threads. One scanner thread wakes every scan_interval_ms (sooner, at most
 * every 200 ms, when a follower ends): it joins finished followers, stores
 * batches that waited flush_interval_ms, renews leases, starts followers for unclaimed
 * containers (run_pods: NOT log_done AND phase <> 'Pending'; one follower
 * per container, at most max_followers at once) and prunes old chunks every
 * prune_interval_s. Each follower is a thread blocked on one
 * GET .../pods/{pod}/log?container=c&follow=true&timestamps=true stream.
 *
 * Claims. Containers are leased through table log_streams (migration 0004;
 * see store/logs.h), so any number of replicas may run a collector: each
 * container is followed by one replica at a time, a dead replica's leases
 * run out after lease_s and another replica resumes the container.
 *
 * Resume. A follower starts from the container's stored tail with the rule
 * in engine/logs_batch.h (sinceTime = last stored timestamp, skip what is
 * already stored), so restarts and takeovers never store a line twice.
 *
 * Completion. When a stream ends (the container exited) and the pod's phase
 * is Succeeded or Failed, the container is done; a pod whose containers are
 * all done gets log_done. A pod that is gone from the cluster (404) or a
 * container that never started in a finished pod (400) is done too. A
 * stream that ends while the pod still runs is followed again (resuming)
 * after a short pause; failures back off exponentially up to a minute.
 *
 * Stop. tg_logs_collector_stop_and_free raises every follower's kube stop
 * flag (checked at least once a second by kube/client.c), stores what the
 * batches hold when the database allows, and joins all threads: ~2 s.
 *
 * Metrics (Prometheus): taugate_log_bytes_stored_total,
 * taugate_log_chunks_stored_total, taugate_log_followers (gauge),
 * taugate_log_follow_errors_total, taugate_log_markers_invalid_total,
 * taugate_log_chunks_pruned_total.
 *
 * Ownership: the collector borrows pool and kube (both must outlive it).
 * Thread-safety: new/start/stop_and_free from one thread. */
#ifndef TG_ENGINE_LOGS_H
#define TG_ENGINE_LOGS_H

#include <stddef.h>

#include "kube/client.h"
#include "store/pool.h"

typedef struct tg_logs_config_s {
    int max_followers;      /* concurrent container streams: 64 */
    long scan_interval_ms;  /* look for new containers: 1000 */
    long flush_interval_ms; /* store a batch at least this often: 1000 */
    size_t chunk_max_bytes; /* store a batch once it holds this much: 64 KiB */
    size_t max_line_bytes;  /* longer lines are cut, with a marker: 64 KiB */
    long lease_s;           /* a claim's lease, renewed every lease_s/3: 30 */
    long prune_interval_s;  /* retention pass: 3600; 0 or less disables */
    const char *replica_id; /* lease owner name (copied); NULL: host:pid:random */
} tg_logs_config_t;

typedef struct tg_logs_collector_s tg_logs_collector_t;

/* Make a collector (nothing runs yet). cfg may be NULL (all defaults); zero
 * fields take their defaults. Registers its Prometheus collector. */
tg_logs_collector_t *tg_logs_collector_new(tg_db_pool_t *pool, tg_kube_client_t *kube,
                                           const tg_logs_config_t *cfg);
/* Start the scanner thread. RET: 0, or -1 when the thread cannot start. */
int tg_logs_collector_start(tg_logs_collector_t *c);
/* Stop all threads (within ~2 s), store pending batches if possible, free.
 * NULL-safe; fine on a collector never started. */
void tg_logs_collector_stop_and_free(tg_logs_collector_t *c);

/* One retention pass: delete chunks older than each workspace's
 * log_retention_days (pods still being collected are kept whole). RET: the
 * number of chunks deleted, or -1 on a database error. */
long tg_logs_prune(tg_db_pool_t *pool);

#endif
