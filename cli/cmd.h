/* The command tree: every command and subcommand is a tau_cmd_t with its
 * options, so dispatch and --help come from one table. */
#ifndef TAU_CMD_H
#define TAU_CMD_H

#include "args.h"
#include "tau.h"

typedef int (*tau_cmd_fn)(tau_ctx_t *ctx, const tau_args_t *a);

struct tau_cmd_s {
    const char *name;      /* NULL ends a table */
    const char *summary;   /* one line for the parent's list */
    const char *usage;     /* "run [FILE] -w WS [--wait]" (after "tau ") */
    const char *help;      /* longer text, or NULL */
    const tau_opt_t *opts; /* NULL-terminated, or NULL */
    tau_cmd_fn fn;         /* NULL for a group */
    const tau_cmd_t *subs; /* NULL-terminated, or NULL */
    int min_pos, max_pos;  /* positional argument bounds */
    const void *data;      /* for shared handlers (admin resources) */
    int needs_gateway;     /* fail early (exit 2) without a gateway */
};

/* The options every command accepts. */
extern const tau_opt_t tau_global_opts[];

/* Find the command named by argv, parse its options, set up ctx (through
 * `setup`, called after parsing) and run it. Returns the exit code. */
int tau_cmd_main(const tau_cmd_t *root, int argc, char **argv,
                 int (*setup)(tau_ctx_t *ctx, const tau_args_t *a), tau_ctx_t *ctx);

/* Print the help of `cmd` (with its parent chain in `path`) to out. */
void tau_cmd_help(const tau_cmd_t *cmd, const char *path, FILE *out);

/* A usage error for the current command: message + "see tau X --help". */
int tau_usage_error(const tau_ctx_t *ctx, const char *fmt, ...) TG_PRINTF(2, 3);

#endif
