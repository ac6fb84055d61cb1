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
#include <time.h>

#include "api/app.h"
#include "api/authn.h"
#include "api/health.h"
#include "api/policies.h"
#include "auth/mint.h"
#include "api/evidence.h"
#include "api/console.h"
#include "api/openapi.h"
#include "api/run_changes.h"
#include "core/monotonic.h"
#include "evidence/signer.h"
#include "api/run_logs_stream.h"
#include "engine/engine.h"
#include "evidence/sealer.h"
#include "engine/reconcile.h"
#include "engine/nodes.h"
#include "engine/platform_metrics.h"
#include "engine/logs.h"
#include "store/evidence_keys.h"
#include "evidence/verify.h"
#include "store/lifecycle.h"
#include "kube/client.h"
#include "tauyaml/schema.h"
#include "core/config.h"
#include "core/ids.h"
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
                 "              logs and signature (key: evidence_signing_key, else the\n"
                 "              key history in the database)\n"
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
    tg_db_pool_config_t pc = tg_db_pool_config_of(cfg, 1);
    tg_db_pool_t *pool = tg_db_pool_new(&pc);
    if (tg_db_checkout(pool, conn) != TG_OK)
        *conn = NULL;
    return pool;
}

/* Apply pending migrations. RET: 1 done, 0 the database was not reached,
 * -1 a migration failed (err says which and why). */
static int main_migrate_once(const tg_config_t *cfg, char *err, size_t errlen)
{
    tg_db_conn_t *conn;
    tg_db_pool_t *pool = main_single_conn(cfg, &conn);
    int done = 0, applied = 0;
    if (!conn)
        snprintf(err, errlen, "the database cannot be reached");
    else if (tg_migrate(tg_db_pgconn(conn), cfg->migrations_dir, &applied, err, errlen) != TG_OK)
        done = -1;
    else
        done = 1;
    if (done == 1)
        tg_log_info("migrate", "database is current (%d migration%s applied now)", applied,
                    applied == 1 ? "" : "s");
    tg_db_release(pool, conn);
    tg_db_pool_free(pool);
    return done;
}

static int main_migrate(const tg_config_t *cfg)
{
    char err[1024];
    if (main_migrate_once(cfg, err, sizeof(err)) == 1)
        return 0;
    tg_log_error("migrate", "%s", err);
    return 1;
}

static const char *main_opt(const char *s)
{
    return s && *s ? s : NULL;
}

/* Everything `serve` runs, started in order and stopped in reverse by
 * main_daemon_stop, whatever got started. */
typedef struct {
    const tg_config_t *cfg;
    tg_app_t app;
    tg_server_t *srv;
    tg_sealer_t *sealer;
    int booted;           /* migrated, policy loaded, loops started (keeper thread only) */
    char not_ready[1100]; /* the last reason logged, and when (keeper thread only) */
    long not_ready_at;
    /* the keeper: start-up work that needs the database, then housekeeping */
    pthread_t keeper;
    int keeper_started, keeper_stop;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} main_daemon_t;

/* The Kubernetes client, when a cluster is configured. RET: 0 or -1 (err). */
static int main_kube_start(main_daemon_t *d, char *err, size_t errlen)
{
    const tg_config_t *cfg = d->cfg;
    if (!*cfg->kube_api_url && !*cfg->kubeconfig && !cfg->kube_in_cluster) {
        tg_log_warn("main", "no cluster configured (kube_api_url, kubeconfig or "
                            "kube_in_cluster): runs are accepted and wait for one");
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
    return tg_kube_client_new(&kc, &d->app.kube, err, errlen) == TG_OK ? 0 : -1;
}

/* The loops that need the database and (most) a cluster; started once the
 * database is migrated. A loop that cannot start is logged and left off. */
static void main_loops_start(main_daemon_t *d)
{
    const tg_config_t *cfg = d->cfg;
    tg_app_t *app = &d->app;
    char err[512];
    if (app->kube && cfg->engine) {
        app->engine = tg_engine_start(cfg, app->pool, app->kube, err, sizeof(err));
        if (!app->engine)
            tg_log_error("main", "engine: %s", err);
    }
    if (app->kube && cfg->engine && cfg->reconcile) {
        tg_reconcile_opts_t ro = {.conninfo = cfg->database_url,
                                  .connect_timeout_s = cfg->db_connect_timeout_s,
                                  .interval_s = cfg->reconcile_interval_s,
                                  .correct_drift = strcmp(cfg->reconcile_drift, "report") != 0,
                                  .adopt = cfg->reconcile_adopt};
        app->reconcile = tg_reconcile_loop_start(app->kube, &ro, err, sizeof(err));
        if (!app->reconcile)
            tg_log_error("main", "Kueue reconciler: %s", err);
    }
    app->platform_metrics = tg_platform_metrics_start(app->pool, cfg->platform_metrics_cache_ms,
                                                      (int)cfg->metrics_tenant_labels);
    if (app->kube && cfg->engine) {
        tg_nodes_config_t nc = {.conninfo = cfg->database_url,
                                .connect_timeout_s = cfg->db_connect_timeout_s,
                                .conditions = cfg->node_health_conditions,
                                .class_labels = cfg->node_gpu_class_labels,
                                .auto_cordon = cfg->node_auto_cordon,
                                .evict_on_fault = cfg->node_evict_on_fault,
                                .uncordon_on_recovery = cfg->node_uncordon_on_recovery,
                                .resync_s = cfg->node_resync_s};
        app->nodes = tg_nodes_start(&nc, app->pool, app->kube, err, sizeof(err));
        if (!app->nodes)
            tg_log_error("main", "nodes: %s", err);
    }
    if (app->engine && cfg->logs_collector) {
        tg_logs_config_t lc = {.max_followers = (int)cfg->logs_max_followers,
                               .flush_interval_ms = cfg->logs_flush_interval_ms,
                               .chunk_max_bytes = (size_t)cfg->logs_chunk_bytes,
                               .lease_s = cfg->logs_lease_s,
                               .prune_interval_s = cfg->logs_prune_interval_s,
                               .replica_id = main_opt(cfg->logs_replica_id)};
        app->logs = tg_logs_collector_new(app->pool, app->kube, &lc);
        if (tg_logs_collector_start(app->logs) != 0)
            tg_log_warn("main", "the log collector did not start");
    }
    /* sealing needs no cluster: a run cancelled before it reached one is
     * sealed like any other */
    d->sealer = tg_evidence_sealer_start(app->pool, tg_engine_observer(app->engine), app->signer,
                                         cfg->evidence_log_grace_s);
    if (!d->sealer)
        tg_log_error("main", "the evidence sealer did not start");
}

/* Start-up work that needs the database. RET: 1 done; 0 not yet (readiness
 * says why; *retry_ms when to try again). */
/* Start-up waits for `component`: readiness says why, and the log does
 * when the reason changes (or once a minute), not on every retry. */
static void main_not_ready(main_daemon_t *d, const char *component, const char *why)
{
    char line[1100];
    snprintf(line, sizeof(line), "%s: %s", component, why);
    tg_health_starting(d->app.health, component, why);
    long now = (long)(tg_now_mono_us() / 1000000u);
    if (strcmp(line, d->not_ready) != 0 || now - d->not_ready_at >= 60) {
        tg_log_warn("main", "not ready: %s; trying again", line);
        snprintf(d->not_ready, sizeof(d->not_ready), "%s", line);
        d->not_ready_at = now;
    }
}

static int main_bootstrap(main_daemon_t *d, long *retry_ms)
{
    const tg_config_t *cfg = d->cfg;
    char err[1024];
    if (cfg->migrate_on_start) {
        int m = main_migrate_once(cfg, err, sizeof(err));
        if (m != 1) {
            main_not_ready(d, "migrations", err);
            *retry_ms = m == 0 ? 1000 : 30000; /* a broken migration will not mend in a second */
            return 0;
        }
    }
    tg_db_conn_t *conn = NULL;
    if (tg_db_checkout(d->app.pool, &conn) != TG_OK) {
        main_not_ready(d, "policy", "the database cannot be reached for its rules");
        *retry_ms = 1000;
        return 0;
    }
    if (tg_evidence_key_register(conn, d->app.signer) != TG_OK)
        tg_log_warn("main", "the evidence key could not be recorded in the key history yet");
    tg_db_release(d->app.pool, conn);
    json_t *perrors = NULL;
    if (tg_api_policies_reload(d->app.pool, d->app.policies, &perrors) != TG_OK) {
        char text[900];
        tg_policy_errors_format(perrors, text, sizeof(text));
        json_decref(perrors);
        main_not_ready(d, "policy", text);
        *retry_ms = 2000;
        return 0;
    }
    main_loops_start(d);
    tg_health_started(d->app.health);
    tg_log_info("main", "ready: database migrated, platform policy loaded, engine %s",
                d->app.engine ? "running"
                : d->app.kube ? "off"
                              : "waiting for a cluster");
    return 1;
}

/* Without a cluster: the runs accepted since the last look say that they
 * wait for one. */
static void main_no_cluster_words(main_daemon_t *d)
{
    tg_db_conn_t *conn = NULL;
    if (tg_db_checkout(d->app.pool, &conn) != TG_OK)
        return;
    if (tg_store_runs_without_cluster(conn,
                                      "waiting for a cluster: none is configured "
                                      "(kube_api_url, kubeconfig or kube_in_cluster)") != TG_OK)
        tg_log_warn("main", "could not mark the runs waiting for a cluster");
    tg_db_release(d->app.pool, conn);
}

#define MAIN_TICK_MS      10000L
#define MAIN_NOCLUSTER_MS 2000L

static long main_mono_ms(void)
{
    return (long)(tg_now_mono_us() / 1000u);
}

/* The keeper thread: start-up as soon as the database answers, then JWKS
 * freshness every 10 s, rules changed through another replica every
 * policy_poll_s (0: never), and, without a cluster, the words of waiting
 * runs every 2 s. */
static void *main_keeper(void *arg)
{
    pthread_setname_np(pthread_self(), "tg-keeper");
    main_daemon_t *d = arg;
    const long policy_ms = d->cfg->policy_poll_s * 1000L;
    long wait_ms = 0, now = main_mono_ms();
    long next_tick = now + MAIN_TICK_MS, next_policy = now + policy_ms;
    pthread_mutex_lock(&d->lock);
    while (!d->keeper_stop) {
        if (wait_ms > 0) {
            struct timespec until = tg_mono_deadline_ms((uint64_t)wait_ms);
            pthread_cond_timedwait(&d->cond, &d->lock, &until);
            if (d->keeper_stop)
                break;
        }
        pthread_mutex_unlock(&d->lock);
        now = main_mono_ms();
        if (now >= next_tick) {
            next_tick = now + MAIN_TICK_MS;
            tg_authn_tick(d->app.authn);
        }
        if (policy_ms > 0 && now >= next_policy) {
            next_policy = now + policy_ms;
            if (d->booted)
                tg_api_policies_poll(d->app.pool, d->app.policies);
        }
        long retry_ms = 1000;
        if (!d->booted)
            d->booted = main_bootstrap(d, &retry_ms);
        if (d->booted && !d->app.kube)
            main_no_cluster_words(d);
        wait_ms = !d->booted ? retry_ms : d->app.kube ? MAIN_TICK_MS : MAIN_NOCLUSTER_MS;
        /* wake for whichever periodic task falls due first */
        now = main_mono_ms();
        long due = next_tick - now;
        if (policy_ms > 0 && next_policy - now < due)
            due = next_policy - now;
        if (due < wait_ms)
            wait_ms = due > 0 ? due : 1;
        pthread_mutex_lock(&d->lock);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

/* Stop whatever started, in reverse order. */
static void main_daemon_stop(main_daemon_t *d)
{
    if (d->keeper_started) {
        pthread_mutex_lock(&d->lock);
        d->keeper_stop = 1;
        pthread_cond_signal(&d->cond);
        pthread_mutex_unlock(&d->lock);
        pthread_join(d->keeper, NULL);
    }
    tg_sse_hub_stop(d->app.streams); /* suspended streams first: see sse_hub.h */
    if (d->srv) {
        tg_server_drain_and_stop(d->srv, d->cfg->shutdown_grace_s);
        tg_server_free(d->srv);
    }
    tg_sse_hub_free(d->app.streams); /* frees every stream's state: before their sources */
    tg_logs_streams_free(d->app.log_streams);
    tg_run_changes_free(d->app.changes);
    tg_evidence_sealer_stop(d->sealer);
    tg_reconcile_loop_stop(d->app.reconcile); /* before the engine and the kube client go */
    tg_logs_collector_stop_and_free(d->app.logs);
    tg_nodes_stop(d->app.nodes);
    tg_platform_metrics_stop(d->app.platform_metrics);
    tg_engine_stop(d->app.engine);
    tg_kube_client_free(d->app.kube);
    tg_tenancy_cache_stop(d->app.tenancy);
    tg_audit_writer_stop(d->app.audit);
    tg_db_pool_free(d->app.pool);
    tg_tauyaml_schema_free(d->app.schema);
    tg_policy_registry_free(d->app.policies);
    tg_signer_free(d->app.signer);
    tg_api_openapi_free(d->app.openapi);
    tg_console_free(d->app.console);
    tg_authn_free(d->app.authn);
    tg_health_free(d->app.health);
    pthread_cond_destroy(&d->cond);
    pthread_mutex_destroy(&d->lock);
}

/* `taugate serve`. Exit 2 only for configuration errors; the database may
 * be away at start (start-up then waits for it, serving /healthz and 503s). */
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

    main_daemon_t d = {.cfg = cfg, .app = {.cfg = cfg, .health = tg_health_new()}};
    pthread_mutex_init(&d.lock, NULL);
    tg_cond_init_monotonic(&d.cond);
    tg_app_t *app = &d.app;
    int status = EXIT_CONFIG;
    char err[512], perr[8192];

    /* configuration: anything wrong here is the operator's to fix (exit 2) */
    app->authn = tg_authn_new(cfg, err, sizeof(err));
    if (!app->authn) {
        tg_log_error("main", "%s", err);
        goto out;
    }
    tg_tauyaml_limits_default(&app->limits);
    app->schema = tg_tauyaml_schema_load_file(cfg->schema_file, err, sizeof(err));
    if (!app->schema) {
        tg_log_error("main", "schema_file %s: %s", cfg->schema_file, err);
        goto out;
    }
    if (tg_api_openapi_load(cfg->openapi_file, &app->openapi, err, sizeof(err)) != TG_OK)
        tg_log_warn("main", "openapi_file: %s; GET /v1/openapi.yaml answers 503", err);
    if (tg_console_load(cfg->console_dir, &app->console, err, sizeof(err)) != TG_OK)
        tg_log_warn("main", "console_dir: %s; /ui/ answers 503 (`make console` builds it)", err);
    if (main_kube_start(&d, err, sizeof(err)) != 0) {
        tg_log_error("main", "%s", err);
        goto out;
    }
    app->signer = tg_signer_from_config(main_opt(cfg->evidence_signing_key), err, sizeof(err));
    if (!app->signer) {
        tg_log_error("main", "evidence_signing_key: %s", err);
        goto out;
    }
    /* the policy files now (their errors are configuration errors); the
     * database's rules join them once it is reachable */
    app->policies =
        tg_api_policies_start(NULL, cfg->policy_schema_file, cfg->policy_dir, perr, sizeof(perr));
    if (!app->policies) {
        tg_log_error("main", "policy_dir %s: %s", cfg->policy_dir, perr);
        goto out;
    }

    /* what needs the database connects lazily and keeps trying */
    status = 1;
    tg_db_pool_config_t pc = tg_db_pool_config_of(cfg, 0);
    app->pool = tg_db_pool_new(&pc);
    app->audit = tg_audit_writer_start(&pc);
    if (!app->audit) {
        tg_log_error("main", "cannot start the audit writer");
        goto out;
    }
    tg_tenancy_cache_config_t tc = {.conninfo = cfg->database_url,
                                    .connect_timeout_s = (int)cfg->db_connect_timeout_s,
                                    .ttl_ms = (int)cfg->tenancy_cache_ms,
                                    .wait_ms = (int)cfg->tenancy_cache_wait_ms};
    app->tenancy = tg_tenancy_cache_start(&tc);
    tg_sse_hub_config_t hc = {.poll_ms = cfg->logs_http_poll_ms,
                              .keepalive_s = cfg->logs_http_keepalive_s};
    app->streams = tg_sse_hub_start(app->pool, app->tenancy, &hc);
    tg_logs_streams_config_t lc = {.max_followers = (int)cfg->logs_http_max_followers,
                                   .idle_timeout_s = cfg->logs_http_idle_timeout_s};
    app->log_streams = tg_logs_streams_start(app->streams, &lc);
    app->changes = tg_run_changes_start(app->streams);
    if (!app->log_streams || !app->changes)
        tg_log_warn("main", "log reads and run change streams are unavailable (their notifier"
                            " did not start)");
    d.srv = tg_server_new(cfg, tg_api_routes, tg_api_nroutes, app, &tg_app_hooks, err, sizeof(err));
    if (!d.srv) {
        tg_log_error("main", "%s", err);
        goto out;
    }
    d.keeper_started = pthread_create(&d.keeper, NULL, main_keeper, &d) == 0;
    if (!d.keeper_started) {
        tg_log_error("main", "cannot start the start-up thread");
        goto out;
    }
    tg_log_info("main", "taugate %s listening on http://%s:%u (%ld threads)", tg_version(),
                cfg->listen_address, tg_server_port(d.srv), cfg->threads);

    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            tg_authn_reload(app->authn);
            char why[64];
            json_t *perrors = NULL;
            if (tg_health_is_started(app->health, why, sizeof(why)) &&
                tg_api_policies_reload(app->pool, app->policies, &perrors) != TG_OK)
                json_decref(perrors); /* logged; the previous policy stays in force */
            continue;
        }
        tg_log_info("main", "%s: draining (grace %lds)", sig == SIGTERM ? "SIGTERM" : "SIGINT",
                    cfg->shutdown_grace_s);
        break;
    }
    status = 0;
out:
    main_daemon_stop(&d);
    tg_log_info("main", status == 0 ? "stopped" : "stopped after an error");
    return status;
}

/* The key that checks a record sealed with key_id: the configured one when
 * it is that key, else that key's public half from the key history (a note
 * says so: the history is as trustworthy as the database). NULL when
 * neither has it. Caller frees. */
static tg_signer_t *main_verify_key(tg_db_conn_t *conn, tg_signer_t *configured, const char *key_id)
{
    if (configured && !strcmp(tg_signer_key_id(configured), key_id))
        return configured;
    json_t *k = NULL;
    char err[256];
    tg_signer_t *hist = NULL;
    if (tg_evidence_key_get(conn, key_id, &k) == TG_OK)
        hist = tg_signer_from_public_b64(json_string_value(json_object_get(k, "public_key_b64")),
                                         err, sizeof(err));
    if (hist && strcmp(tg_signer_key_id(hist), key_id) != 0) {
        tg_signer_free(hist); /* a history row that is not the key it names */
        hist = NULL;
    }
    if (hist)
        printf("note key: key %s (%s%s) is %s; its public half comes from the gateway's key "
               "history, first seen %s\n",
               key_id, json_is_true(json_object_get(k, "ephemeral")) ? "ephemeral, " : "",
               TG_SIGNER_ALGORITHM,
               configured ? "not the configured evidence_signing_key" : "what the record names",
               json_string_value(json_object_get(k, "first_seen_at")));
    json_decref(k);
    return hist;
}

/* `taugate verify RUN_ID`: recompute a sealed evidence record against the
 * live tables. Exit 0 verified, 1 tampered, 2 not sealed, 3 otherwise. */
static int main_verify(const tg_config_t *cfg, const char *run_id, int allow_pruned)
{
    char err[512], why[1024] = "";
    tg_signer_t *configured = NULL, *key = NULL;
    if (*cfg->evidence_signing_key) {
        configured = tg_signer_load_public(cfg->evidence_signing_key, err, sizeof(err));
        if (!configured) {
            fprintf(stderr, "taugate verify: evidence_signing_key: %s\n", err);
            return 3;
        }
    }
    tg_db_conn_t *conn;
    tg_db_pool_t *pool = main_single_conn(cfg, &conn);
    int status = 3;
    tg_evidence_row_t row;
    memset(&row, 0, sizeof(row));
    if (!conn) {
        fprintf(stderr, "taugate verify: cannot reach the database\n");
        goto out;
    }
    tg_rc_e rc = tg_evidence_get(conn, run_id, &row);
    if (rc == TG_OK) {
        key = main_verify_key(conn, configured, row.key_id);
        rc = tg_evidence_verify(conn, run_id, key,
                                allow_pruned ? TG_EVIDENCE_VERIFY_ALLOW_PRUNED : 0, stdout, why,
                                sizeof(why));
    } else if (rc == TG_ENOTFOUND) {
        snprintf(why, sizeof(why), "run %s has no sealed evidence", run_id);
    } else {
        snprintf(why, sizeof(why), "the database could not be read (%s)", tg_rc_slug(rc));
    }
    status = rc == TG_OK ? 0 : rc == TG_ECONFLICT ? 1 : rc == TG_ENOTFOUND ? 2 : 3;
    if (status == 3 || status == 2)
        fprintf(stderr, "taugate verify: %s\n", why[0] ? why : "verification failed");
out:
    tg_evidence_row_clean(&row);
    tg_db_release(pool, conn);
    tg_db_pool_free(pool);
    if (key != configured)
        tg_signer_free(key);
    tg_signer_free(configured);
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
    int rest[8];
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
    /* mint-token reads its own flags (main_mint) */
    tg_config_argv_t args = {
        .argc = minting ? 0 : argc, .argv = argv, .first = first, .rest = rest, .restcap = 8};
    int status = EXIT_CONFIG;
    if (tg_config_load(&cfg, &args, err, sizeof(err)) != 0) {
        fprintf(stderr, "taugate: %s\n", err);
        goto out;
    }
    /* verify takes the run id; no other command takes an argument */
    const char *verify_id = verifying && args.nrest > 0 ? argv[rest[0]] : NULL;
    if (verifying && !verify_id) {
        fprintf(stderr, "taugate verify: needs a run id\n");
        goto out;
    }
    if (!verifying && args.nrest > 0) {
        fprintf(stderr, "taugate: unexpected argument '%s' (see --help)\n", argv[rest[0]]);
        goto out;
    }
    tg_log_set_level((tg_log_level_e)tg_log_level_parse(cfg.log_level));
    /* libcurl's global set-up is not thread-safe: do it before any thread */
    curl_global_init(CURL_GLOBAL_DEFAULT);

    if (minting)
        status = main_mint(argc, argv, &cfg);
    else if (verifying)
        status = main_verify(&cfg, verify_id, allow_pruned);
    else if (!strcmp(cmd, "serve"))
        status = main_serve(&cfg);
    else if (!strcmp(cmd, "migrate"))
        status = main_migrate(&cfg);
    else
        fprintf(stderr, "taugate: unknown command '%s' (see --help)\n", cmd);
    curl_global_cleanup();
out:
    tg_config_clean(&cfg);
    return status;
}
