/* The database side of Kueue synchronisation (migration 0007): the desired
 * state the reconciler renders, the drift it reports, and its last step.
 *
 * jansson: OUT values are NEW references owned by the caller; IN values are
 * BORROWED. */
#ifndef TG_STORE_KUEUE_SYNC_H
#define TG_STORE_KUEUE_SYNC_H

#include <jansson.h>

#include "store/pool.h"

/* One consistent snapshot of the admin-owned rows:
 *   {flavors: [{name, node_labels, node_taints, tolerations}],
 *    cluster_queues: [{name, cohort, queueing_strategy, preemption, resource_groups}],
 *    priority_classes: [{name, value, description}],
 *    local_queues: [{workspace, name, cluster_queue, namespace}],
 *    workspaces: [{name, namespace}]}  each sorted by name. */
tg_rc_e tg_store_kueue_desired(tg_db_conn_t *conn, json_t **out) TG_MUSTCHECK;

/* What an open drift row says. `ns` is "" for cluster-scoped objects. */
typedef struct {
    const char *kind, *ns, *name;
    const char *problem; /* edited | unmanaged | orphan_in_use | failed */
    const char *summary;
    const json_t *live, *desired; /* borrowed; may be NULL */
} tg_drift_t;

/* Open (or refresh: last_seen_at, seen_count, summary) the drift row of an
 * object and problem. OUT: *is_new (may be NULL) is 1 when it was opened now. */
tg_rc_e tg_store_drift_open(tg_db_conn_t *conn, const tg_drift_t *d, int *is_new) TG_MUSTCHECK;
/* Close the open rows of an object (one problem, or every problem when
 * `problem` is NULL) with `resolution`. */
tg_rc_e tg_store_drift_resolve(tg_db_conn_t *conn, const char *kind, const char *ns,
                               const char *name, const char *problem,
                               const char *resolution) TG_MUSTCHECK;
/* Close, as "gone", every open row whose object is not in `seen`, a JSON
 * array of [kind, namespace, name] triples. */
tg_rc_e tg_store_drift_sweep(tg_db_conn_t *conn, const json_t *seen) TG_MUSTCHECK;

typedef struct {
    const char *state; /* open | resolved | all; NULL = all */
    const char *kind, *name;
    long before_id; /* cursor: rows with a smaller id; 0 from the newest */
    int limit;
} tg_drift_query_t;

/* Newest first: [{id, kind, namespace (null when cluster-scoped), name,
 * problem, summary, live, desired, detected_at, last_seen_at, seen_count,
 * resolved_at, resolution}]. */
tg_rc_e tg_store_drift_list(tg_db_conn_t *conn, const tg_drift_query_t *q,
                            json_t **out) TG_MUSTCHECK;

/* Record the leader's last step: `holder` names the replica, `report` is
 * its counters. */
tg_rc_e tg_store_kueue_sync_record(tg_db_conn_t *conn, const char *holder,
                                   const json_t *report) TG_MUSTCHECK;
/* {holder, step_at, report}; TG_ENOTFOUND before the first step. */
tg_rc_e tg_store_kueue_sync_get(tg_db_conn_t *conn, json_t **out) TG_MUSTCHECK;

#endif
