/* List commands: paging options and printing. */
#include "lists.h"

#include <stdio.h>
#include <stdlib.h>

#include "http.h"

int tau_list_limit(const tau_ctx_t *ctx, const tau_args_t *a, char lim[TAU_LIMIT_TEXT])
{
    char err[256];
    long limit;
    if (tau_arg_long(a, "limit", 1, 200, 50, &limit, err, sizeof(err)) != 0)
        return tau_usage_error(ctx, "%s", err);
    snprintf(lim, TAU_LIMIT_TEXT, "%ld", limit);
    return TAU_EXIT_OK;
}

int tau_list_pages(const tau_ctx_t *ctx, const tau_args_t *a, const char *path,
                   const tau_col_t *cols, int ncols, const char *more)
{
    json_t *items = NULL;
    char *next = NULL;
    int rc = tau_api_list(ctx, path, tau_flag(a, "all"), &items, &next);
    if (rc == TAU_EXIT_OK) {
        json_t *res = json_pack("{s:O, s:o}", "items", items, "next_cursor",
                                next ? json_string(next) : json_null());
        if (!tau_out_structured(ctx, res)) {
            tau_out_items(ctx, items, cols, ncols);
            if (next)
                tau_note(ctx, "%s", more);
        }
        json_decref(res);
    }
    free(next);
    json_decref(items);
    return rc;
}

int tau_list_get(const tau_ctx_t *ctx, const char *path, const tau_col_t *cols, int ncols)
{
    json_t *out = NULL;
    int rc = tau_api(ctx, "GET", path, NULL, &out);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out))
        tau_out_items(ctx, json_object_get(out, "items"), cols, ncols);
    json_decref(out);
    return rc;
}
