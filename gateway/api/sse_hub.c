/* Streaming responses on suspended MHD connections, fed by one notifier
 * thread (see sse_hub.h). */
#include "api/sse_hub.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/ids.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/monotonic.h"

#define SSE_BLOCK        32768 /* bytes MHD asks the reader for at a time */
#define SSE_IDLE_TICK_US (60ULL * 1000000)
#define SSE_MAX_SOURCES  4

struct tg_sse_stream_s {
    atomic_int refs; /* the hub's list and the response */
    pthread_mutex_t lock;
    /* shared with the reader (lock) */
    struct MHD_Connection *conn;
    tg_buf_t out;
    size_t off;
    int suspended;
    int done;
    int closed; /* the response was freed */
    int more;   /* serve again once the client has read the buffer */
    uint64_t last_write_us;
    /* fixed at creation */
    tg_sse_source_t *src;
    int flags; /* TG_SSE_* */
    /* notifier only */
    void *state;
    tg_stream_access_t *access;
    uint64_t last_check_us;
    tg_sse_stream_t *next;
};

struct tg_sse_source_s {
    tg_sse_hub_t *hub;
    tg_sse_source_config_t cfg;
    int nstreams, ncounted; /* hub->lock */
    atomic_ullong bytes_total;
    atomic_ullong revoked_total;
    uint64_t last_tick_us; /* notifier only */
};

struct tg_sse_hub_s {
    tg_db_pool_t *pool;
    struct tg_tenancy_cache_s *tenancy;
    tg_sse_hub_config_t cfg;
    pthread_t thread;
    pthread_mutex_t lock; /* list, counts, sources, flags */
    pthread_cond_t cond;
    int stopping; /* refuse new streams */
    int quit;     /* the notifier ends */
    int signaled;
    tg_sse_stream_t *streams;
    tg_sse_source_t sources[SSE_MAX_SOURCES];
    int nsources;
};

/* ---- streams ---- */

static void sse_unref(tg_sse_stream_t *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    if (s->state && s->src->cfg.state_free)
        s->src->cfg.state_free(s->src->cfg.arg, s->state);
    tg_stream_access_free(s->access);
    tg_buf_clean(&s->out);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static void sse_hub_signal(tg_sse_hub_t *h)
{
    pthread_mutex_lock(&h->lock);
    h->signaled = 1;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

/* Resume a suspended connection that has something to do. s->lock held. */
static void sse_wake_locked(tg_sse_stream_t *s)
{
    if (s->suspended && s->conn && (s->off < s->out.len || s->done)) {
        s->suspended = 0;
        MHD_resume_connection(s->conn);
    }
}

static void sse_end_locked(tg_sse_stream_t *s, const char *reason)
{
    if (s->done)
        return;
    if (!(s->flags & TG_SSE_PLAIN) &&
        tg_buf_printf(&s->out, "event: end\ndata: {\"reason\":\"%s\"}\n\n", reason) != TG_OK)
        tg_log_debug("sse", "no room for the end event");
    s->done = 1;
    sse_wake_locked(s);
}

/* Drop what the client has not started to read: the buffer holds whole
 * events (lines for plain text), so it is cut at the first boundary at or
 * after the read offset. s->lock held. */
static void sse_cut_unsent_locked(tg_sse_stream_t *s)
{
    const char *sep = (s->flags & TG_SSE_PLAIN) ? "\n" : "\n\n";
    size_t seplen = strlen(sep), keep = 0;
    if (s->off > 0) {
        size_t from = s->off >= seplen ? s->off - seplen : 0;
        const char *hit = memmem(s->out.data + from, s->out.len - from, sep, seplen);
        keep = hit ? (size_t)(hit - s->out.data) + seplen : s->out.len;
        if (keep < s->off)
            keep = s->off;
    }
    s->out.len = keep;
    if (s->out.data)
        s->out.data[keep] = '\0';
}

tg_rc_e tg_sse_stream_write(tg_sse_stream_t *s, const char *data, size_t len)
{
    pthread_mutex_lock(&s->lock);
    tg_rc_e rc = s->done ? TG_OK : tg_buf_append(&s->out, data, len);
    if (rc != TG_OK)
        sse_end_locked(s, "overflow");
    else if (!s->done)
        s->last_write_us = tg_now_mono_us();
    sse_wake_locked(s);
    pthread_mutex_unlock(&s->lock);
    if (rc == TG_OK)
        atomic_fetch_add(&s->src->bytes_total, (unsigned long long)len);
    return rc;
}

size_t tg_sse_stream_budget(const tg_sse_stream_t *s)
{
    return s->src->hub->cfg.buffer_bytes;
}

void tg_sse_stream_more(tg_sse_stream_t *s)
{
    pthread_mutex_lock(&s->lock);
    s->more = 1;
    pthread_mutex_unlock(&s->lock);
}

void tg_sse_stream_end(tg_sse_stream_t *s, const char *reason)
{
    pthread_mutex_lock(&s->lock);
    sse_end_locked(s, reason);
    pthread_mutex_unlock(&s->lock);
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    tg_sse_stream_t *s = cls;
    (void)pos;
    pthread_mutex_lock(&s->lock);
    if (s->off < s->out.len) {
        size_t n = s->out.len - s->off;
        if (n > max)
            n = max;
        memcpy(buf, s->out.data + s->off, n);
        s->off += n;
        int drained = s->off == s->out.len;
        if (drained) {
            tg_buf_reset(&s->out);
            s->off = 0;
        }
        int want = drained && s->more && !s->done;
        pthread_mutex_unlock(&s->lock);
        if (want)
            sse_hub_signal(s->src->hub);
        return (ssize_t)n;
    }
    if (s->done) {
        pthread_mutex_unlock(&s->lock);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    s->suspended = 1;
    MHD_suspend_connection(s->conn);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static void sse_response_free(void *cls)
{
    tg_sse_stream_t *s = cls;
    pthread_mutex_lock(&s->lock);
    s->closed = 1;
    s->conn = NULL;
    pthread_mutex_unlock(&s->lock);
    sse_hub_signal(s->src->hub);
    sse_unref(s);
}

/* ---- the notifier ---- */

/* The live streams, with a reference each; closed ones leave the list.
 * *nsources: the sources added so far. */
static tg_sse_stream_t **sse_snapshot(tg_sse_hub_t *h, size_t *n, int *nsources)
{
    pthread_mutex_lock(&h->lock);
    size_t count = 0;
    tg_sse_stream_t **pp = &h->streams;
    while (*pp) {
        tg_sse_stream_t *s = *pp;
        pthread_mutex_lock(&s->lock);
        int closed = s->closed;
        pthread_mutex_unlock(&s->lock);
        if (closed) {
            *pp = s->next;
            s->src->nstreams--;
            if (!(s->flags & TG_SSE_UNCOUNTED))
                s->src->ncounted--;
            sse_unref(s);
            continue;
        }
        count++;
        pp = &s->next;
    }
    tg_sse_stream_t **arr = tg_xcalloc(count + 1, sizeof(*arr));
    size_t i = 0;
    for (tg_sse_stream_t *s = h->streams; s; s = s->next) {
        atomic_fetch_add(&s->refs, 1);
        arr[i++] = s;
    }
    *nsources = h->nsources;
    pthread_mutex_unlock(&h->lock);
    *n = i;
    return arr;
}

/* Access re-check, keepalive. RET: 1 when the stream should be served. */
static int sse_housekeep(tg_sse_hub_t *h, tg_sse_stream_t *s, tg_db_conn_t *conn, uint64_t now)
{
    pthread_mutex_lock(&s->lock);
    int over = s->done || s->closed;
    pthread_mutex_unlock(&s->lock);
    if (over)
        return 0;
    if (s->access && now - s->last_check_us >= (uint64_t)h->cfg.access_check_s * 1000000) {
        tg_access_e a = tg_stream_access_check(s->access, h->tenancy, conn, tg_now_wall_us());
        if (a != TG_ACCESS_UNKNOWN)
            s->last_check_us = now;
        if (a == TG_ACCESS_REVOKED) {
            atomic_fetch_add(&s->src->revoked_total, 1);
            pthread_mutex_lock(&s->lock);
            sse_cut_unsent_locked(s);
            sse_end_locked(s, "revoked");
            pthread_mutex_unlock(&s->lock);
            return 0;
        }
    }
    pthread_mutex_lock(&s->lock);
    int busy = s->done || s->closed || s->out.len - s->off >= h->cfg.buffer_bytes;
    if (!busy && !(s->flags & TG_SSE_PLAIN) && s->suspended &&
        now - s->last_write_us >= (uint64_t)h->cfg.keepalive_s * 1000000) {
        if (tg_buf_puts(&s->out, ": keepalive\n\n") == TG_OK) {
            s->last_write_us = now;
            sse_wake_locked(s);
        }
    }
    if (!busy)
        s->more = 0;
    pthread_mutex_unlock(&s->lock);
    return !busy;
}

static void sse_wait(tg_sse_hub_t *h)
{
    pthread_mutex_lock(&h->lock);
    if (!h->signaled && !h->quit) {
        struct timespec until = tg_mono_deadline_ms((uint64_t)h->cfg.poll_ms);
        pthread_cond_timedwait(&h->cond, &h->lock, &until);
    }
    h->signaled = 0;
    pthread_mutex_unlock(&h->lock);
}

/* One tick: each source's `tick` (when it has streams, or its idle minute
 * is up), then every stream with room. */
static void sse_round(tg_sse_hub_t *h)
{
    size_t n = 0;
    int nsrc = 0;
    tg_sse_stream_t **arr = sse_snapshot(h, &n, &nsrc);
    int due[SSE_MAX_SOURCES] = {0}, any = 0;
    tg_rc_e rc[SSE_MAX_SOURCES];
    uint64_t now = tg_now_mono_us();
    for (size_t i = 0; i < n; i++)
        due[arr[i]->src - h->sources] = 1;
    for (int k = 0; k < nsrc; k++) {
        due[k] = due[k] || now - h->sources[k].last_tick_us >= SSE_IDLE_TICK_US;
        any |= due[k];
        rc[k] = TG_EUNAVAILABLE;
    }
    tg_db_conn_t *conn = NULL;
    if (any && tg_db_checkout(h->pool, &conn) != TG_OK)
        conn = NULL; /* the database is away: next tick */
    int broken = !conn;
    for (int k = 0; !broken && k < nsrc; k++) {
        if (!due[k])
            continue;
        tg_sse_source_t *src = &h->sources[k];
        src->last_tick_us = now;
        rc[k] = src->cfg.tick ? src->cfg.tick(src->cfg.arg, conn) : TG_OK;
        broken = rc[k] == TG_EUNAVAILABLE;
    }
    for (size_t i = 0; !broken && i < n; i++) {
        tg_sse_stream_t *s = arr[i];
        if (rc[s->src - h->sources] != TG_OK || !sse_housekeep(h, s, conn, tg_now_mono_us()))
            continue;
        /* one stream's trouble does not hold up the others */
        broken = s->src->cfg.serve(s->src->cfg.arg, s, s->state, conn) == TG_EUNAVAILABLE;
    }
    tg_db_release(h->pool, conn);
    for (size_t i = 0; i < n; i++)
        sse_unref(arr[i]);
    free(arr);
}

static void *sse_main(void *arg)
{
    tg_sse_hub_t *h = arg;
    for (;;) {
        sse_wait(h);
        pthread_mutex_lock(&h->lock);
        int quit = h->quit;
        pthread_mutex_unlock(&h->lock);
        if (quit)
            break;
        sse_round(h);
    }
    return NULL;
}

/* ---- metrics ---- */

static void sse_metrics(tg_buf_t *out, void *arg)
{
    tg_sse_hub_t *h = arg;
    static const char *const help[] = {
        "# HELP taugate_sse_streams Streaming responses open.\n"
        "# TYPE taugate_sse_streams gauge\n",
        "# HELP taugate_sse_bytes_total Bytes of events queued for clients.\n"
        "# TYPE taugate_sse_bytes_total counter\n",
        "# HELP taugate_sse_revoked_total Streams ended because the caller lost access.\n"
        "# TYPE taugate_sse_revoked_total counter\n",
    };
    static const char *const names[] = {"taugate_sse_streams", "taugate_sse_bytes_total",
                                        "taugate_sse_revoked_total"};
    pthread_mutex_lock(&h->lock);
    tg_rc_e rc = TG_OK;
    for (int m = 0; rc == TG_OK && m < 3; m++) {
        rc = tg_buf_puts(out, help[m]);
        for (int k = 0; rc == TG_OK && k < h->nsources; k++) {
            tg_sse_source_t *src = &h->sources[k];
            unsigned long long v = m == 0   ? (unsigned long long)src->nstreams
                                   : m == 1 ? atomic_load(&src->bytes_total)
                                            : atomic_load(&src->revoked_total);
            rc = tg_buf_printf(out, "%s{stream=\"%s\"} %llu\n", names[m], src->cfg.name, v);
        }
    }
    pthread_mutex_unlock(&h->lock);
    if (rc != TG_OK)
        tg_log_debug("sse", "the metrics buffer is full");
}

/* ---- lifecycle ---- */

tg_sse_hub_t *tg_sse_hub_start(tg_db_pool_t *pool, struct tg_tenancy_cache_s *tenancy,
                               const tg_sse_hub_config_t *cfg)
{
    tg_sse_hub_t *h = tg_xcalloc(1, sizeof(*h));
    h->pool = pool;
    h->tenancy = tenancy;
    if (cfg)
        h->cfg = *cfg;
    if (h->cfg.poll_ms <= 0)
        h->cfg.poll_ms = 250;
    if (h->cfg.keepalive_s <= 0)
        h->cfg.keepalive_s = 15;
    if (h->cfg.access_check_s <= 0)
        h->cfg.access_check_s = 5;
    if (h->cfg.buffer_bytes == 0)
        h->cfg.buffer_bytes = 64 * 1024;
    pthread_mutex_init(&h->lock, NULL);
    tg_cond_init_monotonic(&h->cond);
    if (pthread_create(&h->thread, NULL, sse_main, h) != 0) {
        pthread_cond_destroy(&h->cond);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return NULL;
    }
    tg_metrics_register(sse_metrics, h);
    return h;
}

tg_sse_source_t *tg_sse_hub_source(tg_sse_hub_t *h, const tg_sse_source_config_t *cfg)
{
    if (!h)
        return NULL;
    pthread_mutex_lock(&h->lock);
    tg_sse_source_t *src = NULL;
    if (h->nsources < SSE_MAX_SOURCES) {
        src = &h->sources[h->nsources];
        src->hub = h;
        src->cfg = *cfg;
        if (!src->cfg.name)
            src->cfg.name = "sse";
        if (src->cfg.max_streams <= 0)
            src->cfg.max_streams = 256;
        if (src->cfg.ceiling_bytes == 0)
            src->cfg.ceiling_bytes = 4 * h->cfg.buffer_bytes;
        /* the first idle tick a minute from now: a starting process does
         * not compete for pooled connections with its first requests */
        src->last_tick_us = tg_now_mono_us();
        h->nsources++; /* the notifier sees it from its next snapshot on */
    }
    pthread_mutex_unlock(&h->lock);
    return src;
}

void tg_sse_hub_stop(tg_sse_hub_t *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    h->stopping = 1;
    for (tg_sse_stream_t *s = h->streams; s; s = s->next)
        tg_sse_stream_end(s, "shutdown");
    pthread_mutex_unlock(&h->lock);
}

void tg_sse_hub_free(tg_sse_hub_t *h)
{
    if (!h)
        return;
    tg_sse_hub_stop(h);
    pthread_mutex_lock(&h->lock);
    h->quit = 1;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->thread, NULL);
    tg_metrics_unregister(sse_metrics, h);
    tg_sse_stream_t *s = h->streams;
    while (s) {
        tg_sse_stream_t *next = s->next;
        sse_unref(s); /* the responses are gone with the HTTP server */
        s = next;
    }
    pthread_cond_destroy(&h->cond);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

tg_rc_e tg_sse_hub_reply(tg_sse_source_t *src, tg_req_t *req, void *state,
                         tg_stream_access_t *access, int flags)
{
    tg_sse_stream_t *s = tg_xcalloc(1, sizeof(*s));
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->lock, NULL);
    s->conn = req->conn;
    s->state = state;
    s->access = access;
    s->src = src;
    s->flags = flags;
    s->last_write_us = s->last_check_us = tg_now_mono_us();
    tg_sse_hub_t *h = src->hub;
    size_t ceiling = src->cfg.ceiling_bytes;
    tg_buf_init(&s->out, ceiling == SIZE_MAX ? 0 : ceiling);
    pthread_mutex_lock(&h->lock);
    struct MHD_Response *resp = NULL;
    int counted = !(flags & TG_SSE_UNCOUNTED);
    if (!h->stopping && (!counted || src->ncounted < src->cfg.max_streams))
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK, sse_read, s,
                                                 sse_response_free);
    if (!resp) {
        pthread_mutex_unlock(&h->lock);
        sse_unref(s);
        return TG_EUNAVAILABLE;
    }
    atomic_store(&s->refs, 2);
    s->next = h->streams;
    h->streams = s;
    src->nstreams++;
    src->ncounted += counted;
    h->signaled = 1;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);

    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            (flags & TG_SSE_PLAIN) ? "text/plain; charset=utf-8"
                                                   : "text/event-stream; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    if (req->response)
        MHD_destroy_response(req->response);
    req->response = resp;
    req->status = 200;
    return TG_OK;
}
