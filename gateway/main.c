/* taugate: the REST gateway daemon.
 *
 *   taugate [serve] [--key=value ...]   run the server (default)
 *   taugate migrate [--key=value ...]   apply pending database migrations
 *   taugate version | --version
 *   taugate --help                      list commands and configuration keys */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/authn.h"
#include "api/policies.h"
#include "auth/mint.h"
#include "api/evidence.h"
#include "api/console.h"
#include "api/openapi.h"
#include "api/run_changes.h"
#include "core/signer.h"
#include "api/run_logs_stream.h"
#include "engine/engine.h"
#include "engine/reconcile.h"
#include "engine/nodes.h"
#include "engine/platform_metrics.h"
#include "engine/logs.h"
#include "store/evidence_verify.h"
#include "kube/client.h"
#include "spec/schema.h"
#include "core/config.h"
#include "core/json_alloc.h"
#include "core/log.h"
#include "core/version.h"
#include "http/server.h"
#include "store/migrate.h"
#include "store/audit_writer.h"
#include "store/pool.h"
#include "store/tenancy_cache.h"

#define EXIT_CONFIG 2

static void main_usage(FILE *out)
{
    fprintf(out, "usage: taugate [serve|migrate|version] [--key=value ...]\n"
                 "       taugate mint-token --key-file=PEM --subject=S [--groups=a,b]\n"
                 "                          [--alg=RS256] [--ttl=SECONDS]\n\n"
                 "  serve       run the REST gateway (the default)\n"
                 "  migrate     apply pending migrations and exit\n"
                 "  verify RUN_ID [--allow-pruned]\n"
                 "              check a run's sealed evidence against the stored history,\n"
                 "              logs and signature (key: evidence_signing_key)\n"
                 "  mint-token  sign a development token with a private key, using\n"
                 "              auth_issuer and auth_audience from the environment\n"
                 "  version     print the version\n\n");
    tg_config_print_help(out);
}

/* A pool of one connection for a one-shot command, that connection checked
 * out into *conn (NULL when the database cannot be reached). The caller
 * releases it and frees the pool either way. */
static tg_db_pool_t *main_single_conn(const tg_config_t *cfg, tg_db_conn_t **conn)
{
    tg_db_pool_config_t pc = {cfg->database_url,
                              1,
                              (int)cfg->db_checkout_timeout_ms,
                              (int)cfg->db_connect_timeout_s,
                              0,
                              0};
    tg_db_pool_t *pool = tg_db_pool_new(&pc);
    if (tg_db_checkout(pool, conn) != TG_OK)
        *conn = NULL;
    return pool;
}

static int main_migrate(const tg_config_t *cfg)
{
    tg_db_conn_t *conn;
    tg_db_pool_t *pool = main_single_conn(cfg, &conn);
    int status = 1;
    if (!conn) {
        tg_log_error("migrate", "cannot reach the database");
        goto out;
    }
    char err[1024];
    int applied = 0;
    if (tg_migrate(tg_db_pgconn(conn), cfg->migrations_dir, &applied, err, sizeof(err)) != TG_OK) {
        tg_log_error("migrate", "%s", err);
        goto out;
    }
    tg_log_info("migrate", "database is current (%d migration%s applied now)", applied,
                applied == 1 ? "" : "s");
    status = 0;
out:
    tg_db_release(pool, conn);
    tg_db_pool_free(pool);
    return status;
}

/* Housekeeping that must not run on the request path: JWKS freshness. */
static struct {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop, started;
    tg_db_pool_t *pool; /* for the policy poll */
} ticker = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void *main_ticker(void *arg)
{
    tg_authn_t *authn = arg;
    pthread_mutex_lock(&ticker.lock);
    while (!ticker.stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        pthread_cond_timedwait(&ticker.cond, &ticker.lock, &until);
        if (ticker.stop)
            break;
        pthread_mutex_unlock(&ticker.lock);
        tg_authn_tick(authn);
        /* Rules changed through another replica. */
        tg_api_policies_poll(ticker.pool, tg_api_policies_registry());
        pthread_mutex_lock(&ticker.lock);
    }
    pthread_mutex_unlock(&ticker.lock);
    return NULL;
}

static void main_ticker_start(tg_authn_t *authn)
{
    ticker.started = pthread_create(&ticker.thread, NULL, main_ticker, authn) == 0;
}

static void main_ticker_stop(void)
{
    if (!ticker.started)
        return;
    pthread_mutex_lock(&ticker.lock);
    ticker.stop = 1;
    pthread_cond_signal(&ticker.cond);
    pthread_mutex_unlock(&ticker.lock);
    pthread_join(ticker.thread, NULL);
}

static const char *main_opt(const char *s)
{
    return s && *s ? s : NULL;
}

/* The Kubernetes client, when a cluster is configured. */
static int main_kube_start(const tg_config_t *cfg, tg_app_t *app, char *err, size_t errlen)
{
    if (!*cfg->kube_api_url && !*cfg->kubeconfig && !cfg->kube_in_cluster) {
        tg_log_warn("main", "no cluster configured (kube_api_url, kubeconfig or "
                            "kube_in_cluster): runs are accepted but not submitted");
        return 0;
    }
    tg_kube_config_t kc = {.api_url = main_opt(cfg->kube_api_url),
                           .kubeconfig = main_opt(cfg->kubeconfig),
                           .context = main_opt(cfg->kube_context),
                           .in_cluster = cfg->kube_in_cluster,
                           .token_file = main_opt(cfg->kube_token_file),
                           .ca_file = main_opt(cfg->kube_ca_file),
                           .timeout_ms = cfg->kube_timeout_ms,
                           .max_retries = (int)cfg->kube_max_retries};
    return tg_kube_client_new(&kc, &app->kube, err, errlen) == TG_OK ? 0 : -1;
}

static void main_app_free(tg_app_t *app)
{
    tg_reconcile_loop_stop(); /* before the engine and the kube client go */
    tg_logs_collector_stop_and_free(app->logs);
    tg_nodes_stop();
    tg_platform_metrics_stop();
    tg_engine_stop(app->engine);
    tg_kube_client_free(app->kube);
    tg_tenancy_cache_stop(app->tenancy);
    tg_audit_writer_stop(app->audit);
    tg_db_pool_free(app->pool);
    tg_spec_schema_free(app->schema);
    tg_signer_free(app->signer);
    tg_api_openapi_unload();
    tg_console_unload();
    tg_authn_free(app->authn);
}

static int main_serve(const tg_config_t *cfg)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    /* Block before any thread starts so only sigwait below sees them. */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (cfg->migrate_on_start && main_migrate(cfg) != 0)
        return 1;

    tg_db_pool_config_t pc = {cfg->database_url,
                              (int)cfg->db_pool_size,
                              (int)cfg->db_checkout_timeout_ms,
                              (int)cfg->db_connect_timeout_s,
                              (int)cfg->db_statement_timeout_ms,
                              1};
    char err[512];
    tg_authn_t *authn = tg_authn_new(cfg, err, sizeof(err));
    if (!authn) {
        tg_log_error("main", "%s", err);
        return EXIT_CONFIG;
    }
    tg_app_t app = {.cfg = cfg, .authn = authn};
    tg_spec_limits_default(&app.limits);
    app.schema = tg_spec_schema_load_file(cfg->schema_file, err, sizeof(err));
    if (!app.schema) {
        tg_log_error("main", "schema_file %s: %s", cfg->schema_file, err);
        tg_authn_free(authn);
        return EXIT_CONFIG;
    }
    if (tg_api_openapi_load(cfg->openapi_file, err, sizeof(err)) != TG_OK)
        tg_log_warn("main", "openapi_file: %s; GET /v1/openapi.yaml answers 503", err);
    if (tg_console_load(cfg->console_dir, err, sizeof(err)) != TG_OK)
        tg_log_warn("main", "console_dir: %s; /ui/ answers 503 (`make console` builds it)", err);
    if (main_kube_start(cfg, &app, err, sizeof(err)) != 0) {
        tg_log_error("main", "%s", err);
        tg_spec_schema_free(app.schema);
        tg_authn_free(authn);
        return EXIT_CONFIG;
    }
    app.signer = tg_signer_from_config(main_opt(cfg->evidence_signing_key), err, sizeof(err));
    if (!app.signer) {
        tg_log_error("main", "evidence_signing_key: %s", err);
        main_app_free(&app);
        return EXIT_CONFIG;
    }
    tg_api_evidence_init(app.signer);
    app.pool = tg_db_pool_new(&pc);
    app.audit = tg_audit_writer_start(&pc);
    if (!app.audit) {
        tg_log_error("main", "cannot start the audit writer");
        main_app_free(&app);
        return 1;
    }
    app.tenancy = tg_tenancy_cache_start(cfg->database_url, (int)cfg->db_connect_timeout_s,
                                         (int)cfg->tenancy_cache_ms);
    /* The platform policy must load before the first request. */
    char perr[8192];
    tg_policy_registry_t *policies = tg_api_policies_start(app.pool, cfg->policy_schema_file,
                                                           cfg->policy_dir, perr, sizeof(perr));
    if (!policies) {
        tg_log_error("main", "policy_dir %s: %s", cfg->policy_dir, perr);
        main_app_free(&app);
        return EXIT_CONFIG;
    }
    tg_api_policies_set_registry(policies);
    if (app.kube && cfg->engine)
        app.engine = tg_engine_start(cfg, app.pool, app.kube, app.signer, err, sizeof(err));
    if (app.kube && cfg->engine && cfg->reconcile) {
        tg_reconcile_opts_t ro = {.conninfo = cfg->database_url,
                                  .connect_timeout_s = cfg->db_connect_timeout_s,
                                  .interval_s = cfg->reconcile_interval_s,
                                  .correct_drift = strcmp(cfg->reconcile_drift, "report") != 0,
                                  .adopt = cfg->reconcile_adopt};
        if (tg_reconcile_loop_start(app.kube, &ro, err, sizeof(err)) != 0)
            tg_log_error("main", "Kueue reconciler: %s", err);
    }
    tg_platform_metrics_tenant_labels((int)cfg->metrics_tenant_labels);
    tg_platform_metrics_start(app.pool, cfg->platform_metrics_cache_ms);
    if (app.kube && cfg->engine) {
        tg_nodes_config_t nc = {.conninfo = cfg->database_url,
                                .connect_timeout_s = cfg->db_connect_timeout_s,
                                .conditions = cfg->node_health_conditions,
                                .class_labels = cfg->node_gpu_class_labels,
                                .auto_cordon = cfg->node_auto_cordon,
                                .evict_on_fault = cfg->node_evict_on_fault,
                                .uncordon_on_recovery = cfg->node_uncordon_on_recovery,
                                .resync_s = cfg->node_resync_s};
        if (tg_nodes_start(&nc, app.pool, app.kube, err, sizeof(err)) != 0) {
            tg_log_error("main", "nodes: %s", err);
            main_app_free(&app);
            return EXIT_CONFIG;
        }
    }
    if (app.engine && cfg->logs_collector) {
        tg_logs_config_t lc = {.max_followers = (int)cfg->logs_max_followers,
                               .flush_interval_ms = cfg->logs_flush_interval_ms,
                               .chunk_max_bytes = (size_t)cfg->logs_chunk_bytes,
                               .lease_s = cfg->logs_lease_s,
                               .prune_interval_s = cfg->logs_prune_interval_s,
                               .replica_id = main_opt(cfg->logs_replica_id)};
        app.logs = tg_logs_collector_new(app.pool, app.kube, &lc);
        if (tg_logs_collector_start(app.logs) != 0)
            tg_log_warn("main", "the log collector did not start");
    }
    tg_logs_hub_config_t hc = {.max_followers = (int)cfg->logs_http_max_followers,
                               .idle_timeout_s = cfg->logs_http_idle_timeout_s,
                               .poll_ms = cfg->logs_http_poll_ms,
                               .keepalive_s = cfg->logs_http_keepalive_s,
                               .tenancy = app.tenancy};
    if (tg_run_logs_hub_start(app.pool, &hc) != 0)
        tg_log_warn("main", "log following is unavailable (its notifier did not start)");
    if (tg_run_changes_start(app.pool, app.tenancy) != 0)
        tg_log_warn("main", "run change streams are unavailable (their notifier did not start)");
    tg_server_t *srv =
        tg_server_new(cfg, tg_api_routes, tg_api_nroutes, &app, &tg_app_hooks, err, sizeof(err));
    if (!srv) {
        tg_log_error("main", "%s", err);
        tg_run_logs_hub_stop();
        tg_run_logs_hub_free();
        tg_run_changes_free();
        main_app_free(&app);
        return 1;
    }
    ticker.pool = app.pool;
    main_ticker_start(authn);
    tg_log_info("main", "taugate %s listening on http://%s:%u (%ld threads)", tg_version(),
                cfg->listen_address, tg_server_port(srv), cfg->threads);

    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            tg_authn_reload(authn);
            json_t *perrors = NULL;
            if (tg_api_policies_reload(app.pool, policies, &perrors) != TG_OK)
                json_decref(perrors); /* logged; the previous policy stays in force */
            continue;
        }
        tg_log_info("main", "%s: draining (grace %lds)", sig == SIGTERM ? "SIGTERM" : "SIGINT",
                    cfg->shutdown_grace_s);
        break;
    }
    /* suspended log followers first: MHD must not stop with one suspended */
    tg_run_logs_hub_stop();
    tg_run_changes_stop();
    tg_server_drain_and_stop(srv, cfg->shutdown_grace_s);
    main_ticker_stop();
    tg_server_free(srv);
    tg_run_logs_hub_free();
    tg_run_changes_free();
    main_app_free(&app);
    tg_api_policies_set_registry(NULL);
    tg_policy_registry_free(policies);
    tg_log_info("main", "stopped");
    return 0;
}

/* `taugate verify RUN_ID`: recompute a sealed evidence record against the
 * live tables. Exit 0 verified, 1 tampered, 2 not sealed, 3 otherwise. */
static int main_verify(const tg_config_t *cfg, const char *run_id, int allow_pruned)
{
    char err[512], why[1024] = "";
    if (!*cfg->evidence_signing_key) {
        fprintf(stderr, "taugate verify: set evidence_signing_key (a public or private PEM)\n");
        return 3;
    }
    tg_signer_t *key = tg_signer_load_public(cfg->evidence_signing_key, err, sizeof(err));
    if (!key) {
        fprintf(stderr, "taugate verify: evidence_signing_key: %s\n", err);
        return 3;
    }
    tg_db_conn_t *conn;
    tg_db_pool_t *pool = main_single_conn(cfg, &conn);
    int status = 3;
    if (!conn) {
        fprintf(stderr, "taugate verify: cannot reach the database\n");
        goto out;
    }
    tg_rc_e rc =
        tg_evidence_verify(conn, run_id, key, allow_pruned ? TG_EVIDENCE_VERIFY_ALLOW_PRUNED : 0,
                           stdout, why, sizeof(why));
    status = rc == TG_OK ? 0 : rc == TG_ECONFLICT ? 1 : rc == TG_ENOTFOUND ? 2 : 3;
    if (status == 3 || status == 2)
        fprintf(stderr, "taugate verify: %s\n", why[0] ? why : "verification failed");
out:
    tg_db_release(pool, conn);
    tg_db_pool_free(pool);
    tg_signer_free(key);
    return status;
}

/* `taugate mint-token`: its own flags; issuer and audience from the config. */
static int main_mint(int argc, char **argv, const tg_config_t *cfg)
{
    tg_auth_mint_t m = {
        .alg = "RS256", .issuer = cfg->auth_issuer, .audience = cfg->auth_audience, .ttl_s = 86400};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "--key-file=", 11))
            m.key_file = a + 11;
        else if (!strncmp(a, "--subject=", 10))
            m.subject = a + 10;
        else if (!strncmp(a, "--groups=", 9))
            m.groups = a + 9;
        else if (!strncmp(a, "--alg=", 6))
            m.alg = a + 6;
        else if (!strncmp(a, "--ttl=", 6))
            m.ttl_s = atol(a + 6);
        else {
            fprintf(stderr, "taugate mint-token: unknown option %s (see --help)\n", a);
            return EXIT_CONFIG;
        }
    }
    if (!m.key_file || !m.subject || !*m.issuer) {
        fprintf(stderr, "taugate mint-token: needs --key-file, --subject and "
                        "TAUGATE_AUTH_ISSUER\n");
        return EXIT_CONFIG;
    }
    char *token = NULL, err[256];
    if (tg_auth_mint(&m, &token, err, sizeof(err)) != TG_OK) {
        fprintf(stderr, "taugate mint-token: %s\n", err);
        return 1;
    }
    printf("%s\n", token);
    free(token);
    return 0;
}

int main(int argc, char **argv)
{
    tg_json_alloc_install(); /* before any thread uses jansson */
    const char *cmd = "serve";
    int first = 1;
    if (argc > 1 && argv[1][0] != '-') {
        cmd = argv[1];
        first = 2;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            main_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--version")) {
            printf("taugate %s\n", tg_version());
            return 0;
        }
    }
    if (!strcmp(cmd, "version")) {
        printf("taugate %s\n", tg_version());
        return 0;
    }

    tg_config_t cfg;
    char err[512];
    int rest[8], nrest = 0;
    int minting = !strcmp(cmd, "mint-token");
    /* `verify --allow-pruned` is the command's own flag, not a config key */
    int verifying = !strcmp(cmd, "verify"), allow_pruned = 0;
    for (int i = first; verifying && i < argc; i++)
        if (!strcmp(argv[i], "--allow-pruned")) {
            allow_pruned = 1;
            for (int k = i; k + 1 < argc; k++)
                argv[k] = argv[k + 1];
            argc--;
            break;
        }
    if (tg_config_load(&cfg, minting ? 0 : argc, argv, first, rest, 8, &nrest, err, sizeof(err)) !=
        0) {
        fprintf(stderr, "taugate: %s\n", err);
        tg_config_clean(&cfg);
        return EXIT_CONFIG;
    }
    const char *verify_id = NULL;
    for (int i = 0; verifying && i < nrest; i++)
        if (!verify_id)
            verify_id = argv[rest[i]];
    if (verifying) {
        if (!verify_id) {
            fprintf(stderr, "taugate verify: needs a run id\n");
            tg_config_clean(&cfg);
            return EXIT_CONFIG;
        }
        nrest = 0;
    }
    if (nrest > 0) {
        fprintf(stderr, "taugate: unexpected argument '%s' (see --help)\n", argv[rest[0]]);
        tg_config_clean(&cfg);
        return EXIT_CONFIG;
    }
    tg_log_set_level((tg_log_level_e)tg_log_level_parse(cfg.log_level));
    /* libcurl's global set-up is not thread-safe: do it before any thread */
    curl_global_init(CURL_GLOBAL_DEFAULT);

    int status;
    if (minting)
        status = main_mint(argc, argv, &cfg);
    else if (verifying)
        status = main_verify(&cfg, verify_id, allow_pruned);
    else if (!strcmp(cmd, "serve"))
        status = main_serve(&cfg);
    else if (!strcmp(cmd, "migrate"))
        status = main_migrate(&cfg);
    else {
        fprintf(stderr, "taugate: unknown command '%s' (see --help)\n", cmd);
        status = EXIT_CONFIG;
    }
    tg_config_clean(&cfg);
    curl_global_cleanup();
    return status;
}
