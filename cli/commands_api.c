/* tau api [METHOD] PATH: any request to the gateway with the configured
 * credentials, in the manner of `gh api`.
 *
 *   tau api /v1/admin/fleet
 *   tau api POST /v1/admin/policies:reload
 *   tau api PATCH /v1/admin/workspaces/ray -F ttl_seconds=3600
 *   tau api /v1/admin/nodes -f health=Unhealthy --paginate
 *   tau api POST /v1/admin/profiles --input profile.json
 *
 * Fields (-f key=value as a string, -F key=value typed: true, false, null,
 * numbers, @FILE for a file's text) become the query of a GET or DELETE and
 * a JSON object body otherwise; --input sends a file ("-": stdin) as the
 * body. Without METHOD the request is a GET, or a POST when there is a body.
 * A POST carries a fresh Idempotency-Key (unless -H gives one) so retries
 * are safe. The answer is printed as it came (JSON pretty-printed, or in the
 * -o format), also for an error, whose status sets the exit code. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands.h"
#include "core/ids.h"
#include "http.h"
#include "output.h"
#include "yamldoc.h"

#define API_MAX_HEADERS 16
#define API_INPUT_MAX   (16u * 1024 * 1024)

const tau_opt_t tau_opts_api[] = {
    {"method", 'X', "METHOD", "the HTTP method (default GET, or POST with a body)"},
    {"raw-field", 'f', "KEY=VALUE", "a string field (repeatable)"},
    {"field", 'F', "KEY=VALUE", "a typed field: true, false, null, a number, @FILE (repeatable)"},
    {"input", 0, "FILE", "the request body from a file (- for stdin)"},
    {"header", 'H', "NAME:VALUE", "an extra request header (repeatable)"},
    {"paginate", 0, NULL, "follow next_cursor and print every page's items as one list"},
    {"include", 'i', NULL, "print the status line and headers before the body"},
    {NULL, 0, NULL, NULL},
};

static int api_method_ok(const char *m)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"};
    for (size_t i = 0; i < TG_ARRAY_LEN(methods); i++)
        if (strcmp(m, methods[i]) == 0)
            return 1;
    return 0;
}

/* A -F value: JSON literals and numbers typed, @FILE read, else a string. */
static json_t *api_typed(const char *v, char *err, size_t errlen)
{
    if (v[0] == '@') {
        char *text = NULL;
        size_t len = 0;
        if (tau_read_file(v + 1, API_INPUT_MAX, &text, &len, err, errlen) != 0)
            return NULL;
        json_t *s = json_stringn(text, len);
        free(text);
        if (!s)
            snprintf(err, errlen, "%s is not UTF-8 text", v + 1);
        return s;
    }
    if (strcmp(v, "true") == 0)
        return json_true();
    if (strcmp(v, "false") == 0)
        return json_false();
    if (strcmp(v, "null") == 0)
        return json_null();
    char *end = NULL;
    long long i = strtoll(v, &end, 10);
    if (*v && !*end)
        return json_integer(i);
    double d = strtod(v, &end);
    if (*v && !*end && !isspace((unsigned char)*v))
        return json_real(d);
    json_t *s = json_string(v);
    if (!s)
        snprintf(err, errlen, "a field's value is not UTF-8 text");
    return s;
}

/* Every -f and -F as one object (new), or NULL with err. */
static json_t *api_fields(const tau_args_t *a, char *err, size_t errlen)
{
    json_t *o = json_object();
    static const char *const kinds[] = {"raw-field", "field"};
    for (int k = 0; k < 2; k++) {
        const char *kv;
        for (int i = 0; (kv = tau_arg_nth(a, kinds[k], i)); i++) {
            const char *eq = strchr(kv, '=');
            if (!eq || eq == kv) {
                snprintf(err, errlen, "--%s takes KEY=VALUE (got '%s')", kinds[k], kv);
                json_decref(o);
                return NULL;
            }
            char *key = tg_xstrndup(kv, (size_t)(eq - kv));
            json_t *v = k == 0 ? json_string(eq + 1) : api_typed(eq + 1, err, errlen);
            if (!v && k == 0)
                snprintf(err, errlen, "a field's value is not UTF-8 text");
            if (!v || json_object_set_new(o, key, v) != 0) {
                free(key);
                json_decref(o);
                return NULL;
            }
            free(key);
        }
    }
    return o;
}

/* The fields as a query string appended to u (a GET or DELETE). */
static int api_query(tau_url_t *u, const json_t *fields)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)fields, k, v)
    {
        char *text = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        tau_url_query(u, k, text ? text : json_string_value(v));
        free(text);
    }
    return tau_url_str(u) ? 0 : -1;
}

static int api_print(const tau_ctx_t *ctx, const tau_http_resp_t *resp, int include)
{
    if (include) {
        fwrite(resp->headers.data ? resp->headers.data : "", 1, resp->headers.len, stdout);
        if (!resp->headers.len)
            fputc('\n', stdout);
    }
    json_t *v = NULL;
    if (resp->body.len && strstr(resp->content_type, "json"))
        v = json_loadb(resp->body.data, resp->body.len, JSON_DECODE_ANY, NULL);
    if (v) {
        if (!tau_out_structured(ctx, v))
            tau_out_json(stdout, v);
        json_decref(v);
    } else if (resp->body.len) {
        fwrite(resp->body.data, 1, resp->body.len, stdout); /* text, as it came */
    }
    return 0;
}

/* --paginate: every page of a GET list, printed as one {items, next_cursor}. */
static int api_paginate(tau_ctx_t *ctx, const char *path)
{
    json_t *items = NULL;
    int rc = tau_api_list(ctx, path, 1, &items, NULL);
    if (rc == TAU_EXIT_OK) {
        json_t *all = json_pack("{s:O, s:n}", "items", items, "next_cursor");
        if (!tau_out_structured(ctx, all))
            tau_out_json(stdout, all);
        json_decref(all);
    }
    json_decref(items);
    return rc;
}

int tau_cmd_api(tau_ctx_t *ctx, const tau_args_t *a)
{
    const char *method = tau_arg(a, "method");
    const char *path = a->pos[a->npos - 1];
    if (a->npos == 2) {
        if (method)
            return tau_usage_error(ctx, "give the method once: METHOD PATH or -X METHOD PATH");
        method = a->pos[0];
    }
    if (method && !api_method_ok(method))
        return tau_usage_error(ctx, "unknown method '%s' (GET, POST, PUT, PATCH, DELETE, HEAD)",
                               method);
    if (path[0] != '/')
        return tau_usage_error(ctx, "the path starts with / (as in /v1/admin/fleet)");
    for (const char *p = path; *p; p++)
        if ((unsigned char)*p <= 0x20 || *p == 0x7f)
            return tau_usage_error(ctx, "the path holds a space or a control character: "
                                        "percent-encode it");
    char err[512];
    json_t *fields = api_fields(a, err, sizeof(err));
    if (!fields)
        return tau_usage_error(ctx, "%s", err);
    const char *input = tau_arg(a, "input");
    int rc = TAU_EXIT_OK;
    char *body = NULL;
    size_t body_len = 0;
    const char *headers[API_MAX_HEADERS + 1] = {NULL};
    int nheaders = 0, has_key = 0, has_ctype = 0;
    tau_url_t u;
    tau_url_init(&u);
    tau_url_lit(&u, path);
    tau_http_resp_t resp;
    tau_http_resp_init(&resp);
    if (input && json_object_size(fields)) {
        rc = tau_usage_error(ctx, "send fields or --input, not both");
        goto out;
    }
    if (!method)
        method = input || json_object_size(fields) ? "POST" : "GET";
    for (const char *h; (h = tau_arg_nth(a, "header", nheaders));) {
        const char *colon = strchr(h, ':');
        if (!colon || colon == h || strpbrk(h, "\r\n")) {
            rc = tau_usage_error(ctx, "-H takes 'Name: value' (got '%s')", h);
            goto out;
        }
        if (nheaders == API_MAX_HEADERS) {
            rc = tau_usage_error(ctx, "at most %d headers", API_MAX_HEADERS);
            goto out;
        }
        has_key |= strncasecmp(h, "Idempotency-Key:", 16) == 0;
        has_ctype |= strncasecmp(h, "Content-Type:", 13) == 0;
        headers[nheaders++] = h;
    }
    int query_fields =
        strcmp(method, "GET") == 0 || strcmp(method, "DELETE") == 0 || strcmp(method, "HEAD") == 0;
    if (query_fields && json_object_size(fields) && api_query(&u, fields) != 0) {
        rc = tau_usage_error(ctx, "the fields make the URL too long");
        goto out;
    }
    if (input) {
        if (tau_read_file(input, API_INPUT_MAX, &body, &body_len, err, sizeof(err)) != 0) {
            rc = tau_fail(ctx, TAU_EXIT_USAGE, "%s", err);
            goto out;
        }
    } else if (!query_fields && json_object_size(fields)) {
        body = json_dumps(fields, JSON_COMPACT);
        body_len = body ? strlen(body) : 0;
    }
    if (tau_flag(a, "paginate")) {
        if (strcmp(method, "GET") != 0 || tau_flag(a, "include") || nheaders) {
            rc = tau_usage_error(ctx, "--paginate is for a plain GET of a list");
            goto out;
        }
        rc = api_paginate(ctx, tau_url_str(&u));
        goto out;
    }
    char key[TG_UUID_LEN + 1];
    tg_uuid_v4(key);
    tau_http_req_t rq = {
        .method = method,
        .path = tau_url_str(&u),
        .body = body,
        .body_len = body_len,
        .content_type = body && !has_ctype ? "application/json" : NULL,
        .accept = "application/json, */*;q=0.5",
        .idempotency_key = strcmp(method, "POST") == 0 && !has_key ? key : NULL,
        .headers = headers,
        .keep_headers = tau_flag(a, "include"),
    };
    if (tau_http_do(ctx, &rq, &resp) != 0) {
        rc = tau_fail(ctx, TAU_EXIT_NETWORK, "cannot reach the gateway at %s: %s", ctx->gateway,
                      resp.error);
        goto out;
    }
    api_print(ctx, &resp, rq.keep_headers);
    rc = tau_http_exit_code(resp.status);
    if (rc != TAU_EXIT_OK)
        tau_fail(ctx, 0, "%s %s: HTTP %ld", method, path, resp.status);
out:
    tau_http_resp_clean(&resp);
    tau_url_clean(&u);
    free(body);
    json_decref(fields);
    return rc;
}
