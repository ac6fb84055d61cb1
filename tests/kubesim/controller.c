/* The controller loop. */
#include "controller.h"

#include <pthread.h>
#include <unistd.h>

#include "gc.h"
#include "jobs.h"
#include "kueue.h"
#include "pods.h"
#include "rayjob.h"
#include "scheduler.h"
#include "store.h"
#include "util.h"

static pthread_t g_thread;
static volatile int g_stop;
static int g_started;
static unsigned long g_passes;

static void *ctl_main(void *arg)
{
    (void)arg;
    ks_lock();
    while (!g_stop) {
        ks_store_wait_dirty(0.1);
        if (g_stop)
            break;
        double t0 = ks_now();
        /* Order mirrors the cause/effect chain of one reconcile round. */
        ks_gc_pass();
        ks_rayjob_pass();
        ks_kueue_pass();
        ks_jobs_pass();
        ks_sched_pass();
        ks_pods_pass();
        g_passes++;
        /* Let API requests in: rest at least as long as the pass took, so
         * a large store never starves clients of the lock. */
        double took = ks_now() - t0;
        ks_unlock();
        usleep((useconds_t)(2000 + (took < 1.0 ? took : 1.0) * 1e6));
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

unsigned long ks_controller_passes(void)
{
    return g_passes;
}
