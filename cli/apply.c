/* `apply`: create or patch one object. */
#include "apply.h"

#include <stdio.h>

#include "http.h"
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
