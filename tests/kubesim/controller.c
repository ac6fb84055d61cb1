/* The controller loop. */
#include "controller.h"

#include <pthread.h>
#include <unistd.h>

#include "config.h"
#include "deploy.h"
#include "gc.h"
#include "jobs.h"
#include "kueue.h"
#include "logs.h"
#include "pods.h"
#include "rayjob.h"
#include "scheduler.h"
#include "store.h"
#include "util.h"
#include "work.h"

/* KubeRay's controller still polls (few objects, driver state and TTLs). */
#define RAY_POLL_SECS 0.1

static pthread_t g_thread;
static volatile int g_stop;
static int g_started;
static unsigned long g_passes;

/* Every published change, turned into each controller's work. */
static void on_change(int rt, json_t *old, json_t *obj)
{
    ks_gc_observe(rt, old, obj);
    ks_kueue_observe(rt, old, obj);
    ks_jobs_observe(rt, old, obj);
    ks_deploy_observe(rt, old, obj);
    ks_sched_observe(rt, old, obj);
    ks_pods_observe(rt, old, obj);
    ks_logs_observe(rt, old, obj);
}

void ks_controller_init(void)
{
    ks_work_init();
    ks_store_set_observer(on_change);
    ks_store_set_keep(ks_work_queued);
}

static void *ctl_main(void *arg)
{
    (void)arg;
    double last_ray = 0, last_cool = ks_now();
    ks_lock();
    while (!g_stop) {
        double now = ks_now();
        if (ks_cfg.cool_secs > 0 && now - last_cool >= ks_cfg.cool_secs) {
            ks_store_cool();
            last_cool = now;
        }
        double next = ks_work_timers(now);
        int ray = ks_rayjob_active();
        if (!ks_work_pending() && !(ray && now - last_ray >= RAY_POLL_SECS)) {
            double wait = ray ? RAY_POLL_SECS - (now - last_ray) : 1.0;
            if (ks_cfg.cool_secs > 0 && ks_cfg.cool_secs - (now - last_cool) < wait)
                wait = ks_cfg.cool_secs - (now - last_cool);
            if (next >= 0 && next < wait)
                wait = next;
            ks_store_wait_dirty(wait > 0.0005 ? wait : 0.0005);
            continue;
        }
        double t0 = ks_now();
        /* Order mirrors the cause/effect chain of one reconcile round. */
        ks_gc_pass();
        if (ray) {
            ks_rayjob_pass();
            last_ray = t0;
        }
        ks_kueue_pass();
        ks_jobs_pass();
        ks_deploy_pass();
        ks_sched_pass();
        ks_pods_pass();
        g_passes++;
        /* Let API requests in: rounds are bounded (KS_WORK_ROUND), and a
         * rest of half a round's time keeps the lock for clients at least a
         * third of the time when the controller is busy. */
        double took = ks_now() - t0;
        ks_unlock();
        usleep((useconds_t)(1000 + (took < 0.5 ? took : 0.5) * 0.5e6));
        ks_lock();
    }
    ks_unlock();
    return NULL;
}

int ks_controller_start(void)
{
    if (pthread_create(&g_thread, NULL, ctl_main, NULL) != 0)
        return -1;
    g_started = 1;
    return 0;
}

void ks_controller_stop(void)
{
    if (!g_started)
        return;
    g_stop = 1;
    ks_lock();
    ks_store_kick();
    ks_unlock();
    pthread_join(g_thread, NULL);
    g_started = 0;
}

void ks_controller_shutdown(void)
{
    ks_gc_shutdown();
    ks_kueue_shutdown();
    ks_sched_shutdown();
    ks_jobs_shutdown();
    ks_deploy_shutdown();
    ks_work_free();
}

unsigned long ks_controller_passes(void)
{
    return g_passes;
}
