/* The GPU fleet in PostgreSQL (migrations/0008_fleet.sql): the nodes
 * snapshot the nodes loop keeps (engine/nodes.c), node history, the
 * attempts that ran on a faulty node, and the fleet views (api/fleet.c).
 *
 * jansson: objects passed in are borrowed; *out values are new references.
 * Thread-safety: as the connection (one thread at a time). */
#ifndef TG_STORE_NODES_H
#define TG_STORE_NODES_H

#include <jansson.h>

#include "store/pool.h"

/* Write one node's row from a summary (engine/node_health.h shape) with
 * gpus.allocated and mig.*.allocated filled in. health_since moves only when
 * health changes. In the caller's transaction or alone.
 * OUT: prev_health (optional, 16 bytes): the health before, "" for a new
 * node. */
tg_rc_e tg_store_node_upsert(tg_db_conn_t *conn, const json_t *row,
                             char prev_health[16]) TG_MUSTCHECK;
/* Forget a node that is gone from the cluster (its history stays). */
tg_rc_e tg_store_node_delete(tg_db_conn_t *conn, const char *name) TG_MUSTCHECK;
/* After a full list: forget every node not in `names` (a JSON array of
 * strings). *removed gets how many went. */
tg_rc_e tg_store_nodes_retain(tg_db_conn_t *conn, const json_t *names, int *removed) TG_MUSTCHECK;

typedef struct {
    const char *node;
    const char *kind; /* health, cordon, uncordon, evict, recover, note */
    const char *health, *reason, *message, *actor;
    int ok;
    const json_t *data; /* borrowed; NULL for {} */
} tg_node_event_t;

/* Append to the node's history. */
tg_rc_e tg_store_node_event(tg_db_conn_t *conn, const tg_node_event_t *e) TG_MUSTCHECK;

/* Pods of taugate runs bound to `node` that have not ended, of the runs'
 * current attempts, runs still going:
 * [{run_id, attempt, workspace, run_name, state, namespace, pod, phase}]. */
tg_rc_e tg_store_node_run_pods(tg_db_conn_t *conn, const char *node, json_t **out) TG_MUSTCHECK;

/* Note that attempt `attempt` of a run is on unhealthy `node` (once).
 * OUT: *claimed 1 when this call wrote the note, 0 when it was there. */
tg_rc_e tg_store_node_fault_claim(tg_db_conn_t *conn, const char *run_id, int attempt,
                                  const char *node, const char *problem, int *claimed) TG_MUSTCHECK;
/* Mark the note as recovered (NodeFault recovery was asked for).
 * OUT: *first 1 when it was not yet marked. */
tg_rc_e tg_store_node_fault_recovered(tg_db_conn_t *conn, const char *run_id, int attempt,
                                      const char *node, int *first) TG_MUSTCHECK;

/* Put a node-fault note on a run, when `attempt` is still its current
 * attempt and it has not ended: a run_event {state: null, reason:
 * "NodeFault", source: "node", message, data} and, with set_message, the
 * run's message. Runs its own transaction. OUT: *applied. */
tg_rc_e tg_store_node_fault_note(tg_db_conn_t *conn, const char *run_id, int attempt,
                                 const char *message, const json_t *data, int set_message,
                                 int *applied) TG_MUSTCHECK;

/* Was attempt `attempt` of the run hit by a node fault: noted on a faulty
 * node, or with a pod on a node that is now Unhealthy or NotReady?
 * *out: {node, problem} (new reference) or NULL when not. */
tg_rc_e tg_store_node_fault_for_attempt(tg_db_conn_t *conn, const char *run_id, int attempt,
                                        json_t **out) TG_MUSTCHECK;

typedef struct {
    const char *after;  /* cursor: names after this one */
    const char *health; /* filter, or NULL */
    const char *gpu_class;
    int gpu_only; /* only nodes with GPUs or MIG slices */
    int limit;
} tg_node_query_t;

/* Nodes by name: [{name, gpu_class, gpus: {total, allocatable, allocated,
 * free}, mig, health, health_since, problems, conditions, ready,
 * unschedulable, cordon: {by, reason, at}|null, taints, labels, flavors:
 * [names], runs: [{run_id, name, workspace, state, attempt, pods}],
 * observed_at, updated_at}]. `free` counts only healthy, schedulable GPUs. */
tg_rc_e tg_store_nodes_list(tg_db_conn_t *conn, const tg_node_query_t *q,
                            json_t **out) TG_MUSTCHECK;
/* One node as above plus `history`: its latest `history` node_events.
 * TG_ENOTFOUND when unknown. */
tg_rc_e tg_store_node_get(tg_db_conn_t *conn, const char *name, int history,
                          json_t **out) TG_MUSTCHECK;

/* Fleet totals: {totals, classes: [...], flavors: [...], mig: [...],
 * observed_at}; see api/fleet.h for the fields. */
tg_rc_e tg_store_fleet(tg_db_conn_t *conn, json_t **out) TG_MUSTCHECK;

#endif
