/* GPU usage and run counts per workspace and user. */
#include "api/usage.h"

#include <math.h>
#include <string.h>

#include "api/app.h"
#include "http/problem.h"
#include "store/quota.h"

static const char *const usage_counters[] = {"runs",   "succeeded", "failed", "cancelled",
                                             "active", "attempts",  NULL};

static json_t *usage_zero(void)
{
    json_t *o = json_object();
    for (const char *const *k = usage_counters; *k; k++)
        json_object_set_new(o, *k, json_integer(0));
    json_object_set_new(o, "gpu_seconds", json_real(0));
    return o;
}

/* Add a row's counters into an accumulator. */
static void usage_add(json_t *acc, const json_t *row)
{
    for (const char *const *k = usage_counters; *k; k++)
        json_object_set_new(acc, *k,
                            json_integer(json_integer_value(json_object_get(acc, *k)) +
                                         json_integer_value(json_object_get(row, *k))));
    json_object_set_new(acc, "gpu_seconds",
                        json_real(json_number_value(json_object_get(acc, "gpu_seconds")) +
                                  json_number_value(json_object_get(row, "gpu_seconds"))));
}

/* gpu_seconds (a sum) → whole seconds plus gpu_hours rounded to 4 decimals. */
static void usage_finish(json_t *o)
{
    double s = json_number_value(json_object_get(o, "gpu_seconds"));
    json_object_set_new(o, "gpu_seconds", json_integer((json_int_t)llround(s)));
    json_object_set_new(o, "gpu_hours", json_real(round(s / 3600.0 * 10000.0) / 10000.0));
}

static void usage_bad_time(tg_req_t *req, const char *msg)
{
    json_t *errors = json_array();
    json_array_append_new(errors, tg_problem_error("since", 0, 0, msg));
    tg_problem(req, TG_EINVAL, errors, "invalid time range");
}

void tg_api_admin_usage(tg_req_t *req)
{
    const char *since = tg_req_query(req, "since"), *until = tg_req_query(req, "until");
    const char *ws = tg_req_query(req, "workspace");
    since = since && *since ? since : NULL;
    until = until && *until ? until : NULL;
    ws = ws && *ws ? ws : NULL;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *u = NULL;
    tg_rc_e rc = tg_store_quota_usage(conn, since, until, ws, &u);
    if (rc == TG_EINVAL) {
        usage_bad_time(req, "since and until must be RFC 3339 times");
        return;
    }
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the usage could not be computed");
        return;
    }
    if (!json_is_true(json_object_get(u, "valid"))) {
        json_decref(u);
        usage_bad_time(req, "since must be before until");
        return;
    }
    json_t *totals = usage_zero(), *by_ws = json_object(), *users = json_array();
    json_t *wss = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(u, "rows"), i, row) {
        const char *w = json_string_value(json_object_get(row, "workspace"));
        json_t *acc = json_object_get(by_ws, w ? w : "");
        if (!acc) {
            acc = usage_zero();
            json_object_set_new(acc, "workspace", json_string(w ? w : ""));
            json_object_set_new(by_ws, w ? w : "", acc);
            json_array_append(wss, acc); /* rows come sorted by workspace */
        }
        usage_add(acc, row);
        usage_add(totals, row);
        json_t *user = json_deep_copy(row);
        usage_finish(user);
        json_array_append_new(users, user);
    }
    json_array_foreach(wss, i, row)
        usage_finish(row);
    usage_finish(totals);
    json_t *out = json_pack("{s:O, s:O, s:s?, s:o, s:o, s:o}", "since", json_object_get(u, "since"),
                            "until", json_object_get(u, "until"), "workspace", ws, "totals", totals,
                            "workspaces", wss, "users", users);
    json_decref(by_ws);
    json_decref(u);
    tg_resp_json(req, 200, out);
}
