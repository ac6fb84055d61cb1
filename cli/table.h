/* Aligned text tables in the style of kubectl: upper-case headers, columns
 * separated by three spaces, no trailing blanks. One column may be coloured
 * by run state (only when ctx->color is set). */
#ifndef TAU_TABLE_H
#define TAU_TABLE_H

#include <stdio.h>

#include "tau.h"

typedef struct tau_table_s tau_table_t;

/* A table with `ncols` columns named by `headers` (copied). */
tau_table_t *tau_table_new(int ncols, const char *const *headers);
void tau_table_free(tau_table_t *t);
/* Append a row; cells (ncols of them, NULL prints "") are copied; control
 * characters are replaced so a cell cannot move the cursor. */
void tau_table_add(tau_table_t *t, const char *const *cells);
/* Colour column `col` by its text as a run state. */
void tau_table_state_col(tau_table_t *t, int col);
size_t tau_table_rows(const tau_table_t *t);
void tau_table_print(const tau_ctx_t *ctx, const tau_table_t *t, FILE *out);

#endif
