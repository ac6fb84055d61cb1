/* `apply`: create or patch one object; `create`: each object of a list. */
#include "apply.h"

#include <stdio.h>

#include "http.h"
#include "output.h"
#include "problem.h"

int tau_apply_one(tau_ctx_t *ctx, const char *path, const char *kind, const char *name,
                  tau_apply_create_fn create, tau_apply_diff_fn diff, void *arg)
{
    /* does it exist? a 404 is an answer here, not an error */
    tau_http_req_t rq = {.method = "GET", .path = path};
    tau_http_resp_t resp;
    tau_http_resp_init(&resp);
    int rc = TAU_EXIT_OK;
    if (!path || tau_http_do(ctx, &rq, &resp) != 0) {
        rc = tau_fail(ctx, TAU_EXIT_NETWORK, "cannot reach the gateway: %s", resp.error);
    } else if (resp.status == 404 && !tau_http_no_route(&resp)) {
        rc = create(ctx, arg);
        if (rc == TAU_EXIT_OK)
            printf("%s %s created\n", kind, name);
    } else if (resp.status == 200) {
        json_t *cur = json_loadb(resp.body.data, resp.body.len, 0, NULL);
        json_t *patch = diff(cur, arg);
        if (json_object_size(patch) == 0) {
            printf("%s %s unchanged\n", kind, name);
        } else {
            rc = tau_api(ctx, "PATCH", path, patch, NULL);
            if (rc == TAU_EXIT_OK)
                printf("%s %s configured\n", kind, name);
        }
        json_decref(patch);
        json_decref(cur);
    } else {
        rc = tau_http_exit_code(resp.status);
        if (rc == TAU_EXIT_OK)
            rc = TAU_EXIT_NETWORK;
        tau_problem_print(ctx, &resp, NULL);
    }
    tau_http_resp_clean(&resp);
    return rc;
}

int tau_create_each(tau_ctx_t *ctx, const json_t *list, const char *kind, const char *key,
                    tau_create_fn create, void *arg)
{
    int rc = TAU_EXIT_OK;
    json_t *done = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o) {
        json_t *created = NULL;
        rc = create(ctx, o, &created, arg);
        if (rc != TAU_EXIT_OK) {
            json_decref(created);
            break;
        }
        json_t *shown = created ? created : json_incref(o);
        if (tau_fmt_human(ctx)) {
            const char *name = json_string_value(json_object_get(shown, key));
            printf("%s %s created\n", kind, name ? name : "?");
        }
        json_array_append_new(done, shown);
    }
    if (rc == TAU_EXIT_OK && !tau_fmt_human(ctx))
        tau_out_structured(ctx, json_array_size(done) == 1 ? json_array_get(done, 0) : done);
    json_decref(done);
    return rc;
}
