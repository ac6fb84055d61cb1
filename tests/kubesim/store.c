/* The object store and watch event ring. */
#include "store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "util.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_watch_cond;
static pthread_cond_t g_ctl_cond;
static int g_published;   /* events published since the lock was taken */
static int g_dirty;       /* controller needs a pass */
static uint64_t g_rv = 1; /* last resourceVersion handed out */
static ks_map_t *g_objs[KS_RT_COUNT];
static ks_map_t *g_uids; /* uid -> malloc'd "rt\x1fns\x1fname" */

static ks_event_t *g_ring;
static size_t g_ring_cap;
static size_t g_ring_start; /* index of the oldest event */
static size_t g_ring_len;
static uint64_t g_ring_floor; /* events with rv <= floor were dropped */

void ks_store_init(size_t ring_cap)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_watch_cond, &ca);
    pthread_cond_init(&g_ctl_cond, &ca);
    pthread_condattr_destroy(&ca);
    for (int i = 0; i < KS_RT_COUNT; i++)
        g_objs[i] = ks_map_new();
    g_uids = ks_map_new();
    g_ring_cap = ring_cap ? ring_cap : 1;
    g_ring = tg_xcalloc(g_ring_cap, sizeof(*g_ring));
}

static int free_obj(const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    json_decref(val);
    return 0;
}

static int free_str(const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    free(val);
    return 0;
}

void ks_store_shutdown(void)
{
    for (int i = 0; i < KS_RT_COUNT; i++) {
        if (!g_objs[i])
            continue;
        ks_map_each(g_objs[i], free_obj, NULL);
        ks_map_free(g_objs[i]);
        g_objs[i] = NULL;
    }
    if (g_uids) {
        ks_map_each(g_uids, free_str, NULL);
        ks_map_free(g_uids);
        g_uids = NULL;
    }
    for (size_t i = 0; i < g_ring_len; i++)
        ks_event_clean(&g_ring[(g_ring_start + i) % g_ring_cap]);
    TG_FREE_NULL(g_ring);
    g_ring_len = 0;
}

void ks_lock(void)
{
    pthread_mutex_lock(&g_lock);
}

void ks_unlock(void)
{
    if (g_published) {
        g_published = 0;
        g_dirty = 1;
        pthread_cond_broadcast(&g_watch_cond);
        pthread_cond_signal(&g_ctl_cond);
    }
    pthread_mutex_unlock(&g_lock);
}

static void deadline(struct timespec *ts, double secs)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    long long ns = (long long)(secs * 1e9) + ts->tv_nsec;
    ts->tv_sec += (time_t)(ns / 1000000000LL);
    ts->tv_nsec = (long)(ns % 1000000000LL);
}

void ks_store_wait(double secs)
{
    struct timespec ts;
    deadline(&ts, secs);
    pthread_cond_timedwait(&g_watch_cond, &g_lock, &ts);
}

void ks_store_kick(void)
{
    pthread_cond_broadcast(&g_watch_cond);
    pthread_cond_signal(&g_ctl_cond);
}

int ks_store_wait_dirty(double secs)
{
    if (!g_dirty) {
        struct timespec ts;
        deadline(&ts, secs);
        pthread_cond_timedwait(&g_ctl_cond, &g_lock, &ts);
    }
    int d = g_dirty;
    g_dirty = 0;
    return d;
}

void ks_store_mark_dirty(void)
{
    g_dirty = 1;
    pthread_cond_signal(&g_ctl_cond);
}

uint64_t ks_store_rv(void)
{
    return g_rv;
}

static void obj_key(const char *ns, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", ns ? ns : "", name ? name : "");
}

json_t *ks_store_get(int rt, const char *ns, const char *name)
{
    char key[600];
    if (rt < 0 || rt >= KS_RT_COUNT || !name)
        return NULL;
    obj_key(ks_rtype(rt)->namespaced ? ns : NULL, name, key, sizeof(key));
    return ks_map_get(g_objs[rt], key);
}

json_t *ks_store_copy(int rt, const char *ns, const char *name)
{
    json_t *o = ks_store_get(rt, ns, name);
    return o ? json_deep_copy(o) : NULL;
}

json_t *ks_store_get_uid(const char *uid, int *rt)
{
    if (!uid)
        return NULL;
    const char *ref = ks_map_get(g_uids, uid);
    if (!ref)
        return NULL;
    char buf[600];
    ks_strlcpy(buf, ref, sizeof(buf));
    char *s1 = strchr(buf, '\x1f');
    if (!s1)
        return NULL;
    *s1 = '\0';
    char *s2 = strchr(s1 + 1, '\x1f');
    if (!s2)
        return NULL;
    *s2 = '\0';
    int t = atoi(buf);
    if (rt)
        *rt = t;
    return ks_store_get(t, s1 + 1, s2 + 1);
}

static void publish(int type, int rt, json_t *obj)
{
    if (g_ring_len == g_ring_cap) {
        ks_event_t *old = &g_ring[g_ring_start];
        g_ring_floor = old->rv;
        ks_event_clean(old);
        g_ring_start = (g_ring_start + 1) % g_ring_cap;
        g_ring_len--;
    }
    ks_event_t *ev = &g_ring[(g_ring_start + g_ring_len) % g_ring_cap];
    ev->rv = g_rv;
    ev->type = type;
    ev->rt = rt;
    ev->obj = json_incref(obj);
    g_ring_len++;
    g_published = 1;
}

static void set_rv(json_t *obj)
{
    char rv[32];
    snprintf(rv, sizeof(rv), "%llu", (unsigned long long)++g_rv);
    ks_jset(obj, "metadata.resourceVersion", json_string(rv));
}

ks_rc_e ks_store_create(int rt, json_t *obj, json_t **out)
{
    const ks_rtype_t *t = ks_rtype(rt);
    const char *ns = t->namespaced ? ks_meta_ns(obj) : NULL;
    const char *name = ks_meta_name(obj);
    char key[600], uid[40], ref[700];
    if (!name) {
        json_decref(obj);
        return KS_EINVALID;
    }
    obj_key(ns, name, key, sizeof(key));
    if (ks_map_get(g_objs[rt], key)) {
        json_decref(obj);
        return KS_EEXIST;
    }
    if (!t->namespaced)
        ks_jdel(obj, "metadata.namespace");
    /* A restored object (state file) keeps its identity. */
    if (!ks_meta_uid(obj)) {
        ks_uuid(uid, sizeof(uid));
        ks_jset(obj, "metadata.uid", json_string(uid));
    }
    if (!ks_jstr(obj, "metadata.creationTimestamp"))
        ks_jset(obj, "metadata.creationTimestamp", ks_json_now());
    if (!ks_jget(obj, "metadata.generation"))
        ks_jset(obj, "metadata.generation", json_integer(1));
    set_rv(obj);
    ks_map_put(g_objs[rt], key, obj);
    snprintf(ref, sizeof(ref), "%d\x1f%s\x1f%s", rt, ns ? ns : "", name);
    free(ks_map_put(g_uids, ks_meta_uid(obj), tg_xstrdup(ref)));
    publish(KS_EV_ADDED, rt, obj);
    if (out)
        *out = obj;
    return KS_OK;
}

/* Equal apart from metadata.resourceVersion? Then skip the write. Reads
 * only: `old` is published and may be serialised by other threads. */
static int obj_equal_except(json_t *a, json_t *b, const char *skip)
{
    const char *key;
    json_t *v;
    if (json_object_size(a) != json_object_size(b)) {
        /* Sizes may differ only by the skipped key. */
        size_t sa = json_object_size(a) - (json_object_get(a, skip) ? 1 : 0);
        size_t sb = json_object_size(b) - (json_object_get(b, skip) ? 1 : 0);
        if (sa != sb)
            return 0;
    }
    json_object_foreach(a, key, v)
    {
        if (!strcmp(key, skip))
            continue;
        if (!json_equal(v, json_object_get(b, key)))
            return 0;
    }
    json_object_foreach(b, key, v)
    {
        if (!strcmp(key, skip))
            continue;
        if (!json_object_get(a, key))
            return 0;
    }
    return 1;
}

static int same_object(json_t *a, json_t *b)
{
    return obj_equal_except(a, b, "metadata") &&
           obj_equal_except(json_object_get(a, "metadata"), json_object_get(b, "metadata"),
                            "resourceVersion");
}

static int spec_changed(json_t *old, json_t *new_)
{
    const char *key;
    json_t *v;
    json_object_foreach(new_, key, v)
    {
        if (!strcmp(key, "metadata") || !strcmp(key, "status") || !strcmp(key, "kind") ||
            !strcmp(key, "apiVersion"))
            continue;
        if (!json_equal(v, json_object_get(old, key)))
            return 1;
    }
    json_object_foreach(old, key, v)
    {
        if (!strcmp(key, "metadata") || !strcmp(key, "status") || !strcmp(key, "kind") ||
            !strcmp(key, "apiVersion"))
            continue;
        if (!json_object_get(new_, key))
            return 1;
    }
    return 0;
}

ks_rc_e ks_store_update(int rt, json_t *obj, json_t **out)
{
    const ks_rtype_t *t = ks_rtype(rt);
    const char *ns = t->namespaced ? ks_meta_ns(obj) : NULL;
    const char *name = ks_meta_name(obj);
    char key[600];
    if (out)
        *out = NULL;
    obj_key(ns, name, key, sizeof(key));
    json_t *old = ks_map_get(g_objs[rt], key);
    if (!old) {
        json_decref(obj);
        return KS_ENOTFOUND;
    }
    /* Identity fields are the server's. */
    ks_jset(obj, "metadata.uid", json_incref(ks_jget(old, "metadata.uid")));
    ks_jset(obj, "metadata.creationTimestamp",
            json_incref(ks_jget(old, "metadata.creationTimestamp")));
    if (!t->namespaced)
        ks_jdel(obj, "metadata.namespace");
    long long gen = ks_jint(old, "metadata.generation", 1);
    if (spec_changed(old, obj))
        gen++;
    ks_jset(obj, "metadata.generation", json_integer(gen));
    /* A deleting object whose finalizers are all gone disappears. Pods are
     * the exception: the kubelet removes them once their processes end. */
    json_t *fin = ks_jget(obj, "metadata.finalizers");
    if (ks_jget(obj, "metadata.deletionTimestamp") && json_array_size(fin) == 0 &&
        rt != KS_RT_PODS) {
        char nsb[256], nameb[256];
        ks_strlcpy(nsb, ns ? ns : "", sizeof(nsb));
        ks_strlcpy(nameb, name, sizeof(nameb));
        json_decref(obj);
        return ks_store_remove(rt, nsb, nameb);
    }
    if (fin && json_array_size(fin) == 0)
        ks_jdel(obj, "metadata.finalizers");
    if (same_object(old, obj)) {
        json_decref(obj);
        if (out)
            *out = old;
        return KS_OK;
    }
    set_rv(obj);
    ks_map_put(g_objs[rt], key, obj);
    publish(KS_EV_MODIFIED, rt, obj);
    json_decref(old);
    if (out)
        *out = obj;
    return KS_OK;
}

ks_rc_e ks_store_remove(int rt, const char *ns, const char *name)
{
    char key[600];
    obj_key(ks_rtype(rt)->namespaced ? ns : NULL, name, key, sizeof(key));
    json_t *old = ks_map_del(g_objs[rt], key);
    if (!old)
        return KS_ENOTFOUND;
    free(ks_map_del(g_uids, ks_meta_uid(old)));
    /* The DELETED event carries the last state with a fresh resourceVersion. */
    json_t *last = json_deep_copy(old);
    json_decref(old);
    set_rv(last);
    publish(KS_EV_DELETED, rt, last);
    json_decref(last);
    return KS_OK;
}

typedef struct {
    const char *ns;
    json_t **items;
    size_t n, cap;
} list_ctx_t;

static int list_one(const char *key, void *val, void *arg)
{
    (void)key;
    list_ctx_t *c = arg;
    if (c->ns && !ks_streq(ks_meta_ns(val), c->ns))
        return 0;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->items = tg_xrealloc(c->items, c->cap * sizeof(*c->items));
    }
    c->items[c->n++] = val;
    return 0;
}

static int cmp_obj(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    const char *nx = ks_meta_ns(x), *ny = ks_meta_ns(y);
    int c = strcmp(nx ? nx : "", ny ? ny : "");
    if (c)
        return c;
    return strcmp(ks_meta_name(x), ks_meta_name(y));
}

size_t ks_store_list(int rt, const char *ns, json_t ***items)
{
    list_ctx_t c = {ns && *ns ? ns : NULL, NULL, 0, 0};
    ks_map_each(g_objs[rt], list_one, &c);
    if (c.n > 1)
        qsort(c.items, c.n, sizeof(*c.items), cmp_obj);
    *items = c.items;
    return c.n;
}

size_t ks_store_count(int rt)
{
    return ks_map_len(g_objs[rt]);
}

size_t ks_events_since(uint64_t since, ks_event_t *out, size_t max)
{
    if (since < g_ring_floor)
        return (size_t)-1;
    /* Binary search for the first event with rv > since. */
    size_t lo = 0, hi = g_ring_len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g_ring[(g_ring_start + mid) % g_ring_cap].rv <= since)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    for (size_t i = lo; i < g_ring_len && n < max; i++, n++) {
        ks_event_t *ev = &g_ring[(g_ring_start + i) % g_ring_cap];
        out[n] = *ev;
        json_incref(out[n].obj);
    }
    return n;
}

void ks_event_clean(ks_event_t *ev)
{
    if (!ev)
        return;
    json_decref(ev->obj);
    ev->obj = NULL;
}
