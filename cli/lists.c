/* List commands: paging options and printing. */
#include "lists.h"

#include <stdio.h>
#include <stdlib.h>

#include "http.h"

int tau_list_pages(const tau_ctx_t *ctx, const tau_args_t *a, tau_url_t *u,
                   const tau_filter_t *filters, const tau_col_t *cols, int ncols, const char *more)
{
    json_t *items = NULL;
    char *next = NULL;
    char err[256];
    long limit;
    int rc;
    if (tau_arg_long(a, "limit", 1, 200, 50, &limit, err, sizeof(err)) != 0) {
        rc = tau_usage_error(ctx, "%s", err);
        goto out;
    }
    for (const tau_filter_t *f = filters; f && f->query; f++)
        tau_url_query(u, f->query, tau_arg(a, f->arg));
    char lim[24];
    snprintf(lim, sizeof(lim), "%ld", limit);
    tau_url_query(u, "limit", lim);
    rc = tau_api_list(ctx, tau_url_str(u), tau_flag(a, "all"), &items, &next);
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
out:
    free(next);
    json_decref(items);
    tau_url_clean(u);
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
