/* workspaces, quota/queues, profiles, token. */
#include <string.h>

#include "commands.h"
#include "http.h"
#include "lists.h"
#include "output.h"

int tau_cmd_workspaces(tau_ctx_t *ctx, const tau_args_t *a)
{
    (void)a;
    static const tau_col_t cols[] = {
        {"NAME", "name", TAU_COL_TEXT},
        {"NAMESPACE", "namespace", TAU_COL_TEXT},
        {"ROLE", "role", TAU_COL_TEXT},
    };
    return tau_list_get(ctx, "/v1/workspaces", cols, (int)TG_ARRAY_LEN(cols));
}

/* "/v1/workspaces/<ws><what>" for the command's workspace; TAU_EXIT_USAGE
 * (printed, `u` untouched) when it names none. */
static int ws_url(tau_ctx_t *ctx, const tau_args_t *a, const char *what, tau_url_t *u)
{
    const char *ws = tau_need_workspace(ctx, a);
    if (!ws)
        return TAU_EXIT_USAGE;
    tau_url_init(u);
    tau_url_lit(u, "/v1/workspaces");
    tau_url_seg(u, ws);
    tau_url_lit(u, what);
    return TAU_EXIT_OK;
}

/* The quota view: one row per queue and resource (summed over flavors). */
static void quota_print(const tau_ctx_t *ctx, const json_t *v)
{
    const json_t *queues = json_object_get(v, "queues");
    if (!json_is_array(queues)) {
        tau_out_generic(ctx, v);
        return;
    }
    const char *src = json_string_value(json_object_get(v, "source"));
    const char *err = json_string_value(json_object_get(v, "cluster_error"));
    json_t *rows = json_array();
    size_t i, j;
    json_t *q, *r;
    json_array_foreach(queues, i, q) {
        const json_t *res = json_object_get(q, "resources");
        if (json_array_size(res) == 0) {
            json_array_append_new(rows, json_pack("{s:O?, s:O?, s:b}", "queue",
                                                  json_object_get(q, "name"), "cluster_queue",
                                                  json_object_get(q, "cluster_queue"), "default",
                                                  json_is_true(json_object_get(q, "default"))));
            continue;
        }
        json_array_foreach(res, j, r) {
            json_t *row = json_deep_copy(r);
            json_object_set(row, "queue", json_object_get(q, "name"));
            json_object_set(row, "cluster_queue", json_object_get(q, "cluster_queue"));
            json_array_append_new(rows, row);
        }
    }
    static const tau_col_t cols[] = {
        {"QUEUE", "queue", TAU_COL_TEXT},
        {"CLUSTER-QUEUE", "cluster_queue", TAU_COL_TEXT},
        {"RESOURCE", "resource", TAU_COL_TEXT},
        {"NOMINAL", "nominal", TAU_COL_TEXT},
        {"IN-USE", "in_use", TAU_COL_TEXT},
        {"RESERVED", "reserved", TAU_COL_TEXT},
        {"AVAILABLE", "available", TAU_COL_TEXT},
        {"PENDING", "pending", TAU_COL_TEXT},
        {"BORROWABLE", "borrowable", TAU_COL_TEXT},
    };
    tau_out_items(ctx, rows, cols, (int)TG_ARRAY_LEN(cols));
    json_decref(rows);
    if (src)
        tau_note(ctx, "(numbers from the %s%s%s)", src, err ? "; cluster: " : "", err ? err : "");
}

int tau_cmd_quota(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    if (ws_url(ctx, a, "/quota", &u) != TAU_EXIT_OK)
        return TAU_EXIT_USAGE;
    json_t *out = NULL;
    int rc = tau_api(ctx, "GET", tau_url_str(&u), NULL, &out);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out))
        quota_print(ctx, out);
    json_decref(out);
    return rc;
}

int tau_cmd_profiles(tau_ctx_t *ctx, const tau_args_t *a)
{
    static const tau_col_t cols[] = {
        {"NAME", "name", TAU_COL_TEXT},
        {"ENGINE", "engine", TAU_COL_TEXT},
        {"GPU-CLASS", "settings.gpu_class", TAU_COL_TEXT},
        {"DESCRIPTION", "description", TAU_COL_LONG},
    };
    tau_url_t u;
    if (ws_url(ctx, a, "/profiles", &u) != TAU_EXIT_OK)
        return TAU_EXIT_USAGE;
    int rc = tau_list_get(ctx, tau_url_str(&u), cols, (int)TG_ARRAY_LEN(cols));
    tau_url_clean(&u);
    return rc;
}

/* ---- personal access tokens --------------------------------------------------- */

static const tau_opt_t token_create_opts[] = {
    {"name", 0, "NAME", "a label for the token (required)"},
    {"workspace", 'w', "WS", "the one workspace the token may act in"},
    {"role", 0, "ROLE", "admin, researcher or viewer (default researcher)"},
    {"expires-in-days", 0, "DAYS", "lifetime in days, 1 to 365 (default 90)"},
    {NULL, 0, NULL, NULL},
};

static int token_create(tau_ctx_t *ctx, const tau_args_t *a)
{
    const char *name = tau_arg(a, "name");
    if (!name && a->npos == 1)
        name = a->pos[0];
    if (!name)
        return tau_usage_error(ctx, "a token needs --name NAME");
    const char *ws = tau_need_workspace(ctx, a);
    if (!ws)
        return TAU_EXIT_USAGE;
    char err[256];
    long days = 0;
    if (tau_arg_long(a, "expires-in-days", 1, 365, 0, &days, err, sizeof(err)) != 0)
        return tau_usage_error(ctx, "%s", err);
    const char *role = tau_arg(a, "role");
    json_t *body = json_pack("{s:s, s:s, s:s}", "name", name, "workspace", ws, "role",
                             role ? role : "researcher");
    if (!body)
        return tau_usage_error(ctx, "the name, workspace and role must be UTF-8 text");
    if (days)
        json_object_set_new(body, "expires_in_days", json_integer(days));
    json_t *out = NULL;
    int rc = tau_api(ctx, "POST", "/v1/tokens", body, &out);
    json_decref(body);
    if (rc != TAU_EXIT_OK)
        return rc;
    if (!tau_out_structured(ctx, out)) {
        /* the secret alone on stdout, so it can be captured; the rest on stderr */
        const char *secret = json_string_value(json_object_get(out, "token"));
        printf("%s\n", secret ? secret : "");
        tau_note(ctx,
                 "Token %s (%s in %s, expires %s) created. Store it now: it is not shown "
                 "again.",
                 json_string_value(json_object_get(out, "id")) ?: "?",
                 json_string_value(json_object_get(out, "role")) ?: "?",
                 json_string_value(json_object_get(out, "workspace")) ?: "?",
                 json_string_value(json_object_get(out, "expires_at")) ?: "?");
    }
    json_decref(out);
    return rc;
}

static int token_list(tau_ctx_t *ctx, const tau_args_t *a)
{
    (void)a;
    static const tau_col_t cols[] = {
        {"ID", "id", TAU_COL_TEXT},
        {"NAME", "name", TAU_COL_TEXT},
        {"WORKSPACE", "workspace", TAU_COL_TEXT},
        {"ROLE", "role", TAU_COL_TEXT},
        {"CREATED", "created_at", TAU_COL_AGE},
        {"EXPIRES", "expires_at", TAU_COL_TIME},
        {"LAST-USED", "last_used_at", TAU_COL_AGE},
        {"REVOKED", "revoked_at", TAU_COL_TIME},
    };
    return tau_list_get(ctx, "/v1/tokens", cols, (int)TG_ARRAY_LEN(cols));
}

static int token_revoke(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    tau_url_init(&u);
    tau_url_lit(&u, "/v1/tokens");
    tau_url_seg(&u, a->pos[0]);
    int rc = tau_api(ctx, "DELETE", tau_url_str(&u), NULL, NULL);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK)
        printf("Token %s revoked.\n", a->pos[0]);
    return rc;
}

const tau_cmd_t tau_token_subs[] = {
    {"create", "Create a personal access token (printed once)",
     "token create --name NAME -w WS [--role ROLE] [--expires-in-days N]",
     "Prints the token alone on stdout (capture it: it is never shown again) and\n"
     "its details on stderr. A token acts in one workspace with at most the\n"
     "role you hold there.",
     token_create_opts, token_create, NULL, 0, 1, NULL, 1},
    {"list", "List your tokens", "token list", NULL, tau_opts_none, token_list, NULL, 0, 0, NULL,
     1},
    {"revoke", "Revoke a token", "token revoke ID", NULL, tau_opts_none, token_revoke, NULL, 1, 1,
     NULL, 1},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0},
};
