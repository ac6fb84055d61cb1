/* Per-request arena with cleanup hooks. */
#include "core/arena.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct arena_chunk_s {
    struct arena_chunk_s *next;
    size_t used;
    size_t size;
    _Alignas(16) unsigned char data[];
} arena_chunk_t;

typedef struct arena_cleanup_s {
    struct arena_cleanup_s *next;
    tg_cleanup_fn fn;
    void *arg;
} arena_cleanup_t;

struct tg_arena_s {
    arena_chunk_t *head;
    arena_cleanup_t *cleanups;
    size_t chunk_size;
};

static arena_chunk_t *arena_chunk_new(size_t size)
{
    arena_chunk_t *c = tg_xmalloc(sizeof(*c) + size);
    c->next = NULL;
    c->used = 0;
    c->size = size;
    return c;
}

tg_arena_t *tg_arena_new(size_t chunk_size)
{
    tg_arena_t *a = tg_xcalloc(1, sizeof(*a));
    a->chunk_size = chunk_size ? chunk_size : 4096;
    return a;
}

void tg_arena_free(tg_arena_t *a)
{
    if (!a)
        return;
    for (arena_cleanup_t *c = a->cleanups, *n; c; c = n) {
        n = c->next;
        c->fn(c->arg);
    }
    for (arena_chunk_t *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void *tg_arena_alloc(tg_arena_t *a, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    if (need == 0)
        need = 16;
#ifdef TG_ARENA_PLAIN_MALLOC
    arena_chunk_t *c = arena_chunk_new(n ? n : 1);
    c->next = a->head;
    a->head = c;
    memset(c->data, 0, n ? n : 1);
    return c->data;
#else
    arena_chunk_t *c = a->head;
    if (!c || c->size - c->used < need) {
        if (need > a->chunk_size / 2) {
            /* A big block gets its own chunk behind the current one, so the
             * current chunk's free space is not wasted. */
            arena_chunk_t *big = arena_chunk_new(need);
            big->used = need;
            if (c) {
                big->next = c->next;
                c->next = big;
            } else {
                a->head = big;
            }
            memset(big->data, 0, need);
            return big->data;
        }
        c = arena_chunk_new(a->chunk_size);
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += need;
    memset(p, 0, need);
    return p;
#endif
}

char *tg_arena_strndup(tg_arena_t *a, const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = tg_arena_alloc(a, len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *tg_arena_strdup(tg_arena_t *a, const char *s)
{
    return s ? tg_arena_strndup(a, s, strlen(s)) : NULL;
}

char *tg_arena_printf(tg_arena_t *a, const char *fmt, ...)
{
    va_list ap, cp;
    va_start(ap, fmt);
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        n = 0;
    char *p = tg_arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void tg_arena_on_free(tg_arena_t *a, tg_cleanup_fn fn, void *arg)
{
    arena_cleanup_t *c = tg_arena_alloc(a, sizeof(*c));
    c->fn = fn;
    c->arg = arg;
    c->next = a->cleanups;
    a->cleanups = c;
}
