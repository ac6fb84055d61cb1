/* List-then-watch loop with resume, relist on 410 and inferred deletes. */
#include "kube/informer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "kube/json_mask.h"
#include "kube/verbs.h"

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
    tg_kube_cache_t *cache;
    json_t *event_mask; /* what watch events are decoded into; NULL: whole (owned) */
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
    inf->cache = tg_kube_cache_new(o->cache_mask, o->cache_index);
    if (o->event_mask) {
        json_t *meta = json_pack("{s:{s:b, s:b, s:b, s:b}}", "metadata", "name", 1, "namespace", 1,
                                 "uid", 1, "resourceVersion", 1);
        json_t *kept = tg_kube_mask_union(o->cache_mask, o->event_mask);
        inf->event_mask = tg_kube_mask_union(kept, meta);
        json_decref(kept);
        json_decref(meta);
    }
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
    tg_kube_cache_free(inf->cache);
    json_decref(inf->event_mask);
    pthread_mutex_destroy(&inf->stats_lock);
    free(inf);
}

void tg_kube_informer_stop(tg_kube_informer_t *inf)
{
    atomic_store(&inf->stop, 1);
    tg_kube_client_interrupt(inf->client);
}

tg_kube_cache_t *tg_kube_informer_cache(tg_kube_informer_t *inf)
{
    return inf->cache;
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

/* A synthetic DELETED for an object gone unseen; stub is borrowed. */
static int inf_synthetic_delete(tg_kube_informer_t *inf, json_t *stub)
{
    tg_kube_event_t ev = {.type = TG_KUBE_EV_DELETED, .object = stub, .synthetic = 1};
    return inf_deliver(inf, &ev);
}

/* Record what an event says about an object in the cache; with `listing`,
 * an object whose uid changed gets a synthetic DELETED for the old one.
 * OUT: *unchanged when that version was cached already. */
static int inf_track(tg_kube_informer_t *inf, tg_kube_event_type_e type, json_t *obj, int listing,
                     int *unchanged)
{
    *unchanged = 0;
    if (type == TG_KUBE_EV_DELETED) {
        tg_kube_cache_remove(inf->cache, obj);
        return 0;
    }
    char *old_uid = NULL;
    int changed = tg_kube_cache_put(inf->cache, obj, listing ? inf->gen : 0, &old_uid);
    *unchanged = changed == 0;
    int r = 0;
    if (old_uid && listing) {
        const json_t *meta = json_object_get(obj, "metadata");
        json_t *stub =
            json_pack("{s:{s:O?, s:O?, s:s}}", "metadata", "name", json_object_get(meta, "name"),
                      "namespace", json_object_get(meta, "namespace"), "uid", old_uid);
        r = inf_synthetic_delete(inf, stub);
        json_decref(stub);
    }
    free(old_uid);
    return r;
}

static int inf_list_item(json_t *item, void *arg)
{
    tg_kube_informer_t *inf = arg;
    int unchanged = 0;
    if (inf_track(inf, TG_KUBE_EV_ADDED, item, 1, &unchanged))
        return 1;
    const char *rv =
        json_string_value(json_object_get(json_object_get(item, "metadata"), "resourceVersion"));
    tg_kube_event_t ev = {
        .type = TG_KUBE_EV_ADDED, .object = item, .resource_version = rv, .unchanged = unchanged};
    return inf_deliver(inf, &ev);
}

/* After a complete list: everything not seen in it is gone. */
static int inf_sweep(tg_kube_informer_t *inf)
{
    json_t *gone = tg_kube_cache_sweep(inf->cache, inf->gen);
    tg_kube_cache_mark_current(inf->cache, 1);
    size_t i;
    json_t *stub;
    int r = 0;
    json_array_foreach(gone, i, stub) {
        if ((r = inf_synthetic_delete(inf, stub)) != 0)
            break;
    }
    json_decref(gone);
    if (r)
        return 1;
    tg_kube_event_t sync = {.type = TG_KUBE_EV_SYNC};
    return inf_deliver(inf, &sync);
}

static int inf_watch_event(const tg_kube_event_t *ev, void *arg)
{
    tg_kube_informer_t *inf = arg;
    if (ev->type == TG_KUBE_EV_BOOKMARK)
        return 0; /* the decoder already moved the resume point */
    int unchanged = 0;
    inf_track(inf, ev->type, ev->object, 0, &unchanged);
    tg_kube_event_t copy = *ev;
    copy.unchanged = unchanged;
    return inf_deliver(inf, &copy);
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
    char tname[16]; /* "inf-<resource>", as top and perf show it */
    snprintf(tname, sizeof(tname), "inf-%s", inf->gvr->resource);
    pthread_setname_np(pthread_self(), tname);
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
                tg_kube_cache_mark_current(inf->cache, 0);
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
                                   .object_mask = inf->event_mask,
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
            tg_kube_cache_mark_current(inf->cache, 0);
            tg_log_info("kube", "informer %s: resourceVersion %s expired; listing again", what,
                        inf->rv);
            need_list = 1;
            failures = 0;
            break;
        case TG_KUBE_WATCH_ERROR: {
            INF_STAT_ADD(inf, errors);
            tg_kube_cache_mark_current(inf->cache, 0);
            if (wo.events)
                failures = 0; /* it was working: start the backoff over */
            failures++;
            /* What happened while the stream was broken is unknown (a
             * restarted API server may even have changed objects without
             * events): list again once it answers, as client-go's reflector
             * does after anything but a refused connection. */
            need_list = 1;
            long d = tg_kube_backoff_ms(inf->backoff_base_ms, inf->backoff_max_ms, failures - 1);
            tg_log_warn("kube", "informer %s: watch failed: %s: %s; listing again in %ld ms", what,
                        tg_kube_reason_name(res.reason), res.message ? res.message : "", d);
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
