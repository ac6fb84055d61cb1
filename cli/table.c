/* Aligned text tables. */
#include "table.h"

#include <stdlib.h>
#include <string.h>

#include "output.h"

struct tau_table_s {
    int ncols;
    char **headers;
    char ***rows;
    size_t nrows, cap;
    int state_col;
};

tau_table_t *tau_table_new(int ncols, const char *const *headers)
{
    tau_table_t *t = tg_xcalloc(1, sizeof(*t));
    t->ncols = ncols;
    t->state_col = -1;
    t->headers = tg_xcalloc((size_t)ncols, sizeof(char *));
    for (int i = 0; i < ncols; i++)
        t->headers[i] = tg_xstrdup(headers[i]);
    return t;
}

void tau_table_free(tau_table_t *t)
{
    if (!t)
        return;
    for (size_t r = 0; r < t->nrows; r++) {
        for (int i = 0; i < t->ncols; i++)
            free(t->rows[r][i]);
        free(t->rows[r]);
    }
    for (int i = 0; i < t->ncols; i++)
        free(t->headers[i]);
    free(t->headers);
    free(t->rows);
    free(t);
}

static char *table_cell(const char *s)
{
    char *c = tg_xstrdup(s ? s : "");
    for (char *p = c; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return c;
}

void tau_table_add(tau_table_t *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->rows = tg_xrealloc(t->rows, t->cap * sizeof(char **));
    }
    char **row = tg_xcalloc((size_t)t->ncols, sizeof(char *));
    for (int i = 0; i < t->ncols; i++)
        row[i] = table_cell(cells[i]);
    t->rows[t->nrows++] = row;
}

void tau_table_state_col(tau_table_t *t, int col)
{
    t->state_col = col;
}

size_t tau_table_rows(const tau_table_t *t)
{
    return t->nrows;
}

/* Display width: count UTF-8 lead bytes only. */
static size_t table_width(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0) != 0x80)
            w++;
    return w;
}

static void table_line(const tau_ctx_t *ctx, const tau_table_t *t, char *const *cells,
                       const size_t *widths, int header, FILE *out)
{
    for (int i = 0; i < t->ncols; i++) {
        const char *color = NULL;
        if (ctx->color && !header && i == t->state_col)
            color = tau_state_color(cells[i]);
        if (ctx->color && header)
            color = "\033[1m";
        if (color)
            fputs(color, out);
        fputs(cells[i], out);
        if (color)
            fputs("\033[0m", out);
        if (i + 1 < t->ncols)
            for (size_t w = table_width(cells[i]); w < widths[i] + 3; w++)
                fputc(' ', out);
    }
    fputc('\n', out);
}

void tau_table_print(const tau_ctx_t *ctx, const tau_table_t *t, FILE *out)
{
    size_t *widths = tg_xcalloc((size_t)t->ncols, sizeof(size_t));
    for (int i = 0; i < t->ncols; i++) {
        widths[i] = table_width(t->headers[i]);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t w = table_width(t->rows[r][i]);
            if (w > widths[i])
                widths[i] = w;
        }
    }
    table_line(ctx, t, t->headers, widths, 1, out);
    for (size_t r = 0; r < t->nrows; r++)
        table_line(ctx, t, t->rows[r], widths, 0, out);
    free(widths);
}
