/* The route table: every operation the server answers, in match order.
 * openapi.yaml documents exactly this list. */
#include "api/app.h"
#include "api/audit.h"
#include "api/catalog.h"
#include "api/console.h"
#include "api/crud.h"
#include "api/drift.h"
#include "api/evidence.h"
#include "api/fleet.h"
#include "api/queue_view.h"
#include "api/health.h"
#include "api/quota.h"
#include "api/quota_view.h"
#include "api/openapi.h"
#include "api/policies.h"
#include "api/runs_actions.h"
#include "api/runs_read.h"
#include "api/run_logs.h"
#include "api/run_metrics.h"
#include "api/runs_submit.h"
#include "api/tenancy.h"
#include "api/usage.h"
#include "api/workspaces.h"

/* The five operations of an admin resource kept by api/crud.c. */
#define CRUD_ROUTES(COLLECTION, ITEM, DESC)                                                        \
    {TG_M_GET, COLLECTION, tg_crud_list, TG_ROUTE_ADMIN, &DESC},                                   \
        {TG_M_POST, COLLECTION, tg_crud_create, TG_ROUTE_ADMIN, &DESC},                            \
        {TG_M_GET, ITEM, tg_crud_get, TG_ROUTE_ADMIN, &DESC},                                      \
        {TG_M_PATCH, ITEM, tg_crud_patch, TG_ROUTE_ADMIN, &DESC},                                  \
    {                                                                                              \
        TG_M_DELETE, ITEM, tg_crud_delete, TG_ROUTE_ADMIN, &DESC                                   \
    }

const tg_route_t tg_api_routes[] = {
    {TG_M_GET, "/healthz", tg_api_healthz, TG_ROUTE_PUBLIC, NULL},
    {TG_M_GET, "/readyz", tg_api_readyz, TG_ROUTE_PUBLIC, NULL},
    {TG_M_GET, "/metrics", tg_api_metrics, TG_ROUTE_PUBLIC, NULL},
    {TG_M_GET, "/v1/version", tg_api_version, TG_ROUTE_PUBLIC, NULL},
    {TG_M_GET, "/v1/openapi.yaml", tg_api_openapi, TG_ROUTE_PUBLIC, NULL},
    TG_CONSOLE_ROUTES,
    {TG_M_GET, "/v1/workspaces", tg_api_my_workspaces, 0, NULL},
    {TG_M_GET, "/v1/workspaces/{ws}", tg_api_my_workspace, 0, NULL},
    {TG_M_GET, "/v1/workspaces/{ws}/profiles", tg_api_workspace_profiles, 0, NULL},
    {TG_M_GET, "/v1/workspaces/{ws}/quota", tg_api_quota_view, 0, NULL},
    {TG_M_GET, "/v1/workspaces/{ws}/quota-requests", tg_api_quota_requests_list, 0, NULL},
    {TG_M_POST, "/v1/workspaces/{ws}/quota-requests", tg_api_quota_request_create, 0, NULL},
    {TG_M_GET, "/v1/workspaces/{ws}/quota-requests/{id}", tg_api_quota_request_get, 0, NULL},
    {TG_M_GET, "/v1/workspaces/{ws}/runs", tg_api_runs_list, 0, NULL},
    {TG_M_GET, "/v1/workspaces/{ws}/queue", tg_api_workspace_queue, 0, NULL},
    {TG_M_POST, "/v1/workspaces/{ws}/runs", tg_api_runs_submit, TG_ROUTE_SUBMIT, NULL},
    {TG_M_POST, "/v1/workspaces/{ws}/runs:validate", tg_api_runs_validate, 0, NULL},
    {TG_M_POST, "/v1/workspaces/{ws}/runs:batch", tg_api_runs_batch, TG_ROUTE_SUBMIT, NULL},
    {TG_M_GET, "/v1/runs/{id}", tg_api_run_get, 0, NULL},
    {TG_M_DELETE, "/v1/runs/{id}", tg_api_run_cancel, 0, NULL},
    {TG_M_POST, "/v1/runs/{id}:cancel", tg_api_run_cancel, 0, NULL},
    {TG_M_POST, "/v1/runs/{id}:resume", tg_api_run_resume, TG_ROUTE_SUBMIT, NULL},
    {TG_M_GET, "/v1/runs/{id}/events", tg_api_run_events, 0, NULL},
    {TG_M_GET, "/v1/runs/{id}/evidence", tg_api_run_evidence, 0, NULL},
    {TG_M_GET, "/v1/runs/{id}/logs", tg_api_run_logs, 0, NULL},
    {TG_M_GET, "/v1/runs/{id}/metrics", tg_api_run_metrics, 0, NULL},
    {TG_M_GET, "/v1/runs/{id}/checkpoints", tg_api_run_checkpoints, 0, NULL},
    {TG_M_GET, "/v1/evidence/public-key", tg_api_evidence_public_key, TG_ROUTE_PUBLIC, NULL},
    {TG_M_POST, "/v1/tokens", tg_api_tokens_create, 0, NULL},
    {TG_M_GET, "/v1/tokens", tg_api_tokens_list, 0, NULL},
    {TG_M_DELETE, "/v1/tokens/{id}", tg_api_token_revoke, 0, NULL},
    {TG_M_GET, "/v1/admin/audit", tg_api_admin_audit, TG_ROUTE_ADMIN, NULL},
    {TG_M_GET, "/v1/admin/usage", tg_api_admin_usage, TG_ROUTE_ADMIN, NULL},
    {TG_M_GET, "/v1/admin/drift", tg_api_admin_drift, TG_ROUTE_ADMIN, NULL},
    {TG_M_GET, "/v1/admin/quota-requests", tg_api_admin_quota_requests, TG_ROUTE_ADMIN, NULL},
    {TG_M_GET, "/v1/admin/quota-requests/{id}", tg_api_admin_quota_request_get, TG_ROUTE_ADMIN,
     NULL},
    {TG_M_POST, "/v1/admin/quota-requests/{id}:approve", tg_api_admin_quota_approve, TG_ROUTE_ADMIN,
     NULL},
    {TG_M_POST, "/v1/admin/quota-requests/{id}:reject", tg_api_admin_quota_reject, TG_ROUTE_ADMIN,
     NULL},
    {TG_M_GET, "/v1/admin/nodes", tg_api_admin_nodes, TG_ROUTE_ADMIN, NULL},
    {TG_M_GET, "/v1/admin/nodes/{name}", tg_api_admin_node, TG_ROUTE_ADMIN, NULL},
    {TG_M_GET, "/v1/admin/fleet", tg_api_admin_fleet, TG_ROUTE_ADMIN, NULL},
    {TG_M_GET, "/v1/workspaces/{ws}/policy", tg_api_workspace_policy, 0, NULL},
    {TG_M_GET, "/v1/admin/policies", tg_api_policies_list, TG_ROUTE_ADMIN, NULL},
    {TG_M_POST, "/v1/admin/policies", tg_api_policy_create, TG_ROUTE_ADMIN, NULL},
    {TG_M_GET, "/v1/admin/policies:effective", tg_api_policies_effective, TG_ROUTE_ADMIN, NULL},
    {TG_M_POST, "/v1/admin/policies:reload", tg_api_policies_reload_now, TG_ROUTE_ADMIN, NULL},
    {TG_M_GET, "/v1/admin/policies/{id}", tg_api_policy_get, TG_ROUTE_ADMIN, NULL},
    {TG_M_PATCH, "/v1/admin/policies/{id}", tg_api_policy_patch, TG_ROUTE_ADMIN, NULL},
    {TG_M_DELETE, "/v1/admin/policies/{id}", tg_api_policy_delete, TG_ROUTE_ADMIN, NULL},
    {TG_M_GET, "/v1/admin/policies/{id}/versions", tg_api_policy_versions, TG_ROUTE_ADMIN, NULL},
    CRUD_ROUTES("/v1/admin/workspaces", "/v1/admin/workspaces/{ws}", tg_api_workspaces),
    CRUD_ROUTES("/v1/admin/workspaces/{ws}/queues", "/v1/admin/workspaces/{ws}/queues/{name}",
                tg_api_local_queues),
    CRUD_ROUTES("/v1/admin/workspaces/{ws}/members", "/v1/admin/workspaces/{ws}/members/{member}",
                tg_api_members),
    CRUD_ROUTES("/v1/admin/profiles", "/v1/admin/profiles/{name}", tg_api_profiles),
    CRUD_ROUTES("/v1/admin/flavors", "/v1/admin/flavors/{name}", tg_api_flavors),
    CRUD_ROUTES("/v1/admin/cluster-queues", "/v1/admin/cluster-queues/{name}",
                tg_api_cluster_queues),
    CRUD_ROUTES("/v1/admin/priority-classes", "/v1/admin/priority-classes/{name}",
                tg_api_priority_classes),
};

const int tg_api_nroutes = (int)(sizeof(tg_api_routes) / sizeof(tg_api_routes[0]));
