/* The work queue (see workqueue.h): a FIFO ring, a min-heap of delayed
 * items, and three string sets (dirty: queued or to be queued again;
 * processing; failures: item -> count), under one mutex. */
#include "engine/workqueue.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/monotonic.h"
#include "core/mem.h"

#define WQ_RETRY_BASE_MS 250L
#define WQ_RETRY_MAX_MS  30000L

typedef struct {
    uint64_t due_us;
    char *item;
} wq_delayed_t;

struct tg_workqueue_s {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char **ring; /* FIFO of queued items */
    size_t cap, head, len;
    wq_delayed_t *heap; /* by due_us */
    size_t hlen, hcap;
    json_t *dirty;      /* item -> true: queued, or to queue again when done */
    json_t *processing; /* item -> true */
    json_t *failures;   /* item -> consecutive failures */
    int shut;
};

static uint64_t wq_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

tg_workqueue_t *tg_workqueue_new(void)
{
    tg_workqueue_t *q = tg_xcalloc(1, sizeof(*q));
    pthread_mutex_init(&q->lock, NULL);
    tg_cond_init_monotonic(&q->cond);
    q->dirty = json_object();
    q->processing = json_object();
    q->failures = json_object();
    return q;
}

void tg_workqueue_free(tg_workqueue_t *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->len; i++)
        free(q->ring[(q->head + i) % q->cap]);
    for (size_t i = 0; i < q->hlen; i++)
        free(q->heap[i].item);
    free(q->ring);
    free(q->heap);
    json_decref(q->dirty);
    json_decref(q->processing);
    json_decref(q->failures);
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

/* ---- the ring and the heap (lock held) ------------------------------------- */

static void wq_push(tg_workqueue_t *q, char *item)
{
    if (q->len == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        char **r = tg_xmalloc(cap * sizeof(*r));
        for (size_t i = 0; i < q->len; i++)
            r[i] = q->ring[(q->head + i) % q->cap];
        free(q->ring);
        q->ring = r;
        q->cap = cap;
        q->head = 0;
    }
    q->ring[(q->head + q->len) % q->cap] = item;
    q->len++;
}

static char *wq_pop(tg_workqueue_t *q)
{
    char *item = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    return item;
}

static void wq_heap_push(tg_workqueue_t *q, uint64_t due, char *item)
{
    if (q->hlen == q->hcap) {
        q->hcap = q->hcap ? q->hcap * 2 : 64;
        q->heap = tg_xrealloc(q->heap, q->hcap * sizeof(*q->heap));
    }
    size_t i = q->hlen++;
    while (i > 0 && q->heap[(i - 1) / 2].due_us > due) {
        q->heap[i] = q->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->heap[i] = (wq_delayed_t){due, item};
}

static wq_delayed_t wq_heap_pop(tg_workqueue_t *q)
{
    wq_delayed_t top = q->heap[0];
    wq_delayed_t last = q->heap[--q->hlen];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->hlen)
            break;
        if (c + 1 < q->hlen && q->heap[c + 1].due_us < q->heap[c].due_us)
            c++;
        if (q->heap[c].due_us >= last.due_us)
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (q->hlen)
        q->heap[i] = last;
    return top;
}

/* Queue an item now; takes ownership of it. */
static void wq_add_owned(tg_workqueue_t *q, char *item)
{
    if (q->shut || json_object_get(q->dirty, item)) {
        free(item);
        return;
    }
    json_object_set_new(q->dirty, item, json_true());
    if (json_object_get(q->processing, item)) {
        free(item); /* queued again by done() */
        return;
    }
    wq_push(q, item);
    pthread_cond_signal(&q->cond);
}

/* Move the delayed items that are due to the queue. */
static void wq_promote(tg_workqueue_t *q, uint64_t now)
{
    while (q->hlen && q->heap[0].due_us <= now)
        wq_add_owned(q, wq_heap_pop(q).item);
}

/* ---- the API ------------------------------------------------------------------ */

void tg_workqueue_add(tg_workqueue_t *q, const char *item)
{
    pthread_mutex_lock(&q->lock);
    wq_add_owned(q, tg_xstrdup(item));
    pthread_mutex_unlock(&q->lock);
}

void tg_workqueue_add_after(tg_workqueue_t *q, const char *item, long delay_ms)
{
    if (delay_ms <= 0) {
        tg_workqueue_add(q, item);
        return;
    }
    pthread_mutex_lock(&q->lock);
    if (!q->shut) {
        int earliest = !q->hlen;
        uint64_t due = wq_now_us() + (uint64_t)delay_ms * 1000u;
        earliest = earliest || due < q->heap[0].due_us;
        wq_heap_push(q, due, tg_xstrdup(item));
        if (earliest)
            pthread_cond_broadcast(&q->cond); /* a sleeping worker must wake sooner */
    }
    pthread_mutex_unlock(&q->lock);
}

long tg_workqueue_retry(tg_workqueue_t *q, const char *item)
{
    pthread_mutex_lock(&q->lock);
    json_int_t n = json_integer_value(json_object_get(q->failures, item));
    json_object_set_new(q->failures, item, json_integer(n + 1));
    pthread_mutex_unlock(&q->lock);
    long d = WQ_RETRY_BASE_MS;
    for (json_int_t i = 0; i < n && d < WQ_RETRY_MAX_MS; i++)
        d *= 2;
    if (d > WQ_RETRY_MAX_MS)
        d = WQ_RETRY_MAX_MS;
    tg_workqueue_add_after(q, item, d);
    return d;
}

void tg_workqueue_forget(tg_workqueue_t *q, const char *item)
{
    pthread_mutex_lock(&q->lock);
    json_object_del(q->failures, item);
    pthread_mutex_unlock(&q->lock);
}

char *tg_workqueue_get(tg_workqueue_t *q)
{
    char *item = NULL;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        if (q->shut)
            break;
        uint64_t now = wq_now_us();
        wq_promote(q, now);
        if (q->len) {
            item = wq_pop(q);
            json_object_del(q->dirty, item);
            json_object_set_new(q->processing, item, json_true());
            break;
        }
        if (q->hlen) {
            uint64_t due = q->heap[0].due_us;
            struct timespec until = {.tv_sec = (time_t)(due / 1000000u),
                                     .tv_nsec = (long)(due % 1000000u) * 1000L};
            pthread_cond_timedwait(&q->cond, &q->lock, &until);
        } else {
            pthread_cond_wait(&q->cond, &q->lock);
        }
    }
    pthread_mutex_unlock(&q->lock);
    return item;
}

void tg_workqueue_done(tg_workqueue_t *q, char *item)
{
    if (!item)
        return;
    pthread_mutex_lock(&q->lock);
    json_object_del(q->processing, item);
    if (json_object_get(q->dirty, item) && !q->shut) {
        wq_push(q, item); /* added while we worked on it: look again */
        pthread_cond_signal(&q->cond);
        item = NULL;
    }
    pthread_mutex_unlock(&q->lock);
    free(item);
}

void tg_workqueue_shutdown(tg_workqueue_t *q)
{
    pthread_mutex_lock(&q->lock);
    q->shut = 1;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

size_t tg_workqueue_len(tg_workqueue_t *q)
{
    pthread_mutex_lock(&q->lock);
    size_t n = q->len;
    pthread_mutex_unlock(&q->lock);
    return n;
}

size_t tg_workqueue_delayed(tg_workqueue_t *q)
{
    pthread_mutex_lock(&q->lock);
    size_t n = q->hlen;
    pthread_mutex_unlock(&q->lock);
    return n;
}
