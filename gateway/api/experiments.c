/* GET /v1/workspaces/{ws}/experiments and /v1/workspaces/{ws}/runs:compare. */
#include "api/experiments.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/paging.h"
#include "core/run_state.h"
#include "core/buf.h"
#include "core/ids.h"
#include "http/problem.h"
#include "store/metrics_store.h"
#include "store/runs_query.h"

#define COMPARE_MIN   2
#define COMPARE_MAX   10
#define EXP_FIELD_MAX 253
#define CONFIG_DEPTH  32

static void exp_bad(tg_req_t *req, const char *param, const char *msg)
{
    json_t *errors = json_array();
    json_array_append_new(errors, tg_problem_error(param, 0, 0, msg));
    tg_problem(req, TG_EINVAL, errors, "invalid query parameter %s", param);
}

/* ---- experiments ---- */

static int exp_same(const json_t *a, const json_t *b)
{
    return json_equal((json_t *)a, (json_t *)b);
}

/* Experiments from the rows of tg_store_experiments (borrowed), in order. */
static json_t *exp_build(const json_t *rows)
{
    json_t *items = json_array();
    json_t *exp = NULL, *grp = NULL;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        json_t *p = json_object_get(r, "project"), *n = json_object_get(r, "name");
        json_t *g = json_object_get(r, "group");
        const char *state = json_string_value(json_object_get(r, "state"));
        json_int_t runs = json_integer_value(json_object_get(r, "runs"));
        json_t *first = json_object_get(r, "first_at"),
               *last = json_object_get(r, "last_activity_at");
        if (!exp || !exp_same(json_object_get(exp, "project"), p) ||
            !exp_same(json_object_get(exp, "name"), n)) {
            json_t *by_state = json_object();
            for (const char *const *s = tg_run_states; *s; s++)
                json_object_set_new(by_state, *s, json_integer(0));
            exp = json_pack("{s:O, s:O, s:I, s:o, s:O, s:O, s:[]}", "project", p, "name", n, "runs",
                            (json_int_t)0, "by_state", by_state, "first_at", first,
                            "last_activity_at", last, "groups");
            json_array_append_new(items, exp);
            grp = NULL;
        }
        if (!grp || !exp_same(json_object_get(grp, "name"), g)) {
            grp = json_pack("{s:O, s:I, s:O, s:O}", "name", g, "runs", (json_int_t)0, "first_at",
                            first, "last_activity_at", last);
            json_array_append_new(json_object_get(exp, "groups"), grp);
        }
        json_t *targets[] = {exp, grp};
        for (size_t t = 0; t < 2; t++) {
            json_t *o = targets[t];
            json_object_set_new(
                o, "runs", json_integer(json_integer_value(json_object_get(o, "runs")) + runs));
            /* RFC 3339 times in one zone and format compare as text */
            const char *f = json_string_value(json_object_get(o, "first_at"));
            const char *l = json_string_value(json_object_get(o, "last_activity_at"));
            if (json_string_value(first) && f && strcmp(json_string_value(first), f) < 0)
                json_object_set(o, "first_at", first);
            if (json_string_value(last) && l && strcmp(json_string_value(last), l) > 0)
                json_object_set(o, "last_activity_at", last);
        }
        json_t *bs = json_object_get(exp, "by_state");
        json_t *c = state ? json_object_get(bs, state) : NULL;
        if (c)
            json_integer_set(c, json_integer_value(c) + runs);
    }
    return items;
}

/* The cursor is the last experiment shown, as JSON [project|null, name]. */
static const char *exp_cursor(tg_req_t *req, const json_t *exp, void *arg)
{
    (void)arg;
    json_t *k = json_pack("[O, O]", json_object_get(exp, "project"), json_object_get(exp, "name"));
    char *text = json_dumps(k, JSON_COMPACT);
    json_decref(k);
    const char *out = text ? tg_arena_strdup(req->arena, text) : NULL;
    free(text);
    return out;
}

void tg_api_experiments_list(tg_req_t *req)
{
    tg_page_t page;
    if (tg_page_or_reply(req, &page) != 0)
        return;
    const char *ws = tg_req_param(req, "ws");
    const char *project = tg_req_query(req, "project");
    if (project && (!*project || strlen(project) > EXP_FIELD_MAX)) {
        exp_bad(req, "project", "must be 1 to 253 characters");
        return;
    }
    const char *cur_project = NULL, *cur_name = NULL;
    json_t *cur = page.after ? json_loads(page.after, 0, NULL) : NULL;
    if (page.after) {
        json_t *p = json_array_get(cur, 0), *n = json_array_get(cur, 1);
        if (json_array_size(cur) != 2 || !json_is_string(n) ||
            !(json_is_string(p) || json_is_null(p))) {
            json_decref(cur);
            exp_bad(req, "cursor", "is not a cursor this server issued");
            return;
        }
        cur_project =
            json_string_value(p) ? tg_arena_strdup(req->arena, json_string_value(p)) : NULL;
        cur_name = tg_arena_strdup(req->arena, json_string_value(n));
        json_decref(cur);
    }
    tg_db_conn_t *conn = tg_authz_workspace_db_or_reply(req, ws, TG_ROLE_VIEWER);
    if (!conn)
        return;
    json_t *rows = NULL;
    tg_rc_e rc =
        tg_store_experiments(conn, ws, project, cur_project, cur_name, page.limit + 1, &rows);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the experiments could not be listed");
        return;
    }
    json_t *items = exp_build(rows);
    json_decref(rows);
    tg_page_reply_fn(req, &page, items, exp_cursor, NULL);
}

/* ---- config differences ---- */

static int diff_plain_key(const char *k)
{
    if (!*k)
        return 0;
    for (const char *p = k; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
            return 0;
    return 1;
}

/* Every leaf of v under `path` into leaves {path: value} (borrowed values). */
static void diff_flatten(const json_t *v, tg_buf_t *path, json_t *leaves, int depth)
{
    size_t mark = path->len;
    tg_rc_e rc = TG_OK;
    if (json_is_object(v) && json_object_size(v) && depth < CONFIG_DEPTH) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            if (diff_plain_key(k)) {
                rc = tg_buf_printf(path, "%s%s", mark ? "." : "", k);
            } else {
                json_t *ks = json_string(k);
                char *q = json_dumps(ks, JSON_ENCODE_ANY);
                rc = tg_buf_printf(path, "[%s]", q ? q : "\"\"");
                free(q);
                json_decref(ks);
            }
            if (rc == TG_OK)
                diff_flatten(x, path, leaves, depth + 1);
            path->len = mark;
            if (path->data)
                path->data[mark] = '\0';
        }
        return;
    }
    if (json_is_array(v) && json_array_size(v) && depth < CONFIG_DEPTH) {
        size_t i;
        json_t *x;
        json_array_foreach((json_t *)v, i, x) {
            if (tg_buf_printf(path, "[%zu]", i) == TG_OK)
                diff_flatten(x, path, leaves, depth + 1);
            path->len = mark;
            if (path->data)
                path->data[mark] = '\0';
        }
        return;
    }
    json_object_set_nocheck(leaves, path->data ? path->data : "", (json_t *)v);
}

static int diff_path_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *tg_api_config_differences(json_t *const *configs, size_t n)
{
    json_t **leaves = tg_xcalloc(n + 1, sizeof(*leaves));
    json_t *paths = json_object();
    tg_buf_t path;
    tg_buf_init(&path, 64 * 1024);
    for (size_t i = 0; i < n; i++) {
        leaves[i] = json_object();
        tg_buf_reset(&path);
        if (tg_buf_puts(&path, "") == TG_OK)
            diff_flatten(configs[i], &path, leaves[i], 0);
        const char *k;
        json_t *v;
        json_object_foreach(leaves[i], k, v) {
            json_object_set_new_nocheck(paths, k, json_true());
        }
    }
    tg_buf_clean(&path);
    size_t np = json_object_size(paths);
    const char **sorted = tg_xcalloc(np + 1, sizeof(*sorted));
    size_t k = 0;
    const char *key;
    json_t *v;
    json_object_foreach(paths, key, v) {
        sorted[k++] = key;
    }
    qsort(sorted, np, sizeof(*sorted), diff_path_cmp);
    json_t *out = json_array();
    for (k = 0; k < np; k++) {
        json_t *first = json_object_get(leaves[0], sorted[k]);
        int differ = 0;
        for (size_t i = 1; i < n && !differ; i++) {
            json_t *x = json_object_get(leaves[i], sorted[k]);
            differ = !first || !x ? first != x : !json_equal(first, x);
        }
        if (!differ)
            continue;
        json_t *values = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *x = json_object_get(leaves[i], sorted[k]);
            json_array_append(values, x ? x : json_null());
        }
        json_array_append_new(out, json_pack("{s:s, s:o}", "path", sorted[k], "values", values));
    }
    free(sorted);
    json_decref(paths);
    for (size_t i = 0; i < n; i++)
        json_decref(leaves[i]);
    free(leaves);
    return out;
}

/* ---- compare ---- */

/* The ids of the `ids` parameter (arena copies). RET: n, or -1 answered. */
static int compare_ids_or_reply(tg_req_t *req, const char **ids)
{
    const char *v = tg_req_query(req, "ids");
    if (!v) {
        exp_bad(req, "ids", "is required: 2 to 10 run ids, comma-separated");
        return -1;
    }
    int n = 0;
    const char *p = v;
    for (;;) {
        size_t len = strcspn(p, ",");
        char *id = tg_arena_strndup(req->arena, p, len);
        if (!tg_uuid_valid(id)) {
            exp_bad(req, "ids", "must be run ids (UUIDs), comma-separated");
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (!strcmp(ids[i], id)) {
                exp_bad(req, "ids", "names a run twice");
                return -1;
            }
        if (n == COMPARE_MAX) {
            exp_bad(req, "ids", "must name 2 to 10 runs");
            return -1;
        }
        ids[n++] = id;
        if (!p[len])
            break;
        p += len + 1;
    }
    if (n < COMPARE_MIN) {
        exp_bad(req, "ids", "must name 2 to 10 runs");
        return -1;
    }
    return n;
}

void tg_api_runs_compare(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    const char *ids[COMPARE_MAX];
    int n = compare_ids_or_reply(req, ids);
    if (n < 0)
        return;
    tg_db_conn_t *conn = tg_authz_workspace_db_or_reply(req, ws, TG_ROLE_VIEWER);
    if (!conn)
        return;
    json_t *found = NULL;
    tg_rc_e rc = tg_store_runs_compared(conn, ws, ids, (size_t)n, &found);
    json_t *runs = json_array();
    json_t *configs[COMPARE_MAX];
    int same = 1;
    for (int i = 0; rc == TG_OK && i < n; i++) {
        json_t *run = json_object_get(found, ids[i]);
        if (!run) {
            tg_problem(req, TG_ENOTFOUND, NULL, "run %s does not exist in workspace %s", ids[i],
                       ws);
            goto out;
        }
        json_t *metrics = NULL;
        rc = tg_store_metric_summaries(conn, ids[i], 0, &metrics);
        if (rc != TG_OK)
            break;
        json_object_set_new(run, "metrics", metrics);
        configs[i] = json_object_get(run, "resolved");
        same &= json_equal(json_object_get(run, "config_hash"),
                           json_object_get(json_object_get(found, ids[0]), "config_hash"));
        json_array_append(runs, run);
    }
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the runs could not be compared");
        goto out;
    }
    json_t *diff = tg_api_config_differences(configs, (size_t)n);
    for (int i = 0; i < n; i++)
        json_object_del(json_array_get(runs, (size_t)i), "resolved");
    tg_resp_json(req, 200,
                 json_pack("{s:O, s:o, s:b}", "runs", runs, "config_differences", diff,
                           "same_config", same));
out:
    json_decref(runs);
    json_decref(found);
}
