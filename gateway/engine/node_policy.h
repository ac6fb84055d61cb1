/* What the nodes loop does about a node's health (engine/nodes.h).
 *
 * For a node whose health is Unhealthy (a GPU health rule matched):
 *   1. cordon (auto_cordon): merge-patch spec.unschedulable=true and the
 *      annotations taugate.io/cordoned-by (this replica), taugate.io/
 *      cordon-reason (the problem) and taugate.io/cordoned-at, unless the
 *      node is unschedulable already (then someone else cordoned it and
 *      taugate will not uncordon it either);
 *   2. for every pod of a taugate run bound there (run_pods): note the run
 *      once per attempt and node — a run_event {state: null, reason:
 *      NodeFault, source: node, data: {node_fault: {node, problem, since,
 *      action}}} and the run's message "node_fault: <node> is unhealthy:
 *      <problem>", which stays until the run's state changes —;
 *   3. with evict_on_fault: start the NodeFault recovery of the run's
 *      attempt (engine/recovery.c: a new attempt, the old objects deleted,
 *      the retry budget untouched), then evict the pod (policy/v1 Eviction,
 *      or a delete when the server has no eviction subresource).
 * For a Healthy node that carries taugate.io/cordoned-by, with
 * uncordon_on_recovery: uncordon it and drop the annotations — unless a
 * platform admin cordoned it (taugate.io/cordon-source admin or drain,
 * api/node_ops.c), which only an admin takes back. A fault that began before
 * an admin's last uncordon (taugate.io/uncordoned-at) is the admin's call:
 * nothing above is done about it; a new fault is acted on again.
 *
 * The note is also a node_event (kind "note"). Every action is a node_event
 * and an audit_log row (subject
 * "system:taugate", method "ENGINE", route "node.cordon", "node.uncordon",
 * "node.evict" or "run.node_fault", target "nodes/<name>" or "runs/<id>").
 *
 * Thread-safety: called from the nodes loop thread only. */
#ifndef TG_ENGINE_NODE_POLICY_H
#define TG_ENGINE_NODE_POLICY_H

#include <jansson.h>

#include "kube/client.h"
#include "kube/result.h"
#include "store/pool.h"

typedef struct tg_node_policy_s {
    int auto_cordon;
    int evict_on_fault;
    int uncordon_on_recovery;
    const char *identity; /* borrowed */
} tg_node_policy_t;

/* Apply the policy to one node. `row` is the node's summary (borrowed).
 * RET: TG_OK, or TG_EUNAVAILABLE when the database connection broke (the
 * caller gives up leadership); Kubernetes failures are recorded and retried
 * at the next resync. */
tg_rc_e tg_node_policy_apply(const tg_node_policy_t *p, tg_db_conn_t *conn, tg_kube_client_t *kube,
                             const json_t *row);

#endif
