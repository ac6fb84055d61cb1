/* Log streams on the process's stream hub (see run_logs_stream.h). */
#include "api/run_logs_stream.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "core/log.h"
#include "core/metrics.h"
#include "kube/log_line.h"
#include "store/logs_read.h"

#define STREAM_FETCH_ROWS  16
#define STREAM_FETCH_BYTES (128 * 1024)
#define STREAM_RECHECK_US  2000000 /* look again even when max(id) did not move */
#define STREAM_PODS_US     5000000 /* refresh a follow's streams (new pods) */

struct tg_logs_streams_s {
    tg_sse_source_t *src;
    long idle_timeout_s;
    atomic_int followers;
    atomic_ullong lines_total;
    long long max_id; /* the newest chunk id at this tick; -1 unknown (notifier only) */
};

/* One response's position in the log (the notifier's thread only). */
typedef struct {
    char run_id[40];
    int attempt;
    char *pod, *container;
    int follow;
    tg_run_logs_fmt_t fmt;
    long skip;
    json_t *positions;
    long long seen_max;
    int again; /* the last fetch found chunks: fetch again without waiting */
    uint64_t last_poll_us, last_data_us, last_pods_us;
} logs_state_t;

static tg_stmt_t stmt_max_id = TG_STMT("SELECT coalesce(max(id), 0) FROM log_chunks");

/* ---- formatting ---- */

static tg_rc_e fmt_text(tg_buf_t *out, const char *s, size_t n, int sse)
{
    if (!sse)
        return tg_buf_append(out, s, n);
    for (size_t i = 0; i < n; i++) {
        char c = s[i] == '\r' ? ' ' : s[i];
        if (tg_buf_append(out, &c, 1) != TG_OK)
            return TG_ETOOLARGE;
    }
    return TG_OK;
}

/* One line as sent: "data: " for SSE, the prefix, the text, a newline. */
static tg_rc_e fmt_line(tg_buf_t *out, const char *text, size_t tlen, const char *pod,
                        const char *container, int sse, int prefix)
{
    tg_rc_e rc = sse ? tg_buf_puts(out, "data: ") : TG_OK;
    if (rc == TG_OK && prefix)
        rc = tg_buf_printf(out, "[%s/%s] ", pod, container);
    if (rc == TG_OK)
        rc = fmt_text(out, text, tlen, sse);
    return rc == TG_OK ? tg_buf_append(out, "\n", 1) : rc;
}

long tg_run_logs_format(tg_buf_t *out, const tg_log_chunk_t *chunk, const tg_run_logs_fmt_t *fmt,
                        long *skip)
{
    const char *content = chunk->content;
    size_t len = chunk->len;
    int sse = fmt->sse;
    size_t mark = out->len;
    long written = 0;
    tg_rc_e rc = sse ? tg_buf_printf(out, "id: %lld\n", chunk->id) : TG_OK;
    size_t i = 0;
    while (rc == TG_OK && i < len) {
        const char *nl = memchr(content + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (content + i)) : len - i;
        const char *line = content + i;
        i += l + (nl ? 1 : 0);
        int64_t ns = 0;
        const char *text;
        size_t tlen;
        int has_ts = tg_logs_line_split(line, l, &ns, &text, &tlen);
        if (fmt->has_since && has_ts && ns < fmt->since_ns)
            continue;
        if (skip && *skip > 0) {
            (*skip)--;
            continue;
        }
        if (fmt->timestamps) {
            text = line;
            tlen = l;
        }
        rc = fmt_line(out, text, tlen, chunk->pod, chunk->container, sse, fmt->prefix);
        written++;
    }
    if (rc == TG_OK && sse && written)
        rc = tg_buf_append(out, "\n", 1);
    if (!written || rc != TG_OK) { /* nothing to send (or no room): leave out as it was */
        out->len = mark;
        if (out->data)
            out->data[mark] = '\0';
        return rc != TG_OK ? -1 : 0;
    }
    return written;
}

/* ---- streams ---- */

static void logs_state_free(void *arg, void *state)
{
    tg_logs_streams_t *ls = arg;
    logs_state_t *st = state;
    if (st->follow)
        atomic_fetch_sub(&ls->followers, 1);
    free(st->pod);
    free(st->container);
    json_decref(st->positions);
    free(st);
}

/* Merge fetched positions: the stream's entry gets seq. */
static void logs_advance(logs_state_t *st, const char *pod, const char *container, long seq)
{
    size_t i;
    json_t *p;
    json_array_foreach(st->positions, i, p) {
        if (!strcmp(json_string_value(json_object_get(p, "pod")), pod) &&
            !strcmp(json_string_value(json_object_get(p, "container")), container)) {
            if (json_integer_value(json_object_get(p, "seq")) < seq)
                json_object_set_new(p, "seq", json_integer(seq));
            return;
        }
    }
    json_array_append_new(st->positions, json_pack("{s:s, s:s, s:I}", "pod", pod, "container",
                                                   container, "seq", (json_int_t)seq));
}

/* Add streams that appeared (a new pod) at seq 0. */
static void logs_add_streams(logs_state_t *st, const json_t *streams)
{
    size_t i;
    json_t *p;
    json_array_foreach(streams, i, p) {
        const char *pod = json_string_value(json_object_get(p, "pod"));
        const char *c = json_string_value(json_object_get(p, "container"));
        if (pod && c)
            logs_advance(st, pod, c, 0);
    }
}

/* Fetch and send the next chunks (up to the stream's budget: the chunks
 * left are fetched again next time, their positions untouched). */
static tg_rc_e logs_fetch(tg_logs_streams_t *ls, tg_sse_stream_t *s, logs_state_t *st,
                          tg_db_conn_t *conn, uint64_t now)
{
    tg_log_sel_t sel = {
        .run_id = st->run_id, .attempt = st->attempt, .pod = st->pod, .container = st->container};
    int complete = 0;
    tg_rc_e rc = TG_OK;
    if (st->follow) {
        rc = tg_store_log_complete(conn, &sel, &complete);
        /* New pods join every STREAM_PODS_US, and always before the last
         * fetch: a pod recorded after the follow began, whose whole log was
         * stored within that period, is read before the stream ends. */
        if (rc == TG_OK && (complete || now - st->last_pods_us >= STREAM_PODS_US)) {
            json_t *streams = NULL;
            rc = tg_store_log_streams(conn, &sel, 0, &streams);
            if (rc == TG_OK)
                logs_add_streams(st, streams);
            json_decref(streams);
            st->last_pods_us = now;
        }
    }
    tg_log_chunk_t *chunks = NULL;
    size_t n = 0;
    if (rc == TG_OK)
        rc = tg_store_log_fetch(conn, &sel, st->positions, STREAM_FETCH_ROWS, STREAM_FETCH_BYTES,
                                &chunks, &n);
    if (rc != TG_OK) {
        tg_log_chunks_free(chunks, n);
        return rc;
    }
    tg_buf_t tmp;
    tg_buf_init(&tmp, 0);
    long lines = 0;
    size_t budget = tg_sse_stream_budget(s), sent = 0;
    for (; sent < n && tmp.len < budget; sent++) {
        const tg_log_chunk_t *c = &chunks[sent];
        long w = tg_run_logs_format(&tmp, c, &st->fmt, &st->skip);
        lines += w > 0 ? w : 0;
        logs_advance(st, c->pod, c->container, c->seq);
    }
    st->last_poll_us = now;
    if (n) {
        st->last_data_us = now;
        st->again = 1;         /* there may be more: fetch again once the buffer has room */
        tg_sse_stream_more(s); /* before the write, so a fast reader cannot miss it */
    }
    if (tmp.len && tg_sse_stream_write(s, tmp.data, tmp.len) != TG_OK)
        rc = TG_ETOOLARGE; /* the stream ended with "overflow" */
    else if (n == 0 && (!st->follow || complete))
        tg_sse_stream_end(s, "complete");
    atomic_fetch_add(&ls->lines_total, (unsigned long long)lines);
    tg_buf_clean(&tmp);
    tg_log_chunks_free(chunks, n);
    return rc;
}

/* Once per tick: the newest chunk id, so idle follows skip their fetch. */
static tg_rc_e logs_tick(void *arg, tg_db_conn_t *conn)
{
    tg_logs_streams_t *ls = arg;
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_max_id, 0, NULL, &rc);
    ls->max_id = r && PQntuples(r) == 1 ? atoll(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    return rc == TG_EUNAVAILABLE ? rc : TG_OK; /* unknown: every stream looks */
}

/* A follow looks when its last fetch found chunks, when the newest chunk
 * id moved, and every 2 s (commits become visible out of id order); it ends
 * once it got no new line for idle_timeout_s. */
static tg_rc_e logs_serve(void *arg, tg_sse_stream_t *s, void *state, tg_db_conn_t *conn)
{
    tg_logs_streams_t *ls = arg;
    logs_state_t *st = state;
    uint64_t now = tg_now_mono_us();
    int due = st->again || ls->max_id != st->seen_max || ls->max_id < 0 ||
              now - st->last_poll_us >= STREAM_RECHECK_US;
    tg_rc_e rc = TG_OK;
    if (due) {
        st->again = 0;
        st->seen_max = ls->max_id;
        rc = logs_fetch(ls, s, st, conn, now);
    }
    if (st->follow && now - st->last_data_us >= (uint64_t)ls->idle_timeout_s * 1000000)
        tg_sse_stream_end(s, "idle");
    return rc;
}

/* ---- metrics ---- */

static void logs_metrics(tg_buf_t *out, void *arg)
{
    tg_logs_streams_t *ls = arg;
    tg_rc_e rc = tg_buf_printf(out,
                               "# HELP taugate_log_http_followers Clients following a run's log.\n"
                               "# TYPE taugate_log_http_followers gauge\n"
                               "taugate_log_http_followers %d\n"
                               "# HELP taugate_log_http_lines_total Log lines sent to clients.\n"
                               "# TYPE taugate_log_http_lines_total counter\n"
                               "taugate_log_http_lines_total %llu\n",
                               atomic_load(&ls->followers), atomic_load(&ls->lines_total));
    if (rc != TG_OK)
        tg_log_debug("logs", "the metrics buffer is full");
}

/* ---- lifecycle ---- */

tg_logs_streams_t *tg_logs_streams_start(tg_sse_hub_t *hub, const tg_logs_streams_config_t *cfg)
{
    tg_logs_streams_t *ls = tg_xcalloc(1, sizeof(*ls));
    ls->idle_timeout_s = cfg && cfg->idle_timeout_s > 0 ? cfg->idle_timeout_s : 300;
    ls->max_id = -1;
    atomic_init(&ls->followers, 0);
    atomic_init(&ls->lines_total, 0);
    /* no ceiling: one serve appends at most the buffer's room plus one
     * chunk, which SSE framing and prefixes may make several times larger */
    tg_sse_source_config_t sc = {.name = "run_logs",
                                 .max_streams = cfg ? cfg->max_followers : 0,
                                 .ceiling_bytes = SIZE_MAX,
                                 .tick = logs_tick,
                                 .serve = logs_serve,
                                 .state_free = logs_state_free,
                                 .arg = ls};
    ls->src = tg_sse_hub_source(hub, &sc);
    if (!ls->src) {
        free(ls);
        return NULL;
    }
    tg_metrics_register(logs_metrics, ls);
    return ls;
}

void tg_logs_streams_free(tg_logs_streams_t *ls)
{
    if (!ls)
        return;
    tg_metrics_unregister(logs_metrics, ls);
    free(ls);
}

tg_rc_e tg_run_logs_stream_reply(tg_logs_streams_t *ls, tg_req_t *req, tg_logs_stream_spec_t *spec)
{
    json_t *positions = spec->positions;
    tg_stream_access_t *access = spec->access;
    spec->positions = NULL;
    spec->access = NULL;
    if (!ls) {
        json_decref(positions);
        tg_stream_access_free(access);
        return TG_EUNAVAILABLE;
    }
    logs_state_t *st = tg_xcalloc(1, sizeof(*st));
    snprintf(st->run_id, sizeof(st->run_id), "%s", spec->run_id);
    st->attempt = spec->attempt;
    st->pod = spec->pod ? tg_xstrdup(spec->pod) : NULL;
    st->container = spec->container ? tg_xstrdup(spec->container) : NULL;
    st->follow = spec->follow;
    st->fmt = spec->fmt;
    st->skip = spec->skip;
    st->positions = positions ? positions : json_array();
    st->again = 1;
    st->seen_max = -1;
    st->last_data_us = st->last_pods_us = tg_now_mono_us();
    if (st->follow)
        atomic_fetch_add(&ls->followers, 1); /* undone by logs_state_free */
    /* only follows are limited: a plain read ends at its first empty fetch */
    int flags = (st->fmt.sse ? 0 : TG_SSE_PLAIN) | (st->follow ? 0 : TG_SSE_UNCOUNTED);
    return tg_sse_hub_reply(ls->src, req, st, access, flags);
}
