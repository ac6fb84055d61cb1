/* Node operations for platform admins:
 *   POST /v1/admin/nodes/{name}:cordon    {reason}
 *   POST /v1/admin/nodes/{name}:uncordon  {reason?}
 *   POST /v1/admin/nodes/{name}:drain     {reason, grace_period_seconds?}
 *
 * Each writes the Node through the kube client first (spec.unschedulable
 * and taugate's annotations: who, why, when, and taugate.io/cordon-source
 * "admin" or "drain", which the node-health automation never takes back;
 * an uncordon notes taugate.io/uncordoned-at, so the automation leaves the
 * current fault alone, engine/node_policy.h), then records it: the node's
 * row (the fleet view shows it at once), a node event with the admin as
 * actor, and the request's audit row with the reason. A drain then lists
 * the node's pods, moves the taugate runs there to a new attempt
 * (NodeFault, no retry spent) and evicts every pod but DaemonSet and static
 * ones, answering what became of each. No database connection is held
 * while the cluster is called. */
#ifndef TG_API_NODE_OPS_H
#define TG_API_NODE_OPS_H

#include "http/request.h"

void tg_api_node_cordon(tg_req_t *req);
void tg_api_node_uncordon(tg_req_t *req);
void tg_api_node_drain(tg_req_t *req);

#endif
