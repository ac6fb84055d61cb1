/* GET /v1/runs/{id}/metrics and /v1/runs/{id}/checkpoints (see run_metrics.h). */
#include "api/run_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/runs_read.h"
#include "core/base64.h"
#include "http/problem.h"
#include "store/metrics_series.h"
#include "store/metrics_store.h"

#define POINTS_DEFAULT 1000
#define POINTS_MAX     5000
#define NAME_MAX_BYTES 256
#define SERIES_MIN     4
#define SERIES_MAX     10000

typedef struct {
    const char *name;
    int attempt;
    int limit;
    long long after;
    int max_points; /* 0: paged points, not a reduced series */
} metrics_query_t;

static void metrics_bad(json_t *errors, const char *param, const char *msg)
{
    json_array_append_new(errors, tg_problem_error(param, 0, 0, msg));
}

static int metrics_query_or_reply(tg_req_t *req, metrics_query_t *q)
{
    memset(q, 0, sizeof(*q));
    q->limit = POINTS_DEFAULT;
    json_t *errors = json_array();
    const char *v;
    char *end = NULL;
    if ((q->name = tg_req_query(req, "name")) && (!*q->name || strlen(q->name) > NAME_MAX_BYTES))
        metrics_bad(errors, "name", "must be a metric name of 1 to 256 bytes");
    if ((v = tg_req_query(req, "attempt"))) {
        long a = strtol(v, &end, 10);
        if (!*v || *end || a < 1 || a > 1000000)
            metrics_bad(errors, "attempt", "must be an attempt number (1, 2, ...)");
        else
            q->attempt = (int)a;
    }
    if ((v = tg_req_query(req, "limit"))) {
        long l = strtol(v, &end, 10);
        if (!*v || *end || l < 1 || l > POINTS_MAX)
            metrics_bad(errors, "limit", "must be an integer from 1 to 5000");
        else
            q->limit = (int)l;
    }
    if ((v = tg_req_query(req, "cursor")) && *v) {
        unsigned char *raw = NULL;
        size_t rawlen = 0;
        char text[24];
        long long after = -1;
        if (tg_base64_decode(v, strlen(v), TG_B64_URL, &raw, &rawlen) == 0 && rawlen > 0 &&
            rawlen < sizeof(text)) {
            memcpy(text, raw, rawlen);
            text[rawlen] = '\0';
            after = strtoll(text, &end, 10);
            if (*end)
                after = -1;
        }
        free(raw);
        if (after < 0)
            metrics_bad(errors, "cursor", "is not a cursor this server issued");
        else
            q->after = after;
    }
    if ((v = tg_req_query(req, "max_points"))) {
        long m = strtol(v, &end, 10);
        if (!*v || *end || m < SERIES_MIN || m > SERIES_MAX)
            metrics_bad(errors, "max_points", "must be an integer from 4 to 10000");
        else if (!q->name)
            metrics_bad(errors, "max_points", "needs name (the series to reduce)");
        else
            q->max_points = (int)m;
    }
    if (json_array_size(errors)) {
        tg_problem(req, TG_EINVAL, errors, "invalid query parameters");
        return -1;
    }
    json_decref(errors);
    return 0;
}

static void metrics_points_reply(tg_req_t *req, const metrics_query_t *q, json_t *items)
{
    json_t *next = json_null();
    if (json_array_size(items) > (size_t)q->limit) {
        json_array_remove(items, (size_t)q->limit);
        json_t *last = json_array_get(items, (size_t)q->limit - 1);
        char text[24];
        snprintf(text, sizeof(text), "%lld",
                 (long long)json_integer_value(json_object_get(last, "id")));
        char *enc = tg_base64_encode((const unsigned char *)text, strlen(text), TG_B64_URL);
        next = json_string(enc);
        free(enc);
    }
    tg_resp_json(
        req, 200,
        json_pack("{s:s, s:o, s:o}", "name", q->name, "items", items, "next_cursor", next));
}

void tg_api_run_metrics(tg_req_t *req)
{
    metrics_query_t q;
    if (metrics_query_or_reply(req, &q) != 0)
        return;
    tg_db_conn_t *conn = tg_api_run_readable_or_reply(req);
    if (!conn)
        return;
    const char *id = tg_req_param(req, "id");
    json_t *items = NULL;
    tg_rc_e rc;
    if (q.max_points) {
        long long total = 0;
        rc = tg_store_metric_series_reduced(conn, id, q.name, q.attempt, q.max_points, &items,
                                            &total);
        if (rc == TG_OK) {
            tg_resp_json(req, 200,
                         json_pack("{s:s, s:o, s:n, s:b, s:I}", "name", q.name, "items", items,
                                   "next_cursor", "reduced", total > q.max_points, "total_points",
                                   (json_int_t)total));
            return;
        }
    } else if (q.name) {
        rc = tg_store_metric_points(conn, id, q.name, q.attempt, q.after, q.limit + 1, &items);
        if (rc == TG_OK) {
            metrics_points_reply(req, &q, items);
            return;
        }
    } else {
        rc = tg_store_metric_summaries(conn, id, q.attempt, &items);
        if (rc == TG_OK) {
            tg_resp_json(req, 200, json_pack("{s:o}", "items", items));
            return;
        }
    }
    json_decref(items);
    tg_problem(req, rc, NULL, "the run's metrics could not be read");
}

void tg_api_run_checkpoints(tg_req_t *req)
{
    tg_db_conn_t *conn = tg_api_run_readable_or_reply(req);
    if (!conn)
        return;
    const char *id = tg_req_param(req, "id");
    json_t *items = NULL;
    char *latest = NULL;
    tg_rc_e rc = tg_store_checkpoints_list(conn, id, &items);
    if (rc == TG_OK) {
        rc = tg_store_checkpoint_latest(conn, id, &latest);
        if (rc == TG_ENOTFOUND)
            rc = TG_OK;
    }
    if (rc != TG_OK) {
        json_decref(items);
        tg_problem(req, rc, NULL, "the run's checkpoints could not be read");
        return;
    }
    json_t *l = latest ? json_pack("{s:s}", "path", latest) : json_null();
    free(latest);
    tg_resp_json(req, 200, json_pack("{s:o, s:o}", "latest", l, "items", items));
}
