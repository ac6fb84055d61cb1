/* GET /v1/runs/{id}/logs (see run_logs.h). */
#include "api/run_logs.h"
#include "core/run_state.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/app.h"
#include "api/run_logs_stream.h"
#include "api/runs_read.h"
#include "core/ids.h"
#include "kube/log_line.h"
#include "http/problem.h"
#include "tauyaml/units.h"
#include "store/logs_read.h"

#define LOGS_TAIL_MAX 10000000
#define LOGS_NAME_MAX 253

typedef struct {
    int follow, timestamps, sse;
    int prefix; /* -1: automatic */
    long tail;  /* -1: none */
    int has_since;
    int64_t since_ns;
    int attempt; /* 0: the run's current one */
    const char *pod, *container;
    long long last_event_id; /* -1: none */
} logs_query_t;

static void logs_bad(json_t *errors, const char *param, const char *msg)
{
    json_array_append_new(errors, tg_problem_error(param, 0, 0, msg));
}

/* "true"/"1"/"" → 1, "false"/"0" → 0, else -1. */
static int logs_bool(const char *v)
{
    if (!*v || !strcasecmp(v, "true") || !strcmp(v, "1"))
        return 1;
    if (!strcasecmp(v, "false") || !strcmp(v, "0"))
        return 0;
    return -1;
}

static int logs_long(const char *v, long lo, long hi, long *out)
{
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < lo || n > hi)
        return -1;
    *out = n;
    return 0;
}

static int logs_name(const char *v)
{
    size_t n = strlen(v);
    if (n == 0 || n > LOGS_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x21 || v[i] == '/')
            return 0;
    return 1;
}

/* Parse every parameter; answers 400 listing all problems and returns -1. */
static int logs_query_or_reply(tg_req_t *req, logs_query_t *q)
{
    memset(q, 0, sizeof(*q));
    q->prefix = -1;
    q->tail = -1;
    q->last_event_id = -1;
    json_t *errors = json_array();
    const char *v;
    long n;
    if ((v = tg_req_query(req, "follow")) && (q->follow = logs_bool(v)) < 0)
        logs_bad(errors, "follow", "must be true or false");
    if ((v = tg_req_query(req, "timestamps")) && (q->timestamps = logs_bool(v)) < 0)
        logs_bad(errors, "timestamps", "must be true or false");
    if ((v = tg_req_query(req, "prefix")) && (q->prefix = logs_bool(v)) < 0)
        logs_bad(errors, "prefix", "must be true or false");
    if ((v = tg_req_query(req, "tail"))) {
        if (logs_long(v, 0, LOGS_TAIL_MAX, &n) != 0)
            logs_bad(errors, "tail", "must be an integer from 0 to 10000000");
        else
            q->tail = n;
    }
    if ((v = tg_req_query(req, "attempt"))) {
        if (logs_long(v, 1, 1000000, &n) != 0)
            logs_bad(errors, "attempt", "must be an attempt number (1, 2, ...)");
        else
            q->attempt = (int)n;
    }
    if ((v = tg_req_query(req, "since"))) {
        int64_t ns = 0, dur = 0;
        size_t tl = tg_logs_ts_parse(v, strlen(v), &ns);
        if (tl && tl == strlen(v)) {
            q->has_since = 1;
            q->since_ns = ns;
        } else if (tg_tauyaml_duration_parse(v, &dur) == 0 && dur >= 0) {
            q->has_since = 1;
            q->since_ns = tg_now_wall_us() * 1000 - dur;
        } else {
            logs_bad(errors, "since",
                     "must be an RFC 3339 time (2026-01-02T03:04:05Z) or a duration (10m)");
        }
    }
    if ((q->pod = tg_req_query(req, "pod")) && !logs_name(q->pod))
        logs_bad(errors, "pod", "must be a pod name");
    if ((q->container = tg_req_query(req, "container")) && !logs_name(q->container))
        logs_bad(errors, "container", "must be a container name");
    if ((v = tg_req_header(req, "Last-Event-ID")) && *v) {
        long long id = -1;
        char *end = NULL;
        id = strtoll(v, &end, 10);
        if (*end || id < 0)
            logs_bad(errors, "Last-Event-ID", "must be an event id this server sent");
        else
            q->last_event_id = id;
    }
    const char *accept = tg_req_header(req, "Accept");
    q->sse = accept && strstr(accept, "text/event-stream") != NULL;
    if (json_array_size(errors)) {
        tg_problem(req, TG_EINVAL, errors, "invalid query parameters");
        return -1;
    }
    json_decref(errors);
    return 0;
}

/* Raise each stream in `pos` to the seq `later` has for it. */
static void logs_positions_merge(json_t *pos, const json_t *later)
{
    size_t i, k;
    json_t *p, *l;
    json_array_foreach(later, k, l) {
        const char *pod = json_string_value(json_object_get(l, "pod"));
        const char *c = json_string_value(json_object_get(l, "container"));
        json_int_t seq = json_integer_value(json_object_get(l, "seq"));
        int found = 0;
        json_array_foreach(pos, i, p) {
            if (!strcmp(json_string_value(json_object_get(p, "pod")), pod) &&
                !strcmp(json_string_value(json_object_get(p, "container")), c)) {
                if (json_integer_value(json_object_get(p, "seq")) < seq)
                    json_object_set_new(p, "seq", json_integer(seq));
                found = 1;
            }
        }
        if (!found)
            json_array_append(pos, l);
    }
}

/* Where the stream starts: positions per stream and lines to skip. */
static tg_rc_e logs_start(tg_db_conn_t *conn, const tg_log_sel_t *sel, const logs_query_t *q,
                          json_t **positions, long *skip, size_t *nstreams)
{
    json_t *pos = NULL, *later = NULL;
    char since[48];
    *skip = 0;
    if (q->has_since)
        tg_logs_ts_format_ns(q->since_ns, since, sizeof(since));
    tg_rc_e rc = tg_store_log_streams(conn, sel, 1, &pos);
    if (rc != TG_OK)
        goto out;
    *nstreams = json_array_size(pos);
    if (q->last_event_id >= 0) {
        rc = tg_store_log_positions_before(conn, sel, q->last_event_id + 1, &later);
    } else if (q->tail >= 0) {
        long long start = 0;
        rc = tg_store_log_tail_start(conn, sel, q->tail, q->has_since ? since : NULL, &start, skip);
        if (rc == TG_OK && start > 0)
            rc = tg_store_log_positions_before(conn, sel, start, &later);
    } else if (q->has_since) {
        rc = tg_store_log_positions_since(conn, sel, since, &later);
    }
    if (rc == TG_OK && later)
        logs_positions_merge(pos, later);
out:
    json_decref(later);
    if (rc != TG_OK) {
        json_decref(pos);
        pos = NULL;
    }
    *positions = pos;
    return rc;
}

void tg_api_run_logs(tg_req_t *req)
{
    logs_query_t q;
    if (logs_query_or_reply(req, &q) != 0)
        return;
    json_t *run = tg_api_run_load_or_reply(req, TG_ROLE_VIEWER, NULL);
    if (!run)
        return;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn) {
        json_decref(run);
        return;
    }
    int attempt = q.attempt;
    if (!attempt) {
        json_int_t a = json_integer_value(json_object_get(run, "attempt"));
        attempt = a > 0 ? (int)a : 1;
    }
    tg_log_sel_t sel = {.run_id = tg_req_param(req, "id"),
                        .attempt = attempt,
                        .pod = q.pod,
                        .container = q.container};
    json_t *positions = NULL;
    long skip = 0;
    size_t nstreams = 0;
    tg_rc_e rc = TG_OK;
    /* An ended run's log is answered whole: while the collector is still
     * storing it (its pods ended a moment ago), a plain read waits for it as
     * a follow does, and ends where the log does. */
    if (!q.follow && tg_run_state_ended(json_string_value(json_object_get(run, "state")))) {
        int complete = 0;
        rc = tg_store_log_complete(conn, &sel, &complete);
        q.follow = rc == TG_OK && !complete;
    }
    if (rc == TG_OK)
        rc = logs_start(conn, &sel, &q, &positions, &skip, &nstreams);
    /* a stream lives for minutes: the connection goes back to the pool now */
    tg_app_db_release(req);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the run's logs could not be read");
        goto out;
    }
    tg_logs_stream_spec_t spec = {
        .run_id = sel.run_id,
        .attempt = attempt,
        .pod = q.pod,
        .container = q.container,
        .follow = q.follow,
        .fmt = {.sse = q.sse,
                .timestamps = q.timestamps,
                .prefix = q.prefix >= 0 ? q.prefix : nstreams > 1,
                .has_since = q.has_since,
                .since_ns = q.since_ns},
        .skip = skip,
        .positions = positions,
        .access = q.follow ? tg_stream_access_new(
                                 req, json_string_value(json_object_get(run, "workspace")),
                                 TG_ROLE_VIEWER)
                           : NULL};
    const tg_app_t *app = tg_req_app(req);
    if (tg_run_logs_stream_reply(app->log_streams, req, &spec) != TG_OK) {
        tg_problem(req, TG_EUNAVAILABLE, NULL,
                   "log streaming is unavailable or too many clients follow logs; retry shortly");
        tg_resp_header(req, "Retry-After", "5");
    }
out:
    json_decref(run);
}
