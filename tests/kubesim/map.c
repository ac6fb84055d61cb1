/* String-keyed hash map (chained, power-of-two buckets, grows at load 1). */
#include "map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

typedef struct ks_mapent_s {
    struct ks_mapent_s *next;
    uint64_t hash;
    void *val;
    char key[];
} ks_mapent_t;

struct ks_map_s {
    ks_mapent_t **b;
    size_t nb;
    size_t len;
};

static uint64_t map_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

ks_map_t *ks_map_new(void)
{
    ks_map_t *m = tg_xcalloc(1, sizeof(*m));
    m->nb = 64;
    m->b = tg_xcalloc(m->nb, sizeof(*m->b));
    return m;
}

void ks_map_free(ks_map_t *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nb; i++) {
        ks_mapent_t *e = m->b[i];
        while (e) {
            ks_mapent_t *n = e->next;
            free(e);
            e = n;
        }
    }
    free(m->b);
    free(m);
}

static void map_grow(ks_map_t *m)
{
    size_t nb = m->nb * 2;
    ks_mapent_t **b = tg_xcalloc(nb, sizeof(*b));
    for (size_t i = 0; i < m->nb; i++) {
        ks_mapent_t *e = m->b[i];
        while (e) {
            ks_mapent_t *n = e->next;
            size_t j = e->hash & (nb - 1);
            e->next = b[j];
            b[j] = e;
            e = n;
        }
    }
    free(m->b);
    m->b = b;
    m->nb = nb;
}

void *ks_map_get(const ks_map_t *m, const char *key)
{
    uint64_t h = map_hash(key);
    for (ks_mapent_t *e = m->b[h & (m->nb - 1)]; e; e = e->next)
        if (e->hash == h && strcmp(e->key, key) == 0)
            return e->val;
    return NULL;
}

void *ks_map_put(ks_map_t *m, const char *key, void *val)
{
    uint64_t h = map_hash(key);
    size_t i = h & (m->nb - 1);
    for (ks_mapent_t *e = m->b[i]; e; e = e->next) {
        if (e->hash == h && strcmp(e->key, key) == 0) {
            void *old = e->val;
            e->val = val;
            return old;
        }
    }
    size_t kl = strlen(key);
    ks_mapent_t *e = tg_xmalloc(sizeof(*e) + kl + 1);
    memcpy(e->key, key, kl + 1);
    e->hash = h;
    e->val = val;
    e->next = m->b[i];
    m->b[i] = e;
    if (++m->len > m->nb)
        map_grow(m);
    return NULL;
}

void *ks_map_del(ks_map_t *m, const char *key)
{
    uint64_t h = map_hash(key);
    ks_mapent_t **pp = &m->b[h & (m->nb - 1)];
    for (; *pp; pp = &(*pp)->next) {
        ks_mapent_t *e = *pp;
        if (e->hash == h && strcmp(e->key, key) == 0) {
            void *v = e->val;
            *pp = e->next;
            free(e);
            m->len--;
            return v;
        }
    }
    return NULL;
}

size_t ks_map_len(const ks_map_t *m)
{
    return m->len;
}

void ks_map_each(const ks_map_t *m, int (*fn)(const char *key, void *val, void *arg), void *arg)
{
    for (size_t i = 0; i < m->nb; i++)
        for (ks_mapent_t *e = m->b[i]; e; e = e->next)
            if (fn(e->key, e->val, arg))
                return;
}
