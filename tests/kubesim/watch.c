/* Watch streams. */
#include "watch.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "evring.h"
#include "store.h"
#include "table.h"
#include "util.h"

/* Events taken per fill: enough to batch, small enough that 100 watchers'
 * output buffers stay small. */
#define KS_WATCH_BATCH 64
/* After a wakeup, wait this long for more events before sending. */
#define KS_WATCH_COALESCE_US 2000
/* An emptied output buffer larger than this is freed, not kept. */
#define KS_WATCH_KEEP (256 * 1024)

typedef struct ks_watch_s {
    ks_target_t t;
    ks_sel_t *ls, *fs;
    uint64_t rv;
    int table, sent_cols, bookmarks, done;
    tg_buf_t out;
    size_t off;
    double deadline, next_bookmark;
    json_t **initial;
    size_t ninitial, iinitial;
    unsigned gen;
} ks_watch_t;

static atomic_uint g_close_gen;
static _Atomic double g_stall_until;
static atomic_int g_stall_rt = -1; /* -1: every resource */
static atomic_int g_watches;

void ks_watch_stall(double secs, int rt)
{
    g_stall_rt = rt;
    g_stall_until = ks_now() + secs;
}

void ks_watch_close_all(void)
{
    atomic_fetch_add(&g_close_gen, 1);
    ks_lock();
    ks_store_kick();
    ks_unlock();
}

int ks_watch_count(void)
{
    return atomic_load(&g_watches);
}

static int matches(ks_watch_t *w, int rt, json_t *o)
{
    if (rt != w->t.rt)
        return 0;
    if (w->t.ns[0] && !ks_streq(ks_meta_ns(o), w->t.ns))
        return 0;
    return ks_labelsel_match(w->ls, o) && ks_fieldsel_match(w->fs, o);
}

/* Does the watcher need each event's object, or is the shared line enough? */
static int needs_object(ks_watch_t *w)
{
    return w->table || !ks_sel_empty(w->ls) || !ks_sel_empty(w->fs);
}

static void emit(ks_watch_t *w, const char *type, json_t *o)
{
    json_t *obj;
    if (w->table) {
        obj = ks_table_build(w->t.rt, &o, 1, ks_jstr(o, "metadata.resourceVersion"), !w->sent_cols);
        w->sent_cols = 1;
    } else {
        obj = json_incref(o);
    }
    json_t *ev = json_pack("{s:s,s:o}", "type", type, "object", obj);
    char *s = json_dumps(ev, JSON_COMPACT);
    json_decref(ev);
    if (s) {
        if (tg_buf_puts(&w->out, s) != TG_OK || tg_buf_puts(&w->out, "\n") != TG_OK)
            w->done = 1;
        free(s);
    }
}

static void emit_bookmark(ks_watch_t *w)
{
    char rv[32], line[512], gv[128];
    const ks_rtype_t *rt = ks_rtype(w->t.rt);
    ks_rtype_gv(rt, gv, sizeof(gv));
    snprintf(rv, sizeof(rv), "%llu", (unsigned long long)w->rv);
    snprintf(line, sizeof(line),
             "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
             "\"metadata\":{\"resourceVersion\":\"%s\",\"creationTimestamp\":null}}}\n",
             rt->kind, gv, rv);
    if (tg_buf_puts(&w->out, line) != TG_OK)
        w->done = 1;
}

static void emit_gone(ks_watch_t *w, uint64_t asked)
{
    char line[512];
    snprintf(line, sizeof(line),
             "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
             "\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: "
             "%llu (%llu)\",\"reason\":\"Expired\",\"code\":410}}\n",
             (unsigned long long)asked, (unsigned long long)ks_ring_last_rv());
    if (tg_buf_puts(&w->out, line) != TG_OK)
        w->done = 1;
    w->done = 1;
}

/* Whether a stall (ks_watch_stall) holds back w's events at `now`. */
static int stalled(const ks_watch_t *w, double now)
{
    int rt = g_stall_rt;
    return now < g_stall_until && (rt < 0 || rt == w->t.rt);
}

/* Produce more output into w->out; may block up to about a second. */
static void fill(ks_watch_t *w)
{
    ks_event_t evs[KS_WATCH_BATCH];
    double now = ks_now();
    if (w->iinitial < w->ninitial) {
        for (int k = 0; k < 64 && w->iinitial < w->ninitial; k++) {
            /* Sent: the watch's reference goes (watch_free drops the rest). */
            json_t *o = w->initial[w->iinitial++];
            emit(w, "ADDED", o);
            json_decref(o);
        }
        return;
    }
    if (stalled(w, now)) {
        usleep(100000);
        return;
    }
    /* The ring has its own lock: watchers never wait for the store's. */
    size_t n = ks_events_since(w->rv, evs, KS_WATCH_BATCH);
    if (n == 0) {
        double wait = 1.0;
        if (w->bookmarks && w->next_bookmark - now < wait)
            wait = w->next_bookmark - now;
        if (w->deadline - now < wait)
            wait = w->deadline - now;
        if (wait > 0 && ks_ring_wait(w->rv, wait))
            usleep(KS_WATCH_COALESCE_US); /* let a burst gather: fewer wakeups and sends */
        if (stalled(w, ks_now()))
            return; /* a stall that began while this watch waited holds its events too */
        n = ks_events_since(w->rv, evs, KS_WATCH_BATCH);
    }
    uint64_t asked = w->rv;
    if (n == (size_t)-1) {
        emit_gone(w, asked);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        ks_event_t *ev = &evs[i];
        w->rv = ev->rv;
        if (ev->rt != w->t.rt || (w->t.ns[0] && strcmp(ks_event_ns(ev), w->t.ns))) {
            ks_event_clean(ev);
            continue;
        }
        if (needs_object(w)) {
            static const char *names[] = {"ADDED", "MODIFIED", "DELETED"};
            json_t *o = ks_event_object(ev);
            if (o && matches(w, ev->rt, o))
                emit(w, names[ev->type], o);
            json_decref(o);
        } else {
            /* Serialised once at publish time for every watcher. */
            size_t len;
            const char *text = ks_event_text(ev, &len);
            if (tg_buf_append(&w->out, text, len) != TG_OK)
                w->done = 1;
        }
        ks_event_clean(ev);
    }
    now = ks_now();
    if (w->bookmarks && now >= w->next_bookmark) {
        emit_bookmark(w);
        w->next_bookmark = now + ks_cfg.bookmark_secs;
    }
}

static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    ks_watch_t *w = cls;
    for (;;) {
        if (w->off < w->out.len) {
            size_t n = w->out.len - w->off;
            if (n > max)
                n = max;
            memcpy(buf, w->out.data + w->off, n);
            w->off += n;
            if (w->off == w->out.len) {
                if (w->out.cap > KS_WATCH_KEEP) {
                    tg_buf_clean(&w->out);
                    tg_buf_init(&w->out, 0);
                } else {
                    tg_buf_reset(&w->out);
                }
                w->off = 0;
            }
            return (ssize_t)n;
        }
        if (w->done || ks_stopping || atomic_load(&g_close_gen) != w->gen ||
            ks_now() >= w->deadline)
            return MHD_CONTENT_READER_END_OF_STREAM;
        fill(w);
    }
}

static void watch_free(void *cls)
{
    ks_watch_t *w = cls;
    if (!w)
        return;
    while (w->iinitial < w->ninitial)
        json_decref(w->initial[w->iinitial++]);
    free(w->initial);
    ks_sel_free(w->ls);
    ks_sel_free(w->fs);
    tg_buf_clean(&w->out);
    free(w);
    atomic_fetch_sub(&g_watches, 1);
}

void ks_watch_start(ks_req_t *r, ks_target_t *t, ks_sel_t *ls, ks_sel_t *fs)
{
    ks_watch_t *w = tg_xcalloc(1, sizeof(*w));
    w->t = *t;
    w->ls = ls;
    w->fs = fs;
    w->table = ks_req_wants_table(r);
    w->gen = atomic_load(&g_close_gen);
    tg_buf_init(&w->out, 0);
    w->bookmarks = ks_req_flag(r, "allowWatchBookmarks");
    const char *to = ks_req_query(r, "timeoutSeconds");
    double timeout = to ? strtod(to, NULL) : 1800;
    if (timeout <= 0)
        timeout = 1800;
    w->deadline = ks_now() + timeout;
    w->next_bookmark = ks_now() + ks_cfg.bookmark_secs;
    const char *rvs = ks_req_query(r, "resourceVersion");
    atomic_fetch_add(&g_watches, 1);
    ks_lock();
    if (!rvs || !*rvs || !strcmp(rvs, "0")) {
        /* No starting point: the current state as ADDED events first. */
        json_t **items = NULL;
        size_t n = ks_store_list_labeled(t->rt, t->ns, w->ls, &items);
        w->initial = tg_xcalloc(n ? n : 1, sizeof(*w->initial));
        for (size_t i = 0; i < n; i++)
            if (matches(w, t->rt, items[i]))
                w->initial[w->ninitial++] = json_incref(items[i]);
        free(items);
        w->rv = ks_store_rv();
    } else {
        w->rv = strtoull(rvs, NULL, 10);
        if (w->rv > ks_store_rv()) {
            /* From the future (a client of a server that lost changes
             * since its last save): refused as the watch cache does. */
            char msg[200];
            snprintf(msg, sizeof(msg), "Timeout: Too large resource version: %llu, current: %llu",
                     (unsigned long long)w->rv, (unsigned long long)ks_store_rv());
            ks_unlock();
            watch_free(w);
            ks_reply_status(r, 504, "Timeout", msg,
                            json_pack("{s:[{s:s,s:s}],s:i}", "causes", "reason",
                                      "ResourceVersionTooLarge", "message",
                                      "Too large resource version", "retryAfterSeconds", 1));
            return;
        }
    }
    ks_unlock();
    ks_reply_stream(r, "application/json", watch_read, w, watch_free);
}
