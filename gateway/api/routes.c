/* The route table: every operation the server answers, in match order.
 * openapi.yaml documents exactly this list. */
#include "api/app.h"
#include "api/health.h"
#include "api/workspaces.h"

const tg_route_t tg_api_routes[] = {
    {TG_M_GET, "/healthz", tg_api_healthz, TG_ROUTE_PUBLIC},
    {TG_M_GET, "/readyz", tg_api_readyz, TG_ROUTE_PUBLIC},
    {TG_M_GET, "/metrics", tg_api_metrics, TG_ROUTE_PUBLIC},
    {TG_M_GET, "/v1/version", tg_api_version, TG_ROUTE_PUBLIC},
    {TG_M_GET, "/v1/admin/workspaces", tg_api_admin_workspaces_list, 0},
    {TG_M_POST, "/v1/admin/workspaces", tg_api_admin_workspaces_create, 0},
    {TG_M_GET, "/v1/admin/workspaces/{ws}", tg_api_admin_workspace_get, 0},
    {TG_M_PATCH, "/v1/admin/workspaces/{ws}", tg_api_admin_workspace_patch, 0},
    {TG_M_DELETE, "/v1/admin/workspaces/{ws}", tg_api_admin_workspace_delete, 0},
};

const int tg_api_nroutes = (int)(sizeof(tg_api_routes) / sizeof(tg_api_routes[0]));
