/* Log streaming with suspended MHD connections and one notifier thread
 * (see run_logs_stream.h). */
#include "api/run_logs_stream.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ids.h"
#include "core/log.h"
#include "core/metrics.h"
#include "kube/log_line.h"
#include "store/logs_read.h"

#define STREAM_FETCH_ROWS  16
#define STREAM_FETCH_BYTES (128 * 1024)
#define STREAM_BLOCK       (32 * 1024)
#define STREAM_RECHECK_US  2000000 /* look again even when max(id) did not move */
#define STREAM_PODS_US     5000000 /* refresh a follow's streams (new pods) */

typedef struct logs_stream_s logs_stream_t;

struct logs_stream_s {
    atomic_int refs;
    pthread_mutex_t lock;
    /* shared with the reader (lock) */
    struct MHD_Connection *conn;
    tg_buf_t out;
    size_t off;
    int suspended;
    int done;
    int closed; /* the response was freed */
    int kick;   /* fetch now, without waiting for the poll */
    uint64_t last_write_us;
    /* fixed at creation */
    char run_id[40];
    int attempt;
    char *pod, *container;
    int follow, sse, timestamps, prefix, has_since;
    int64_t since_ns;
    /* notifier only */
    tg_stream_access_t *access; /* the caller's, re-checked while following */
    uint64_t last_access_us;
    long skip;
    json_t *positions;
    long long seen_max;
    uint64_t last_poll_us, last_data_us, last_pods_us;
    logs_stream_t *next;
};

typedef struct {
    tg_db_pool_t *pool;
    tg_logs_hub_config_t cfg;
    pthread_t thread;
    pthread_mutex_t lock; /* list, counts, flags */
    pthread_cond_t cond;
    int stopping; /* refuse new streams */
    int quit;     /* the notifier ends */
    int signaled;
    logs_stream_t *streams;
    int nfollow;
    atomic_ullong served_total;
} logs_hub_t;

static logs_hub_t *g_hub;
static pthread_mutex_t g_hub_lock = PTHREAD_MUTEX_INITIALIZER;

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

long tg_run_logs_format(tg_buf_t *out, const char *content, size_t len, long long id,
                        const char *pod, const char *container, int sse, int timestamps, int prefix,
                        int has_since, int64_t since_ns, long *skip)
{
    size_t mark = out->len;
    long written = 0;
    tg_rc_e rc = TG_OK;
    if (sse)
        rc |= tg_buf_printf(out, "id: %lld\n", id);
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(content + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (content + i)) : len - i;
        const char *line = content + i;
        i += l + (nl ? 1 : 0);
        int64_t ns = 0;
        const char *text;
        size_t tlen;
        int has_ts = tg_logs_line_split(line, l, &ns, &text, &tlen);
        if (has_since && has_ts && ns < since_ns)
            continue;
        if (skip && *skip > 0) {
            (*skip)--;
            continue;
        }
        if (timestamps) {
            text = line;
            tlen = l;
        }
        if (sse)
            rc |= tg_buf_puts(out, "data: ");
        if (prefix)
            rc |= tg_buf_printf(out, "[%s/%s] ", pod, container);
        rc |= fmt_text(out, text, tlen, sse);
        rc |= tg_buf_append(out, "\n", 1);
        written++;
    }
    if (sse && written)
        rc |= tg_buf_append(out, "\n", 1);
    if (!written || rc != TG_OK) { /* nothing to send (or no room): leave out as it was */
        out->len = mark;
        if (out->data)
            out->data[mark] = '\0';
        return rc != TG_OK ? -1 : 0;
    }
    return written;
}

/* ---- streams ---- */

static void stream_unref(logs_stream_t *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    tg_buf_clean(&s->out);
    free(s->pod);
    free(s->container);
    json_decref(s->positions);
    tg_stream_access_free(s->access);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static void hub_signal(logs_hub_t *h)
{
    pthread_mutex_lock(&h->lock);
    h->signaled = 1;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

/* Resume a suspended connection that has something to do. s->lock held. */
static void stream_wake_locked(logs_stream_t *s)
{
    if (s->suspended && s->conn && (s->off < s->out.len || s->done)) {
        s->suspended = 0;
        MHD_resume_connection(s->conn);
    }
}

static void stream_end_locked(logs_stream_t *s, const char *reason)
{
    if (s->done)
        return;
    if (s->sse &&
        tg_buf_printf(&s->out, "event: end\ndata: {\"reason\":\"%s\"}\n\n", reason) != TG_OK)
        tg_log_debug("logs", "no room for the SSE end event");
    s->done = 1;
    stream_wake_locked(s);
}

/* The caller lost access: nothing more of the log, only the final event. */
static void stream_revoke(logs_stream_t *s)
{
    pthread_mutex_lock(&s->lock);
    tg_buf_reset(&s->out);
    s->off = 0;
    stream_end_locked(s, "revoked");
    pthread_mutex_unlock(&s->lock);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    logs_stream_t *s = cls;
    logs_hub_t *h = g_hub;
    (void)pos;
    pthread_mutex_lock(&s->lock);
    if (s->off < s->out.len) {
        size_t n = s->out.len - s->off;
        if (n > max)
            n = max;
        memcpy(buf, s->out.data + s->off, n);
        s->off += n;
        if (s->off == s->out.len) {
            tg_buf_reset(&s->out);
            s->off = 0;
        }
        int want = !s->done && s->out.len == 0 && s->kick;
        s->last_write_us = tg_now_mono_us();
        pthread_mutex_unlock(&s->lock);
        if (want && h)
            hub_signal(h);
        return (ssize_t)n;
    }
    if (s->done) {
        pthread_mutex_unlock(&s->lock);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    s->suspended = 1;
    MHD_suspend_connection(s->conn);
    pthread_mutex_unlock(&s->lock);
    if (h)
        hub_signal(h);
    return 0;
}

static void stream_response_free(void *cls)
{
    logs_stream_t *s = cls;
    pthread_mutex_lock(&s->lock);
    s->closed = 1;
    s->conn = NULL;
    pthread_mutex_unlock(&s->lock);
    if (g_hub)
        hub_signal(g_hub);
    stream_unref(s);
}

/* Merge fetched positions: the stream's entry gets seq. */
static void stream_advance(logs_stream_t *s, const char *pod, const char *container, long seq)
{
    size_t i;
    json_t *p;
    json_array_foreach(s->positions, i, p) {
        if (!strcmp(json_string_value(json_object_get(p, "pod")), pod) &&
            !strcmp(json_string_value(json_object_get(p, "container")), container)) {
            if (json_integer_value(json_object_get(p, "seq")) < seq)
                json_object_set_new(p, "seq", json_integer(seq));
            return;
        }
    }
    json_array_append_new(s->positions, json_pack("{s:s, s:s, s:I}", "pod", pod, "container",
                                                  container, (json_int_t)seq));
}

/* Add streams that appeared (a new pod) at seq 0. */
static void stream_add_streams(logs_stream_t *s, const json_t *streams)
{
    size_t i;
    json_t *p;
    json_array_foreach(streams, i, p) {
        const char *pod = json_string_value(json_object_get(p, "pod"));
        const char *c = json_string_value(json_object_get(p, "container"));
        if (pod && c)
            stream_advance(s, pod, c, 0);
    }
}

/* One round of database work for s. RET: -1 when the connection broke. */
static int stream_serve(logs_hub_t *h, logs_stream_t *s, tg_db_conn_t *conn, uint64_t now)
{
    tg_log_sel_t sel = {
        .run_id = s->run_id, .attempt = s->attempt, .pod = s->pod, .container = s->container};
    int complete = 0;
    tg_rc_e rc = TG_OK;
    if (s->follow) {
        rc = tg_store_log_complete(conn, &sel, &complete);
        if (rc == TG_OK && now - s->last_pods_us >= STREAM_PODS_US) {
            json_t *streams = NULL;
            rc = tg_store_log_streams(conn, &sel, 0, &streams);
            if (rc == TG_OK)
                stream_add_streams(s, streams);
            json_decref(streams);
            s->last_pods_us = now;
        }
    }
    tg_log_chunk_t *chunks = NULL;
    size_t n = 0;
    if (rc == TG_OK)
        rc = tg_store_log_fetch(conn, &sel, s->positions, STREAM_FETCH_ROWS, STREAM_FETCH_BYTES,
                                &chunks, &n);
    if (rc != TG_OK) {
        tg_log_chunks_free(chunks, n);
        return rc == TG_EUNAVAILABLE ? -1 : 0;
    }
    tg_buf_t tmp;
    tg_buf_init(&tmp, 0);
    long lines = 0;
    for (size_t i = 0; i < n; i++) {
        long w = tg_run_logs_format(&tmp, chunks[i].content, chunks[i].len, chunks[i].id,
                                    chunks[i].pod, chunks[i].container, s->sse, s->timestamps,
                                    s->prefix, s->has_since, s->since_ns, &s->skip);
        lines += w > 0 ? w : 0;
        stream_advance(s, chunks[i].pod, chunks[i].container, chunks[i].seq);
    }
    s->last_poll_us = now;
    if (n)
        s->last_data_us = now;
    pthread_mutex_lock(&s->lock);
    if (tmp.len && tg_buf_append(&s->out, tmp.data, tmp.len) != TG_OK)
        stream_end_locked(s, "overflow");
    if (n == 0 && (!s->follow || complete))
        stream_end_locked(s, "complete");
    else if (s->follow && now - s->last_data_us >= (uint64_t)h->cfg.idle_timeout_s * 1000000)
        stream_end_locked(s, "idle");
    if (n)
        s->kick = 1; /* there may be more: fetch again once the buffer has room */
    stream_wake_locked(s);
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add(&h->served_total, (unsigned long long)lines);
    tg_buf_clean(&tmp);
    tg_log_chunks_free(chunks, n);
    return 0;
}

/* Keepalive comments and idle ends for streams with nothing to fetch. */
static void stream_housekeep(logs_hub_t *h, logs_stream_t *s, uint64_t now)
{
    pthread_mutex_lock(&s->lock);
    if (!s->done && s->follow) {
        if (now - s->last_data_us >= (uint64_t)h->cfg.idle_timeout_s * 1000000) {
            stream_end_locked(s, "idle");
        } else if (s->sse && s->suspended &&
                   now - s->last_write_us >= (uint64_t)h->cfg.keepalive_s * 1000000) {
            if (tg_buf_puts(&s->out, ": keepalive\n\n") == TG_OK) {
                s->last_write_us = now;
                stream_wake_locked(s);
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
}

/* ---- the notifier ---- */

static long long hub_max_id(tg_db_conn_t *conn)
{
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_max_id, 0, NULL, &rc);
    long long id = -1;
    if (r && PQntuples(r) == 1)
        id = atoll(PQgetvalue(r, 0, 0));
    PQclear(r);
    return id;
}

/* Take the list's live streams (with a reference each); drop closed ones. */
static logs_stream_t **hub_snapshot(logs_hub_t *h, size_t *n)
{
    pthread_mutex_lock(&h->lock);
    size_t count = 0;
    logs_stream_t **pp = &h->streams;
    while (*pp) {
        logs_stream_t *s = *pp;
        pthread_mutex_lock(&s->lock);
        int closed = s->closed;
        pthread_mutex_unlock(&s->lock);
        if (closed) {
            *pp = s->next;
            if (s->follow)
                h->nfollow--;
            stream_unref(s);
            continue;
        }
        count++;
        pp = &s->next;
    }
    logs_stream_t **arr = tg_xcalloc(count ? count : 1, sizeof(*arr));
    size_t i = 0;
    for (logs_stream_t *s = h->streams; s; s = s->next) {
        atomic_fetch_add(&s->refs, 1);
        arr[i++] = s;
    }
    pthread_mutex_unlock(&h->lock);
    *n = i;
    return arr;
}

static void *hub_main(void *arg)
{
    logs_hub_t *h = arg;
    for (;;) {
        pthread_mutex_lock(&h->lock);
        if (!h->signaled && !h->quit) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_nsec += (h->cfg.poll_ms % 1000) * 1000000;
            until.tv_sec += h->cfg.poll_ms / 1000 + until.tv_nsec / 1000000000;
            until.tv_nsec %= 1000000000;
            pthread_cond_timedwait(&h->cond, &h->lock, &until);
        }
        h->signaled = 0;
        int quit = h->quit;
        pthread_mutex_unlock(&h->lock);
        if (quit)
            break;

        size_t n = 0;
        logs_stream_t **arr = hub_snapshot(h, &n);
        tg_db_conn_t *conn = NULL;
        long long max_id = -2;
        for (size_t i = 0; i < n; i++) {
            logs_stream_t *s = arr[i];
            uint64_t now = tg_now_mono_us();
            pthread_mutex_lock(&s->lock);
            int over = s->done || s->closed;
            pthread_mutex_unlock(&s->lock);
            if (!over && s->access &&
                now - s->last_access_us >= (uint64_t)h->cfg.access_check_s * 1000000u) {
                if (!conn && tg_db_checkout(h->pool, &conn) != TG_OK) {
                    conn = NULL;
                    break; /* the database is away: try next tick */
                }
                tg_access_e a =
                    tg_stream_access_check(s->access, h->cfg.tenancy, conn, tg_now_wall_us());
                if (a != TG_ACCESS_UNKNOWN)
                    s->last_access_us = now;
                if (a == TG_ACCESS_REVOKED) {
                    stream_revoke(s);
                    continue;
                }
            }
            pthread_mutex_lock(&s->lock);
            int busy = s->done || s->closed || s->out.len - s->off >= h->cfg.buffer_bytes;
            int kick = s->kick;
            if (!busy)
                s->kick = 0;
            pthread_mutex_unlock(&s->lock);
            if (busy)
                continue;
            if (!conn && tg_db_checkout(h->pool, &conn) != TG_OK) {
                conn = NULL;
                break; /* the database is away: try next tick */
            }
            if (max_id == -2)
                max_id = hub_max_id(conn);
            int due = kick || max_id != s->seen_max || max_id < 0 ||
                      now - s->last_poll_us >= STREAM_RECHECK_US;
            if (due) {
                s->seen_max = max_id;
                if (stream_serve(h, s, conn, now) < 0) {
                    tg_db_release(h->pool, conn);
                    conn = NULL;
                    break;
                }
            }
            stream_housekeep(h, s, now);
        }
        tg_db_release(h->pool, conn);
        for (size_t i = 0; i < n; i++)
            stream_unref(arr[i]);
        free(arr);
    }
    return NULL;
}

/* ---- metrics ---- */

static void hub_metrics(tg_buf_t *out, void *arg)
{
    logs_hub_t *h = arg;
    pthread_mutex_lock(&h->lock);
    int follow = h->nfollow;
    pthread_mutex_unlock(&h->lock);
    tg_rc_e rc = tg_buf_printf(out,
                               "# HELP taugate_log_http_followers Clients following a run's log.\n"
                               "# TYPE taugate_log_http_followers gauge\n"
                               "taugate_log_http_followers %d\n"
                               "# HELP taugate_log_http_lines_total Log lines sent to clients.\n"
                               "# TYPE taugate_log_http_lines_total counter\n"
                               "taugate_log_http_lines_total %llu\n",
                               follow, atomic_load(&h->served_total));
    (void)rc;
}

/* ---- lifecycle ---- */

int tg_run_logs_hub_start(tg_db_pool_t *pool, const tg_logs_hub_config_t *cfg)
{
    pthread_mutex_lock(&g_hub_lock);
    if (g_hub) {
        pthread_mutex_unlock(&g_hub_lock);
        return -1;
    }
    logs_hub_t *h = tg_xcalloc(1, sizeof(*h));
    h->pool = pool;
    if (cfg)
        h->cfg = *cfg;
    if (h->cfg.max_followers <= 0)
        h->cfg.max_followers = 256;
    if (h->cfg.idle_timeout_s <= 0)
        h->cfg.idle_timeout_s = 300;
    if (h->cfg.poll_ms <= 0)
        h->cfg.poll_ms = 250;
    if (h->cfg.keepalive_s <= 0)
        h->cfg.keepalive_s = 15;
    if (h->cfg.access_check_s <= 0)
        h->cfg.access_check_s = 5;
    if (h->cfg.buffer_bytes == 0)
        h->cfg.buffer_bytes = 64 * 1024;
    pthread_mutex_init(&h->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&h->thread, NULL, hub_main, h) != 0) {
        pthread_cond_destroy(&h->cond);
        pthread_mutex_destroy(&h->lock);
        free(h);
        pthread_mutex_unlock(&g_hub_lock);
        return -1;
    }
    tg_metrics_register(hub_metrics, h);
    g_hub = h;
    pthread_mutex_unlock(&g_hub_lock);
    return 0;
}

void tg_run_logs_hub_stop(void)
{
    logs_hub_t *h = g_hub;
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    h->stopping = 1;
    for (logs_stream_t *s = h->streams; s; s = s->next) {
        pthread_mutex_lock(&s->lock);
        stream_end_locked(s, "shutdown");
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&h->lock);
}

void tg_run_logs_hub_free(void)
{
    pthread_mutex_lock(&g_hub_lock);
    logs_hub_t *h = g_hub;
    if (!h) {
        pthread_mutex_unlock(&g_hub_lock);
        return;
    }
    tg_run_logs_hub_stop();
    pthread_mutex_lock(&h->lock);
    h->quit = 1;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->thread, NULL);
    tg_metrics_unregister(hub_metrics, h);
    g_hub = NULL;
    pthread_mutex_unlock(&g_hub_lock);
    logs_stream_t *s = h->streams;
    while (s) {
        logs_stream_t *next = s->next;
        stream_unref(s); /* a response still alive keeps its own reference */
        s = next;
    }
    pthread_cond_destroy(&h->cond);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

tg_rc_e tg_run_logs_stream_reply(tg_req_t *req, tg_logs_stream_spec_t *spec)
{
    logs_hub_t *h = g_hub;
    json_t *positions = spec->positions;
    tg_stream_access_t *access = spec->access;
    spec->positions = NULL;
    spec->access = NULL;
    if (!h) {
        json_decref(positions);
        tg_stream_access_free(access);
        return TG_EUNAVAILABLE;
    }
    logs_stream_t *s = tg_xcalloc(1, sizeof(*s));
    atomic_init(&s->refs, 2); /* the hub's list and the response */
    pthread_mutex_init(&s->lock, NULL);
    tg_buf_init(&s->out, 0);
    s->conn = req->conn;
    snprintf(s->run_id, sizeof(s->run_id), "%s", spec->run_id);
    s->attempt = spec->attempt;
    s->pod = spec->pod ? tg_xstrdup(spec->pod) : NULL;
    s->container = spec->container ? tg_xstrdup(spec->container) : NULL;
    s->follow = spec->follow;
    s->sse = spec->sse;
    s->timestamps = spec->timestamps;
    s->prefix = spec->prefix;
    s->has_since = spec->has_since;
    s->since_ns = spec->since_ns;
    s->skip = spec->skip;
    s->positions = positions ? positions : json_array();
    s->access = access;
    s->kick = 1;
    s->seen_max = -1;
    uint64_t now = tg_now_mono_us();
    s->last_data_us = s->last_write_us = s->last_pods_us = s->last_access_us = now;

    pthread_mutex_lock(&h->lock);
    if (h->stopping || (s->follow && h->nfollow >= h->cfg.max_followers)) {
        pthread_mutex_unlock(&h->lock);
        atomic_store(&s->refs, 1);
        stream_unref(s);
        return TG_EUNAVAILABLE;
    }
    struct MHD_Response *resp = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_read, s, stream_response_free);
    if (!resp) {
        pthread_mutex_unlock(&h->lock);
        atomic_store(&s->refs, 1);
        stream_unref(s);
        return TG_EUNAVAILABLE;
    }
    s->next = h->streams;
    h->streams = s;
    if (s->follow)
        h->nfollow++;
    h->signaled = 1;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);

    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            s->sse ? "text/event-stream; charset=utf-8"
                                   : "text/plain; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    if (req->response)
        MHD_destroy_response(req->response);
    req->response = resp;
    req->status = 200;
    return TG_OK;
}
