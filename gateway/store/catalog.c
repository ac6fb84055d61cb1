/* Compute profiles, ResourceFlavors, ClusterQueues, WorkloadPriorityClasses. */
#include "store/catalog.h"

#include "store/crud_sql.h"

tg_crud_stmts_t tg_store_profiles =
    TG_CRUD_STMTS("compute_profiles", "name",
                  "name, engine, description, settings, allowed_workspaces, created_at, updated_at",
                  "name, engine, description, settings, allowed_workspaces",
                  "name, engine, COALESCE(description, ''), COALESCE(settings, '{}'), "
                  "COALESCE(allowed_workspaces, '{}')",
                  "engine = r.engine, description = COALESCE(r.description, ''), "
                  "settings = COALESCE(r.settings, '{}'), "
                  "allowed_workspaces = COALESCE(r.allowed_workspaces, '{}')");

tg_crud_stmts_t tg_store_flavors = TG_CRUD_STMTS(
    "resource_flavors", "name",
    "name, node_labels, node_taints, tolerations, created_at, updated_at",
    "name, node_labels, node_taints, tolerations",
    "name, COALESCE(node_labels, '{}'), COALESCE(node_taints, '[]'), COALESCE(tolerations, '[]')",
    "node_labels = COALESCE(r.node_labels, '{}'), node_taints = COALESCE(r.node_taints, '[]'), "
    "tolerations = COALESCE(r.tolerations, '[]')");

tg_crud_stmts_t tg_store_cluster_queues = TG_CRUD_STMTS(
    "cluster_queues", "name",
    "name, cohort, queueing_strategy, preemption, resource_groups, created_at, updated_at",
    "name, cohort, queueing_strategy, preemption, resource_groups",
    "name, cohort, COALESCE(queueing_strategy, 'BestEffortFIFO'), COALESCE(preemption, '{}'), "
    "COALESCE(resource_groups, '[]')",
    "cohort = r.cohort, queueing_strategy = COALESCE(r.queueing_strategy, 'BestEffortFIFO'), "
    "preemption = COALESCE(r.preemption, '{}'), resource_groups = COALESCE(r.resource_groups, "
    "'[]')");

tg_crud_stmts_t tg_store_priority_classes =
    TG_CRUD_STMTS("priority_classes", "name", "name, value, description, created_at, updated_at",
                  "name, value, description", "name, value, COALESCE(description, '')",
                  "value = r.value, description = COALESCE(r.description, '')");
