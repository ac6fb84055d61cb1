/* The watch event ring. */
#include "evring.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/monotonic.h"
#include "store.h"
#include "util.h"

struct ks_evline_s {
    atomic_int refs;
    char ns[64]; /* namespaces are DNS labels: at most 63 characters */
    size_t len;
    size_t obj_off; /* where the object starts in text */
    char text[];
};

static pthread_mutex_t g_rlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_rcond;
static ks_event_t *g_ring;
static size_t g_cap;
static size_t g_start; /* index of the oldest event */
static size_t g_len;
static size_t g_bytes;     /* event text held */
static size_t g_max_bytes; /* ... at most, beyond the newest KS_RING_MIN events */
static uint64_t g_floor;   /* events with rv <= floor were dropped */
static uint64_t g_last;    /* rv of the newest event */
static char *g_buf;        /* serialisation scratch, reused under the store lock */
static size_t g_bufcap;

static const char *type_names[] = {"ADDED", "MODIFIED", "DELETED"};

#define KS_RING_MIN 1000

void ks_ring_init(size_t cap, size_t max_bytes)
{
    g_max_bytes = max_bytes;
    tg_cond_init_monotonic(&g_rcond);
    g_cap = cap ? cap : 1;
    g_ring = tg_xcalloc(g_cap, sizeof(*g_ring));
}

void ks_ring_free(void)
{
    for (size_t i = 0; i < g_len; i++)
        ks_event_clean(&g_ring[(g_start + i) % g_cap]);
    TG_FREE_NULL(g_ring);
    g_len = 0;
    g_bytes = 0;
    TG_FREE_NULL(g_buf);
    g_bufcap = 0;
}

static ks_evline_t *line_new(int type, json_t *obj)
{
    size_t need;
    while ((need = json_dumpb(obj, g_buf, g_bufcap, JSON_COMPACT)) > g_bufcap) {
        g_bufcap = need + need / 2;
        g_buf = tg_xrealloc(g_buf, g_bufcap);
    }
    char head[48];
    int hl = snprintf(head, sizeof(head), "{\"type\":\"%s\",\"object\":", type_names[type]);
    size_t len = (size_t)hl + need + 2; /* "}\n" */
    ks_evline_t *line = tg_xmalloc(sizeof(*line) + len + 1);
    atomic_init(&line->refs, 1);
    ks_strlcpy(line->ns, ks_meta_ns(obj) ? ks_meta_ns(obj) : "", sizeof(line->ns));
    memcpy(line->text, head, (size_t)hl);
    memcpy(line->text + hl, g_buf, need);
    memcpy(line->text + hl + need, "}\n", 3);
    line->len = len;
    line->obj_off = (size_t)hl;
    return line;
}

ks_evline_t *ks_evline_of(json_t *obj)
{
    return line_new(KS_EV_ADDED, obj);
}

const char *ks_evline_object(const ks_evline_t *line, size_t *len)
{
    *len = line->len - line->obj_off - 2;
    return line->text + line->obj_off;
}

void ks_evline_release(ks_evline_t *line)
{
    if (line && atomic_fetch_sub(&line->refs, 1) == 1)
        free(line);
}

ks_evline_t *ks_ring_publish(uint64_t rv, int type, int rt, json_t *obj)
{
    ks_evline_t *line = line_new(type, obj);
    atomic_init(&line->refs, 2); /* the ring's and the caller's */
    ks_event_t dropped[16];
    size_t ndropped = 0;
    pthread_mutex_lock(&g_rlock);
    /* Room for one: the oldest go when the window is full by count, or by
     * bytes while more than the newest KS_RING_MIN remain (a few per call,
     * so no publish does much more than its share). */
    while (g_len && ndropped < 16 &&
           (g_len == g_cap || (g_bytes + line->len > g_max_bytes && g_len > KS_RING_MIN))) {
        ks_event_t *old = &g_ring[g_start];
        g_floor = old->rv;
        g_bytes -= old->line->len;
        dropped[ndropped++] = *old;
        g_start = (g_start + 1) % g_cap;
        g_len--;
    }
    ks_event_t *ev = &g_ring[(g_start + g_len) % g_cap];
    ev->rv = rv;
    ev->type = type;
    ev->rt = rt;
    ev->line = line;
    g_len++;
    g_bytes += line->len;
    g_last = rv;
    pthread_mutex_unlock(&g_rlock);
    for (size_t i = 0; i < ndropped; i++)
        ks_event_clean(&dropped[i]);
    return line;
}

void ks_ring_restart(uint64_t rv)
{
    pthread_mutex_lock(&g_rlock);
    if (rv > g_floor)
        g_floor = rv;
    if (rv > g_last)
        g_last = rv;
    pthread_mutex_unlock(&g_rlock);
}

void ks_ring_notify(void)
{
    pthread_mutex_lock(&g_rlock);
    pthread_cond_broadcast(&g_rcond);
    pthread_mutex_unlock(&g_rlock);
}

int ks_ring_wait(uint64_t rv, double secs)
{
    struct timespec ts = tg_mono_deadline_ms(secs > 0 ? (uint64_t)(secs * 1000) : 0);
    pthread_mutex_lock(&g_rlock);
    if (g_last <= rv)
        pthread_cond_timedwait(&g_rcond, &g_rlock, &ts);
    int newer = g_last > rv;
    pthread_mutex_unlock(&g_rlock);
    return newer;
}

uint64_t ks_ring_last_rv(void)
{
    pthread_mutex_lock(&g_rlock);
    uint64_t rv = g_last;
    pthread_mutex_unlock(&g_rlock);
    return rv;
}

size_t ks_events_since(uint64_t since, ks_event_t *out, size_t max)
{
    pthread_mutex_lock(&g_rlock);
    if (since < g_floor) {
        pthread_mutex_unlock(&g_rlock);
        return (size_t)-1;
    }
    /* Binary search for the first event with rv > since. */
    size_t lo = 0, hi = g_len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g_ring[(g_start + mid) % g_cap].rv <= since)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    for (size_t i = lo; i < g_len && n < max; i++, n++) {
        out[n] = g_ring[(g_start + i) % g_cap];
        atomic_fetch_add(&out[n].line->refs, 1);
    }
    pthread_mutex_unlock(&g_rlock);
    return n;
}

void ks_event_clean(ks_event_t *ev)
{
    if (!ev || !ev->line)
        return;
    ks_evline_release(ev->line);
    ev->line = NULL;
}

const char *ks_event_text(const ks_event_t *ev, size_t *len)
{
    *len = ev->line->len;
    return ev->line->text;
}

const char *ks_event_ns(const ks_event_t *ev)
{
    return ev->line->ns;
}

json_t *ks_event_object(const ks_event_t *ev)
{
    json_t *whole = json_loadb(ev->line->text, ev->line->len, 0, NULL);
    json_t *obj = json_incref(json_object_get(whole, "object"));
    json_decref(whole);
    return obj;
}
