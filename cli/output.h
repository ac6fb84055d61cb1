/* Output: JSON and YAML (libyaml emitter) for scripts, tables and
 * "Key: value" views for people, colours and times.
 *
 * Text that came from the server is printed through tau_print_clean or the
 * table, which replace control characters, so a hostile value cannot drive
 * the terminal. */
#ifndef TAU_OUTPUT_H
#define TAU_OUTPUT_H

#include <jansson.h>
#include <stdio.h>
#include <time.h>

#include "tau.h"

/* The string at key `k` of object `o`, or NULL when absent or not a string
 * (borrowed from `o`). */
const char *tau_json_str(const json_t *o, const char *k);

/* Print `v` (borrowed) as indented JSON. */
void tau_out_json(FILE *f, const json_t *v);
/* Print `v` (borrowed) as a YAML document. Returns 0 or -1 (emitter error). */
int tau_out_yaml(FILE *f, const json_t *v);
/* Print `v` in ctx->fmt when it is json, yaml or jsonpath and return 1;
 * return 0 for the table and wide formats (the caller prints its own view). */
int tau_out_structured(const tau_ctx_t *ctx, const json_t *v);

/* Set ctx->fmt (and ctx->jsonpath) from an -o value: table, wide, json,
 * yaml or jsonpath=TEMPLATE. Returns 0, or -1 with a message in err. */
int tau_out_parse_format(tau_ctx_t *ctx, const char *value, char *err, size_t errlen);

/* A column of a list view: header, dotted key path into each item, kind. */
typedef enum {
    TAU_COL_TEXT = 0,
    TAU_COL_STATE, /* coloured by run state */
    TAU_COL_AGE,   /* an RFC 3339 time shown as "5m", "3h", "2d" */
    TAU_COL_TIME,  /* an RFC 3339 time shown as "2026-12-02 10:33:37Z" */
    TAU_COL_LONG,  /* free text, cut at 60 characters */
} tau_col_kind_e;

/* Or'ed into a column's kind: the column shows only with -o wide. */
#define TAU_COL_WIDE      0x100u
#define TAU_COL_KIND_MASK 0xffu

typedef struct tau_col_s {
    const char *header;
    const char *key;
    unsigned kind; /* a tau_col_kind_e, maybe | TAU_COL_WIDE */
} tau_col_t;

/* A table of `items` (a borrowed array of objects) on stdout; "No resources
 * found." on stderr when empty. Columns marked wide show with -o wide. */
void tau_out_items(const tau_ctx_t *ctx, const json_t *items, const tau_col_t *cols, int ncols);

/* The cell text of one value for a column into out. */
void tau_cell_text(const json_t *v, tau_col_kind_e kind, char *out, size_t outlen);

/* A value at a dotted path ("settings.gpu_class"); borrowed, or NULL. */
const json_t *tau_json_path(const json_t *obj, const char *path);

/* A view for a value whose shape the client does not know in advance: an
 * {items:[...]} list prints as a table of the items' scalar fields, anything
 * else as YAML. */
void tau_out_generic(const tau_ctx_t *ctx, const json_t *v);

/* "Key:  value" lines for people (keys padded to one width). */
void tau_out_kv(const tau_ctx_t *ctx, const char *key, const char *value);

/* Print s with control characters replaced by '?' (tabs and newlines kept
 * when keep_lines). */
void tau_print_clean(FILE *f, const char *s);
void tau_print_clean_lines(FILE *f, const char *s);

/* The ANSI colour of a run state, or NULL. */
const char *tau_state_color(const char *state);

/* Parse an RFC 3339 time ("2026-12-02T10:33:37.123Z", "+00:00" offsets).
 * Returns 0 or -1. */
int tau_time_parse(const char *s, time_t *out);
/* "5s", "3m", "2h", "4d" since the time, or "-" when it does not parse. */
void tau_time_age(const char *rfc3339, char *out, size_t outlen);

/* 1 when a run state is terminal (Succeeded, Failed, Cancelled). */
int tau_state_terminal(const char *state);

#endif
