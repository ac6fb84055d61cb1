/* tau: shared context and exit codes of the command-line client.
 *
 * Exit codes (stable; scripts depend on them):
 *   0 ok, 1 the run failed (run --wait) or evidence did not verify,
 *   2 usage or local input error,
 *   3 the server rejected the request (4xx other than 401/403),
 *   4 authentication or authorisation (401/403), 5 network error or 5xx. */
#ifndef TAU_TAU_H
#define TAU_TAU_H

#include <stdio.h>

#include "core/mem.h"

enum {
    TAU_EXIT_OK = 0,
    TAU_EXIT_RUN_FAILED = 1,
    TAU_EXIT_USAGE = 2,
    TAU_EXIT_REJECTED = 3,
    TAU_EXIT_AUTH = 4,
    TAU_EXIT_NETWORK = 5,
};

typedef enum {
    TAU_FMT_TABLE = 0,
    TAU_FMT_WIDE, /* the table with more columns */
    TAU_FMT_JSON,
    TAU_FMT_YAML,
    TAU_FMT_JSONPATH, /* ctx->jsonpath applied to what -o json prints */
} tau_fmt_e;

typedef struct tau_jsonpath_s tau_jsonpath_t;

typedef struct tau_cmd_s tau_cmd_t;

/* One invocation: settings resolved from flags, environment and config. */
typedef struct tau_ctx_s {
    char *gateway;     /* base URL without a trailing slash, or NULL */
    char *token;       /* bearer token, or NULL; never printed */
    char *workspace;   /* default workspace (flag > TAU_WORKSPACE > config) */
    char *config_path; /* the config file in use */
    tau_fmt_e fmt;
    tau_jsonpath_t *jsonpath; /* with TAU_FMT_JSONPATH */
    int color;                /* ANSI colour on stdout */
    int color_err;            /* ANSI colour on stderr */
    int stderr_tty;           /* progress output allowed */
    int verbose;              /* -v: one line per request on stderr */
    int retries;              /* retries for idempotent requests (TAU_RETRIES) */
    const tau_cmd_t *cmd;     /* the command being run */
    const tau_cmd_t *root;    /* the whole tree (completion) */
} tau_ctx_t;

/* 1 for the formats that print tables and views for people (table, wide). */
static inline int tau_fmt_human(const tau_ctx_t *ctx)
{
    return ctx->fmt == TAU_FMT_TABLE || ctx->fmt == TAU_FMT_WIDE;
}

/* Print "tau: error: ..." on stderr (red on a terminal). Returns `code`. */
int tau_fail(const tau_ctx_t *ctx, int code, const char *fmt, ...) TG_PRINTF(3, 4);
/* Print "tau: warning: ..." on stderr. */
void tau_warn(const tau_ctx_t *ctx, const char *fmt, ...) TG_PRINTF(2, 3);
/* Print an informational line on stderr (never on stdout, so scripts can pipe). */
void tau_note(const tau_ctx_t *ctx, const char *fmt, ...) TG_PRINTF(2, 3);

#endif
