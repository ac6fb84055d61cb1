/* Work queues and timers. */
#include "work.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "store.h"
#include "util.h"

typedef struct {
    ks_map_t *queued; /* ref -> (void *)1 while queued */
    char **refs;
    size_t n, cap;
} ks_queue_t;

typedef struct {
    double when;
    int q;
    char *ref;
} ks_timer_t;

static ks_queue_t g_q[KS_WQ_COUNT];
static ks_timer_t *g_heap; /* min-heap on when */
static size_t g_nheap, g_capheap;
static ks_map_t *g_armed; /* "q\x1fref" -> malloc'd double: a timer already set for then */

void ks_work_init(void)
{
    for (int i = 0; i < KS_WQ_COUNT; i++)
        g_q[i].queued = ks_map_new();
    g_armed = ks_map_new();
}

static int free_val(const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    free(val);
    return 0;
}

void ks_work_free(void)
{
    for (int i = 0; i < KS_WQ_COUNT; i++) {
        ks_work_release(g_q[i].refs, g_q[i].n);
        ks_map_free(g_q[i].queued);
        memset(&g_q[i], 0, sizeof(g_q[i]));
    }
    for (size_t i = 0; i < g_nheap; i++)
        free(g_heap[i].ref);
    TG_FREE_NULL(g_heap);
    g_nheap = g_capheap = 0;
    if (g_armed) {
        ks_map_each(g_armed, free_val, NULL);
        ks_map_free(g_armed);
        g_armed = NULL;
    }
}

void ks_work_add(int q, const char *ref)
{
    ks_queue_t *wq = &g_q[q];
    if (ks_map_get(wq->queued, ref))
        return;
    ks_map_put(wq->queued, ref, (void *)1);
    if (wq->n == wq->cap) {
        wq->cap = wq->cap ? wq->cap * 2 : 256;
        wq->refs = tg_xrealloc(wq->refs, wq->cap * sizeof(*wq->refs));
    }
    wq->refs[wq->n++] = tg_xstrdup(ref);
    ks_store_mark_dirty();
}

void ks_work_add_obj(int q, int rt, json_t *obj)
{
    char ref[KS_REF_MAX];
    ks_ref_of(rt, obj, ref, sizeof(ref));
    ks_work_add(q, ref);
}

size_t ks_work_take(int q, size_t max, char ***refs)
{
    ks_queue_t *wq = &g_q[q];
    size_t n = wq->n < max ? wq->n : max;
    if (n == wq->n) {
        *refs = wq->refs;
        wq->refs = NULL;
        wq->n = wq->cap = 0;
        if (n) {
            ks_map_free(wq->queued);
            wq->queued = ks_map_new();
        }
        return n;
    }
    /* The oldest max; the rest wait for the next round. */
    *refs = tg_xcalloc(n, sizeof(**refs));
    memcpy(*refs, wq->refs, n * sizeof(**refs));
    memmove(wq->refs, wq->refs + n, (wq->n - n) * sizeof(*wq->refs));
    wq->n -= n;
    for (size_t i = 0; i < n; i++)
        ks_map_del(wq->queued, (*refs)[i]);
    return n;
}

void ks_work_release(char **refs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(refs[i]);
    free(refs);
}

int ks_work_pending(void)
{
    for (int i = 0; i < KS_WQ_COUNT; i++)
        if (g_q[i].n)
            return 1;
    return 0;
}

int ks_work_queued(const char *ref)
{
    for (int i = 0; i < KS_WQ_COUNT; i++)
        if (g_q[i].n && ks_map_get(g_q[i].queued, ref))
            return 1;
    return 0;
}

static void heap_swap(size_t a, size_t b)
{
    ks_timer_t t = g_heap[a];
    g_heap[a] = g_heap[b];
    g_heap[b] = t;
}

void ks_work_at(double when, int q, const char *ref)
{
    /* One timer per (queue, object, time): controllers re-arm the same
     * deadline on every sync. */
    char key[KS_REF_MAX + 16];
    snprintf(key, sizeof(key), "%d\x1f%s", q, ref);
    double *armed = ks_map_get(g_armed, key);
    if (armed && *armed == when)
        return;
    if (!armed) {
        armed = tg_xmalloc(sizeof(*armed));
        ks_map_put(g_armed, key, armed);
    }
    *armed = when;
    if (g_nheap == g_capheap) {
        g_capheap = g_capheap ? g_capheap * 2 : 256;
        g_heap = tg_xrealloc(g_heap, g_capheap * sizeof(*g_heap));
    }
    size_t i = g_nheap++;
    g_heap[i] = (ks_timer_t){when, q, tg_xstrdup(ref)};
    while (i > 0 && g_heap[(i - 1) / 2].when > g_heap[i].when) {
        heap_swap(i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    ks_store_mark_dirty();
}

static void heap_pop(void)
{
    free(g_heap[0].ref);
    g_heap[0] = g_heap[--g_nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < g_nheap && g_heap[l].when < g_heap[m].when)
            m = l;
        if (r < g_nheap && g_heap[r].when < g_heap[m].when)
            m = r;
        if (m == i)
            break;
        heap_swap(i, m);
        i = m;
    }
}

double ks_work_timers(double now)
{
    while (g_nheap && g_heap[0].when <= now) {
        char key[KS_REF_MAX + 16];
        snprintf(key, sizeof(key), "%d\x1f%s", g_heap[0].q, g_heap[0].ref);
        double *armed = ks_map_get(g_armed, key);
        if (armed && *armed == g_heap[0].when)
            free(ks_map_del(g_armed, key));
        ks_work_add(g_heap[0].q, g_heap[0].ref);
        heap_pop();
    }
    return g_nheap ? g_heap[0].when - now : -1;
}
