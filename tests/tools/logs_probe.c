/* logs_probe: a test-only taugate that also runs the log collector and
 * serves the log, metrics and checkpoint routes, until main.c and
 * api/routes.c wire them in (tests/integration/test_run_logs.py starts it
 * in place of the real binary). Never linked into the daemon.
 *
 * Build: make -f Makefile -f tests/tools/logs_probe.mk [BUILD=..] [SAN=1] \
 *          $(BUILD)/tests/tools/logs_probe
 * Usage: logs_probe serve   (configuration as taugate: TAUGATE_* variables)
 *
 * Besides taugate's keys it reads these variables (the config keys the lead
 * is asked to add, same meaning):
 *   TAUGATE_KUBE_API_URL              where kubesim listens (collector off when unset)
 *   TAUGATE_LOGS_COLLECTOR            0 to leave the collector off (default 1)
 *   TAUGATE_LOGS_MAX_FOLLOWERS        container streams at once (64)
 *   TAUGATE_LOGS_LEASE_S              claim lease (30)
 *   TAUGATE_LOGS_PRUNE_INTERVAL_S     retention pass period (3600)
 *   TAUGATE_LOGS_REPLICA_ID           lease owner name (host:pid:random)
 *   TAUGATE_LOGS_HTTP_MAX_FOLLOWERS   clients following logs at once (256)
 *   TAUGATE_LOGS_HTTP_IDLE_TIMEOUT_S  a follow without new lines ends (300)
 *   TAUGATE_LOGS_HTTP_KEEPALIVE_S     SSE keepalive comment period (15) */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/authn.h"
#include "api/health.h"
#include "api/run_logs.h"
#include "api/run_logs_stream.h"
#include "api/run_metrics.h"
#include "core/config.h"
#include "core/log.h"
#include "engine/logs.h"
#include "http/server.h"
#include "kube/client.h"
#include "tauyaml/schema.h"
#include "store/audit_writer.h"
#include "store/migrate.h"
#include "store/pool.h"

static long probe_env_long(const char *name, long def)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : def;
}

static int probe_migrate(const tg_config_t *cfg)
{
    tg_db_pool_config_t pc = tg_db_pool_config_of(cfg, 1);
    tg_db_pool_t *pool = tg_db_pool_new(&pc);
    tg_db_conn_t *conn = NULL;
    int status = 1;
    char err[1024] = "the database is unavailable";
    int applied = 0;
    if (tg_db_checkout(pool, &conn) == TG_OK &&
        tg_migrate(tg_db_pgconn(conn), cfg->migrations_dir, &applied, err, sizeof(err)) == TG_OK)
        status = 0;
    else
        tg_log_error("probe", "migrations failed: %s", err);
    tg_db_release(pool, conn);
    tg_db_pool_free(pool);
    return status;
}

static int probe_serve(const tg_config_t *cfg)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (cfg->migrate_on_start && probe_migrate(cfg) != 0)
        return 1;

    char err[512];
    tg_authn_t *authn = tg_authn_new(cfg, err, sizeof(err));
    if (!authn) {
        tg_log_error("probe", "%s", err);
        return 2;
    }
    tg_db_pool_config_t pc = tg_db_pool_config_of(cfg, 0);
    tg_app_t app = {
        .cfg = cfg, .authn = authn, .pool = tg_db_pool_new(&pc), .health = tg_health_new()};
    tg_health_started(app.health); /* migrated before serving: requests may use the database */
    /* every mutating request waits for its audit row, as in main.c */
    app.audit = tg_audit_writer_start(&pc);
    if (!app.audit) {
        tg_log_error("probe", "cannot start the audit writer");
        return 1;
    }
    tg_tauyaml_limits_default(&app.limits);
    app.schema = tg_tauyaml_schema_load_file(cfg->schema_file, err, sizeof(err));

    tg_logs_collector_t *col = NULL;
    const char *kube_url = getenv("TAUGATE_KUBE_API_URL");
    if (kube_url && *kube_url && probe_env_long("TAUGATE_LOGS_COLLECTOR", 1)) {
        tg_kube_config_t kc = {.api_url = kube_url, .max_retries = 2};
        if (tg_kube_client_new(&kc, &app.kube, err, sizeof(err)) != TG_OK) {
            tg_log_error("probe", "kube: %s", err);
            return 2;
        }
        tg_logs_config_t lc = {
            .max_followers = (int)probe_env_long("TAUGATE_LOGS_MAX_FOLLOWERS", 64),
            .lease_s = probe_env_long("TAUGATE_LOGS_LEASE_S", 30),
            .prune_interval_s = probe_env_long("TAUGATE_LOGS_PRUNE_INTERVAL_S", 3600),
            .replica_id = getenv("TAUGATE_LOGS_REPLICA_ID"),
        };
        col = tg_logs_collector_new(app.pool, app.kube, &lc);
        if (tg_logs_collector_start(col) != 0) {
            tg_log_error("probe", "cannot start the log collector");
            return 1;
        }
    }
    tg_sse_hub_config_t hc = {.keepalive_s = probe_env_long("TAUGATE_LOGS_HTTP_KEEPALIVE_S", 15)};
    app.streams = tg_sse_hub_start(app.pool, NULL, &hc);
    tg_logs_streams_config_t lc = {
        .max_followers = (int)probe_env_long("TAUGATE_LOGS_HTTP_MAX_FOLLOWERS", 256),
        .idle_timeout_s = probe_env_long("TAUGATE_LOGS_HTTP_IDLE_TIMEOUT_S", 300),
    };
    app.log_streams = tg_logs_streams_start(app.streams, &lc);
    if (!app.log_streams) {
        tg_log_error("probe", "cannot start the log stream notifier");
        return 1;
    }

    /* taugate's routes plus the three this probe stands in for */
    static const tg_route_t extra[] = {
        {TG_M_GET, "/v1/runs/{id}/logs", tg_api_run_logs, 0, NULL},
        {TG_M_GET, "/v1/runs/{id}/metrics", tg_api_run_metrics, 0, NULL},
        {TG_M_GET, "/v1/runs/{id}/checkpoints", tg_api_run_checkpoints, 0, NULL},
    };
    int n = tg_api_nroutes + (int)TG_ARRAY_LEN(extra);
    tg_route_t *routes = tg_xcalloc((size_t)n, sizeof(*routes));
    memcpy(routes, tg_api_routes, sizeof(*routes) * (size_t)tg_api_nroutes);
    memcpy(routes + tg_api_nroutes, extra, sizeof(extra));
    tg_server_t *srv = tg_server_new(cfg, routes, n, &app, &tg_app_hooks, err, sizeof(err));
    int status = 1;
    if (!srv) {
        tg_log_error("probe", "%s", err);
        goto out;
    }
    tg_log_info("probe", "logs_probe listening on http://%s:%u", cfg->listen_address,
                tg_server_port(srv));
    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    /* the shutdown order main.c should follow */
    tg_sse_hub_stop(app.streams);
    tg_server_drain_and_stop(srv, cfg->shutdown_grace_s);
    tg_server_free(srv);
    status = 0;
out:
    tg_sse_hub_free(app.streams);
    tg_logs_streams_free(app.log_streams);
    tg_logs_collector_stop_and_free(col);
    tg_kube_client_free(app.kube);
    tg_audit_writer_stop(app.audit);
    tg_db_pool_free(app.pool);
    tg_tauyaml_schema_free(app.schema);
    tg_authn_free(authn);
    tg_health_free(app.health);
    free(routes);
    tg_log_info("probe", "stopped");
    return status;
}

int main(int argc, char **argv)
{
    tg_config_t cfg;
    char err[512];
    int rest[8];
    tg_config_argv_t args = {.argc = argc,
                             .argv = argv,
                             .first = argc > 1 && argv[1][0] != '-' ? 2 : 1,
                             .rest = rest,
                             .restcap = 8};
    if (tg_config_load(&cfg, &args, err, sizeof(err)) != 0) {
        fprintf(stderr, "logs_probe: %s\n", err);
        tg_config_clean(&cfg);
        return 2;
    }
    tg_log_set_level((tg_log_level_e)tg_log_level_parse(cfg.log_level));
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int status = probe_serve(&cfg);
    tg_config_clean(&cfg);
    curl_global_cleanup();
    return status;
}
