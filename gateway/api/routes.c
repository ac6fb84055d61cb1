/* The route table: every operation the server answers, in match order.
 * openapi.yaml documents exactly this list. */
#include "api/app.h"
#include "api/health.h"

const tg_route_t tg_api_routes[] = {
    {TG_M_GET, "/healthz", tg_api_healthz, TG_ROUTE_PUBLIC},
    {TG_M_GET, "/readyz", tg_api_readyz, TG_ROUTE_PUBLIC},
    {TG_M_GET, "/metrics", tg_api_metrics, TG_ROUTE_PUBLIC},
    {TG_M_GET, "/v1/version", tg_api_version, TG_ROUTE_PUBLIC},
};

const int tg_api_nroutes = (int)(sizeof(tg_api_routes) / sizeof(tg_api_routes[0]));
