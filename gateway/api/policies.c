/* Platform policy over REST, and the policy's lifecycle in the daemon. */
#include "api/policies.h"

#include <stdio.h>
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/paging.h"
#include "core/log.h"
#include "http/problem.h"
#include "store/policies.h"

/* ---- lifecycle --------------------------------------------------------------------------- */

/* The database rules and their generation, on a connection of our own. */
static tg_rc_e pol_fetch(tg_db_pool_t *pool, json_t **rows, long long *gen)
{
    tg_db_conn_t *conn = NULL;
    *rows = NULL;
    *gen = 0;
    if (!pool)
        return TG_OK; /* files only */
    tg_rc_e rc = tg_db_checkout(pool, &conn);
    if (rc == TG_OK)
        rc = tg_store_policies_load(conn, rows, gen);
    tg_db_release(pool, conn);
    return rc;
}

static json_t *pol_db_error(tg_rc_e rc)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "the policy rules in the database could not be read (%s)",
             tg_rc_title(rc));
    return json_pack("[{s:s, s:s, s:i, s:i, s:s}]", "file", "database", "path", "", "line", 0,
                     "column", 0, "message", msg);
}

tg_policy_registry_t *tg_api_policies_start(tg_db_pool_t *pool, const char *schema_file,
                                            const char *dir, char *err, size_t errlen)
{
    tg_policy_schema_t *schema = tg_policy_schema_load_file(schema_file, err, errlen);
    if (!schema)
        return NULL;
    tg_policy_registry_t *reg = tg_policy_registry_new(schema, dir);
    json_t *errors = NULL;
    if (tg_api_policies_reload(pool, reg, &errors) != TG_OK) {
        char text[4096];
        tg_policy_errors_format(errors, text, sizeof(text));
        snprintf(err, errlen, "the platform policy does not load:\n%s", text);
        json_decref(errors);
        tg_policy_registry_free(reg);
        return NULL;
    }
    return reg;
}

tg_rc_e tg_api_policies_reload(tg_db_pool_t *pool, tg_policy_registry_t *reg, json_t **errors)
{
    json_t *rows = NULL;
    long long gen = 0;
    *errors = NULL;
    tg_rc_e rc = pol_fetch(pool, &rows, &gen);
    if (rc != TG_OK) {
        tg_log_error("policy", "policy not reloaded: the database rules could not be read (%s)",
                     tg_rc_title(rc));
        tg_policy_registry_count_failure(reg);
        *errors = pol_db_error(rc);
        return TG_EUNAVAILABLE;
    }
    rc = tg_policy_registry_reload(reg, rows, gen, 1, errors);
    json_decref(rows);
    return rc;
}

void tg_api_policies_poll(tg_db_pool_t *pool, tg_policy_registry_t *reg)
{
    tg_db_conn_t *conn = NULL;
    long long gen = 0;
    json_t *rows = NULL, *errors = NULL;
    if (!pool || !reg || tg_db_checkout(pool, &conn) != TG_OK)
        return;
    if (tg_store_policies_generation(conn, &gen) == TG_OK &&
        gen != tg_policy_registry_generation(reg) &&
        tg_store_policies_load(conn, &rows, &gen) == TG_OK) {
        tg_log_info("policy", "database policy generation %lld: rebuilding", gen);
        if (tg_policy_registry_reload(reg, rows, gen, 0, &errors) != TG_OK)
            json_decref(errors);
    }
    json_decref(rows);
    tg_db_release(pool, conn);
}

/* ---- helpers ----------------------------------------------------------------------------- */

static tg_policy_registry_t *pol_registry_or_reply(tg_req_t *req)
{
    const tg_app_t *app = tg_req_app(req);
    tg_policy_registry_t *reg = app->policies;
    if (!reg)
        tg_problem(req, TG_EUNAVAILABLE, NULL, "the policy engine is not running");
    return reg;
}

static void pol_store_problem(tg_req_t *req, tg_rc_e rc, const char *id)
{
    switch (rc) {
    case TG_ENOTFOUND:
        tg_problem(req, rc, NULL, "policy rule %s does not exist", id ? id : "");
        break;
    case TG_ECONFLICT:
        tg_problem(req, rc, NULL, "policy rule %s already exists", id ? id : "");
        break;
    case TG_EUNAVAILABLE:
        tg_problem(req, rc, NULL, "the database is unavailable; retry shortly");
        tg_resp_header(req, "Retry-After", "1");
        break;
    default:
        tg_problem(req, rc, NULL, "the policy rule could not be stored");
    }
}

/* Load problems ({file, path, line, column, message}) as a 422; `errors` stolen. */
static void pol_load_problem(tg_req_t *req, json_t *errors, const char *what)
{
    size_t n = json_array_size(errors);
    tg_problem_typed(req, TG_EUNPROCESSABLE, "invalid-policy", errors,
                     "%s (%zu problem%s); the policy in force is unchanged", what, n,
                     n == 1 ? "" : "s");
}

/* Check a rule body (borrowed; normalised in place). Returns the rule to
 * store (new; without `enabled`) and *enabled, or answers 422 and NULL. */
static json_t *pol_rule_or_reply(tg_req_t *req, const tg_policy_registry_t *reg, json_t *rule,
                                 int *enabled)
{
    json_t *errors = json_array();
    if (!json_is_object(rule)) {
        json_array_append_new(errors,
                              tg_problem_error("", 0, 0, "must be one policy rule (an object)"));
    } else {
        if (json_object_get(rule, "version"))
            json_array_append_new(
                errors, tg_problem_error("version", 0, 0,
                                         "is kept by the gateway (each change is a new version); "
                                         "remove it"));
        json_t *found = tg_policy_rule_validate(tg_policy_registry_schema(reg), rule);
        size_t i;
        json_t *e;
        json_array_foreach(found, i, e) {
            json_array_append_new(
                errors, tg_problem_error(json_string_value(json_object_get(e, "path")), 0, 0,
                                         json_string_value(json_object_get(e, "message"))));
        }
        json_decref(found);
    }
    size_t n = json_array_size(errors);
    if (n) {
        tg_problem_typed(req, TG_EUNPROCESSABLE, "invalid-policy", errors,
                         "the policy rule is not valid (%zu problem%s)", n, n == 1 ? "" : "s");
        return NULL;
    }
    json_decref(errors);
    *enabled = !json_is_false(json_object_get(rule, "enabled"));
    json_t *stored = json_copy(rule);
    json_object_del(stored, "enabled");
    return stored;
}

/* The write is done in the open transaction: rebuild the policy from the
 * rows it leaves, commit, put the new policy in force and answer. On any
 * failure the transaction is rolled back and nothing changes. `row` stolen. */
static void pol_finish(tg_req_t *req, tg_db_conn_t *conn, tg_policy_registry_t *reg,
                       unsigned status, json_t *row)
{
    json_t *rows = NULL, *errors = NULL;
    long long gen = 0;
    tg_policy_snapshot_t *snap = NULL;
    tg_rc_e rc = tg_store_policies_load(conn, &rows, &gen);
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        pol_store_problem(req, rc, NULL);
        goto out;
    }
    rc = tg_policy_registry_build(reg, rows, gen, 0, &snap, &errors);
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        pol_load_problem(req, errors, "with this change the policy would not load");
        errors = NULL;
        goto out;
    }
    rc = tg_db_commit(conn);
    if (rc != TG_OK) {
        tg_policy_snapshot_release(snap);
        pol_store_problem(req, rc, NULL);
        goto out;
    }
    tg_policy_registry_install(reg, snap);
    if (row) {
        const char *id = json_string_value(json_object_get(row, "id"));
        const char *loc = tg_arena_printf(req->arena, "/v1/admin/policies/%s", id ? id : "");
        tg_resp_json(req, status, row); /* frees row */
        if (status == 201)
            tg_resp_header(req, "Location", loc);
        row = NULL;
    } else {
        tg_resp_bytes(req, status, NULL, "", 0);
    }
out:
    json_decref(row);
    json_decref(rows);
    json_decref(errors);
}

/* Begin a transaction holding the policy writers' lock; answers on failure. */
static tg_db_conn_t *pol_begin_or_reply(tg_req_t *req)
{
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return NULL;
    tg_rc_e rc = tg_db_begin(conn);
    if (rc == TG_OK && (rc = tg_store_policies_lock(conn)) != TG_OK)
        tg_db_rollback(conn);
    if (rc != TG_OK) {
        pol_store_problem(req, rc, NULL);
        return NULL;
    }
    return conn;
}

static const char *pol_who(tg_req_t *req)
{
    const tg_who_t *who = tg_who(req);
    return who ? who->subject : NULL;
}

/* ---- admin handlers ---------------------------------------------------------------------- */

void tg_api_policies_list(tg_req_t *req)
{
    tg_page_t page;
    if (tg_page_or_reply(req, &page) != 0)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *items = NULL;
    tg_rc_e rc = tg_store_policies_list(conn, page.after, page.limit + 1, &items);
    if (rc != TG_OK)
        pol_store_problem(req, rc, NULL);
    else
        tg_page_reply(req, &page, items, "id");
}

void tg_api_policy_create(tg_req_t *req)
{
    tg_policy_registry_t *reg = pol_registry_or_reply(req);
    if (!reg)
        return;
    json_t *body = tg_req_json_body_or_reply(req);
    if (!body)
        return;
    int enabled = 1;
    json_t *rule = pol_rule_or_reply(req, reg, body, &enabled);
    json_decref(body);
    if (!rule)
        return;
    const char *id = json_string_value(json_object_get(rule, "id"));
    tg_db_conn_t *conn = pol_begin_or_reply(req);
    json_t *row = NULL;
    if (conn) {
        tg_rc_e rc =
            tg_store_policy_create(conn, id, rule, enabled, pol_who(req), req->request_id, &row);
        if (rc != TG_OK) {
            tg_db_rollback(conn);
            pol_store_problem(req, rc, id);
        } else {
            pol_finish(req, conn, reg, 201, row);
        }
    }
    json_decref(rule);
}

void tg_api_policy_get(tg_req_t *req)
{
    const char *id = tg_req_param(req, "id");
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *row = NULL;
    tg_rc_e rc = tg_store_policy_get(conn, id, &row);
    if (rc != TG_OK)
        pol_store_problem(req, rc, id);
    else
        tg_resp_json(req, 200, row);
}

/* RFC 7396 merge of `patch` into the stored rule (both borrowed): a new rule. */
static json_t *pol_merge(const json_t *row, const char *id, const json_t *patch)
{
    json_t *merged = json_deep_copy(json_object_get(row, "rule"));
    if (!json_is_object(merged)) {
        json_decref(merged);
        merged = json_object();
    }
    json_object_set_new(merged, "id", json_string(id));
    json_object_set(merged, "enabled", json_object_get(row, "enabled"));
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)patch, k, v) {
        if (json_is_null(v))
            json_object_del(merged, k);
        else
            json_object_set(merged, k, v);
    }
    return merged;
}

void tg_api_policy_patch(tg_req_t *req)
{
    const char *id = tg_req_param(req, "id");
    tg_policy_registry_t *reg = pol_registry_or_reply(req);
    if (!reg)
        return;
    json_t *patch = tg_req_json_body_or_reply(req);
    if (!patch)
        return;
    const json_t *pid = json_object_get(patch, "id");
    if (!json_is_object(patch) ||
        (pid && (!json_is_string(pid) || strcmp(json_string_value(pid), id) != 0))) {
        json_t *errors = json_array();
        json_array_append_new(errors, tg_problem_error(json_is_object(patch) ? "id" : "", 0, 0,
                                                       json_is_object(patch)
                                                           ? "cannot be changed; delete and "
                                                             "recreate the rule"
                                                           : "must be an object of fields to "
                                                             "change"));
        tg_problem_typed(req, TG_EUNPROCESSABLE, "invalid-policy", errors,
                         "the policy change is not valid");
        json_decref(patch);
        return;
    }
    tg_db_conn_t *conn = pol_begin_or_reply(req);
    json_t *cur = NULL, *merged = NULL, *rule = NULL, *row = NULL;
    int enabled = 1;
    if (!conn)
        goto out;
    tg_rc_e rc = tg_store_policy_get(conn, id, &cur);
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        pol_store_problem(req, rc, id);
        goto out;
    }
    merged = pol_merge(cur, id, patch);
    rule = pol_rule_or_reply(req, reg, merged, &enabled);
    if (!rule) {
        tg_db_rollback(conn);
        goto out;
    }
    rc = tg_store_policy_update(conn, id, (long)json_integer_value(json_object_get(cur, "version")),
                                rule, enabled, pol_who(req), req->request_id, &row);
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        if (rc == TG_ECONFLICT)
            tg_problem(req, rc, NULL, "policy rule %s changed meanwhile; read it and retry", id);
        else
            pol_store_problem(req, rc, id);
        goto out;
    }
    pol_finish(req, conn, reg, 200, row);
out:
    json_decref(patch);
    json_decref(cur);
    json_decref(merged);
    json_decref(rule);
}

void tg_api_policy_delete(tg_req_t *req)
{
    const char *id = tg_req_param(req, "id");
    tg_policy_registry_t *reg = pol_registry_or_reply(req);
    if (!reg)
        return;
    tg_db_conn_t *conn = pol_begin_or_reply(req);
    if (!conn)
        return;
    tg_rc_e rc = tg_store_policy_delete(conn, id, pol_who(req), req->request_id);
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        pol_store_problem(req, rc, id);
        return;
    }
    pol_finish(req, conn, reg, 204, NULL);
}

static const char *pol_version_cursor(tg_req_t *req, const json_t *row, void *arg)
{
    (void)arg;
    return tg_arena_printf(req->arena, "%lld",
                           (long long)json_integer_value(json_object_get(row, "version")));
}

void tg_api_policy_versions(tg_req_t *req)
{
    const char *id = tg_req_param(req, "id");
    tg_page_t page;
    if (tg_page_or_reply(req, &page) != 0)
        return;
    long before;
    if (tg_page_after_id_or_reply(req, &page, &before) != 0)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *items = NULL;
    tg_rc_e rc = tg_store_policy_versions(conn, id, before, page.limit + 1, &items);
    if (rc == TG_OK && json_array_size(items) == 0 && !page.after) {
        json_decref(items);
        tg_problem(req, TG_ENOTFOUND, NULL, "policy rule %s has no history", id);
        return;
    }
    if (rc != TG_OK)
        pol_store_problem(req, rc, id);
    else
        tg_page_reply_fn(req, &page, items, pol_version_cursor, NULL);
}

void tg_api_policies_effective(tg_req_t *req)
{
    tg_policy_registry_t *reg = pol_registry_or_reply(req);
    if (!reg)
        return;
    tg_policy_snapshot_t *snap = tg_policy_registry_acquire(reg);
    tg_resp_json(req, 200, tg_policy_snapshot_effective(snap, NULL, 1));
    tg_policy_snapshot_release(snap);
}

void tg_api_policies_reload_now(tg_req_t *req)
{
    tg_policy_registry_t *reg = pol_registry_or_reply(req);
    if (!reg)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *rows = NULL, *errors = NULL;
    long long gen = 0;
    tg_rc_e rc = tg_store_policies_load(conn, &rows, &gen);
    if (rc != TG_OK) {
        tg_policy_registry_count_failure(reg);
        pol_store_problem(req, rc, NULL);
        return;
    }
    rc = tg_policy_registry_reload(reg, rows, gen, 1, &errors);
    json_decref(rows);
    if (rc != TG_OK) {
        pol_load_problem(req, errors, "the policy did not load");
        return;
    }
    tg_policy_snapshot_t *snap = tg_policy_registry_acquire(reg);
    json_t *eff = tg_policy_snapshot_effective(snap, NULL, 1);
    tg_policy_snapshot_release(snap);
    json_object_set_new(eff, "reloaded", json_true());
    tg_resp_json(req, 200, eff);
}

/* ---- researchers ------------------------------------------------------------------------- */

void tg_api_workspace_policy(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    if (tg_authz_workspace_or_reply(req, ws, TG_ROLE_VIEWER) == TG_ROLE_NONE)
        return;
    tg_policy_registry_t *reg = pol_registry_or_reply(req);
    if (!reg)
        return;
    tg_policy_snapshot_t *snap = tg_policy_registry_acquire(reg);
    tg_resp_json(req, 200, tg_policy_snapshot_effective(snap, ws, 0));
    tg_policy_snapshot_release(snap);
}
