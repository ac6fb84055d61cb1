/* List commands: the --limit and --all of a paged list, and the one way a
 * list is printed: the server's answer as is for -o json|yaml, a table of
 * its items otherwise. */
#ifndef TAU_LISTS_H
#define TAU_LISTS_H

#include "cmd.h"
#include "http.h"
#include "output.h"

/* A command-line option whose value, when given, filters a list: `--arg V`
 * becomes `query=V` in the list's URL. Tables end with {NULL, NULL}. */
typedef struct {
    const char *query;
    const char *arg;
} tau_filter_t;

/* The one paged list of every command: checks --limit (1 to 200, default 50;
 * a usage error before any request), adds each filter given on the command
 * line and the limit to the query of `u`, GETs the list (every page with
 * --all) and prints it as {items, next_cursor}; under the table, `more` notes
 * that pages are left. `filters` may be NULL. Cleans `u`. Returns the exit
 * code. */
int tau_list_pages(const tau_ctx_t *ctx, const tau_args_t *a, tau_url_t *u,
                   const tau_filter_t *filters, const tau_col_t *cols, int ncols, const char *more);

/* GET an unpaged {items} answer at `path` and print it. Returns the exit code. */
int tau_list_get(const tau_ctx_t *ctx, const char *path, const tau_col_t *cols, int ncols);

#endif
