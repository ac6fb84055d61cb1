/* The object store. */
#include "store.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/common_interface_defs.h>
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/monotonic.h"
#include "evring.h"
#include "map.h"
#include "selectors.h"
#include "util.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/* Who holds g_lock: the cold store's zlib streams and scratch buffer are
 * shared, so a caller without the lock would corrupt another's object. */
static pthread_t g_holder;
static int g_held;
static pthread_cond_t g_ctl_cond;
static int g_published;   /* events published since the lock was taken */
static int g_dirty;       /* controller needs a pass */
static uint64_t g_rv = 1; /* last resourceVersion handed out */
/* What the maps of g_objs hold. An object is warm (the jansson value
 * controllers read) while it is in use, and cold once a sweep found it
 * unused for a whole period: most objects of a busy cluster are finished
 * Jobs, pods, Workloads and Events that nobody reads. A cold object is its
 * compact JSON deflated (zlib, fastest level): about a fifteenth of its
 * jansson size (the text alone is a fifth). Its labels stay as plain
 * text for label selectors. Reading a cold object by name warms it again;
 * lists and scans inflate and parse it for the caller only. */
typedef struct ks_entry_s {
    int rt;
    json_t *obj;       /* warm; NULL while cold */
    ks_evline_t *line; /* warm: the line its last change was published in */
    unsigned char *z;  /* cold: the object's JSON, deflated */
    uint32_t zlen, len;
    char *labels;      /* cold: metadata.labels, NULL when it has none */
    uint8_t used;      /* read by name or written since the last sweep */
    uint8_t idle;      /* sweeps in a row that found it unused */
    uint8_t patience;  /* ... it takes to cool: doubled each time a cold
                        * read warms it, so that an object read every few
                        * seconds stays warm instead of being deflated and
                        * parsed again each time */
    struct ks_entry_s *prev, *next; /* in g_warm while warm */
} ks_entry_t;

static ks_map_t *g_objs[KS_RT_COUNT]; /* "ns/name" -> ks_entry_t * */
static size_t g_cold[KS_RT_COUNT];
/* The warm entries: a sweep visits these only, so its cost follows what is
 * in use, not what is stored. */
static ks_entry_t *g_warm;
static ks_map_t *g_uids; /* uid -> ks_entry_t * (owned by g_objs) */
static ks_store_observer_fn g_observer;
static int (*g_keep)(const char *ref);
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

void ks_store_set_keep(int (*keep)(const char *ref))
{
    g_keep = keep;
}

void ks_store_set_observer(ks_store_observer_fn fn)
{
    g_observer = fn;
}

static void z_free(void);

/* Most sweeps an object read now and then waits before it cools. */
#define KS_PATIENCE_MAX 8

static void warm_link(ks_entry_t *e)
{
    e->prev = NULL;
    e->next = g_warm;
    if (g_warm)
        g_warm->prev = e;
    g_warm = e;
}

static void warm_unlink(ks_entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        g_warm = e->next;
    if (e->next)
        e->next->prev = e->prev;
    e->prev = e->next = NULL;
}

static void entry_free(ks_entry_t *e)
{
    if (e->obj)
        warm_unlink(e);
    json_decref(e->obj);
    ks_evline_release(e->line);
    free(e->z);
    free(e->labels);
    free(e);
}

static int free_entry(const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    entry_free(val);
    return 0;
}

void ks_store_shutdown(void)
{
    for (int i = 0; i < KS_RT_COUNT; i++) {
        if (!g_objs[i])
            continue;
        ks_map_each(g_objs[i], free_entry, NULL);
        ks_map_free(g_objs[i]);
        g_objs[i] = NULL;
        g_cold[i] = 0;
    }
    if (g_uids) {
        ks_map_free(g_uids);
        g_uids = NULL;
    }
    ks_ring_free();
    z_free();
    for (size_t i = 0; i < g_ngrave; i++)
        json_decref(g_graveyard[i]);
    TG_FREE_NULL(g_graveyard);
    g_ngrave = g_capgrave = 0;
}

void ks_lock(void)
{
    pthread_mutex_lock(&g_lock);
    g_holder = pthread_self();
    g_held = 1;
}

static void must_hold_lock(const char *what)
{
    if (!g_held || !pthread_equal(g_holder, pthread_self())) {
        fprintf(stderr, "kubesim: %s without the store lock\n", what);
#ifdef __SANITIZE_ADDRESS__
        __sanitizer_print_stack_trace(); /* who: make sanitize's builds say */
#endif
        abort();
    }
}

static void bury(json_t *obj)
{
    if (g_ngrave == g_capgrave) {
        g_capgrave = g_capgrave ? g_capgrave * 2 : 256;
        g_graveyard = tg_xrealloc(g_graveyard, g_capgrave * sizeof(*g_graveyard));
    }
    g_graveyard[g_ngrave++] = obj;
}

static json_t *parse_or_die(const char *text, size_t len)
{
    json_error_t err;
    json_t *o = json_loadb(text, len, 0, &err);
    if (!o) {
        /* Text this store wrote itself: only memory corruption gets here. */
        fprintf(stderr, "kubesim: a cold object does not parse: %s\n", err.text);
        abort();
    }
    return o;
}

/* One deflate and one inflate stream, reused under the store lock: zlib's
 * one-shot calls would allocate about 270 KB of state for every object and
 * clear a 64 KB hash table, where a 16 KB window and a 4 KB table are
 * plenty for objects of a few KB. */
static z_stream g_deflate, g_inflate;
static int g_zready;
static unsigned char *g_zbuf; /* output of either, consumed at once */
static size_t g_zcap;

/* The streams, and g_zbuf of at least n bytes. */
static void z_scratch(size_t n)
{
    if (!g_zready) {
        if (deflateInit2(&g_deflate, Z_BEST_SPEED, Z_DEFLATED, 14, 4, Z_DEFAULT_STRATEGY) !=
                Z_OK ||
            inflateInit2(&g_inflate, 14) != Z_OK) {
            fprintf(stderr, "kubesim: out of memory for zlib\n");
            abort();
        }
        g_zready = 1;
    }
    if (n > g_zcap) {
        g_zcap = n + n / 2;
        g_zbuf = tg_xrealloc(g_zbuf, g_zcap);
    }
}

static void z_free(void)
{
    if (g_zready) {
        deflateEnd(&g_deflate);
        inflateEnd(&g_inflate);
        g_zready = 0;
    }
    TG_FREE_NULL(g_zbuf);
    g_zcap = 0;
}

/* The text deflated, in an allocation of its own size. */
static unsigned char *deflate_text(const char *text, size_t len, uint32_t *zlen)
{
    z_scratch(0);
    z_scratch(deflateBound(&g_deflate, len));
    deflateReset(&g_deflate);
    g_deflate.next_in = (Bytef *)text;
    g_deflate.avail_in = (uInt)len;
    g_deflate.next_out = g_zbuf;
    g_deflate.avail_out = (uInt)g_zcap;
    if (deflate(&g_deflate, Z_FINISH) != Z_STREAM_END) {
        fprintf(stderr, "kubesim: deflate failed\n");
        abort();
    }
    *zlen = (uint32_t)g_deflate.total_out;
    unsigned char *z = tg_xmalloc(*zlen ? *zlen : 1);
    memcpy(z, g_zbuf, *zlen);
    return z;
}

/* A cold entry's object, parsed (a new reference). */
static json_t *inflate_obj(const ks_entry_t *e)
{
    z_scratch(e->len ? e->len : 1);
    inflateReset(&g_inflate);
    g_inflate.next_in = e->z;
    g_inflate.avail_in = e->zlen;
    g_inflate.next_out = g_zbuf;
    g_inflate.avail_out = (uInt)g_zcap;
    if (inflate(&g_inflate, Z_FINISH) != Z_STREAM_END || g_inflate.total_out != e->len) {
        /* Bytes this store deflated itself: only memory corruption gets here. */
        fprintf(stderr, "kubesim: a cold object does not inflate\n");
        abort();
    }
    return parse_or_die((const char *)g_zbuf, e->len);
}

/* The entry's object. warm: keep it warm (a read by name, a write);
 * otherwise a cold object is parsed for this caller alone, valid until
 * the lock is released. */
static json_t *entry_obj(ks_entry_t *e, int warm)
{
    must_hold_lock("an object read");
    if (e->obj) {
        if (warm)
            e->used = 1;
        return e->obj;
    }
    json_t *o = inflate_obj(e);
    if (!warm) {
        bury(o);
        return o;
    }
    e->obj = o;
    warm_link(e);
    TG_FREE_NULL(e->z);
    TG_FREE_NULL(e->labels);
    e->used = 1;
    if (e->patience < KS_PATIENCE_MAX)
        e->patience *= 2;
    g_cold[e->rt]--;
    return o;
}

static ks_entry_t *entry_new(int rt, json_t *obj, ks_evline_t *line)
{
    ks_entry_t *e = tg_xcalloc(1, sizeof(*e));
    e->rt = rt;
    e->obj = obj;
    e->line = line;
    e->used = 1;
    e->patience = 1;
    warm_link(e);
    return e;
}

static void cool_one(ks_entry_t *e)
{
    if (e->used) {
        e->used = 0;
        e->idle = 0;
        return;
    }
    if (++e->idle < e->patience)
        return;
    e->idle = 0;
    if (g_keep) {
        char ref[KS_REF_MAX];
        ks_ref_of(e->rt, e->obj, ref, sizeof(ref));
        if (g_keep(ref))
            return;
    }
    json_t *labels = ks_jget(e->obj, "metadata.labels");
    if (!e->line)
        e->line = ks_evline_of(e->obj);
    size_t len;
    const char *text = ks_evline_object(e->line, &len);
    e->z = deflate_text(text, len, &e->zlen);
    e->len = (uint32_t)len;
    e->labels = json_object_size(labels) ? json_dumps(labels, JSON_COMPACT) : NULL;
    if (json_object_size(labels) && !e->labels) {
        /* Only memory runs out here: the policy of tg_xmalloc (core/mem.h). */
        fprintf(stderr, "kubesim: out of memory cooling an object\n");
        abort();
    }
    ks_evline_release(e->line);
    e->line = NULL;
    /* Borrowed pointers to it may live until the lock is released. */
    bury(e->obj);
    e->obj = NULL;
    warm_unlink(e);
    g_cold[e->rt]++;
}

void ks_store_cool(void)
{
    must_hold_lock("a sweep");
    ks_entry_t *next;
    for (ks_entry_t *e = g_warm; e; e = next) {
        next = e->next;
        cool_one(e);
    }
}

size_t ks_store_cold_count(int rt)
{
    return g_cold[rt];
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
    g_held = 0;
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
        g_held = 0;
        pthread_cond_timedwait(&g_ctl_cond, &g_lock, &ts);
        g_holder = pthread_self();
        g_held = 1;
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
    must_hold_lock("a get");
    char key[600];
    if (rt < 0 || rt >= KS_RT_COUNT || !name)
        return NULL;
    obj_key(ks_rtype(rt)->namespaced ? ns : NULL, name, key, sizeof(key));
    ks_entry_t *e = ks_map_get(g_objs[rt], key);
    return e ? entry_obj(e, 1) : NULL;
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
    must_hold_lock("a get by uid");
    if (!uid)
        return NULL;
    ks_entry_t *e = ks_map_get(g_uids, uid);
    if (!e)
        return NULL;
    if (rt)
        *rt = e->rt;
    return entry_obj(e, 1);
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

/* obj is the new state (the last one for DELETED), old the previous one.
 * Returns the change's line (a reference for the caller). */
static ks_evline_t *publish(int type, int rt, json_t *obj, json_t *old)
{
    ks_evline_t *line = ks_ring_publish(g_rv, type, rt, obj);
    g_published = 1;
    if (g_observer)
        g_observer(rt, old, type == KS_EV_DELETED ? NULL : obj);
    return line;
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
    char key[600], uid[40];
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
    ks_entry_t *e = entry_new(rt, obj, NULL);
    ks_map_put(g_objs[rt], key, e);
    ks_map_put(g_uids, ks_meta_uid(obj), e);
    e->line = publish(KS_EV_ADDED, rt, obj, NULL);
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
    char key[600];
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
    ks_entry_t *e = entry_new(rt, obj, NULL);
    ks_map_put(g_objs[rt], key, e);
    ks_map_put(g_uids, uid, e);
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
    ks_entry_t *e = ks_map_get(g_objs[rt], key);
    if (!e) {
        json_decref(obj);
        return KS_ENOTFOUND;
    }
    json_t *old = entry_obj(e, 1);
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
    e->obj = obj;
    ks_evline_release(e->line);
    e->line = publish(KS_EV_MODIFIED, rt, obj, old);
    bury(old);
    if (out)
        *out = obj;
    return KS_OK;
}

ks_rc_e ks_store_remove(int rt, const char *ns, const char *name)
{
    char key[600];
    obj_key(ks_rtype(rt)->namespaced ? ns : NULL, name, key, sizeof(key));
    ks_entry_t *e = ks_map_del(g_objs[rt], key);
    if (!e)
        return KS_ENOTFOUND;
    json_t *old = json_incref(entry_obj(e, 1));
    ks_map_del(g_uids, ks_meta_uid(old));
    entry_free(e);
    /* The DELETED event carries the last state with a fresh resourceVersion:
     * a shallow copy with its own metadata leaves the published object as is. */
    json_t *last = json_copy(old);
    json_object_set_new(last, "metadata", json_copy(json_object_get(old, "metadata")));
    set_rv(last);
    ks_evline_release(publish(KS_EV_DELETED, rt, last, old));
    json_decref(last);
    bury(old);
    return KS_OK;
}

/* "ns/name" keys sort by namespace, then name (a '/' is in neither). */
static int cmp_key(const char *x, const char *y)
{
    const char *sx = strchr(x, '/'), *sy = strchr(y, '/');
    size_t nx = (size_t)(sx - x), ny = (size_t)(sy - y);
    int c = memcmp(x, y, nx < ny ? nx : ny);
    if (c || nx != ny)
        return c ? c : (nx < ny ? -1 : 1);
    return strcmp(sx + 1, sy + 1);
}

typedef struct {
    const char *key;
    ks_entry_t *e;
} list_item_t;

static int cmp_item(const void *a, const void *b)
{
    return cmp_key(((const list_item_t *)a)->key, ((const list_item_t *)b)->key);
}

typedef struct {
    const char *ns; /* "ns/" prefix, or NULL for all */
    size_t nslen;
    const ks_sel_t *labels;
    list_item_t *items;
    size_t n, cap;
} list_ctx_t;

/* Does an entry's labels match, without parsing a cold object? */
static int labels_match(const ks_sel_t *sel, ks_entry_t *e)
{
    if (!sel || ks_sel_empty(sel))
        return 1;
    if (e->obj)
        return ks_labelsel_match(sel, e->obj);
    json_t *labels = e->labels ? parse_or_die(e->labels, strlen(e->labels)) : json_object();
    int m = ks_labels_match(sel, labels);
    json_decref(labels);
    return m;
}

static int list_one(const char *key, void *val, void *arg)
{
    list_ctx_t *c = arg;
    if (c->ns && strncmp(key, c->ns, c->nslen))
        return 0;
    if (!labels_match(c->labels, val))
        return 0;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->items = tg_xrealloc(c->items, c->cap * sizeof(*c->items));
    }
    c->items[c->n++] = (list_item_t){key, val};
    return 0;
}

/* The entries of a type in namespace ns (all when NULL or "") whose labels
 * match, sorted; free() the array. */
static size_t list_entries(int rt, const char *ns, const ks_sel_t *labels, list_item_t **out)
{
    char prefix[300];
    list_ctx_t c = {NULL, 0, labels, NULL, 0, 0};
    if (ns && *ns) {
        snprintf(prefix, sizeof(prefix), "%s/", ns);
        c.ns = prefix;
        c.nslen = strlen(prefix);
    }
    ks_map_each(g_objs[rt], list_one, &c);
    if (c.n > 1)
        qsort(c.items, c.n, sizeof(*c.items), cmp_item);
    *out = c.items;
    return c.n;
}

size_t ks_store_list_labeled(int rt, const char *ns, const ks_sel_t *labels, json_t ***items)
{
    must_hold_lock("a list");
    list_item_t *all = NULL;
    size_t n = list_entries(rt, ns, labels, &all);
    json_t **out = tg_xcalloc(n + 1, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        out[i] = entry_obj(all[i].e, 0);
    free(all);
    *items = out;
    return n;
}

size_t ks_store_list_page(int rt, const ks_page_t *pg, json_t ***items, long *remaining)
{
    must_hold_lock("a list");
    list_item_t *all = NULL;
    size_t n = list_entries(rt, pg->ns, pg->labels, &all), taken = 0, i = 0;
    char after[600];
    if (pg->after_name)
        obj_key(pg->after_ns, pg->after_name, after, sizeof(after));
    json_t **out = tg_xcalloc(n + 1, sizeof(*out));
    *remaining = 0;
    int selected = !ks_sel_empty(pg->labels) || !ks_sel_empty(pg->fields);
    for (; i < n; i++) {
        if (pg->after_name && cmp_key(all[i].key, after) <= 0)
            continue;
        /* Past a full page, objects are parsed only to learn that one more
         * matches; without selectors the rest is counted as it is. */
        if (pg->limit > 0 && (long)taken >= pg->limit && !selected) {
            *remaining = (long)(n - i);
            break;
        }
        json_t *o = entry_obj(all[i].e, 0);
        if (!ks_fieldsel_match(pg->fields, o))
            continue;
        if (pg->limit > 0 && (long)taken >= pg->limit) {
            *remaining = -1; /* more, and how many is unknown */
            break;
        }
        out[taken++] = o;
    }
    free(all);
    *items = out;
    return taken;
}

size_t ks_store_list(int rt, const char *ns, json_t ***items)
{
    return ks_store_list_labeled(rt, ns, NULL, items);
}

typedef struct {
    int (*fn)(json_t *obj, void *arg);
    void *arg;
} each_ctx_t;

static int each_one(const char *key, void *val, void *arg)
{
    (void)key;
    each_ctx_t *c = arg;
    return c->fn(entry_obj(val, 0), c->arg);
}

void ks_store_each(int rt, int (*fn)(json_t *obj, void *arg), void *arg)
{
    must_hold_lock("a scan");
    each_ctx_t c = {fn, arg};
    ks_map_each(g_objs[rt], each_one, &c);
}

size_t ks_store_count(int rt)
{
    return ks_map_len(g_objs[rt]);
}
