/* List commands: the --limit and --all of a paged list, and the one way a
 * list is printed: the server's answer as is for -o json|yaml, a table of
 * its items otherwise. */
#ifndef TAU_LISTS_H
#define TAU_LISTS_H

#include "cmd.h"
#include "output.h"

#define TAU_LIMIT_TEXT 24

/* --limit (1 to 200, default 50) as text for the `limit` query parameter.
 * Returns TAU_EXIT_OK, or the exit code of the usage error it printed. */
int tau_list_limit(const tau_ctx_t *ctx, const tau_args_t *a, char lim[TAU_LIMIT_TEXT]);

/* GET the paged list at `path` (every page with --all) and print it as
 * {items, next_cursor}; under the table, `more` notes that pages are left.
 * Returns the exit code. */
int tau_list_pages(const tau_ctx_t *ctx, const tau_args_t *a, const char *path,
                   const tau_col_t *cols, int ncols, const char *more);

/* GET an unpaged {items} answer at `path` and print it. Returns the exit code. */
int tau_list_get(const tau_ctx_t *ctx, const char *path, const tau_col_t *cols, int ncols);

#endif
