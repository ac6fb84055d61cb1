/* The object store. */
#include "store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/monotonic.h"
#include "evring.h"
#include "map.h"
#include "util.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_ctl_cond;
static int g_published;   /* events published since the lock was taken */
static int g_dirty;       /* controller needs a pass */
static uint64_t g_rv = 1; /* last resourceVersion handed out */
static ks_map_t *g_objs[KS_RT_COUNT];
static ks_map_t *g_uids; /* uid -> malloc'd object reference */
static ks_store_observer_fn g_observer;
/* Objects replaced or removed while the lock is held. Callers may still
 * hold borrowed pointers to them, valid until they unlock. */
static json_t **g_graveyard;
static size_t g_ngrave, g_capgrave;

void ks_store_init(size_t ring_cap, size_t ring_bytes)
{
    tg_cond_init_monotonic(&g_ctl_cond);
    for (int i = 0; i < KS_RT_COUNT; i++)
        g_objs[i] = ks_map_new();
    g_uids = ks_map_new();
    ks_ring_init(ring_cap, ring_bytes);
}

void ks_store_set_observer(ks_store_observer_fn fn)
{
    g_observer = fn;
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
    ks_ring_free();
    for (size_t i = 0; i < g_ngrave; i++)
        json_decref(g_graveyard[i]);
    TG_FREE_NULL(g_graveyard);
    g_ngrave = g_capgrave = 0;
}

void ks_lock(void)
{
    pthread_mutex_lock(&g_lock);
}

static void bury(json_t *obj)
{
    if (g_ngrave == g_capgrave) {
        g_capgrave = g_capgrave ? g_capgrave * 2 : 256;
        g_graveyard = tg_xrealloc(g_graveyard, g_capgrave * sizeof(*g_graveyard));
    }
    g_graveyard[g_ngrave++] = obj;
}

void ks_unlock(void)
{
    for (size_t i = 0; i < g_ngrave; i++)
        json_decref(g_graveyard[i]);
    g_ngrave = 0;
    if (g_published) {
        g_published = 0;
        g_dirty = 1;
        pthread_cond_signal(&g_ctl_cond);
        ks_ring_notify();
    }
    pthread_mutex_unlock(&g_lock);
}

static void deadline(struct timespec *ts, double secs)
{
    *ts = tg_mono_deadline_ms(secs > 0 ? (uint64_t)(secs * 1000) : 0);
}

void ks_store_kick(void)
{
    pthread_cond_signal(&g_ctl_cond);
    ks_ring_notify();
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

json_t *ks_copy_for_status(json_t *obj)
{
    json_t *c = json_copy(obj);
    const char *deep[] = {"metadata", "status"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(obj, deep[i]);
        if (v)
            json_object_set_new(c, deep[i], json_deep_copy(v));
    }
    json_t *spec = json_object_get(obj, "spec");
    if (spec)
        json_object_set_new(c, "spec", json_copy(spec));
    return c;
}

void ks_ref_fmt(char *out, size_t n, int rt, const char *ns, const char *name)
{
    snprintf(out, n, "%d\x1f%s\x1f%s", rt, ns && ks_rtype(rt)->namespaced ? ns : "",
             name ? name : "");
}

void ks_ref_of(int rt, json_t *obj, char *out, size_t n)
{
    ks_ref_fmt(out, n, rt, ks_meta_ns(obj), ks_meta_name(obj));
}

json_t *ks_store_get_uid(const char *uid, int *rt)
{
    if (!uid)
        return NULL;
    const char *ref = ks_map_get(g_uids, uid);
    return ref ? ks_store_get_ref(ref, rt) : NULL;
}

json_t *ks_store_get_ref(const char *ref, int *rt)
{
    char buf[KS_REF_MAX];
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

/* obj is the new state (the last one for DELETED), old the previous one. */
static void publish(int type, int rt, json_t *obj, json_t *old)
{
    ks_ring_publish(g_rv, type, rt, obj);
    g_published = 1;
    if (g_observer)
        g_observer(rt, old, type == KS_EV_DELETED ? NULL : obj);
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
    char key[600], uid[40], ref[KS_REF_MAX];
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
    ks_ref_fmt(ref, sizeof(ref), rt, ns, name);
    free(ks_map_put(g_uids, ks_meta_uid(obj), tg_xstrdup(ref)));
    publish(KS_EV_ADDED, rt, obj, NULL);
    if (out)
        *out = obj;
    return KS_OK;
}

ks_rc_e ks_store_restore(int rt, json_t *obj)
{
    const ks_rtype_t *t = ks_rtype(rt);
    const char *ns = t->namespaced ? ks_meta_ns(obj) : NULL;
    const char *name = ks_meta_name(obj), *uid = ks_meta_uid(obj);
    const char *rvs = ks_jstr(obj, "metadata.resourceVersion");
    char key[600], ref[KS_REF_MAX];
    if (!name || !uid || !rvs) {
        json_decref(obj);
        return KS_EINVALID;
    }
    obj_key(ns, name, key, sizeof(key));
    if (ks_map_get(g_objs[rt], key)) {
        json_decref(obj);
        return KS_EEXIST;
    }
    uint64_t rv = strtoull(rvs, NULL, 10);
    if (rv > g_rv)
        g_rv = rv;
    ks_map_put(g_objs[rt], key, obj);
    ks_ref_fmt(ref, sizeof(ref), rt, ns, name);
    free(ks_map_put(g_uids, uid, tg_xstrdup(ref)));
    g_dirty = 1;
    if (g_observer)
        g_observer(rt, NULL, obj);
    return KS_OK;
}

void ks_store_restart_at(uint64_t rv)
{
    if (rv > g_rv)
        g_rv = rv;
    ks_ring_restart(g_rv);
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
    json_object_foreach(a, key, v) {
        if (!strcmp(key, skip))
            continue;
        if (!json_equal(v, json_object_get(b, key)))
            return 0;
    }
    json_object_foreach(b, key, v) {
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
    json_object_foreach(new_, key, v) {
        if (!strcmp(key, "metadata") || !strcmp(key, "status") || !strcmp(key, "kind") ||
            !strcmp(key, "apiVersion"))
            continue;
        if (!json_equal(v, json_object_get(old, key)))
            return 1;
    }
    json_object_foreach(old, key, v) {
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
    publish(KS_EV_MODIFIED, rt, obj, old);
    bury(old);
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
    /* The DELETED event carries the last state with a fresh resourceVersion:
     * a shallow copy with its own metadata leaves the published object as is. */
    json_t *last = json_copy(old);
    json_object_set_new(last, "metadata", json_copy(json_object_get(old, "metadata")));
    set_rv(last);
    publish(KS_EV_DELETED, rt, last, old);
    json_decref(last);
    bury(old);
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

typedef struct {
    int (*fn)(json_t *obj, void *arg);
    void *arg;
} each_ctx_t;

static int each_one(const char *key, void *val, void *arg)
{
    (void)key;
    each_ctx_t *c = arg;
    return c->fn(val, c->arg);
}

void ks_store_each(int rt, int (*fn)(json_t *obj, void *arg), void *arg)
{
    each_ctx_t c = {fn, arg};
    ks_map_each(g_objs[rt], each_one, &c);
}

size_t ks_store_count(int rt)
{
    return ks_map_len(g_objs[rt]);
}
