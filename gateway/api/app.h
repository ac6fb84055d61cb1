/* The application context shared by every handler, and the route table.
 *
 * Everything a handler or a loop shares lives here (or is reached from
 * here), created before the server serves and freed after it stops, so
 * one process can hold two gateways (tests) and nothing hides in a
 * file-scope variable. */
#ifndef TG_API_APP_H
#define TG_API_APP_H

#include "core/config.h"
#include "http/router.h"
#include "http/server.h"
#include "tauyaml/limits.h"
#include "store/pool.h"

struct tg_api_openapi_s;
struct tg_authn_s;
struct tg_console_s;
struct tg_engine_s;
struct tg_health_s;
struct tg_nodes_s;
struct tg_platform_metrics_s;
struct tg_policy_registry_s;
struct tg_reconcile_loop_s;
struct tg_kube_client_s;
struct tg_tauyaml_schema_s;
struct tg_signer_s;
struct tg_logs_collector_s;
struct tg_sse_hub_s;
struct tg_run_changes_s;
struct tg_logs_streams_s;

typedef struct tg_app_s {
    const tg_config_t *cfg;
    tg_db_pool_t *pool;
    struct tg_authn_s *authn;
    struct tg_kube_client_s *kube;                  /* NULL when no cluster is configured */
    struct tg_engine_s *engine;                     /* NULL when the engine is off */
    struct tg_reconcile_loop_s *reconcile;          /* the Kueue reconciler; NULL when off */
    struct tg_nodes_s *nodes;                       /* the nodes loop; NULL when off */
    struct tg_platform_metrics_s *platform_metrics; /* the database series on /metrics */
    struct tg_tauyaml_schema_s *schema;             /* the compiled tau.schema.json */
    struct tg_signer_s *signer;                     /* signs evidence records */
    struct tg_logs_collector_s *logs;               /* NULL when not collecting */
    struct tg_tenancy_cache_s *tenancy;             /* NULL when not caching */
    struct tg_audit_writer_s *audit;
    struct tg_sse_hub_s *streams;     /* every streaming response; NULL when it did not start */
    struct tg_run_changes_s *changes; /* NULL: change streams answer 503 */
    struct tg_logs_streams_s *log_streams; /* NULL: log reads answer 503 */
    struct tg_health_s *health;            /* start-up's progress (readiness) */
    struct tg_policy_registry_s *policies; /* the platform policy; NULL answers 503 */
    struct tg_api_openapi_s *openapi;      /* the REST contract; NULL answers 503 */
    struct tg_console_s *console;          /* the web console; NULL answers 503 */
    tg_tauyaml_limits_t limits;
} tg_app_t;

/* The request's application context: tg_req_app, typed. */
static inline tg_app_t *tg_app_of(const tg_req_t *req)
{
    return tg_req_app(req);
}

/* The hooks the server runs around handlers (authentication, audit). */
extern const tg_server_hooks_t tg_app_hooks;

/* Every route the server answers, in match order. */
extern const tg_route_t tg_api_routes[];
extern const int tg_api_nroutes;

/* The request's database connection, borrowed on first use and released
 * when the request completes (one per request, so a request never waits on
 * the pool twice). On failure answers 503 and returns NULL. */
tg_db_conn_t *tg_app_db_or_reply(tg_req_t *req);
/* Give the request's connection back to the pool now (outside a
 * transaction): a streaming answer lives for minutes (its request completes
 * only when the stream ends), and a request about to wait on the Kubernetes
 * API must not let a slow cluster drain the pool and take every
 * database-backed endpoint down with it. A later tg_app_db_or_reply takes a
 * new one; a connection pointer obtained before must not be used again. */
void tg_app_db_release(tg_req_t *req);

#endif
