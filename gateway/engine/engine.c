/* Engine threads: the submitter loop and one informer per watched kind. */
#include "engine/engine.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/log.h"
#include "engine/evidence.h"
#include "engine/platform_metrics.h"
#include "engine/submitter.h"
#include "engine/watcher.h"
#include "kube/informer.h"
#include "render/metadata.h"

#define ENGINE_SELECTOR TG_LABEL_MANAGED_BY "=taugate"

typedef struct {
    tg_engine_t *engine;
    const char *kind;
    tg_kube_informer_t *inf;
    pthread_t thread;
    int started;
} engine_watch_t;

struct tg_engine_s {
    tg_db_pool_t *pool;
    tg_kube_client_t *kube;
    long poll_ms;
    pthread_t submitter;
    int submitter_started;
    const tg_signer_t *signer;
    long evidence_grace_s;
    pthread_t sealer;
    int sealer_started;
    pthread_cond_t sealer_wake; /* its own: kicks wake the submitter only */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;
    int kicked;
    engine_watch_t watches[4];
};

static void *engine_submitter(void *arg)
{
    tg_engine_t *e = arg;
    for (;;) {
        pthread_mutex_lock(&e->lock);
        int stop = e->stop;
        pthread_mutex_unlock(&e->lock);
        if (stop)
            break;
        int did = tg_submitter_step(e->pool, e->kube);
        if (did > 0)
            continue; /* more may be due: drain before sleeping */
        pthread_mutex_lock(&e->lock);
        if (!e->stop && !e->kicked) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            long ms = did < 0 ? 1000 : e->poll_ms;
            until.tv_sec += ms / 1000;
            until.tv_nsec += (ms % 1000) * 1000000L;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&e->wake, &e->lock, &until);
        }
        e->kicked = 0;
        pthread_mutex_unlock(&e->lock);
    }
    return NULL;
}

/* Seal the evidence of runs that ended, once a second. */
static void *engine_sealer(void *arg)
{
    tg_engine_t *e = arg;
    pthread_mutex_lock(&e->lock);
    while (!e->stop) {
        pthread_mutex_unlock(&e->lock);
        int sealed = tg_evidence_seal_pending(e->pool, e->kube, e->signer, e->evidence_grace_s);
        pthread_mutex_lock(&e->lock);
        if (sealed > 0 || e->stop)
            continue;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait(&e->sealer_wake, &e->lock, &until);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

static int engine_on_event(const tg_kube_event_t *ev, void *arg)
{
    engine_watch_t *w = arg;
    tg_platform_metrics_watch_event(w->kind, (int)ev->type, ev->object);
    tg_watcher_observe(w->engine->pool, w->engine->kube, w->kind, ev->type, ev->object);
    return 0;
}

static void *engine_informer(void *arg)
{
    engine_watch_t *w = arg;
    tg_kube_informer_run(w->inf);
    return NULL;
}

void tg_engine_kick(tg_engine_t *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->lock);
    e->kicked = 1;
    pthread_cond_signal(&e->wake);
    pthread_mutex_unlock(&e->lock);
}

tg_engine_t *tg_engine_start(const tg_config_t *cfg, tg_db_pool_t *pool, tg_kube_client_t *kube,
                             const tg_signer_t *signer, char *err, size_t errlen)
{
    tg_engine_t *e = tg_xcalloc(1, sizeof(*e));
    e->pool = pool;
    e->kube = kube;
    e->signer = signer;
    e->evidence_grace_s = cfg->evidence_log_grace_s;
    e->poll_ms = cfg->engine_poll_ms;
    pthread_mutex_init(&e->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->wake, &ca);
    pthread_cond_init(&e->sealer_wake, &ca);
    pthread_condattr_destroy(&ca);

    static const struct {
        const char *kind;
        const tg_kube_gvr_t *gvr;
        const char *selector;
    } kinds[4] = {
        {"Workload", &tg_kube_gvr_workloads, NULL},
        {"Job", &tg_kube_gvr_jobs, ENGINE_SELECTOR},
        {"RayJob", &tg_kube_gvr_rayjobs, ENGINE_SELECTOR},
        {"Pod", &tg_kube_gvr_pods, ENGINE_SELECTOR},
    };
    for (int i = 0; i < 4; i++) {
        engine_watch_t *w = &e->watches[i];
        w->engine = e;
        w->kind = kinds[i].kind;
        tg_kube_informer_opts_t o = {.gvr = kinds[i].gvr,
                                     .label_selector = kinds[i].selector,
                                     .cb = engine_on_event,
                                     .arg = w};
        w->inf = tg_kube_informer_new(kube, &o);
        w->started = pthread_create(&w->thread, NULL, engine_informer, w) == 0;
    }
    e->submitter_started = pthread_create(&e->submitter, NULL, engine_submitter, e) == 0;
    e->sealer_started = pthread_create(&e->sealer, NULL, engine_sealer, e) == 0;
    if (!e->submitter_started) {
        snprintf(err, errlen, "cannot start the engine's threads");
        tg_engine_stop(e);
        return NULL;
    }
    tg_log_info("engine", "started: submitter, evidence sealer, and watchers of Workloads, "
                          "Jobs, RayJobs, Pods");
    return e;
}

void tg_engine_stop(tg_engine_t *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->lock);
    e->stop = 1;
    pthread_cond_signal(&e->wake);
    pthread_cond_signal(&e->sealer_wake);
    pthread_mutex_unlock(&e->lock);
    if (e->sealer_started)
        pthread_join(e->sealer, NULL);
    for (int i = 0; i < 4; i++)
        if (e->watches[i].inf)
            tg_kube_informer_stop(e->watches[i].inf);
    if (e->submitter_started)
        pthread_join(e->submitter, NULL);
    for (int i = 0; i < 4; i++) {
        if (e->watches[i].started)
            pthread_join(e->watches[i].thread, NULL);
        tg_kube_informer_free(e->watches[i].inf);
    }
    pthread_mutex_destroy(&e->lock);
    pthread_cond_destroy(&e->wake);
    pthread_cond_destroy(&e->sealer_wake);
    free(e);
}
