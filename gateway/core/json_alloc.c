/* jansson's memory through a per-thread cache of freed small blocks. */
#include "core/json_alloc.h"

#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

#if defined(TG_ARENA_PLAIN_MALLOC) || defined(__SANITIZE_ADDRESS__)

void tg_json_alloc_install(void)
{
    /* Plain malloc: a cached block would hide a use after free from ASan. */
}

#else

/* Class c holds blocks whose usable size is at least 16c - 8: what glibc
 * gives a chunk of 16c bytes. A request of n bytes takes class (n + 23) / 16,
 * so any block of its class is large enough whatever the allocator rounds. */
#define JA_MIN_CLASS 2            /* 24 usable bytes: room for the free-list link */
#define JA_MAX_CLASS 65           /* 1032 usable bytes: up to a 64-bucket hash table */
#define JA_DEPTH     256          /* blocks kept per class: a request's worth of pairs */
#define JA_MAX_BYTES (256u << 10) /* cached bytes per thread, all classes */

typedef struct ja_cache_s {
    void *head[JA_MAX_CLASS + 1];
    unsigned n[JA_MAX_CLASS + 1];
    size_t bytes; /* 16c per cached block of class c */
    int ready;    /* the thread-exit destructor is registered */
} ja_cache_t;

/* Per thread: jansson's allocator is process-wide (json_set_alloc_funcs),
 * so its free lists are too; a cache, not state any caller can see. */
static __thread ja_cache_t ja_tls;
static pthread_key_t ja_key;
static pthread_once_t ja_once = PTHREAD_ONCE_INIT;
static int ja_key_ok;

/* At thread exit the cached blocks go back to malloc. */
static void ja_drain(void *arg)
{
    ja_cache_t *t = arg;
    for (int c = 0; c <= JA_MAX_CLASS; c++) {
        while (t->head[c]) {
            void *p = t->head[c];
            t->head[c] = *(void **)p;
            free(p);
        }
        t->n[c] = 0;
    }
    t->bytes = 0;
    t->ready = 0;
}

static void ja_key_init(void)
{
    ja_key_ok = pthread_key_create(&ja_key, ja_drain) == 0;
}

/* Register this thread's destructor once; without it nothing is cached. */
static int ja_ready(ja_cache_t *t)
{
    if (t->ready)
        return 1;
    pthread_once(&ja_once, ja_key_init);
    if (!ja_key_ok || pthread_setspecific(ja_key, t) != 0)
        return 0;
    t->ready = 1;
    return 1;
}

static void *ja_malloc(size_t n)
{
    size_t c = (n + 23) >> 4;
    ja_cache_t *t = &ja_tls;
    if (c < JA_MIN_CLASS)
        c = JA_MIN_CLASS;
    if (c <= JA_MAX_CLASS && t->head[c]) {
        void *p = t->head[c];
        t->head[c] = *(void **)p;
        t->n[c]--;
        t->bytes -= c << 4;
        return p;
    }
    return malloc(n);
}

static void ja_free(void *p)
{
    if (!p)
        return;
    size_t c = (malloc_usable_size(p) + 8) >> 4;
    ja_cache_t *t = &ja_tls;
    if (c >= JA_MIN_CLASS && c <= JA_MAX_CLASS && t->n[c] < JA_DEPTH &&
        t->bytes + (c << 4) <= JA_MAX_BYTES && ja_ready(t)) {
        *(void **)p = t->head[c];
        t->head[c] = p;
        t->n[c]++;
        t->bytes += c << 4;
        return;
    }
    free(p);
}

void tg_json_alloc_install(void)
{
    json_set_alloc_funcs(ja_malloc, ja_free);
}

#endif
