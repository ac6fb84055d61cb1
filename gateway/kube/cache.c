/* The informer's cache (see cache.h): two chained hash tables over one set
 * of entries, by key and by index key. */
#include "kube/cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_IKEY_MAX 512

typedef struct cache_entry_s {
    char *key;                   /* "ns/name" */
    char *uid;                   /* may be NULL */
    char *rv;                    /* may be NULL */
    char *acked;                 /* the resourceVersion the consumer committed, or NULL */
    char *text;                  /* the projected object as compact JSON; NULL without a mask */
    char *ikey;                  /* index key, or NULL */
    unsigned gen;                /* the list that last saw it */
    size_t bytes;                /* what the strings above take */
    struct cache_entry_s *next;  /* in its key bucket */
    struct cache_entry_s *inext; /* in its index bucket */
} cache_entry_t;

struct tg_kube_cache_s {
    pthread_mutex_t lock;
    json_t *mask;
    tg_kube_index_fn index;
    cache_entry_t **buckets;  /* by key */
    cache_entry_t **ibuckets; /* by index key; NULL without an index */
    size_t nbuckets;          /* power of two, shared by both tables */
    size_t count;
    size_t bytes;
    int current; /* listed, and no list or watch failed since */
};

static uint64_t cache_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static char *cache_dup(const char *s)
{
    return s ? tg_xstrdup(s) : NULL;
}

static int cache_streq(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

json_t *tg_kube_project(const json_t *obj, const json_t *mask)
{
    if (json_is_true(mask))
        return json_deep_copy(obj);
    if (json_is_array(mask)) {
        if (!json_is_array(obj))
            return NULL;
        const json_t *each = json_array_get(mask, 0);
        json_t *out = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(obj, i, x) {
            json_t *p = tg_kube_project(x, each);
            if (p)
                json_array_append_new(out, p);
        }
        return out;
    }
    if (!json_is_object(mask) || !json_is_object(obj))
        return NULL;
    json_t *out = json_object();
    const char *k;
    json_t *m;
    json_object_foreach((json_t *)mask, k, m) {
        const json_t *v = json_object_get(obj, k);
        json_t *p = v ? tg_kube_project(v, m) : NULL;
        if (p)
            json_object_set_new(out, k, p);
    }
    return out;
}

int tg_kube_cache_key(const char *ns, const char *name, char *buf, size_t len)
{
    if (!name)
        return -1;
    int n = snprintf(buf, len, "%s/%s", ns ? ns : "", name);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int cache_key_of(const json_t *obj, char *buf, size_t len, const char **uid, const char **rv)
{
    const json_t *meta = json_object_get(obj, "metadata");
    *uid = json_string_value(json_object_get(meta, "uid"));
    *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    return tg_kube_cache_key(json_string_value(json_object_get(meta, "namespace")),
                             json_string_value(json_object_get(meta, "name")), buf, len);
}

tg_kube_cache_t *tg_kube_cache_new(const json_t *mask, tg_kube_index_fn index)
{
    tg_kube_cache_t *c = tg_xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    c->mask = mask ? json_incref((json_t *)mask) : NULL;
    c->index = index;
    c->nbuckets = 64;
    c->buckets = tg_xcalloc(c->nbuckets, sizeof(*c->buckets));
    if (index)
        c->ibuckets = tg_xcalloc(c->nbuckets, sizeof(*c->ibuckets));
    return c;
}

static void cache_entry_free(cache_entry_t *e)
{
    free(e->key);
    free(e->uid);
    free(e->rv);
    free(e->acked);
    free(e->text);
    free(e->ikey);
    free(e);
}

void tg_kube_cache_free(tg_kube_cache_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nbuckets; i++)
        for (cache_entry_t *e = c->buckets[i], *next; e; e = next) {
            next = e->next;
            cache_entry_free(e);
        }
    free(c->buckets);
    free(c->ibuckets);
    json_decref(c->mask);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* ---- the two tables (lock held) ------------------------------------------- */

static cache_entry_t **cache_slot(tg_kube_cache_t *c, const char *key)
{
    cache_entry_t **p = &c->buckets[cache_hash(key) & (c->nbuckets - 1)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    return p;
}

static void cache_index_link(tg_kube_cache_t *c, cache_entry_t *e)
{
    if (!c->ibuckets || !e->ikey)
        return;
    cache_entry_t **head = &c->ibuckets[cache_hash(e->ikey) & (c->nbuckets - 1)];
    e->inext = *head;
    *head = e;
}

static void cache_index_unlink(tg_kube_cache_t *c, cache_entry_t *e)
{
    if (!c->ibuckets || !e->ikey)
        return;
    cache_entry_t **p = &c->ibuckets[cache_hash(e->ikey) & (c->nbuckets - 1)];
    while (*p && *p != e)
        p = &(*p)->inext;
    if (*p)
        *p = e->inext;
    e->inext = NULL;
}

static void cache_grow(tg_kube_cache_t *c)
{
    size_t n = c->nbuckets * 2;
    cache_entry_t **b = tg_xcalloc(n, sizeof(*b));
    cache_entry_t **ib = c->ibuckets ? tg_xcalloc(n, sizeof(*ib)) : NULL;
    for (size_t i = 0; i < c->nbuckets; i++)
        for (cache_entry_t *e = c->buckets[i], *next; e; e = next) {
            next = e->next;
            cache_entry_t **slot = &b[cache_hash(e->key) & (n - 1)];
            e->next = *slot;
            *slot = e;
            if (ib && e->ikey) {
                cache_entry_t **is = &ib[cache_hash(e->ikey) & (n - 1)];
                e->inext = *is;
                *is = e;
            }
        }
    free(c->buckets);
    free(c->ibuckets);
    c->buckets = b;
    c->ibuckets = ib;
    c->nbuckets = n;
}

static size_t cache_len(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

static void cache_account(tg_kube_cache_t *c, cache_entry_t *e)
{
    c->bytes -= e->bytes;
    e->bytes = sizeof(*e) + cache_len(e->key) + cache_len(e->uid) + cache_len(e->rv) +
               cache_len(e->acked) + cache_len(e->text) + cache_len(e->ikey);
    c->bytes += e->bytes;
}

static void cache_unlink(tg_kube_cache_t *c, cache_entry_t **slot)
{
    cache_entry_t *e = *slot;
    *slot = e->next;
    cache_index_unlink(c, e);
    c->bytes -= e->bytes;
    c->count--;
    cache_entry_free(e);
}

/* ---- the informer's side ------------------------------------------------- */

int tg_kube_cache_put(tg_kube_cache_t *c, const json_t *obj, unsigned gen, char **old_uid)
{
    char key[CACHE_IKEY_MAX], ikey[CACHE_IKEY_MAX];
    const char *uid, *rv;
    *old_uid = NULL;
    if (cache_key_of(obj, key, sizeof(key), &uid, &rv) != 0)
        return -1;
    /* projection and encoding happen outside the lock */
    char *text = NULL;
    int indexed = 0;
    if (c->mask) {
        json_t *p = tg_kube_project(obj, c->mask);
        text = p ? json_dumps(p, JSON_COMPACT) : NULL;
        indexed = p && c->index && c->index(p, ikey, sizeof(ikey));
        json_decref(p);
    }
    pthread_mutex_lock(&c->lock);
    cache_entry_t **slot = cache_slot(c, key);
    cache_entry_t *e = *slot;
    int changed = 1;
    if (!e) {
        e = tg_xcalloc(1, sizeof(*e));
        e->key = tg_xstrdup(key);
        e->uid = cache_dup(uid);
        *slot = e;
        c->count++;
    } else if (e->uid && uid && strcmp(e->uid, uid) != 0) {
        *old_uid = e->uid; /* another object under the same name */
        e->uid = cache_dup(uid);
        TG_FREE_NULL(e->acked);
    } else if (c->mask) {
        /* What counts is what the mask keeps, not the resourceVersion: a
         * new version that changed only what nobody reads is no change, and
         * an object changed under an old version (a restored API server)
         * is one. A version the consumer had not committed yet stays a
         * change, or acknowledging the older one would leave it behind. */
        int acked = cache_streq(e->acked, e->rv);
        int differs = !cache_streq(e->text, text);
        changed = differs || !acked;
        if (differs)
            TG_FREE_NULL(e->acked);
        else if (acked && !cache_streq(e->rv, rv)) {
            free(e->acked);
            e->acked = cache_dup(rv);
        }
    } else {
        changed = !rv || !cache_streq(e->rv, rv);
    }
    if (!cache_streq(e->rv, rv)) {
        free(e->rv);
        e->rv = cache_dup(rv);
    }
    if (changed || !e->text) {
        free(e->text);
        e->text = text;
        text = NULL;
    }
    cache_index_unlink(c, e);
    free(e->ikey);
    e->ikey = indexed ? tg_xstrdup(ikey) : NULL;
    cache_index_link(c, e);
    if (gen)
        e->gen = gen;
    cache_account(c, e);
    if (c->count > c->nbuckets)
        cache_grow(c);
    pthread_mutex_unlock(&c->lock);
    free(text);
    return changed;
}

void tg_kube_cache_remove(tg_kube_cache_t *c, const json_t *obj)
{
    char key[CACHE_IKEY_MAX];
    const char *uid, *rv;
    if (cache_key_of(obj, key, sizeof(key), &uid, &rv) != 0)
        return;
    pthread_mutex_lock(&c->lock);
    cache_entry_t **slot = cache_slot(c, key);
    if (*slot)
        cache_unlink(c, slot);
    pthread_mutex_unlock(&c->lock);
}

static json_t *cache_stub(const cache_entry_t *e)
{
    const char *slash = strchr(e->key, '/');
    json_t *meta = json_pack("{s:s}", "name", slash + 1);
    if (slash != e->key)
        json_object_set_new(meta, "namespace", json_stringn(e->key, (size_t)(slash - e->key)));
    if (e->uid)
        json_object_set_new(meta, "uid", json_string(e->uid));
    return json_pack("{s:o}", "metadata", meta);
}

json_t *tg_kube_cache_sweep(tg_kube_cache_t *c, unsigned gen)
{
    json_t *gone = json_array();
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->nbuckets; i++) {
        cache_entry_t **p = &c->buckets[i];
        while (*p) {
            if ((*p)->gen == gen) {
                p = &(*p)->next;
                continue;
            }
            json_array_append_new(gone, cache_stub(*p));
            cache_unlink(c, p);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return gone;
}

void tg_kube_cache_mark_current(tg_kube_cache_t *c, int current)
{
    pthread_mutex_lock(&c->lock);
    c->current = current;
    pthread_mutex_unlock(&c->lock);
}

/* ---- readers ---------------------------------------------------------------- */

json_t *tg_kube_cache_get(tg_kube_cache_t *c, const char *key, char *rv, size_t rvlen)
{
    json_t *obj = NULL;
    char *text = NULL;
    pthread_mutex_lock(&c->lock);
    cache_entry_t *e = *cache_slot(c, key);
    if (e) {
        text = cache_dup(e->text);
        if (rv && rvlen)
            snprintf(rv, rvlen, "%s", e->rv ? e->rv : "");
    }
    pthread_mutex_unlock(&c->lock);
    if (text) /* parse outside the lock: the informer must not wait on readers */
        obj = json_loads(text, 0, NULL);
    free(text);
    return obj;
}

json_t *tg_kube_cache_by_index(tg_kube_cache_t *c, const char *ikey)
{
    json_t *texts = json_array();
    pthread_mutex_lock(&c->lock);
    if (c->ibuckets)
        for (cache_entry_t *e = c->ibuckets[cache_hash(ikey) & (c->nbuckets - 1)]; e; e = e->inext)
            if (cache_streq(e->ikey, ikey) && e->text)
                json_array_append_new(texts, json_string(e->text));
    pthread_mutex_unlock(&c->lock);
    json_t *out = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(texts, i, t) {
        json_t *o = json_loads(json_string_value(t), 0, NULL);
        if (o)
            json_array_append_new(out, o);
    }
    json_decref(texts);
    return out;
}

size_t tg_kube_cache_index_unacked(tg_kube_cache_t *c, const char *ikey)
{
    size_t n = 0;
    pthread_mutex_lock(&c->lock);
    if (c->ibuckets)
        for (cache_entry_t *e = c->ibuckets[cache_hash(ikey) & (c->nbuckets - 1)]; e; e = e->inext)
            n += cache_streq(e->ikey, ikey) && !cache_streq(e->acked, e->rv);
    pthread_mutex_unlock(&c->lock);
    return n;
}

void tg_kube_cache_ack(tg_kube_cache_t *c, const char *key, const char *rv)
{
    pthread_mutex_lock(&c->lock);
    cache_entry_t *e = *cache_slot(c, key);
    if (e && rv && !cache_streq(e->acked, rv)) {
        free(e->acked);
        e->acked = tg_xstrdup(rv);
        cache_account(c, e);
    }
    pthread_mutex_unlock(&c->lock);
}

int tg_kube_cache_acked(tg_kube_cache_t *c, const char *key)
{
    pthread_mutex_lock(&c->lock);
    cache_entry_t *e = *cache_slot(c, key);
    int r = !e ? -1 : cache_streq(e->acked, e->rv);
    pthread_mutex_unlock(&c->lock);
    return r;
}

size_t tg_kube_cache_each_unacked(tg_kube_cache_t *c, void (*fn)(const char *key, void *arg),
                                  void *arg)
{
    json_t *keys = json_array();
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->nbuckets; i++)
        for (cache_entry_t *e = c->buckets[i]; e; e = e->next)
            if (!cache_streq(e->acked, e->rv))
                json_array_append_new(keys, json_string(e->key));
    pthread_mutex_unlock(&c->lock);
    size_t i, n = json_array_size(keys);
    json_t *k;
    json_array_foreach(keys, i, k) {
        fn(json_string_value(k), arg);
    }
    json_decref(keys);
    return n;
}

int tg_kube_cache_current(tg_kube_cache_t *c)
{
    pthread_mutex_lock(&c->lock);
    int s = c->current;
    pthread_mutex_unlock(&c->lock);
    return s;
}

size_t tg_kube_cache_count(tg_kube_cache_t *c)
{
    pthread_mutex_lock(&c->lock);
    size_t n = c->count;
    pthread_mutex_unlock(&c->lock);
    return n;
}

size_t tg_kube_cache_bytes(tg_kube_cache_t *c)
{
    pthread_mutex_lock(&c->lock);
    size_t n = c->bytes;
    pthread_mutex_unlock(&c->lock);
    return n;
}
