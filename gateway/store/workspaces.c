/* Workspaces, their LocalQueues and their members. */
#include "store/workspaces.h"

#include "store/crud_sql.h"

#define WS_COLS                                                                                    \
    "name, namespace, default_queue, default_priority, default_profile, output_root, "             \
    "ttl_seconds, log_retention_days, pvcs, created_at, updated_at"

tg_crud_stmts_t tg_store_workspaces = TG_CRUD_STMTS(
    "workspaces", "name", WS_COLS,
    "name, namespace, default_queue, default_priority, default_profile, output_root, "
    "ttl_seconds, log_retention_days, pvcs",
    "name, namespace, default_queue, default_priority, default_profile, output_root, "
    "ttl_seconds, COALESCE(log_retention_days, 30), COALESCE(pvcs, '{}')",
    "namespace = r.namespace, default_queue = r.default_queue, "
    "default_priority = r.default_priority, default_profile = r.default_profile, "
    "output_root = r.output_root, ttl_seconds = r.ttl_seconds, "
    "log_retention_days = COALESCE(r.log_retention_days, 30), pvcs = COALESCE(r.pvcs, '{}')");

tg_crud_stmts_t tg_store_local_queues = TG_CRUD_N_STMTS(
    "local_queues", "name", "workspace, name, cluster_queue, created_at, updated_at",
    "name, cluster_queue", "name, cluster_queue", "cluster_queue = r.cluster_queue");

tg_crud_stmts_t tg_store_members = TG_CRUD_N_STMTS(
    "workspace_members", "id::text", "workspace, id, kind, subject, role, created_at, updated_at",
    "kind, subject, role", "kind, subject, role", "role = r.role");
