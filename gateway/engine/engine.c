/* Engine threads: the submitters and the observer (see engine.h). */
#include "engine/engine.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/monotonic.h"
#include "core/log.h"
#include "engine/submitter.h"

struct tg_engine_s {
    tg_db_pool_t *pool;
    tg_kube_client_t *kube;
    long poll_ms;
    pthread_t *submitters;
    int nsubmitters;
    tg_observer_t *observer;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;
    unsigned kicks; /* bumped by each kick; a submitter that saw it drains again */
};

static void *engine_submitter(void *arg)
{
    pthread_setname_np(pthread_self(), "tg-submit");
    tg_engine_t *e = arg;
    unsigned seen = 0;
    for (;;) {
        pthread_mutex_lock(&e->lock);
        int stop = e->stop;
        seen = e->kicks;
        pthread_mutex_unlock(&e->lock);
        if (stop)
            break;
        int did = tg_submitter_step(e->pool, e->kube);
        if (did > 0)
            continue; /* more may be due: drain before sleeping */
        pthread_mutex_lock(&e->lock);
        if (!e->stop && e->kicks == seen) {
            long ms = did < 0 ? 1000 : e->poll_ms;
            struct timespec until = tg_mono_deadline_ms((uint64_t)ms);
            pthread_cond_timedwait(&e->wake, &e->lock, &until);
        }
        pthread_mutex_unlock(&e->lock);
    }
    return NULL;
}

void tg_engine_kick(tg_engine_t *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->lock);
    e->kicks++;
    pthread_cond_broadcast(&e->wake);
    pthread_mutex_unlock(&e->lock);
}

tg_observer_t *tg_engine_observer(tg_engine_t *e)
{
    return e ? e->observer : NULL;
}

tg_engine_t *tg_engine_start(const tg_config_t *cfg, tg_db_pool_t *pool, tg_kube_client_t *kube,
                             char *err, size_t errlen)
{
    tg_engine_t *e = tg_xcalloc(1, sizeof(*e));
    e->pool = pool;
    e->kube = kube;
    e->poll_ms = cfg->engine_poll_ms;
    pthread_mutex_init(&e->lock, NULL);
    tg_cond_init_monotonic(&e->wake);

    tg_observer_config_t oc = {.workers = (int)cfg->engine_workers,
                               .resync_s = cfg->engine_resync_s};
    e->observer = tg_observer_start(pool, kube, &oc);
    int want = cfg->engine_submitters > 0 ? (int)cfg->engine_submitters : 1;
    e->submitters = tg_xcalloc((size_t)want, sizeof(*e->submitters));
    for (int i = 0; i < want; i++)
        if (pthread_create(&e->submitters[e->nsubmitters], NULL, engine_submitter, e) == 0)
            e->nsubmitters++;
    if (!e->nsubmitters) {
        snprintf(err, errlen, "cannot start the engine's threads");
        tg_engine_stop(e);
        return NULL;
    }
    tg_log_info("engine",
                "started: %d submitter(s), %ld worker(s) and watchers of Workloads, Jobs, "
                "RayJobs, Pods; every unfinished run compared with the cluster every %lds",
                e->nsubmitters, cfg->engine_workers, cfg->engine_resync_s);
    return e;
}

void tg_engine_stop(tg_engine_t *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->lock);
    e->stop = 1;
    pthread_cond_broadcast(&e->wake);
    pthread_mutex_unlock(&e->lock);
    for (int i = 0; i < e->nsubmitters; i++)
        pthread_join(e->submitters[i], NULL);
    tg_observer_stop(e->observer);
    free(e->submitters);
    pthread_mutex_destroy(&e->lock);
    pthread_cond_destroy(&e->wake);
    free(e);
}
