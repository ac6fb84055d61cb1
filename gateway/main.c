/* taugate: the REST gateway daemon.
 *
 *   taugate [serve] [--key=value ...]   run the server (default)
 *   taugate migrate [--key=value ...]   apply pending database migrations
 *   taugate version | --version
 *   taugate --help                      list commands and configuration keys */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "core/config.h"
#include "core/log.h"
#include "core/version.h"
#include "http/server.h"
#include "store/migrate.h"
#include "store/pool.h"

#define EXIT_CONFIG 2

static void main_usage(FILE *out)
{
    fprintf(out, "usage: taugate [serve|migrate|version] [--key=value ...]\n\n"
                 "  serve     run the REST gateway (the default)\n"
                 "  migrate   apply pending migrations and exit\n"
                 "  version   print the version\n\n");
    tg_config_print_help(out);
}

static int main_migrate(const tg_config_t *cfg)
{
    tg_db_pool_config_t pc = {cfg->database_url, 1, (int)cfg->db_checkout_timeout_ms,
                              (int)cfg->db_connect_timeout_s, 0};
    tg_db_pool_t *pool = tg_db_pool_new(&pc);
    tg_db_conn_t *conn = NULL;
    int status = 1;
    if (tg_db_checkout(pool, &conn) != TG_OK) {
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

    tg_db_pool_config_t pc = {cfg->database_url, (int)cfg->db_pool_size,
                              (int)cfg->db_checkout_timeout_ms, (int)cfg->db_connect_timeout_s,
                              (int)cfg->db_statement_timeout_ms};
    tg_app_t app = {.cfg = cfg, .pool = tg_db_pool_new(&pc)};
    char err[512];
    tg_server_t *srv =
        tg_server_new(cfg, tg_api_routes, tg_api_nroutes, &app, &tg_app_hooks, err, sizeof(err));
    if (!srv) {
        tg_log_error("main", "%s", err);
        tg_db_pool_free(app.pool);
        return 1;
    }
    tg_log_info("main", "taugate %s listening on http://%s:%u (%ld threads)", tg_version(),
                cfg->listen_address, tg_server_port(srv), cfg->threads);

    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            tg_log_info("main", "SIGHUP: nothing to reload yet");
            continue;
        }
        tg_log_info("main", "%s: draining (grace %lds)", sig == SIGTERM ? "SIGTERM" : "SIGINT",
                    cfg->shutdown_grace_s);
        break;
    }
    tg_server_drain_and_stop(srv, cfg->shutdown_grace_s);
    tg_server_free(srv);
    tg_db_pool_free(app.pool);
    tg_log_info("main", "stopped");
    return 0;
}

int main(int argc, char **argv)
{
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
    if (tg_config_load(&cfg, argc, argv, first, rest, 8, &nrest, err, sizeof(err)) != 0) {
        fprintf(stderr, "taugate: %s\n", err);
        tg_config_clean(&cfg);
        return EXIT_CONFIG;
    }
    if (nrest > 0) {
        fprintf(stderr, "taugate: unexpected argument '%s' (see --help)\n", argv[rest[0]]);
        tg_config_clean(&cfg);
        return EXIT_CONFIG;
    }
    tg_log_set_level((tg_log_level_e)tg_log_level_parse(cfg.log_level));

    int status;
    if (!strcmp(cmd, "serve"))
        status = main_serve(&cfg);
    else if (!strcmp(cmd, "migrate"))
        status = main_migrate(&cfg);
    else {
        fprintf(stderr, "taugate: unknown command '%s' (see --help)\n", cmd);
        status = EXIT_CONFIG;
    }
    tg_config_clean(&cfg);
    return status;
}
