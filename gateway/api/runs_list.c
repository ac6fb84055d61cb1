/* GET /v1/workspaces/{ws}/runs and /v1/workspaces/{ws}/run-counts. */
#include "api/runs_list.h"

#include "core/run_state.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/paging.h"
#include "http/problem.h"
#include "store/runs_query.h"

#define COUNTS_MAX_OWNERS 1000
#define EXP_FIELD_MAX     253

static void list_bad(json_t *errors, const char *param, const char *msg)
{
    json_array_append_new(errors, tg_problem_error(param, 0, 0, msg));
}

static int list_digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* RFC 3339: 2026-12-01T00:00:00[.frac](Z|+hh:mm|-hh:mm). */
static int list_time_ok(const char *s)
{
    if (strlen(s) < 20 || !list_digits(s, 4) || s[4] != '-' || !list_digits(s + 5, 2) ||
        s[7] != '-' || !list_digits(s + 8, 2) || (s[10] != 'T' && s[10] != 't') ||
        !list_digits(s + 11, 2) || s[13] != ':' || !list_digits(s + 14, 2) || s[16] != ':' ||
        !list_digits(s + 17, 2))
        return 0;
    const char *p = s + 19;
    if (*p == '.') {
        size_t n = strspn(++p, "0123456789");
        if (n == 0 || n > 9)
            return 0;
        p += n;
    }
    if ((*p == 'Z' || *p == 'z') && !p[1])
        return 1;
    return (*p == '+' || *p == '-') && list_digits(p + 1, 2) && p[3] == ':' &&
           list_digits(p + 4, 2) && !p[6];
}

/* Read the filters of both operations; every bad one goes to errors. */
static void list_filters(tg_req_t *req, tg_run_filter_t *f, json_t *errors)
{
    memset(f, 0, sizeof(*f));
    f->workspace = tg_req_param(req, "ws");
    f->state = tg_req_query(req, "state");
    f->owner = tg_req_query(req, "owner");
    f->engine = tg_req_query(req, "engine");
    f->name = tg_req_query(req, "name");
    f->created_after = tg_req_query(req, "since");
    f->created_before = tg_req_query(req, "until");
    f->updated_since = tg_req_query(req, "updated_since");
    f->project = tg_req_query(req, "project");
    f->experiment = tg_req_query(req, "experiment");
    f->group = tg_req_query(req, "group");
    if (f->state) {
        int ok = 0;
        for (const char *const *s = tg_run_states; *s; s++)
            ok |= strcmp(*s, f->state) == 0;
        if (!ok)
            list_bad(errors, "state",
                     "must be Accepted, Queued, Admitted, Running, Recovering, Succeeded, "
                     "Failed or Cancelled");
    }
    if (f->engine && strcmp(f->engine, "job") && strcmp(f->engine, "rayjob"))
        list_bad(errors, "engine", "must be job or rayjob");
    const struct {
        const char *name, *value;
    } times[] = {{"since", f->created_after},
                 {"until", f->created_before},
                 {"updated_since", f->updated_since}};
    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
        if (times[i].value && !list_time_ok(times[i].value))
            list_bad(errors, times[i].name,
                     "must be an RFC 3339 time such as 2026-12-01T00:00:00Z");
    const struct {
        const char *name, *value;
    } exp[] = {{"project", f->project}, {"experiment", f->experiment}, {"group", f->group}};
    for (size_t i = 0; i < sizeof(exp) / sizeof(exp[0]); i++) {
        size_t n = exp[i].value ? strlen(exp[i].value) : 1;
        if (n == 0 || n > EXP_FIELD_MAX)
            list_bad(errors, exp[i].name, "must be 1 to 253 characters");
    }
}

/* Answer 400 listing every problem when there is one. RET: -1 answered. */
static int list_errors_reply(tg_req_t *req, json_t *errors)
{
    if (!json_array_size(errors)) {
        json_decref(errors);
        return 0;
    }
    size_t n = json_array_size(errors);
    const char *first = json_string_value(json_object_get(json_array_get(errors, 0), "path"));
    if (n == 1)
        tg_problem(req, TG_EINVAL, errors, "invalid query parameter %s", first);
    else
        tg_problem(req, TG_EINVAL, errors, "invalid query parameters (%zu problems)", n);
    return -1;
}

/* The cursor is "<sort>|<time>|<id>" of the last run shown: a cursor is
 * only good for the order it came from. `arg` is the page's query. */
static const char *list_cursor(tg_req_t *req, const json_t *run, void *arg)
{
    const tg_run_sort_e sort = ((const tg_run_list_query_t *)arg)->sort;
    const char *col = sort == TG_RUN_SORT_UPDATED_ASC || sort == TG_RUN_SORT_UPDATED_DESC
                          ? "updated_at"
                          : "created_at";
    const char *at = json_string_value(json_object_get(run, col));
    const char *id = json_string_value(json_object_get(run, "id"));
    return tg_arena_printf(req->arena, "%s|%s|%s", tg_run_sort_name(sort), at ? at : "",
                           id ? id : "");
}

static void list_parse_cursor(tg_req_t *req, const tg_page_t *page, tg_run_list_query_t *q,
                              json_t *errors)
{
    if (!page->after)
        return;
    const char *a = page->after;
    const char *bar1 = strchr(a, '|');
    const char *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
    const char *sort = tg_run_sort_name(q->sort);
    if (!bar2 || (size_t)(bar1 - a) != strlen(sort) || strncmp(a, sort, strlen(sort)) ||
        !tg_uuid_valid(bar2 + 1)) {
        list_bad(errors, "cursor", "is not a cursor this server issued for this sort order");
        return;
    }
    q->cursor_time = tg_arena_strndup(req->arena, bar1 + 1, (size_t)(bar2 - bar1 - 1));
    q->cursor_id = bar2 + 1;
    if (!list_time_ok(q->cursor_time))
        list_bad(errors, "cursor", "is not a cursor this server issued for this sort order");
}

void tg_api_runs_list(tg_req_t *req)
{
    tg_page_t page;
    if (tg_page_or_reply(req, &page) != 0)
        return;
    tg_run_list_query_t q = {.limit = page.limit + 1};
    json_t *errors = json_array();
    list_filters(req, &q.f, errors);
    const char *sort = tg_req_query(req, "sort");
    if (sort) {
        int found = -1;
        for (int s = 0; s < TG_RUN_SORT_COUNT; s++)
            if (!strcmp(sort, tg_run_sort_name((tg_run_sort_e)s)))
                found = s;
        if (found < 0)
            list_bad(errors, "sort", "must be -created_at, created_at, -updated_at or updated_at");
        else
            q.sort = (tg_run_sort_e)found;
    }
    list_parse_cursor(req, &page, &q, errors);
    if (list_errors_reply(req, errors) != 0)
        return;
    tg_db_conn_t *conn = tg_authz_workspace_db_or_reply(req, q.f.workspace, TG_ROLE_VIEWER);
    if (!conn)
        return;
    json_t *items = NULL;
    tg_rc_e rc = tg_store_runs_list(conn, &q, &items);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the runs could not be listed");
        return;
    }
    tg_page_reply_fn(req, &page, items, list_cursor, &q);
}

/* {Accepted: 0, ...} with every state. */
static json_t *counts_states(void)
{
    json_t *o = json_object();
    for (const char *const *s = tg_run_states; *s; s++)
        json_object_set_new(o, *s, json_integer(0));
    return o;
}

static void counts_add(json_t *obj, const char *key, json_int_t n)
{
    json_t *v = json_object_get(obj, key);
    if (v)
        json_integer_set(v, json_integer_value(v) + n);
}

static int counts_owner_cmp(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    json_int_t nx = json_integer_value(json_object_get(x, "count"));
    json_int_t ny = json_integer_value(json_object_get(y, "count"));
    if (nx != ny)
        return nx > ny ? -1 : 1;
    return strcmp(json_string_value(json_object_get(x, "owner")),
                  json_string_value(json_object_get(y, "owner")));
}

/* RunCounts from the [{state, owner, engine, count}] groups (borrowed). */
static json_t *counts_build(const json_t *groups)
{
    json_int_t total = 0;
    json_t *by_state = counts_states();
    json_t *by_engine = json_pack("{s:I, s:I}", "job", (json_int_t)0, "rayjob", (json_int_t)0);
    json_t *owners = json_object(); /* owner -> {owner, count, by_state} */
    size_t i;
    json_t *g;
    json_array_foreach(groups, i, g) {
        const char *state = json_string_value(json_object_get(g, "state"));
        const char *owner = json_string_value(json_object_get(g, "owner"));
        json_int_t n = json_integer_value(json_object_get(g, "count"));
        if (!state || !owner)
            continue;
        total += n;
        counts_add(by_state, state, n);
        counts_add(by_engine, json_string_value(json_object_get(g, "engine")), n);
        json_t *o = json_object_get(owners, owner);
        if (!o) {
            o = json_pack("{s:s, s:I, s:o}", "owner", owner, "count", (json_int_t)0, "by_state",
                          counts_states());
            json_object_set_new(owners, owner, o);
        }
        counts_add(o, "count", n);
        counts_add(json_object_get(o, "by_state"), state, n);
    }
    size_t nowners = json_object_size(owners);
    json_t **arr = tg_xcalloc(nowners + 1, sizeof(*arr));
    size_t k = 0;
    const char *key;
    json_t *v;
    json_object_foreach(owners, key, v) {
        arr[k++] = v;
    }
    qsort(arr, nowners, sizeof(*arr), counts_owner_cmp);
    json_t *by_owner = json_array();
    for (k = 0; k < nowners && k < COUNTS_MAX_OWNERS; k++)
        json_array_append(by_owner, arr[k]);
    free(arr);
    json_decref(owners);
    return json_pack("{s:I, s:o, s:o, s:o, s:b}", "total", total, "by_state", by_state, "by_engine",
                     by_engine, "by_owner", by_owner, "by_owner_truncated",
                     nowners > COUNTS_MAX_OWNERS);
}

void tg_api_run_counts(tg_req_t *req)
{
    tg_run_filter_t f;
    json_t *errors = json_array();
    list_filters(req, &f, errors);
    if (list_errors_reply(req, errors) != 0)
        return;
    tg_db_conn_t *conn = tg_authz_workspace_db_or_reply(req, f.workspace, TG_ROLE_VIEWER);
    if (!conn)
        return;
    json_t *groups = NULL;
    tg_rc_e rc = tg_store_runs_count(conn, &f, &groups);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the runs could not be counted");
        return;
    }
    tg_resp_json(req, 200, counts_build(groups));
    json_decref(groups);
}
