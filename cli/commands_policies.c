/* admin policies: the platform policy rules kept in the database.
 *   list [--all]              GET    /v1/admin/policies
 *   get ID                    GET    /v1/admin/policies/{id}
 *   create -f FILE            POST   /v1/admin/policies            (each rule in FILE)
 *   apply -f FILE             POST when missing, else PATCH what differs
 *   enable|disable ID         PATCH  /v1/admin/policies/{id} {"enabled"}
 *   delete ID                 DELETE /v1/admin/policies/{id}
 *   versions ID [--all]       GET    /v1/admin/policies/{id}/versions
 *   effective                 GET    /v1/admin/policies:effective
 *   reload                    POST   /v1/admin/policies:reload
 * A FILE holds one rule, a list of rules, {items: [...]} or a policy file's
 * {rules: [...]} (as the files in policies/), in YAML or JSON. */
#include <string.h>

#include "apply.h"
#include "commands.h"
#include "http.h"
#include "lists.h"
#include "output.h"
#include "problem.h"

static const tau_col_t pol_cols[] = {
    {"ID", "id", TAU_COL_TEXT},
    {"VERSION", "version", TAU_COL_TEXT},
    {"ENABLED", "enabled", TAU_COL_TEXT},
    {"ACTION", "rule.action", TAU_COL_TEXT},
    {"DESCRIPTION", "rule.description", TAU_COL_LONG},
    {"UPDATED-BY", "updated_by", TAU_COL_TEXT},
    {"AGE", "updated_at", TAU_COL_AGE},
    {"CREATED-BY", "created_by", TAU_COL_TEXT | TAU_COL_WIDE},
    {"CREATED", "created_at", TAU_COL_TIME | TAU_COL_WIDE},
};

static void pol_url(tau_url_t *u, const char *id, const char *suffix)
{
    tau_url_init(u);
    tau_url_lit(u, "/v1/admin/policies");
    if (id)
        tau_url_seg(u, id);
    tau_url_lit(u, suffix);
}

static int pol_list(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    pol_url(&u, NULL, "");
    return tau_list_pages(ctx, a, &u, NULL, pol_cols, (int)TG_ARRAY_LEN(pol_cols),
                          "(more rules: pass --all)");
}

static int pol_get(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    pol_url(&u, a->pos[0], "");
    json_t *out = NULL;
    int rc = tau_api(ctx, "GET", tau_url_str(&u), NULL, &out);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out)) {
        json_t *one = json_pack("[O]", out);
        tau_out_items(ctx, one, pol_cols, (int)TG_ARRAY_LEN(pol_cols));
        json_decref(one);
        printf("\nRule:\n");
        if (tau_out_yaml(stdout, json_object_get(out, "rule")) != 0)
            tau_warn(ctx, "the YAML emitter failed");
    }
    json_decref(out);
    return rc;
}

/* The rules of -f FILE; a policy file's {rules: [...]} is one too. */
static json_t *pol_load_rules(tau_ctx_t *ctx, const tau_args_t *a)
{
    json_t *list = tau_load_objects_arg(ctx, a);
    if (json_array_size(list) == 1 &&
        json_is_array(json_object_get(json_array_get(list, 0), "rules"))) {
        json_t *rules = json_incref(json_object_get(json_array_get(list, 0), "rules"));
        json_decref(list);
        list = rules;
    }
    size_t i;
    json_t *r;
    json_array_foreach(list, i, r) {
        if (!json_is_object(r) || !json_is_string(json_object_get(r, "id"))) {
            tau_fail(ctx, TAU_EXIT_USAGE, "rule %zu has no \"id\"", i + 1);
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

static int pol_create_one(tau_ctx_t *ctx, json_t *rule, json_t **created, void *arg)
{
    (void)arg;
    return tau_api(ctx, "POST", "/v1/admin/policies", rule, created);
}

static int pol_create(tau_ctx_t *ctx, const tau_args_t *a)
{
    json_t *rules = pol_load_rules(ctx, a);
    if (!rules)
        return TAU_EXIT_USAGE;
    int rc = tau_create_each(ctx, rules, "policy", "id", pol_create_one, NULL);
    json_decref(rules);
    return rc;
}

/* The merge patch from the stored rule (`cur`: {rule, enabled}) to `want`:
 * changed fields, and null for the fields `want` leaves out. New object. */
static json_t *pol_diff(const json_t *cur, const json_t *want)
{
    json_t *have = json_deep_copy(json_object_get(cur, "rule"));
    if (!json_is_object(have)) {
        json_decref(have);
        have = json_object();
    }
    json_object_set(have, "enabled", json_object_get(cur, "enabled"));
    json_t *target = json_deep_copy(want);
    if (!json_object_get(target, "enabled"))
        json_object_set_new(target, "enabled", json_true()); /* a rule's default */
    json_t *patch = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(target, k, v) {
        if (strcmp(k, "id") != 0 && !json_equal(v, json_object_get(have, k)))
            json_object_set(patch, k, v);
    }
    json_object_foreach(have, k, v) {
        if (strcmp(k, "id") != 0 && !json_object_get(target, k))
            json_object_set_new(patch, k, json_null());
    }
    json_decref(have);
    json_decref(target);
    return patch;
}

static int pol_apply_create(tau_ctx_t *ctx, void *rule)
{
    return tau_api(ctx, "POST", "/v1/admin/policies", rule, NULL);
}

static json_t *pol_apply_patch(const json_t *cur, void *rule)
{
    return pol_diff(cur, rule);
}

static int pol_apply(tau_ctx_t *ctx, const tau_args_t *a)
{
    json_t *rules = pol_load_rules(ctx, a);
    if (!rules)
        return TAU_EXIT_USAGE;
    int rc = TAU_EXIT_OK;
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r) {
        const char *id = json_string_value(json_object_get(r, "id"));
        tau_url_t u;
        pol_url(&u, id, "");
        rc =
            tau_apply_one(ctx, tau_url_str(&u), "policy", id, pol_apply_create, pol_apply_patch, r);
        tau_url_clean(&u);
        if (rc != TAU_EXIT_OK)
            break;
    }
    json_decref(rules);
    return rc;
}

static int pol_set_enabled(tau_ctx_t *ctx, const tau_args_t *a, int enabled)
{
    tau_url_t u;
    pol_url(&u, a->pos[0], "");
    json_t *body = json_pack("{s:b}", "enabled", enabled);
    json_t *out = NULL;
    int rc = tau_api(ctx, "PATCH", tau_url_str(&u), body, &out);
    tau_url_clean(&u);
    json_decref(body);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out ? out : json_null())) {
        fputs("policy ", stdout);
        tau_print_clean(stdout, a->pos[0]);
        printf(" %s (version %" JSON_INTEGER_FORMAT ")\n", enabled ? "enabled" : "disabled",
               json_integer_value(json_object_get(out, "version")));
    }
    json_decref(out);
    return rc;
}

static int pol_enable(tau_ctx_t *ctx, const tau_args_t *a)
{
    return pol_set_enabled(ctx, a, 1);
}

static int pol_disable(tau_ctx_t *ctx, const tau_args_t *a)
{
    return pol_set_enabled(ctx, a, 0);
}

static int pol_delete(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    pol_url(&u, a->pos[0], "");
    int rc = tau_api(ctx, "DELETE", tau_url_str(&u), NULL, NULL);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK) {
        fputs("policy ", stdout);
        tau_print_clean(stdout, a->pos[0]);
        fputs(" deleted\n", stdout);
    }
    return rc;
}

static int pol_versions(tau_ctx_t *ctx, const tau_args_t *a)
{
    static const tau_col_t cols[] = {
        {"VERSION", "version", TAU_COL_TEXT},
        {"CHANGE", "change", TAU_COL_TEXT},
        {"ENABLED", "enabled", TAU_COL_TEXT},
        {"BY", "changed_by", TAU_COL_TEXT},
        {"TIME", "changed_at", TAU_COL_TIME},
        {"REQUEST-ID", "request_id", TAU_COL_TEXT | TAU_COL_WIDE},
        {"RULE", "rule", TAU_COL_LONG | TAU_COL_WIDE},
    };
    tau_url_t u;
    pol_url(&u, a->pos[0], "/versions");
    return tau_list_pages(ctx, a, &u, NULL, cols, (int)TG_ARRAY_LEN(cols),
                          "(more versions: pass --all)");
}

/* The policy in force: where it came from, then its rules. */
static void pol_snapshot(const tau_ctx_t *ctx, const json_t *snap)
{
    char num[32];
    tau_out_kv(ctx, "Digest", json_string_value(json_object_get(snap, "digest")));
    tau_cell_text(json_object_get(snap, "generation"), TAU_COL_TEXT, num, sizeof(num));
    tau_out_kv(ctx, "Generation", num);
    char when[64];
    tau_cell_text(json_object_get(snap, "loaded_at"), TAU_COL_TIME, when, sizeof(when));
    tau_out_kv(ctx, "Loaded", when);
    static const tau_col_t cols[] = {
        {"ID", "id", TAU_COL_TEXT},
        {"ACTION", "action", TAU_COL_TEXT},
        {"ENABLED", "enabled", TAU_COL_TEXT},
        {"SOURCE", "source", TAU_COL_TEXT},
        {"DESCRIPTION", "description", TAU_COL_LONG},
        {"VERSION", "version", TAU_COL_TEXT | TAU_COL_WIDE},
        {"SCOPE", "scope", TAU_COL_LONG | TAU_COL_WIDE},
    };
    printf("\nRules:\n");
    tau_out_items(ctx, json_object_get(snap, "rules"), cols, (int)TG_ARRAY_LEN(cols));
}

static int pol_effective(tau_ctx_t *ctx, const tau_args_t *a)
{
    (void)a;
    json_t *out = NULL;
    int rc = tau_api(ctx, "GET", "/v1/admin/policies:effective", NULL, &out);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out))
        pol_snapshot(ctx, out);
    json_decref(out);
    return rc;
}

static int pol_reload(tau_ctx_t *ctx, const tau_args_t *a)
{
    (void)a;
    json_t *out = NULL;
    int rc = tau_api(ctx, "POST", "/v1/admin/policies:reload", NULL, &out);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out ? out : json_null()))
        printf("policy reloaded: generation %" JSON_INTEGER_FORMAT ", %zu rules, digest %s\n",
               json_integer_value(json_object_get(out, "generation")),
               json_array_size(json_object_get(out, "rules")),
               json_string_value(json_object_get(out, "digest")) ?: "-");
    json_decref(out);
    return rc;
}

/* ---- the tree ------------------------------------------------------------------------------ */

static const tau_opt_t pol_list_opts[] = {
    {"limit", 0, "N", "items per page, 1 to 200 (default 50)"},
    {"all", 'A', NULL, "follow next_cursor and list every page"},
    {NULL, 0, NULL, NULL},
};
static const tau_opt_t pol_file_opts[] = {
    {"filename", 'f', "FILE", "YAML or JSON: a rule, a list, or a policy file's {rules: [...]}"},
    {NULL, 0, NULL, NULL},
};

#define G 1 /* needs a gateway */

const tau_cmd_t tau_policies_verbs[] = {
    {"list", "List the rules kept in the database", "admin policies list [--all]", NULL,
     pol_list_opts, pol_list, NULL, 0, 0, NULL, G},
    {"get", "Show a rule", "admin policies get ID", NULL, tau_opts_none, pol_get, NULL, 1, 1, NULL,
     G},
    {"create", "Create rules from a file", "admin policies create -f FILE", NULL, pol_file_opts,
     pol_create, NULL, 0, 0, NULL, G},
    {"apply", "Create or update rules from a file", "admin policies apply -f FILE",
     "Creates each rule that does not exist and PATCHes those that do to match\n"
     "the file: changed fields are sent, fields the file leaves out are removed.\n"
     "Every change makes a new version (see `versions`).",
     pol_file_opts, pol_apply, NULL, 0, 0, NULL, G},
    {"enable", "Enable a rule", "admin policies enable ID", NULL, tau_opts_none, pol_enable, NULL,
     1, 1, NULL, G},
    {"disable", "Disable a rule (kept, not applied)", "admin policies disable ID", NULL,
     tau_opts_none, pol_disable, NULL, 1, 1, NULL, G},
    {"delete", "Delete a rule", "admin policies delete ID", NULL, tau_opts_none, pol_delete, NULL,
     1, 1, NULL, G},
    {"versions", "A rule's history, newest first", "admin policies versions ID [--all]", NULL,
     pol_list_opts, pol_versions, NULL, 1, 1, NULL, G},
    {"effective", "The policy in force (files and database, in evaluation order)",
     "admin policies effective", NULL, tau_opts_none, pol_effective, NULL, 0, 0, NULL, G},
    {"reload", "Read the policy files and the database again", "admin policies reload", NULL,
     tau_opts_none, pol_reload, NULL, 0, 0, NULL, G},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0},
};
