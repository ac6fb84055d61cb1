/* The GPU fleet for platform admins (routes flagged TG_ROUTE_ADMIN), read
 * from the nodes snapshot the nodes loop keeps (engine/nodes.h).
 *
 *   GET /v1/admin/nodes[?health=Healthy|Unhealthy|NotReady|Unknown]
 *                      [&gpu_class=C][&gpu=true][&limit=&cursor=]
 *       {items: [node], next_cursor}; a node is {name, gpu_class, gpus:
 *       {total, allocatable, allocated, free}, mig: {resource: {capacity,
 *       allocatable, allocated}}, health, health_since, problems:
 *       [{type, status, reason, message, since}], conditions: [same],
 *       ready, unschedulable, cordon: {by, reason, at}|null, taints, labels,
 *       flavors: [ResourceFlavor names whose nodeLabels the node carries],
 *       runs: [{run_id, name, workspace, state, attempt, pods}],
 *       observed_at, updated_at}. `free` counts only GPUs a new pod could
 *       get: unallocated ones on Healthy, schedulable nodes.
 *   GET /v1/admin/nodes/{name}
 *       one node as above plus `history`: its latest 50 node events
 *       (health changes, cordon, uncordon, evict, recover) with who and why.
 *   GET /v1/admin/fleet
 *       {totals, classes: [{class, ...}], flavors: [{flavor, node_labels,
 *       ...}], mig: [{resource, capacity, allocatable, allocated}],
 *       observed_at}; totals, each class and each flavor carry {nodes,
 *       healthy_nodes, unhealthy_nodes, cordoned_nodes, gpus: {total,
 *       allocatable, allocated, free, healthy, unhealthy}, utilization
 *       (allocated / allocatable, from the GPU requests of running pods),
 *       running_runs}. */
#ifndef TG_API_FLEET_H
#define TG_API_FLEET_H

#include "http/request.h"

void tg_api_admin_nodes(tg_req_t *req);
void tg_api_admin_node(tg_req_t *req);
void tg_api_admin_fleet(tg_req_t *req);

#endif
