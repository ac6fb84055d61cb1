/* The workspace run-change stream (see run_changes.h). */
#include "api/run_changes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/sse_hub.h"
#include "core/buf.h"
#include "core/ids.h"
#include "core/log.h"
#include "http/problem.h"
#include "store/run_changes.h"

#define CHANGES_BATCH        200
#define CHANGES_RETENTION_S  (7L * 24 * 3600)
#define CHANGES_PRUNE_US     (600ULL * 1000000) /* look for old changes this often */
#define CHANGES_PRUNE_BATCH  5000
#define CHANGES_PRUNE_ROUNDS 40

struct tg_run_changes_s {
    tg_sse_source_t *src;
    /* the notifier's thread only */
    tg_run_changes_horizon_t horizon;
    uint64_t last_prune_us;
};

typedef struct {
    char workspace[64];
    long long after; /* the resume point asked for; -1: start at the horizon */
    long long cursor;
    int started;
    int follow;
} changes_state_t;

/* Once per tick: move the horizon; now and then prune old changes. */
static tg_rc_e changes_tick(void *arg, tg_db_conn_t *conn)
{
    tg_run_changes_t *c = arg;
    tg_rc_e rc = tg_store_run_changes_advance(conn, &c->horizon);
    uint64_t now = tg_now_mono_us();
    if (rc == TG_OK && now - c->last_prune_us >= CHANGES_PRUNE_US) {
        /* short statements of a batch each, so no lock is held for long;
         * what is left after CHANGES_PRUNE_ROUNDS waits for the next look */
        long deleted = CHANGES_PRUNE_BATCH;
        c->last_prune_us = now;
        for (int i = 0; i < CHANGES_PRUNE_ROUNDS && deleted == CHANGES_PRUNE_BATCH; i++)
            if (tg_store_run_changes_prune(conn, CHANGES_RETENTION_S, CHANGES_PRUNE_BATCH,
                                           &deleted) != TG_OK) {
                tg_log_warn("run_changes", "old changes could not be pruned: %s",
                            tg_db_error(conn));
                break;
            }
    }
    return rc;
}

/* `event: <name>` with id and a StreamPosition. */
static tg_rc_e changes_position(tg_buf_t *b, const char *event, long long pos)
{
    return tg_buf_printf(b, "event: %s\nid: %lld\ndata: {\"position\":%lld}\n\n", event, pos, pos);
}

/* Where a new stream starts, and its first event. */
static tg_rc_e changes_start(changes_state_t *st, tg_db_conn_t *conn, long long horizon,
                             tg_buf_t *b)
{
    if (st->after < 0) {
        st->cursor = horizon;
        return changes_position(b, "ready", horizon);
    }
    long long pruned = 0;
    tg_rc_e rc = tg_store_run_changes_pruned(conn, &pruned);
    if (rc != TG_OK)
        return rc;
    if (st->after < pruned) {
        /* changes after the resume point are gone: the client refetches */
        st->cursor = horizon;
        return changes_position(b, "reset", horizon);
    }
    st->cursor = st->after;
    return changes_position(b, "ready", st->after);
}

static tg_rc_e changes_serve(void *arg, tg_sse_stream_t *s, void *state, tg_db_conn_t *conn)
{
    const tg_run_changes_t *c = arg;
    changes_state_t *st = state;
    long long horizon = c->horizon.horizon;
    if (horizon < 0)
        return TG_OK; /* not known yet: next tick */
    tg_buf_t b;
    tg_buf_init(&b, 0);
    tg_rc_e rc = TG_OK;
    if (!st->started) {
        rc = changes_start(st, conn, horizon, &b);
        st->started = rc == TG_OK;
    }
    tg_run_change_row_t *rows = NULL;
    size_t n = 0;
    if (rc == TG_OK && st->cursor < horizon)
        rc = tg_store_run_changes_fetch(conn, st->workspace, st->cursor, horizon, CHANGES_BATCH,
                                        &rows, &n);
    /* up to the stream's budget: a batch of long messages must not pass the
     * buffer's ceiling (the rows left are fetched again next time) */
    size_t budget = tg_sse_stream_budget(s), sent = 0;
    for (; rc == TG_OK && sent < n && b.len < budget; sent++) {
        rc =
            tg_buf_printf(&b, "event: run\nid: %lld\ndata: %s\n\n", rows[sent].id, rows[sent].json);
        st->cursor = rows[sent].id;
    }
    tg_store_run_changes_free(rows, n);
    if (rc == TG_OK) {
        int more = n == CHANGES_BATCH || sent < n;
        if (more)
            tg_sse_stream_more(s); /* before the write, so a fast reader cannot miss it */
        if (b.len && tg_sse_stream_write(s, b.data, b.len) != TG_OK)
            rc = TG_ETOOLARGE; /* the stream ended with "overflow" */
        else if (!more && !st->follow && st->started)
            tg_sse_stream_end(s, "complete");
    }
    tg_buf_clean(&b);
    return rc;
}

static void changes_state_free(void *arg, void *state)
{
    (void)arg;
    free(state);
}

tg_run_changes_t *tg_run_changes_start(tg_sse_hub_t *hub)
{
    tg_run_changes_t *c = tg_xcalloc(1, sizeof(*c));
    tg_run_changes_horizon_init(&c->horizon);
    c->last_prune_us = tg_now_mono_us() - CHANGES_PRUNE_US;
    tg_sse_source_config_t cfg = {.name = "run_changes",
                                  .tick = changes_tick,
                                  .serve = changes_serve,
                                  .state_free = changes_state_free,
                                  .arg = c};
    c->src = tg_sse_hub_source(hub, &cfg);
    if (!c->src) {
        free(c);
        return NULL;
    }
    return c;
}

void tg_run_changes_free(tg_run_changes_t *c)
{
    free(c);
}

static void changes_bad(tg_req_t *req, const char *param, const char *msg)
{
    json_t *errors = json_array();
    json_array_append_new(errors, tg_problem_error(param, 0, 0, msg));
    tg_problem(req, TG_EINVAL, errors, "invalid %s", param);
}

/* A change id: 1 to 19 digits. RET: 0, or -1. */
static int changes_parse_id(const char *s, long long *out)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 19 || s[n])
        return -1;
    char *end = NULL;
    *out = strtoll(s, &end, 10);
    return *out < 0 ? -1 : 0;
}

void tg_api_run_changes(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    long long after = -1;
    const char *last = tg_req_header(req, "Last-Event-ID");
    const char *q = tg_req_query(req, "after");
    const char *follow = tg_req_query(req, "follow");
    if (last && changes_parse_id(last, &after) != 0) {
        changes_bad(req, "Last-Event-ID", "must be the id of an event of this stream");
        return;
    }
    if (!last && q && changes_parse_id(q, &after) != 0) {
        changes_bad(req, "after", "must be a change id (0, 1, 2, ...)");
        return;
    }
    if (follow && strcmp(follow, "true") && strcmp(follow, "false")) {
        changes_bad(req, "follow", "must be true or false");
        return;
    }
    if (tg_authz_workspace_or_reply(req, ws, TG_ROLE_VIEWER) == TG_ROLE_NONE)
        return;
    const tg_app_t *app = tg_req_app(req);
    if (!app->changes) {
        tg_problem(req, TG_EUNAVAILABLE, NULL, "change streams are unavailable on this replica");
        tg_resp_header(req, "Retry-After", "5");
        return;
    }
    tg_app_db_release(req); /* the stream reads through the hub's connection */
    changes_state_t *st = tg_xcalloc(1, sizeof(*st));
    snprintf(st->workspace, sizeof(st->workspace), "%s", ws);
    st->after = after;
    st->follow = !follow || !strcmp(follow, "true");
    tg_stream_access_t *access = tg_stream_access_new(req, ws, TG_ROLE_VIEWER);
    if (tg_sse_hub_reply(app->changes->src, req, st, access, 0) != TG_OK) {
        tg_problem(req, TG_EUNAVAILABLE, NULL,
                   "too many change streams are open, or the server is stopping; retry shortly");
        tg_resp_header(req, "Retry-After", "1");
    }
}
