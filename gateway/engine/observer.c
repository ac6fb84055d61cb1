/* The observer (see observer.h): informers with caches, a work queue of
 * keys, workers that apply them, and the resync pass. */
#include "engine/observer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/monotonic.h"
#include "core/log.h"
#include "core/metrics.h"
#include "engine/platform_metrics.h"
#include "engine/watcher.h"
#include "engine/workqueue.h"
#include "kube/informer.h"
#include "kube/verbs.h"
#include "render/metadata.h"
#include "store/lifecycle.h"

#define OBS_SELECTOR     TG_LABEL_MANAGED_BY "=taugate"
#define OBS_NKINDS       4
#define OBS_PAGE         1000
#define OBS_PAUSE_MIN_MS 500L /* the database is away: wait before the next key */
#define OBS_PAUSE_MAX_MS 5000L
#define OBS_LOOKUP_MS    5000L /* the most one look-up past the cache may take */

enum { OBS_WORKLOAD = 0, OBS_JOB, OBS_RAYJOB, OBS_POD };

/* What the caches keep: only the fields engine/watcher.c and the sealer
 * read, so 10,000 of each kind fit in a few MiB. */
/* without resourceVersion: a new version whose kept fields are the same is
 * then no change at all (kube/cache.h), so status churn costs nothing */
#define OBS_META "\"name\":true,\"namespace\":true,\"uid\":true"
#define OBS_CONDITIONS                                                                             \
    "\"conditions\":[{\"type\":true,\"status\":true,\"reason\":true,\"message\":true}]"
static const char *const obs_masks[OBS_NKINDS] = {
    /* Workload */
    "{\"metadata\":{" OBS_META ",\"ownerReferences\":[{\"name\":true,\"kind\":true}]},"
    "\"spec\":{\"queueName\":true},"
    "\"status\":{" OBS_CONDITIONS ",\"admission\":{\"clusterQueue\":true,"
    "\"podSetAssignments\":[{\"flavors\":true}]}}}",
    /* Job */
    "{\"metadata\":{" OBS_META "},\"status\":{" OBS_CONDITIONS "}}",
    /* RayJob */
    "{\"metadata\":{" OBS_META "},"
    "\"status\":{\"jobStatus\":true,\"jobDeploymentStatus\":true,\"message\":true}}",
    /* Pod */
    "{\"metadata\":{" OBS_META ",\"labels\":{\"" TG_LABEL_RUN_ID "\":true,\"" TG_LABEL_ATTEMPT
    "\":true,\"ray.io/node-type\":true},\"ownerReferences\":[{\"name\":true,\"kind\":true}]},"
    "\"spec\":{\"nodeName\":true,\"containers\":[{\"name\":true}]},"
    "\"status\":{\"phase\":true,\"reason\":true,\"startTime\":true,"
    "\"containerStatuses\":[{\"name\":true,\"state\":{\"terminated\":{\"exitCode\":true,"
    "\"reason\":true,\"finishedAt\":true}}}]}}",
};
static const char *const obs_kinds[OBS_NKINDS] = {"Workload", "Job", "RayJob", "Pod"};

/* Workloads by "namespace/owner name", the key of their Job or RayJob. */
static int obs_index_owner(const json_t *wl, char *key, size_t len)
{
    const json_t *meta = json_object_get(wl, "metadata");
    const char *owner = json_string_value(
        json_object_get(json_array_get(json_object_get(meta, "ownerReferences"), 0), "name"));
    return owner && tg_kube_cache_key(json_string_value(json_object_get(meta, "namespace")), owner,
                                      key, len) == 0;
}

/* Pods by run id. */
static int obs_index_run(const json_t *pod, char *key, size_t len)
{
    const char *run = json_string_value(json_object_get(
        json_object_get(json_object_get(pod, "metadata"), "labels"), TG_LABEL_RUN_ID));
    return run && snprintf(key, len, "%s", run) < (int)len;
}

typedef struct obs_kind_s {
    tg_observer_t *o;
    int kind;
    tg_kube_informer_t *inf;
    pthread_t thread;
    int started;
} obs_kind_t;

struct tg_observer_s {
    tg_db_pool_t *pool;
    tg_kube_client_t *kube;
    tg_positions_t *positions; /* Workloads' queue positions (engine/positions.h) */
    tg_observer_config_t cfg;
    tg_workqueue_t *queue;
    obs_kind_t kinds[OBS_NKINDS];
    pthread_t *workers;
    int nworkers;
    pthread_t resync;
    int resync_started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;
    long pause_ms;    /* shared back-off while the database is away */
    json_t *suspects; /* owner keys missing from their cache at the last pass */
    atomic_ulong applied_ok, applied_failed, repairs;
};

static tg_kube_cache_t *obs_cache(tg_observer_t *o, int kind)
{
    return tg_kube_informer_cache(o->kinds[kind].inf);
}

/* ---- informer callbacks: queue the key ------------------------------------ */

static void obs_queue_key(tg_observer_t *o, int kind, const char *key)
{
    char item[600];
    if (snprintf(item, sizeof(item), "%d:%s", kind, key) < (int)sizeof(item))
        tg_workqueue_add(o->queue, item);
}

static int obs_on_event(const tg_kube_event_t *ev, void *arg)
{
    obs_kind_t *k = arg;
    tg_platform_metrics_watch_event(obs_kinds[k->kind], (int)ev->type, ev->object);
    if (!ev->object || ev->type == TG_KUBE_EV_SYNC || ev->type == TG_KUBE_EV_BOOKMARK ||
        ev->unchanged)
        return 0;
    const json_t *meta = json_object_get(ev->object, "metadata");
    char key[512];
    if (tg_kube_cache_key(json_string_value(json_object_get(meta, "namespace")),
                          json_string_value(json_object_get(meta, "name")), key, sizeof(key)) == 0)
        obs_queue_key(k->o, k->kind, key);
    return 0;
}

static void *obs_informer_main(void *arg)
{
    obs_kind_t *k = arg;
    tg_kube_informer_run(k->inf);
    return NULL;
}

/* ---- workers ---------------------------------------------------------------- */

/* The stub a DELETED is applied with: the key's namespace and name. */
static json_t *obs_stub(const char *key)
{
    const char *slash = strchr(key, '/');
    if (!slash)
        return NULL;
    return json_pack("{s:{s:s%, s:s}}", "metadata", "namespace", key, (size_t)(slash - key), "name",
                     slash + 1);
}

/* Apply one key. RET: the store's answer. */
static tg_rc_e obs_apply(tg_observer_t *o, int kind, const char *key)
{
    char rv[128] = "";
    tg_kube_cache_t *cache = obs_cache(o, kind);
    json_t *obj = tg_kube_cache_get(cache, key, rv, sizeof(rv));
    tg_kube_event_type_e type = obj ? TG_KUBE_EV_MODIFIED : TG_KUBE_EV_DELETED;
    if (!obj)
        obj = obs_stub(key);
    if (!obj)
        return TG_OK;
    tg_db_conn_t *conn = NULL;
    tg_rc_e rc = tg_db_checkout(o->pool, &conn);
    if (rc == TG_OK) {
        tg_watcher_env_t env = {.kube = o->kube,
                                .positions = o->positions,
                                .pods = obs_cache(o, OBS_POD),
                                .workloads = obs_cache(o, OBS_WORKLOAD)};
        rc = tg_watcher_apply(conn, &env, obs_kinds[kind], type, obj);
        tg_db_release(o->pool, conn);
    }
    if (rc == TG_OK && type != TG_KUBE_EV_DELETED)
        tg_kube_cache_ack(cache, key, rv);
    json_decref(obj);
    return rc;
}

/* Sleep ms unless stopping. RET: 1 when stopping. */
static int obs_wait_ms(tg_observer_t *o, long ms)
{
    struct timespec until = tg_mono_deadline_ms((uint64_t)ms);
    pthread_mutex_lock(&o->lock);
    if (!o->stop)
        pthread_cond_timedwait(&o->wake, &o->lock, &until);
    int stop = o->stop;
    pthread_mutex_unlock(&o->lock);
    return stop;
}

static void *obs_worker(void *arg)
{
    pthread_setname_np(pthread_self(), "tg-apply");
    tg_observer_t *o = arg;
    char *item;
    while ((item = tg_workqueue_get(o->queue)) != NULL) {
        int kind = item[0] - '0';
        tg_rc_e rc =
            kind >= 0 && kind < OBS_NKINDS && item[1] == ':' ? obs_apply(o, kind, item + 2) : TG_OK;
        if (rc == TG_OK) {
            atomic_fetch_add(&o->applied_ok, 1);
            tg_workqueue_forget(o->queue, item);
            pthread_mutex_lock(&o->lock);
            o->pause_ms = 0;
            pthread_mutex_unlock(&o->lock);
            tg_workqueue_done(o->queue, item);
            continue;
        }
        atomic_fetch_add(&o->applied_failed, 1);
        if (rc != TG_EUNAVAILABLE) {
            tg_workqueue_retry(o->queue, item);
            tg_workqueue_done(o->queue, item);
            continue;
        }
        /* The database is away (or the pool exhausted): every key would fail
         * the same way, so the workers slow down together rather than spin
         * through the queue. The key comes back after the pause. */
        pthread_mutex_lock(&o->lock);
        o->pause_ms = o->pause_ms ? o->pause_ms * 2 : OBS_PAUSE_MIN_MS;
        if (o->pause_ms > OBS_PAUSE_MAX_MS)
            o->pause_ms = OBS_PAUSE_MAX_MS;
        long pause = o->pause_ms;
        pthread_mutex_unlock(&o->lock);
        tg_workqueue_add_after(o->queue, item, pause);
        tg_workqueue_done(o->queue, item);
        if (obs_wait_ms(o, pause))
            break;
    }
    return NULL;
}

/* ---- the resync pass ---------------------------------------------------------- */

typedef struct {
    tg_observer_t *o;
    int kind;
} obs_unacked_t;

static void obs_requeue_unacked(const char *key, void *arg)
{
    obs_unacked_t *u = arg;
    atomic_fetch_add(&u->o->repairs, 1);
    obs_queue_key(u->o, u->kind, key);
}

static int obs_owner_finished(const json_t *obj, int kind)
{
    if (kind == OBS_RAYJOB) {
        const json_t *st = json_object_get(obj, "status");
        const char *job = json_string_value(json_object_get(st, "jobStatus"));
        const char *dep = json_string_value(json_object_get(st, "jobDeploymentStatus"));
        return (job &&
                (!strcmp(job, "SUCCEEDED") || !strcmp(job, "FAILED") || !strcmp(job, "STOPPED"))) ||
               (dep && !strcmp(dep, "Failed"));
    }
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        if (t && s && !strcmp(s, "True") && (!strcmp(t, "Complete") || !strcmp(t, "Failed")))
            return 1;
    }
    return 0;
}

/* One unfinished run against the caches; suspects collects owners missing
 * on this pass. */
static void obs_compare_run(tg_observer_t *o, const json_t *run, json_t *suspects)
{
    const char *ns = json_string_value(json_object_get(run, "namespace"));
    const char *name = json_string_value(json_object_get(run, "object_name"));
    const char *okind = json_string_value(json_object_get(run, "object_kind"));
    char key[512];
    if (!ns || !name || !okind || tg_kube_cache_key(ns, name, key, sizeof(key)) != 0)
        return;
    int kind = !strcmp(okind, "RayJob") ? OBS_RAYJOB : OBS_JOB;
    tg_kube_cache_t *cache = obs_cache(o, kind);
    json_t *obj = tg_kube_cache_get(cache, key, NULL, 0);
    if (obj) {
        if (obs_owner_finished(obj, kind)) { /* the cluster says it ended; we do not */
            atomic_fetch_add(&o->repairs, 1);
            obs_queue_key(o, kind, key);
        }
        json_decref(obj);
        return;
    }
    if (json_is_true(json_object_get(run, "pending")) || !tg_kube_cache_current(cache))
        return;                              /* not created yet, or the cache cannot tell */
    if (json_object_get(o->suspects, key)) { /* missing twice in a row: gone */
        tg_log_warn("engine", "run %s: its %s %s is gone from the cluster",
                    json_string_value(json_object_get(run, "id")), okind, key);
        atomic_fetch_add(&o->repairs, 1);
        obs_queue_key(o, kind, key);
    } else {
        json_object_set_new(suspects, key, json_true());
    }
}

static void obs_resync(tg_observer_t *o)
{
    for (int k = 0; k < OBS_NKINDS; k++) {
        obs_unacked_t u = {o, k};
        tg_kube_cache_each_unacked(obs_cache(o, k), obs_requeue_unacked, &u);
    }
    json_t *suspects = json_object();
    char after[40] = "";
    for (;;) {
        tg_db_conn_t *conn = NULL;
        json_t *page = NULL;
        if (tg_db_checkout(o->pool, &conn) != TG_OK)
            goto out; /* the next pass will do it */
        tg_rc_e rc = tg_store_unfinished_page(conn, after, OBS_PAGE, &page);
        tg_db_release(o->pool, conn);
        if (rc != TG_OK)
            goto out;
        size_t i, n = json_array_size(page);
        json_t *run;
        json_array_foreach(page, i, run) {
            obs_compare_run(o, run, suspects);
        }
        if (n)
            snprintf(after, sizeof(after), "%s",
                     json_string_value(json_object_get(json_array_get(page, n - 1), "id")));
        json_decref(page);
        if (n < OBS_PAGE)
            break;
        pthread_mutex_lock(&o->lock);
        int stop = o->stop;
        pthread_mutex_unlock(&o->lock);
        if (stop)
            goto out;
    }
    json_decref(o->suspects); /* only a complete pass replaces the suspects */
    o->suspects = suspects;
    suspects = NULL;
out:
    json_decref(suspects);
}

static void *obs_resync_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tg-resync");
    tg_observer_t *o = arg;
    while (!obs_wait_ms(o, o->cfg.resync_s * 1000))
        obs_resync(o);
    return NULL;
}

/* ---- metrics ---------------------------------------------------------------- */

static void obs_metrics(tg_buf_t *out, void *arg)
{
    tg_observer_t *o = arg;
    tg_rc_e rc = tg_buf_printf(
        out,
        "# HELP taugate_engine_queue_depth Cluster objects waiting to be applied (queued, "
        "delayed).\n"
        "# TYPE taugate_engine_queue_depth gauge\n"
        "taugate_engine_queue_depth{queue=\"ready\"} %zu\n"
        "taugate_engine_queue_depth{queue=\"delayed\"} %zu\n"
        "# HELP taugate_engine_apply_total Cluster objects applied to the store, by result.\n"
        "# TYPE taugate_engine_apply_total counter\n"
        "taugate_engine_apply_total{result=\"ok\"} %lu\n"
        "taugate_engine_apply_total{result=\"error\"} %lu\n"
        "# HELP taugate_engine_resync_repairs_total Objects the resync pass queued again "
        "(not committed, or not what the store says).\n"
        "# TYPE taugate_engine_resync_repairs_total counter\n"
        "taugate_engine_resync_repairs_total %lu\n"
        "# HELP taugate_engine_cache_objects Objects in the engine's informer caches.\n"
        "# TYPE taugate_engine_cache_objects gauge\n",
        tg_workqueue_len(o->queue), tg_workqueue_delayed(o->queue), atomic_load(&o->applied_ok),
        atomic_load(&o->applied_failed), atomic_load(&o->repairs));
    if (rc != TG_OK)
        return; /* the buffer is marked overflowed: the scrape fails whole */
    size_t bytes = 0;
    for (int k = 0; k < OBS_NKINDS; k++) {
        if (tg_buf_printf(out, "taugate_engine_cache_objects{kind=\"%s\"} %zu\n", obs_kinds[k],
                          tg_kube_cache_count(obs_cache(o, k))) != TG_OK)
            return;
        bytes += tg_kube_cache_bytes(obs_cache(o, k));
    }
    if (tg_buf_printf(out,
                      "# HELP taugate_engine_cache_bytes Memory the engine's caches hold.\n"
                      "# TYPE taugate_engine_cache_bytes gauge\n"
                      "taugate_engine_cache_bytes %zu\n",
                      bytes) != TG_OK)
        return;
}

/* ---- start, stop, readers ------------------------------------------------------ */

tg_observer_t *tg_observer_start(tg_db_pool_t *pool, tg_kube_client_t *kube,
                                 const tg_observer_config_t *cfg)
{
    tg_observer_t *o = tg_xcalloc(1, sizeof(*o));
    o->pool = pool;
    o->kube = kube;
    o->positions = tg_positions_new();
    o->cfg = *cfg;
    if (o->cfg.workers <= 0)
        o->cfg.workers = 2;
    if (o->cfg.resync_s <= 0)
        o->cfg.resync_s = 30;
    o->queue = tg_workqueue_new();
    o->suspects = json_object();
    pthread_mutex_init(&o->lock, NULL);
    tg_cond_init_monotonic(&o->wake);

    static const tg_kube_gvr_t *const gvrs[OBS_NKINDS] = {&tg_kube_gvr_workloads, &tg_kube_gvr_jobs,
                                                          &tg_kube_gvr_rayjobs, &tg_kube_gvr_pods};
    static const tg_kube_index_fn indexes[OBS_NKINDS] = {obs_index_owner, NULL, NULL,
                                                         obs_index_run};
    /* obs_on_event reads the cached fields and the watch lag's timestamps */
    json_t *lag_mask = tg_platform_metrics_time_mask();
    for (int k = 0; k < OBS_NKINDS; k++) {
        obs_kind_t *ok = &o->kinds[k];
        ok->o = o;
        ok->kind = k;
        json_t *mask = json_loads(obs_masks[k], 0, NULL);
        tg_kube_informer_opts_t io = {.gvr = gvrs[k],
                                      .label_selector = k == OBS_WORKLOAD ? NULL : OBS_SELECTOR,
                                      .cache_mask = mask,
                                      .cache_index = indexes[k],
                                      .event_mask = lag_mask,
                                      .cb = obs_on_event,
                                      .arg = ok};
        ok->inf = tg_kube_informer_new(kube, &io);
        json_decref(mask);
    }
    json_decref(lag_mask);
    for (int k = 0; k < OBS_NKINDS; k++)
        o->kinds[k].started =
            pthread_create(&o->kinds[k].thread, NULL, obs_informer_main, &o->kinds[k]) == 0;
    o->workers = tg_xcalloc((size_t)o->cfg.workers, sizeof(*o->workers));
    for (int i = 0; i < o->cfg.workers; i++)
        if (pthread_create(&o->workers[o->nworkers], NULL, obs_worker, o) == 0)
            o->nworkers++;
    o->resync_started = pthread_create(&o->resync, NULL, obs_resync_main, o) == 0;
    tg_metrics_register(obs_metrics, o);
    return o;
}

void tg_observer_stop(tg_observer_t *o)
{
    if (!o)
        return;
    tg_metrics_unregister(obs_metrics, o);
    pthread_mutex_lock(&o->lock);
    o->stop = 1;
    pthread_cond_broadcast(&o->wake);
    pthread_mutex_unlock(&o->lock);
    for (int k = 0; k < OBS_NKINDS; k++)
        tg_kube_informer_stop(o->kinds[k].inf);
    tg_workqueue_shutdown(o->queue);
    if (o->resync_started)
        pthread_join(o->resync, NULL);
    for (int i = 0; i < o->nworkers; i++)
        pthread_join(o->workers[i], NULL);
    for (int k = 0; k < OBS_NKINDS; k++) {
        if (o->kinds[k].started)
            pthread_join(o->kinds[k].thread, NULL);
        tg_kube_informer_free(o->kinds[k].inf);
    }
    free(o->workers);
    tg_workqueue_free(o->queue);
    tg_positions_free(o->positions);
    json_decref(o->suspects);
    pthread_cond_destroy(&o->wake);
    pthread_mutex_destroy(&o->lock);
    free(o);
}

/* The Workload of an owner by Kueue's job-uid label, asked of the cluster:
 * 1 found (*wl), 0 the cluster says there is none, -1 it cannot tell. */
static int obs_workload_by_label(tg_observer_t *o, const char *ns, const char *owner_key,
                                 json_t **wl)
{
    json_t *owner = NULL;
    for (int k = OBS_JOB; k <= OBS_RAYJOB && !owner; k++)
        owner = tg_kube_cache_get(obs_cache(o, k), owner_key, NULL, 0);
    const char *uid = json_string_value(json_object_get(json_object_get(owner, "metadata"), "uid"));
    char selector[160];
    int r = -1;
    if (uid && snprintf(selector, sizeof(selector), "kueue.x-k8s.io/job-uid=%s", uid) <
                   (int)sizeof(selector)) {
        tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_workloads, .ns = ns};
        tg_kube_list_opts_t lo = {.label_selector = selector, .timeout_ms = OBS_LOOKUP_MS};
        tg_kube_result_t res;
        tg_kube_result_init(&res);
        if (tg_kube_list(o->kube, &ref, &lo, &res) == TG_OK) {
            json_t *first = json_array_get(json_object_get(res.body, "items"), 0);
            json_t *mask = first ? json_loads(obs_masks[OBS_WORKLOAD], 0, NULL) : NULL;
            *wl = first ? tg_kube_project(first, mask) : NULL;
            json_decref(mask);
            r = *wl ? 1 : 0;
        }
        tg_kube_result_clean(&res);
    }
    json_decref(owner);
    return r;
}

int tg_observer_find_workload(tg_observer_t *o, const char *ns, const char *owner, json_t **wl)
{
    char key[512];
    *wl = NULL;
    if (!o || tg_kube_cache_key(ns, owner, key, sizeof(key)) != 0)
        return -1;
    tg_kube_cache_t *cache = obs_cache(o, OBS_WORKLOAD);
    json_t *all = tg_kube_cache_by_index(cache, key);
    *wl = json_incref(json_array_get(all, 0));
    json_decref(all);
    if (*wl)
        return 1;
    if (tg_kube_cache_current(cache))
        return 0;
    return obs_workload_by_label(o, ns, key, wl);
}

size_t tg_observer_pods_unsettled(tg_observer_t *o, const char *run_id)
{
    return o ? tg_kube_cache_index_unacked(obs_cache(o, OBS_POD), run_id) : 0;
}
