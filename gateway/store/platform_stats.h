/* Aggregates over the runs, attempts, outbox and fleet tables for the
 * platform metrics (engine/platform_metrics.h): one statement, one round
 * trip, every value the same on every replica.
 *
 * jansson: *out is a new reference. Thread-safety: as the connection. */
#ifndef TG_STORE_PLATFORM_STATS_H
#define TG_STORE_PLATFORM_STATS_H

#include <jansson.h>

#include "store/pool.h"

/* `bounds` is the queue-wait histogram's upper bounds in seconds, as a
 * PostgreSQL array literal ("{1,5,30}"). *out:
 *   {workspaces: [name], cluster_queues: [name],
 *    runs: [[workspace, state, n]],
 *    outbox: [[action, rows, due, failing, oldest_due_age_s]],
 *    waits: [[cluster_queue, bucket, n, sum_s]]   bucket = width_bucket(wait, bounds),
 *    preemptions: [[cluster_queue, n]],
 *    retries: [[reason, n]],
 *    nodes: [[gpu_class|null, health, unschedulable, n, capacity, allocatable, allocated]],
 *    node_events: [[kind, ok, health, n]],
 *    node_fault_runs: n}
 * Arrays may be null when empty. The ClusterQueue of an attempt is the one
 * Kueue admitted it to, else its LocalQueue's; attempts with neither are
 * left out of waits and preemptions. */
tg_rc_e tg_store_platform_stats(tg_db_conn_t *conn, const char *bounds, json_t **out) TG_MUSTCHECK;

#endif
