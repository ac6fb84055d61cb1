/* tau: the taugate command-line client, a thin REST client of the gateway.
 *
 * Settings come from flags, then the environment (TAU_GATEWAY, TAU_TOKEN,
 * TAU_WORKSPACE, NO_COLOR, TAU_RETRIES), then the config file written by
 * `tau login`. Exit codes are listed in tau.h. */
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "config.h"
#include "jsonpath.h"
#include "output.h"

/* ---- messages ----------------------------------------------------------------- */

static void tau_vmsg(const tau_ctx_t *ctx, const char *label, const char *color, const char *fmt,
                     va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    fflush(stdout);
    if (label) {
        fputs("tau: ", stderr);
        if (ctx && ctx->color_err && color)
            fprintf(stderr, "%s%s\033[0m: ", color, label);
        else
            fprintf(stderr, "%s: ", label);
    }
    tau_print_clean_lines(stderr, msg);
    fputc('\n', stderr);
}

int tau_fail(const tau_ctx_t *ctx, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tau_vmsg(ctx, "error", "\033[31m", fmt, ap);
    va_end(ap);
    return code;
}

void tau_warn(const tau_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tau_vmsg(ctx, "warning", "\033[33m", fmt, ap);
    va_end(ap);
}

void tau_note(const tau_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tau_vmsg(ctx, NULL, NULL, fmt, ap);
    va_end(ap);
}

/* ---- the tree ------------------------------------------------------------------- */

const tau_opt_t tau_opts_none[] = {{NULL, 0, NULL, NULL}};
const tau_opt_t tau_opts_ws[] = {
    {"workspace", 'w', "WS", "the workspace (default: TAU_WORKSPACE or the config's)"},
    {NULL, 0, NULL, NULL},
};

#define TAU_NEEDS_GW 1

static const tau_cmd_t tau_root_subs[] = {
    {"login", "Store the gateway URL and a token", "login [--gateway URL] [--token TOKEN] [-w WS]",
     "Stores the gateway, the token and an optional default workspace in\n"
     "$XDG_CONFIG_HOME/tau/config (default ~/.config/tau/config; folder 0700,\n"
     "file 0600). Without --token, TAU_TOKEN is used, else one line is read from\n"
     "stdin (without echo on a terminal). The token is checked against the\n"
     "gateway first unless --no-verify is given. TAU_GATEWAY and TAU_TOKEN\n"
     "override the stored values at run time.",
     tau_opts_login, tau_cmd_login, NULL, 0, 0, NULL, 0},
    {"logout", "Forget the stored token", "logout", NULL, tau_opts_none, tau_cmd_logout, NULL, 0, 0,
     NULL, 0},
    {"workspaces", "List the workspaces you belong to", "workspaces", NULL, tau_opts_none,
     tau_cmd_workspaces, NULL, 0, 0, NULL, TAU_NEEDS_GW},
    {"validate", "Check a tau.yaml on the server without running it", "validate [FILE] -w WS",
     "Packs FILE (default ./tau.yaml) and the files it names exactly as `tau run`\n"
     "does and asks the gateway to validate and resolve it. Problems print on\n"
     "stderr as FILE:LINE:COLUMN: path: message; with -o json (or yaml,\n"
     "jsonpath) the answer is printed on stdout: the resolved spec when it is\n"
     "valid, the problem document when not. Exit 0 when valid; 2 when the file\n"
     "cannot be read or packed (not YAML, a missing entrypoint: found before\n"
     "sending); 3 when the gateway finds problems; 4 or 5 as for any command.",
     tau_opts_validate, tau_cmd_validate, NULL, 0, 1, NULL, 0},
    {"run", "Submit a tau.yaml as a run", "run [FILE] -w WS [--wait]",
     "Reads FILE (default ./tau.yaml; a folder means its tau.yaml) and packs its\n"
     "entrypoint (a path relative to the tau.yaml's folder), requirements.txt when\n"
     "present, and for run.working_dir the project folder as _tau_project.zip\n"
     "(stored zip, at most 45 KiB, leaving out run.working_dir_excludes, .git,\n"
     "__pycache__ and *.pyc; TAU_MAX_PROJECT_BYTES changes the limit). It sends\n"
     "them with an Idempotency-Key so that retries are safe and prints the\n"
     "run id. A repeat with the same --idempotency-key prints the first run's\n"
     "id and says it is a replay. With --wait, follows the run to its end and\n"
     "prints how it ended (with the exit code of a failed run's container):\n"
     "exit 0 when it succeeded, 1 when it failed, was cancelled or --timeout\n"
     "passed. Exit 2 when FILE cannot be read or packed. The workspace defaults\n"
     "to -w, then policy.workspace in the file, TAU_WORKSPACE and the config's.",
     tau_opts_run, tau_cmd_run, NULL, 0, 1, NULL, 0},
    {"runs", "List a workspace's runs", "runs -w WS [--state S] [--owner O] [--limit N] [--all]",
     NULL, tau_opts_runs, tau_cmd_runs, NULL, 0, 0, NULL, TAU_NEEDS_GW},
    {"status", "Show a run's state", "status RUN [--watch]",
     "Shows state, reason, message, attempt and queue information. With --watch,\n"
     "prints each change until the run ends.",
     tau_opts_status, tau_cmd_status, NULL, 1, 1, NULL, TAU_NEEDS_GW},
    {"logs", "Print a run's logs", "logs RUN [-f] [--tail N] [--since T] [-c CONTAINER]",
     "Streams the stored pod logs as plain text; -f keeps following new lines\n"
     "until the run's logs are complete.",
     tau_opts_logs, tau_cmd_logs, NULL, 1, 1, NULL, TAU_NEEDS_GW},
    {"cancel", "Cancel a run", "cancel RUN", NULL, tau_opts_none, tau_cmd_cancel, NULL, 1, 1, NULL,
     TAU_NEEDS_GW},
    {"resume", "Resume a failed or cancelled run", "resume RUN [--force]", NULL, tau_opts_resume,
     tau_cmd_resume, NULL, 1, 1, NULL, TAU_NEEDS_GW},
    {"events", "List a run's events (state changes and their sources)", "events RUN [--after N]",
     NULL, tau_opts_events, tau_cmd_events, NULL, 1, 1, NULL, TAU_NEEDS_GW},
    {"metrics", "Show the metrics a run reported", "metrics RUN [--name METRIC]",
     "Without --name, one line per metric (latest value, min, max, count); with\n"
     "--name, every point of that metric.",
     tau_opts_metrics, tau_cmd_metrics, NULL, 1, 1, NULL, TAU_NEEDS_GW},
    {"evidence", "Fetch (and verify) a run's sealed evidence record",
     "evidence RUN [--verify] [--out-file FILE] [--key FILE]",
     "Prints the evidence record as JSON (-o yaml or jsonpath= as usual), or\n"
     "writes it to --out-file FILE. With --verify, fetches the gateway's public\n"
     "key (GET /v1/evidence/public-key; --key FILE pins one instead) and checks,\n"
     "as docs/evidence.md describes: the sha256 of the signed canonical text;\n"
     "that the record is about RUN and names the envelope's key, algorithm and\n"
     "seal time; the Ed25519 signature; and that the record's event history is\n"
     "an intact hash chain ending at its chain head. One line per check goes\n"
     "to stderr (stdout with --out-file). Exit 0 when it verifies, 1 when not.",
     tau_opts_evidence, tau_cmd_evidence, NULL, 1, 1, NULL, TAU_NEEDS_GW},
    {"checkpoints", "List the checkpoints a run reported", "checkpoints RUN",
     "One line per checkpoint (attempt, step, path, time), as the workload\n"
     "reported them (docs/workload-markers.md); a resume starts from the latest.",
     tau_opts_checkpoints, tau_cmd_checkpoints, NULL, 1, 1, NULL, TAU_NEEDS_GW},
    {"quota", "Show a workspace's queues, quota and usage", "quota -w WS", NULL, tau_opts_ws,
     tau_cmd_quota, NULL, 0, 0, NULL, TAU_NEEDS_GW},
    {"queues", "Show a workspace's queues (same as quota)", "queues -w WS", NULL, tau_opts_ws,
     tau_cmd_quota, NULL, 0, 0, NULL, TAU_NEEDS_GW},
    {"profiles", "List the compute profiles a workspace may use", "profiles -w WS", NULL,
     tau_opts_ws, tau_cmd_profiles, NULL, 0, 0, NULL, TAU_NEEDS_GW},
    {"token", "Personal access tokens", "token create|list|revoke", NULL, NULL, NULL,
     tau_token_subs, 0, 0, NULL, 0},
    {"admin", "Platform administration", "admin <resource> <verb>", NULL, NULL, NULL,
     tau_admin_subs, 0, 0, NULL, 0},
    {"api", "Send any request with the configured credentials", "api [METHOD] PATH [flags]",
     "In the manner of `gh api`: prints the answer as it came (JSON pretty-\n"
     "printed, or in the -o format), also for an error, whose status sets the\n"
     "exit code. -f key=value (string) and -F key=value (true, false, null, a\n"
     "number, @FILE) become the query of a GET or DELETE and a JSON body\n"
     "otherwise; --input FILE sends a body as is. Without METHOD: GET, or POST\n"
     "when there is a body. POSTs carry an Idempotency-Key.\n"
     "Examples:\n"
     "  tau api /v1/admin/fleet\n"
     "  tau api POST /v1/admin/policies:reload\n"
     "  tau api PATCH /v1/admin/workspaces/ray -F ttl_seconds=3600\n"
     "  tau api /v1/admin/nodes -f health=Unhealthy --paginate",
     tau_opts_api, tau_cmd_api, NULL, 1, 2, NULL, TAU_NEEDS_GW},
    {"completion", "Print a shell completion script", "completion bash|zsh|fish",
     "bash:  source <(tau completion bash)   (or save it in /etc/bash_completion.d/tau)\n"
     "zsh:   tau completion zsh > \"${fpath[1]}/_tau\"   (then restart zsh)\n"
     "fish:  tau completion fish > ~/.config/fish/completions/tau.fish\n"
     "The script asks tau itself what can follow, so it always matches the\n"
     "commands and options of the tau that is installed.",
     tau_opts_none, tau_cmd_completion, NULL, 1, 1, NULL, 0},
    {"version", "Print the client's (and the gateway's) version", "version", NULL, tau_opts_none,
     tau_cmd_version, NULL, 0, 0, NULL, 0},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0},
};

static const tau_cmd_t tau_root = {
    "tau",
    "tau: run TauGrid workloads (tau.yaml) through a taugate gateway",
    "<command> [options]",
    "Environment: TAU_GATEWAY, TAU_TOKEN, TAU_WORKSPACE override the config;\n"
    "NO_COLOR turns colours off; TAU_RETRIES sets retries of safe requests (2).\n"
    "Exit codes: 0 ok, 1 run failed (--wait) or evidence did not verify, 2 usage\n"
    "or local input error (found before anything was sent), 3 rejected by the\n"
    "server (4xx), 4 authentication/permission (401/403), 5 network or server\n"
    "error (5xx). Output: -o table (default), wide, json, yaml or\n"
    "jsonpath=TEMPLATE everywhere; files are written with --out-file.",
    NULL,
    NULL,
    tau_root_subs,
    0,
    0,
    NULL,
    0,
};

/* ---- set-up ---------------------------------------------------------------------- */

static char *tau_strip_slashes(const char *s)
{
    char *c = tg_xstrdup(s);
    size_t n = strlen(c);
    while (n > 0 && c[n - 1] == '/')
        c[--n] = '\0';
    return c;
}

static int tau_setup(tau_ctx_t *ctx, const tau_args_t *a)
{
    char ferr[512];
    if (tau_out_parse_format(ctx, tau_arg(a, "output"), ferr, sizeof(ferr)) != 0)
        return tau_usage_error(ctx, "%s", ferr);
    const char *nc = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    int colour_ok = !(nc && *nc) && !tau_flag(a, "no-color") && !(term && !strcmp(term, "dumb"));
    ctx->color = colour_ok && isatty(STDOUT_FILENO);
    ctx->color_err = colour_ok && isatty(STDERR_FILENO);
    ctx->stderr_tty = isatty(STDERR_FILENO);
    ctx->verbose = tau_flag(a, "verbose");
    ctx->retries = 2;
    const char *r = getenv("TAU_RETRIES");
    if (r && *r) {
        char *end = NULL;
        long v = strtol(r, &end, 10);
        if (!*end && v >= 0 && v <= 10)
            ctx->retries = (int)v;
    }

    tau_config_t cfg;
    int loose = 0;
    char err[512];
    ctx->config_path = tau_config_path();
    memset(&cfg, 0, sizeof(cfg));
    if (ctx->config_path && tau_config_load(ctx->config_path, &cfg, &loose, err, sizeof(err)) != 0)
        return tau_fail(ctx, TAU_EXIT_USAGE, "%s", err);
    if (loose && cfg.token)
        tau_warn(ctx, "%s is readable by other users; run: chmod 600 %s", ctx->config_path,
                 ctx->config_path);
    const char *gw = tau_arg(a, "gateway");
    const char *env_gw = getenv("TAU_GATEWAY");
    if (!gw || !*gw)
        gw = env_gw && *env_gw ? env_gw : cfg.gateway;
    const char *tok = tau_arg(a, "token");
    const char *env_tok = getenv("TAU_TOKEN");
    if (!tok || !*tok)
        tok = env_tok && *env_tok ? env_tok : cfg.token;
    const char *ws = getenv("TAU_WORKSPACE");
    if (!ws || !*ws)
        ws = cfg.workspace;
    int rc = TAU_EXIT_OK;
    if (gw && strncmp(gw, "http://", 7) != 0 && strncmp(gw, "https://", 8) != 0)
        rc = tau_fail(ctx, TAU_EXIT_USAGE,
                      "the gateway URL must start with http:// or https:// (got '%s')", gw);
    ctx->gateway = gw ? tau_strip_slashes(gw) : NULL;
    ctx->token = tok ? tg_xstrdup(tok) : NULL;
    ctx->workspace = ws ? tg_xstrdup(ws) : NULL;
    tau_config_clean(&cfg);
    return rc;
}

const char *tau_need_workspace(tau_ctx_t *ctx, const tau_args_t *a)
{
    const char *ws = tau_arg(a, "workspace");
    if (ws && *ws)
        return ws;
    if (ctx->workspace)
        return ctx->workspace;
    tau_usage_error(ctx, "which workspace? pass -w WS (or set TAU_WORKSPACE)");
    return NULL;
}

int main(int argc, char **argv)
{
    tau_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    ctx.color_err = isatty(STDERR_FILENO) && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
    /* `tau help X Y` is `tau X Y --help` */
    char *args[260];
    int n = 0;
    if (argc > (int)TG_ARRAY_LEN(args) - 2) {
        fprintf(stderr, "tau: error: too many arguments\n");
        return TAU_EXIT_USAGE;
    }
    args[n++] = argv[0];
    int help = argc > 1 && strcmp(argv[1], "help") == 0;
    for (int i = help ? 2 : 1; i < argc; i++)
        args[n++] = argv[i];
    if (help)
        args[n++] = "--help";
    if (argc > 1 && (strcmp(argv[1], "--version") == 0))
        args[1] = "version";
    args[n] = NULL;
    if (argc > 1 && strcmp(argv[1], "__complete") == 0) /* the completion scripts' helper */
        return tau_complete(&tau_root, argc - 2, argv + 2);
    if (n == 1) {
        tau_cmd_help(&tau_root, "", stderr);
        return TAU_EXIT_USAGE;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = tau_cmd_main(&tau_root, n, args, tau_setup, &ctx);
    fflush(stdout);
    if (ferror(stdout) && rc == TAU_EXIT_OK)
        rc = TAU_EXIT_USAGE;
    curl_global_cleanup();
    free(ctx.gateway);
    tau_secret_free(ctx.token);
    free(ctx.workspace);
    free(ctx.config_path);
    tau_jsonpath_free(ctx.jsonpath);
    return rc;
}
