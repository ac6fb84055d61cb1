/* List-then-watch loop with resume, relist on 410 and inferred deletes. */
#include "kube/informer.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "kube/verbs.h"

/* ---- the key set: namespace/name → uid, to infer deletes after a gap ------ */

typedef struct inf_key_s {
    char *key; /* "ns/name" or "/name" */
    char *uid;
    unsigned gen; /* the list that last saw it */
    struct inf_key_s *next;
} inf_key_t;

typedef struct inf_set_s {
    inf_key_t **buckets;
    size_t nbuckets; /* power of two */
    size_t count;
} inf_set_t;

static uint64_t inf_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void inf_set_init(inf_set_t *s)
{
    s->nbuckets = 64;
    s->buckets = tg_xcalloc(s->nbuckets, sizeof(*s->buckets));
    s->count = 0;
}

static void inf_key_free(inf_key_t *k)
{
    free(k->key);
    free(k->uid);
    free(k);
}

static void inf_set_clean(inf_set_t *s)
{
    for (size_t i = 0; i < s->nbuckets; i++)
        for (inf_key_t *k = s->buckets[i], *next; k; k = next) {
            next = k->next;
            inf_key_free(k);
        }
    TG_FREE_NULL(s->buckets);
    s->count = 0;
}

static inf_key_t **inf_set_slot(inf_set_t *s, const char *key)
{
    inf_key_t **p = &s->buckets[inf_hash(key) & (s->nbuckets - 1)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    return p;
}

static void inf_set_grow(inf_set_t *s)
{
    size_t n = s->nbuckets * 2;
    inf_key_t **b = tg_xcalloc(n, sizeof(*b));
    for (size_t i = 0; i < s->nbuckets; i++)
        for (inf_key_t *k = s->buckets[i], *next; k; k = next) {
            next = k->next;
            inf_key_t **slot = &b[inf_hash(k->key) & (n - 1)];
            k->next = *slot;
            *slot = k;
        }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
}

/* ---- the informer ------------------------------------------------------------ */

struct tg_kube_informer_s {
    tg_kube_client_t *client;
    const tg_kube_gvr_t *gvr;
    char *ns;
    char *label_selector;
    char *field_selector;
    long page_size;
    long watch_min_s, watch_max_s;
    long backoff_base_ms, backoff_max_ms;
    tg_kube_event_fn cb;
    void *arg;

    atomic_int stop;
    int cb_stopped; /* the callback asked to stop */
    inf_set_t keys;
    unsigned gen;
    char rv[TG_KUBE_RV_MAX];

    pthread_mutex_t stats_lock; /* guards st */
    tg_kube_informer_stats_t st;
};

static char *inf_dup(const char *s)
{
    return s ? tg_xstrdup(s) : NULL;
}

tg_kube_informer_t *tg_kube_informer_new(tg_kube_client_t *c, const tg_kube_informer_opts_t *o)
{
    tg_kube_informer_t *inf = tg_xcalloc(1, sizeof(*inf));
    inf->client = c;
    inf->gvr = o->gvr;
    inf->ns = inf_dup(o->ns);
    inf->label_selector = inf_dup(o->label_selector);
    inf->field_selector = inf_dup(o->field_selector);
    inf->page_size = o->page_size > 0 ? o->page_size : 500;
    inf->watch_min_s = o->watch_timeout_min_s > 0 ? o->watch_timeout_min_s : 300;
    inf->watch_max_s = o->watch_timeout_max_s > 0 ? o->watch_timeout_max_s : 600;
    if (inf->watch_max_s < inf->watch_min_s)
        inf->watch_max_s = inf->watch_min_s;
    inf->backoff_base_ms = o->backoff_base_ms > 0 ? o->backoff_base_ms : 500;
    inf->backoff_max_ms = o->backoff_max_ms > 0 ? o->backoff_max_ms : 30000;
    inf->cb = o->cb;
    inf->arg = o->arg;
    atomic_init(&inf->stop, 0);
    inf_set_init(&inf->keys);
    pthread_mutex_init(&inf->stats_lock, NULL);
    return inf;
}

void tg_kube_informer_free(tg_kube_informer_t *inf)
{
    if (!inf)
        return;
    free(inf->ns);
    free(inf->label_selector);
    free(inf->field_selector);
    inf_set_clean(&inf->keys);
    pthread_mutex_destroy(&inf->stats_lock);
    free(inf);
}

void tg_kube_informer_stop(tg_kube_informer_t *inf)
{
    atomic_store(&inf->stop, 1);
}

void tg_kube_informer_stats(tg_kube_informer_t *inf, tg_kube_informer_stats_t *st)
{
    pthread_mutex_lock(&inf->stats_lock);
    *st = inf->st;
    pthread_mutex_unlock(&inf->stats_lock);
}

#define INF_STAT_ADD(inf, field)                                                                   \
    do {                                                                                           \
        pthread_mutex_lock(&(inf)->stats_lock);                                                    \
        (inf)->st.field++;                                                                         \
        pthread_mutex_unlock(&(inf)->stats_lock);                                                  \
    } while (0)

static void inf_publish_rv(tg_kube_informer_t *inf)
{
    pthread_mutex_lock(&inf->stats_lock);
    memcpy(inf->st.resource_version, inf->rv, sizeof(inf->rv));
    pthread_mutex_unlock(&inf->stats_lock);
}

/* Deliver one event; remembers a stop request from the callback. */
static int inf_deliver(tg_kube_informer_t *inf, const tg_kube_event_t *ev)
{
    INF_STAT_ADD(inf, events);
    if (inf->cb && inf->cb(ev, inf->arg) != 0) {
        inf->cb_stopped = 1;
        atomic_store(&inf->stop, 1);
        return 1;
    }
    return 0;
}

/* "ns/name" for an object; NULL when it has no name. Caller frees. */
static char *inf_key_of(json_t *obj, const char **uid)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    *uid = json_string_value(json_object_get(meta, "uid"));
    if (!name)
        return NULL;
    size_t n = (ns ? strlen(ns) : 0) + strlen(name) + 2;
    char *k = tg_xmalloc(n);
    snprintf(k, n, "%s/%s", ns ? ns : "", name);
    return k;
}

/* The stub a synthetic DELETED carries: enough to identify the object. */
static json_t *inf_stub(tg_kube_informer_t *inf, const inf_key_t *k)
{
    const char *slash = strchr(k->key, '/');
    json_t *meta = json_object();
    json_object_set_new(meta, "name", json_string(slash + 1));
    if (slash != k->key)
        json_object_set_new(meta, "namespace", json_stringn(k->key, (size_t)(slash - k->key)));
    if (k->uid)
        json_object_set_new(meta, "uid", json_string(k->uid));
    json_t *o = json_object();
    json_object_set_new(o, "metadata", meta);
    (void)inf;
    return o;
}

static int inf_synthetic_delete(tg_kube_informer_t *inf, const inf_key_t *k)
{
    json_t *stub = inf_stub(inf, k);
    tg_kube_event_t ev = {.type = TG_KUBE_EV_DELETED, .object = stub, .synthetic = 1};
    int r = inf_deliver(inf, &ev);
    json_decref(stub);
    return r;
}

/* Record what an event says about an object's existence; with `listing`,
 * an object whose uid changed gets a synthetic DELETED for the old one. */
static int inf_track(tg_kube_informer_t *inf, tg_kube_event_type_e type, json_t *obj, int listing)
{
    const char *uid = NULL;
    char *key = inf_key_of(obj, &uid);
    int r = 0;
    if (!key)
        return 0;
    inf_key_t **slot = inf_set_slot(&inf->keys, key);
    if (type == TG_KUBE_EV_DELETED) {
        if (*slot) {
            inf_key_t *k = *slot;
            *slot = k->next;
            inf_key_free(k);
            inf->keys.count--;
        }
        free(key);
        return 0;
    }
    if (*slot) {
        inf_key_t *k = *slot;
        if (listing && k->uid && uid && strcmp(k->uid, uid) != 0)
            r = inf_synthetic_delete(inf, k);
        free(k->uid);
        k->uid = inf_dup(uid);
        k->gen = inf->gen;
        free(key);
        return r;
    }
    inf_key_t *k = tg_xcalloc(1, sizeof(*k));
    k->key = key;
    k->uid = inf_dup(uid);
    k->gen = inf->gen;
    *slot = k;
    if (++inf->keys.count > inf->keys.nbuckets)
        inf_set_grow(&inf->keys);
    return 0;
}

static int inf_list_item(json_t *item, void *arg)
{
    tg_kube_informer_t *inf = arg;
    if (inf_track(inf, TG_KUBE_EV_ADDED, item, 1))
        return 1;
    const char *rv =
        json_string_value(json_object_get(json_object_get(item, "metadata"), "resourceVersion"));
    tg_kube_event_t ev = {.type = TG_KUBE_EV_ADDED, .object = item, .resource_version = rv};
    return inf_deliver(inf, &ev);
}

/* After a complete list: everything not seen in it is gone. */
static int inf_sweep(tg_kube_informer_t *inf)
{
    for (size_t i = 0; i < inf->keys.nbuckets; i++) {
        inf_key_t **p = &inf->keys.buckets[i];
        while (*p) {
            inf_key_t *k = *p;
            if (k->gen == inf->gen) {
                p = &k->next;
                continue;
            }
            *p = k->next;
            inf->keys.count--;
            int r = inf_synthetic_delete(inf, k);
            inf_key_free(k);
            if (r)
                return 1;
        }
    }
    tg_kube_event_t sync = {.type = TG_KUBE_EV_SYNC};
    return inf_deliver(inf, &sync);
}

static int inf_watch_event(const tg_kube_event_t *ev, void *arg)
{
    tg_kube_informer_t *inf = arg;
    if (ev->type == TG_KUBE_EV_BOOKMARK)
        return 0; /* the decoder already moved the resume point */
    inf_track(inf, ev->type, ev->object, 0);
    return inf_deliver(inf, ev);
}

static tg_rc_e inf_list(tg_kube_informer_t *inf, tg_kube_result_t *res)
{
    tg_kube_ref_t ref = {.gvr = inf->gvr, .ns = inf->ns};
    tg_kube_list_opts_t lo = {.label_selector = inf->label_selector,
                              .field_selector = inf->field_selector,
                              .limit = inf->page_size,
                              .stop = &inf->stop};
    char rv[TG_KUBE_RV_MAX];
    inf->gen++;
    tg_kube_metrics_relist();
    tg_rc_e rc = tg_kube_list_all(inf->client, &ref, &lo, inf_list_item, inf, rv, sizeof(rv), res);
    if (rc != TG_OK)
        return rc;
    memcpy(inf->rv, rv, sizeof(rv));
    inf_publish_rv(inf);
    INF_STAT_ADD(inf, lists);
    if (inf_sweep(inf)) {
        tg_kube_result_fail(res, TG_KUBE_R_CANCELLED, "stopped by the callback");
        return res->rc;
    }
    return TG_OK;
}

tg_rc_e tg_kube_informer_run(tg_kube_informer_t *inf)
{
    tg_kube_result_t res;
    int need_list = 1, failures = 0;
    tg_rc_e ret = TG_OK;
    tg_kube_result_init(&res);
    char *what = tg_kube_path(&(tg_kube_ref_t){.gvr = inf->gvr, .ns = inf->ns});
    if (!what) {
        tg_log_error("kube", "informer: invalid resource");
        return TG_EINVAL;
    }

    while (!atomic_load(&inf->stop)) {
        if (need_list) {
            if (inf_list(inf, &res) != TG_OK) {
                if (atomic_load(&inf->stop))
                    break;
                if (res.reason == TG_KUBE_R_CONFIG) {
                    tg_log_error("kube", "informer %s: %s", what, res.message);
                    ret = TG_EINVAL;
                    break;
                }
                INF_STAT_ADD(inf, errors);
                failures++;
                long d =
                    tg_kube_backoff_ms(inf->backoff_base_ms, inf->backoff_max_ms, failures - 1);
                tg_log_warn("kube", "informer %s: list failed: %s: %s; again in %ld ms", what,
                            tg_kube_reason_name(res.reason), res.message ? res.message : "", d);
                tg_kube_sleep_ms(d, &inf->stop);
                continue;
            }
            need_list = 0;
            failures = 0;
            continue; /* look at the stop flag before watching */
        }

        tg_kube_watch_opts_t wo = {.label_selector = inf->label_selector,
                                   .field_selector = inf->field_selector,
                                   .stop = &inf->stop};
        long span = inf->watch_max_s - inf->watch_min_s;
        /* Spread reconnects out so replicas do not watch in lockstep. */
        wo.timeout_seconds = tg_kube_rand_range(inf->watch_min_s, inf->watch_min_s + span);
        memcpy(wo.resource_version, inf->rv, sizeof(inf->rv));
        INF_STAT_ADD(inf, watches);
        tg_kube_watch_e w =
            tg_kube_watch(inf->client, &(tg_kube_ref_t){.gvr = inf->gvr, .ns = inf->ns}, &wo,
                          inf_watch_event, inf, &res);
        memcpy(inf->rv, wo.resource_version, sizeof(inf->rv));
        inf_publish_rv(inf);
        switch (w) {
        case TG_KUBE_WATCH_STOPPED:
            break;
        case TG_KUBE_WATCH_CLOSED:
            failures = 0;
            break;
        case TG_KUBE_WATCH_EXPIRED:
            tg_log_info("kube", "informer %s: resourceVersion %s expired; listing again", what,
                        inf->rv);
            need_list = 1;
            failures = 0;
            break;
        case TG_KUBE_WATCH_ERROR: {
            INF_STAT_ADD(inf, errors);
            if (wo.events)
                failures = 0; /* it was working: start the backoff over */
            failures++;
            if (!tg_kube_reason_transient(res.reason) || res.reason == TG_KUBE_R_CANCELLED)
                need_list = 1;
            long d = tg_kube_backoff_ms(inf->backoff_base_ms, inf->backoff_max_ms, failures - 1);
            tg_log_warn("kube", "informer %s: watch failed: %s: %s; %s in %ld ms", what,
                        tg_kube_reason_name(res.reason), res.message ? res.message : "",
                        need_list ? "listing again" : "watching again", d);
            tg_kube_sleep_ms(d, &inf->stop);
            break;
        }
        }
        tg_kube_result_clean(&res);
    }
    tg_kube_result_clean(&res);
    free(what);
    return ret;
}
