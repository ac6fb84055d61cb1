/* The command tree: dispatch and help. */
#include "cmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"

const tau_opt_t tau_global_opts[] = {
    {"output", 'o', "FORMAT",
     "table (default), wide, json, yaml or jsonpath=TEMPLATE (kubectl's syntax)"},
    {"gateway", 0, "URL", "the gateway URL (overrides TAU_GATEWAY and the config)"},
    {"token", 0, "TOKEN", "bearer token (prefer TAU_TOKEN or `tau login`: flags show in ps)"},
    {"no-color", 0, NULL, "no colours (also when NO_COLOR is set or stdout is not a terminal)"},
    {"verbose", 'v', NULL, "print one line per HTTP request on stderr"},
    {"help", 'h', NULL, "show help for the command"},
    {NULL, 0, NULL, NULL},
};

static char tau_cmd_path_buf[256];

int tau_usage_error(const tau_ctx_t *ctx, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tau_fail(ctx, TAU_EXIT_USAGE, "%s", msg);
    fprintf(stderr, "See 'tau %s%s--help'.\n", tau_cmd_path_buf, tau_cmd_path_buf[0] ? " " : "");
    return TAU_EXIT_USAGE;
}

static void cmd_print_opts(const tau_opt_t *opts, FILE *out, const tau_opt_t *shadow)
{
    for (const tau_opt_t *o = opts; o && o->name; o++) {
        if (!o->help)
            continue;
        int hidden = 0;
        for (const tau_opt_t *s = shadow; s && s->name; s++)
            if (strcmp(s->name, o->name) == 0 || (o->short_name && s->short_name == o->short_name))
                hidden = 1;
        if (hidden)
            continue;
        char left[64];
        if (o->short_name)
            snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
        else
            snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
        fprintf(out, "  %-28s %s\n", left, o->help);
    }
}

void tau_cmd_help(const tau_cmd_t *cmd, const char *path, FILE *out)
{
    fprintf(out, "%s\n\nUsage:\n  tau %s\n", cmd->summary ? cmd->summary : "",
            cmd->usage ? cmd->usage : path);
    if (cmd->help)
        fprintf(out, "\n%s\n", cmd->help);
    if (cmd->subs) {
        fprintf(out, "\nCommands:\n");
        for (const tau_cmd_t *s = cmd->subs; s->name; s++)
            if (s->summary)
                fprintf(out, "  %-18s %s\n", s->name, s->summary);
    }
    if (cmd->opts && cmd->opts->name) {
        fprintf(out, "\nOptions:\n");
        cmd_print_opts(cmd->opts, out, NULL);
    }
    fprintf(out, "\nGlobal options:\n");
    cmd_print_opts(tau_global_opts, out, cmd->opts);
    if (cmd->subs)
        fprintf(out, "\nUse 'tau %s%s<command> --help' for more about a command.\n", path,
                *path ? " " : "");
}

static int cmd_opts_take_value(const tau_opt_t *opts, const char *s)
{
    for (const tau_opt_t *o = opts; o && o->name; o++) {
        if (!o->arg)
            continue;
        if (o->short_name && s[0] == '-' && s[1] == o->short_name && s[2] == '\0')
            return 1;
        if (s[0] == '-' && s[1] == '-' && strcmp(s + 2, o->name) == 0)
            return 1;
    }
    return 0;
}

/* Does `s` name an option that takes a separate value, for this command,
 * one of its subcommands or globally? */
static int cmd_takes_value(const tau_cmd_t *cmd, const char *s)
{
    if (cmd_opts_take_value(tau_global_opts, s) || cmd_opts_take_value(cmd->opts, s))
        return 1;
    for (const tau_cmd_t *c = cmd->subs; c && c->name; c++)
        if (cmd_opts_take_value(c->opts, s))
            return 1;
    return 0;
}

int tau_cmd_main(const tau_cmd_t *root, int argc, char **argv,
                 int (*setup)(tau_ctx_t *ctx, const tau_args_t *a), tau_ctx_t *ctx)
{
    const tau_cmd_t *cmd = root;
    ctx->root = root;
    /* argv with the command words taken out: options may come first */
    char *rest[256];
    int nrest = 0;
    tg_buf_t path;
    tg_buf_init(&path, sizeof(tau_cmd_path_buf) - 1);
    int i = 1, words_done = 0;
    while (i < argc && nrest < (int)TG_ARRAY_LEN(rest) - 2) {
        const char *s = argv[i];
        if (!words_done && s[0] != '-' && cmd->subs) {
            const tau_cmd_t *sub = NULL;
            for (const tau_cmd_t *c = cmd->subs; c->name; c++)
                if (strcmp(c->name, s) == 0)
                    sub = c;
            if (sub) {
                cmd = sub;
                if ((path.len ? tg_buf_printf(&path, " %s", s) : tg_buf_puts(&path, s)) != TG_OK)
                    break;
                i++;
                continue;
            }
            words_done = 1; /* a positional argument or an unknown command */
        } else if (s[0] != '-') {
            words_done = 1;
        }
        if (strcmp(s, "--") == 0)
            words_done = 1;
        rest[nrest++] = argv[i++];
        if (s[0] == '-' && !words_done && cmd_takes_value(cmd, s) && i < argc)
            rest[nrest++] = argv[i++];
    }
    snprintf(tau_cmd_path_buf, sizeof(tau_cmd_path_buf), "%s", path.data ? path.data : "");
    tg_buf_clean(&path);
    if (i < argc) {
        ctx->cmd = cmd;
        return tau_usage_error(ctx, "too many arguments");
    }
    ctx->cmd = cmd;
    tau_args_t a;
    char err[256];
    const tau_opt_t *tables[3] = {cmd->opts ? cmd->opts : tau_global_opts, tau_global_opts, NULL};
    if (tau_args_parse(&a, nrest, rest, tables, err, sizeof(err)) != 0) {
        /* --help wins over any other problem */
        for (int k = 0; k < nrest; k++)
            if (strcmp(rest[k], "--help") == 0 || strcmp(rest[k], "-h") == 0) {
                tau_cmd_help(cmd, tau_cmd_path_buf, stdout);
                return TAU_EXIT_OK;
            }
        return tau_usage_error(ctx, "%s", err);
    }
    if (tau_flag(&a, "help")) {
        tau_cmd_help(cmd, tau_cmd_path_buf, stdout);
        return TAU_EXIT_OK;
    }
    if (!cmd->fn) {
        if (a.npos > 0)
            return tau_usage_error(ctx, "unknown command '%s'", a.pos[0]);
        tau_cmd_help(cmd, tau_cmd_path_buf, stderr);
        return TAU_EXIT_USAGE;
    }
    if (a.npos < cmd->min_pos)
        return tau_usage_error(ctx, "missing argument (usage: tau %s)", cmd->usage);
    if (cmd->max_pos >= 0 && a.npos > cmd->max_pos)
        return tau_usage_error(ctx, "unexpected argument '%s'", a.pos[cmd->max_pos]);
    int rc = setup(ctx, &a);
    if (rc != TAU_EXIT_OK)
        return rc;
    if (cmd->needs_gateway && !ctx->gateway)
        return tau_fail(ctx, TAU_EXIT_USAGE,
                        "no gateway: run `tau login --gateway URL` or set TAU_GATEWAY");
    return cmd->fn(ctx, &a);
}
