/* version, login, logout. */
#include <errno.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "commands.h"
#include "config.h"
#include "core/buf.h"
#include "core/version.h"
#include "http.h"
#include "output.h"

int tau_cmd_version(tau_ctx_t *ctx, const tau_args_t *a)
{
    (void)a;
    json_t *out = json_pack("{s:{s:s}}", "client", "version", tg_version());
    int rc = TAU_EXIT_OK;
    json_t *server = NULL;
    if (ctx->gateway) {
        rc = tau_api(ctx, "GET", "/v1/version", NULL, &server);
        if (server)
            json_object_set(out, "server", server);
        json_object_set_new(out, "gateway", json_string(ctx->gateway));
    }
    if (!tau_out_structured(ctx, out)) {
        printf("tau %s\n", tg_version());
        if (server) {
            printf("gateway %s: ", ctx->gateway);
            tau_print_clean(stdout, json_string_value(json_object_get(server, "name"))
                                        ? json_string_value(json_object_get(server, "name"))
                                        : "taugate");
            fputc(' ', stdout);
            tau_print_clean(stdout, json_string_value(json_object_get(server, "version"))
                                        ? json_string_value(json_object_get(server, "version"))
                                        : "?");
            fputc('\n', stdout);
        }
    }
    json_decref(server);
    json_decref(out);
    return rc;
}

const tau_opt_t tau_opts_login[] = {
    {"gateway", 0, "URL", "the gateway URL, e.g. https://taugate.example.org"},
    {"token", 0, "TOKEN", "the bearer token (default: TAU_TOKEN, else read from stdin)"},
    {"workspace", 'w', "WS", "a default workspace for commands that need one"},
    {"no-verify", 0, NULL, "store without checking the token against the gateway"},
    {NULL, 0, NULL, NULL},
};

/* One line from stdin; on a terminal, prompt and turn echo off. */
static char *login_read_token(const tau_ctx_t *ctx)
{
    int tty = isatty(STDIN_FILENO);
    struct termios old, quiet;
    int restore = 0;
    if (tty) {
        fprintf(stderr, "Token: ");
        fflush(stderr);
        if (tcgetattr(STDIN_FILENO, &old) == 0) {
            quiet = old;
            quiet.c_lflag &= ~(tcflag_t)ECHO;
            restore = tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
        }
    }
    char line[16384];
    char *got = fgets(line, sizeof(line), stdin);
    if (restore) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        fputc('\n', stderr);
    }
    if (!got) {
        tau_fail(ctx, 0, "no token given: pass --token, set TAU_TOKEN or pipe it on stdin");
        return NULL;
    }
    line[strcspn(line, "\r\n")] = '\0';
    char *s = line;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    if (strncmp(s, "Bearer ", 7) == 0)
        s += 7;
    char *tok = *s ? tg_xstrdup(s) : NULL;
    OPENSSL_cleanse(line, sizeof(line));
    if (!tok)
        tau_fail(ctx, 0, "the token is empty");
    return tok;
}

static int login_url_ok(const char *u)
{
    return strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0;
}

int tau_cmd_login(tau_ctx_t *ctx, const tau_args_t *a)
{
    int rc = TAU_EXIT_USAGE;
    tau_config_t cfg;
    int loose = 0;
    char err[512];
    char *token = NULL;
    memset(&cfg, 0, sizeof(cfg));
    if (!ctx->config_path)
        return tau_fail(ctx, TAU_EXIT_USAGE,
                        "cannot find the config folder: set HOME or "
                        "XDG_CONFIG_HOME");
    if (tau_config_load(ctx->config_path, &cfg, &loose, err, sizeof(err)) != 0) {
        tau_warn(ctx, "%s; starting a new config", err);
        memset(&cfg, 0, sizeof(cfg));
    }
    const char *gw = tau_arg(a, "gateway");
    if (!gw)
        gw = getenv("TAU_GATEWAY");
    if (!gw || !*gw)
        gw = cfg.gateway;
    if (!gw) {
        rc = tau_usage_error(ctx, "which gateway? pass --gateway URL");
        goto out;
    }
    if (!login_url_ok(gw)) {
        rc = tau_usage_error(ctx, "the gateway URL must start with http:// or https:// (got '%s')",
                             gw);
        goto out;
    }
    char *gw_copy = tg_xstrdup(gw);
    size_t gl = strlen(gw_copy);
    while (gl > 0 && gw_copy[gl - 1] == '/')
        gw_copy[--gl] = '\0';
    free(cfg.gateway);
    cfg.gateway = gw_copy;
    const char *t = tau_arg(a, "token");
    if (!t)
        t = getenv("TAU_TOKEN");
    if (t && *t)
        token = tg_xstrdup(t);
    else if (!(token = login_read_token(ctx)))
        goto out;
    if (strpbrk(token, " \t\r\n")) {
        rc = tau_fail(ctx, TAU_EXIT_USAGE, "the token holds white space");
        goto out;
    }
    const char *ws = tau_arg(a, "workspace");
    if (ws) {
        free(cfg.workspace);
        cfg.workspace = *ws ? tg_xstrdup(ws) : NULL;
    }
    if (!tau_flag(a, "no-verify")) {
        /* check the pair works before storing it */
        free(ctx->gateway);
        ctx->gateway = tg_xstrdup(cfg.gateway);
        tau_secret_free(ctx->token);
        ctx->token = tg_xstrdup(token);
        json_t *list = NULL;
        rc = tau_api(ctx, "GET", "/v1/workspaces", NULL, &list);
        if (rc != TAU_EXIT_OK) {
            tau_note(ctx, "nothing was stored (use --no-verify to store anyway)");
            goto out;
        }
        size_t n = json_array_size(json_object_get(list, "items"));
        json_decref(list);
        tau_note(ctx, "The token works: %zu workspace%s visible.", n, n == 1 ? "" : "s");
    }
    tau_secret_free(cfg.token);
    cfg.token = token;
    token = NULL;
    if (tau_config_save(ctx->config_path, &cfg, err, sizeof(err)) != 0) {
        rc = tau_fail(ctx, TAU_EXIT_USAGE, "%s", err);
        goto out;
    }
    printf("Logged in to %s (saved in %s)\n", cfg.gateway, ctx->config_path);
    rc = TAU_EXIT_OK;
out:
    tau_secret_free(token);
    tau_config_clean(&cfg);
    return rc;
}

int tau_cmd_logout(tau_ctx_t *ctx, const tau_args_t *a)
{
    (void)a;
    tau_config_t cfg;
    int loose = 0;
    char err[512];
    if (!ctx->config_path)
        return tau_fail(ctx, TAU_EXIT_USAGE, "cannot find the config folder");
    if (tau_config_load(ctx->config_path, &cfg, &loose, err, sizeof(err)) != 0)
        return tau_fail(ctx, TAU_EXIT_USAGE, "%s", err);
    int rc = TAU_EXIT_OK;
    if (!cfg.token) {
        printf("Not logged in.\n");
        goto out;
    }
    tau_secret_free(cfg.token);
    cfg.token = NULL;
    if (tau_config_save(ctx->config_path, &cfg, err, sizeof(err)) != 0) {
        rc = tau_fail(ctx, TAU_EXIT_USAGE, "%s", err);
        goto out;
    }
    printf("Logged out of %s.\n", cfg.gateway ? cfg.gateway : "the gateway");
    if (getenv("TAU_TOKEN"))
        tau_note(ctx, "note: TAU_TOKEN is still set in the environment and keeps being used");
out:
    tau_config_clean(&cfg);
    return rc;
}
