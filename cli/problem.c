/* Printing problem+json answers. */
#include "problem.h"

#include <string.h>

#include "output.h"

void tau_problem_entry(FILE *out, const json_t *e, const char *file, const char *severity)
{
    const char *path = json_string_value(json_object_get(e, "path"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    json_int_t line = json_integer_value(json_object_get(e, "line"));
    json_int_t col = json_integer_value(json_object_get(e, "column"));
    if (!msg)
        msg = json_string_value(json_object_get(e, "detail"));
    if (!msg)
        msg = "(no message)";
    if (file && line > 0)
        fprintf(out, "%s:%lld:%lld: ", file, (long long)line, (long long)(col > 0 ? col : 1));
    else if (file)
        fprintf(out, "%s: ", file);
    else
        fputs("  ", out);
    if (severity)
        fprintf(out, "%s: ", severity);
    /* the server's messages usually start with the path already */
    if (path && *path && strncmp(msg, path, strlen(path)) != 0)
        fprintf(out, "%s: ", path);
    tau_print_clean(out, msg);
    fputc('\n', out);
}

static void problem_hint(const tau_ctx_t *ctx, const tau_http_resp_t *resp)
{
    long status = resp->status;
    if (tau_http_no_route(resp))
        tau_note(ctx, "hint: the gateway at %s does not serve this endpoint (an older version?)",
                 ctx->gateway ? ctx->gateway : "?");
    if (status == 401)
        tau_note(ctx, "hint: log in with `tau login --gateway URL --token TOKEN` or set TAU_TOKEN");
}

void tau_problem_print(const tau_ctx_t *ctx, const tau_http_resp_t *resp, const char *file)
{
    json_t *p = NULL;
    if (resp->body.len)
        p = json_loadb(resp->body.data, resp->body.len, 0, NULL);
    const char *detail = json_string_value(json_object_get(p, "detail"));
    const char *title = json_string_value(json_object_get(p, "title"));
    if (!json_is_object(p) || (!detail && !title)) {
        /* not a problem document: show the start of whatever came back */
        char first[200] = "";
        if (resp->body.len) {
            size_t n = strcspn(resp->body.data, "\r\n");
            if (n >= sizeof(first))
                n = sizeof(first) - 1;
            memcpy(first, resp->body.data, n);
            first[n] = '\0';
        }
        tau_fail(ctx, 0, "the gateway answered HTTP %ld%s%s", resp->status, *first ? ": " : "",
                 first);
        json_decref(p);
        problem_hint(ctx, resp);
        return;
    }
    tau_fail(ctx, 0, "%s (HTTP %ld%s%s)", detail ? detail : title, resp->status, title ? " " : "",
             title ? title : "");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(p, "errors"), i, e)
        tau_problem_entry(stderr, e, file, NULL);
    if (ctx->verbose || resp->status >= 500) {
        const char *inst = json_string_value(json_object_get(p, "instance"));
        if (inst || resp->request_id[0])
            tau_note(ctx, "request id: %s", inst ? inst : resp->request_id);
    }
    problem_hint(ctx, resp);
    json_decref(p);
}
