/* Kubernetes API client metrics: fixed arrays of relaxed atomics. */
#include "kube/metrics.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/metrics.h"

#define KM_MAX_CODE 600

static const char *const km_verbs[TG_KUBE_VERB_COUNT] = {
    "get", "list", "create", "update", "patch", "delete", "watch", "logs",
};
static const char *const km_events[TG_KUBE_MEV_COUNT] = {
    "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR",
};

/* Per process, like core/metrics' own series: every client of the process
 * (the daemon's, the engine's informers, tools) adds to the same counters,
 * which are registered once while any client lives. */
static struct {
    _Atomic uint64_t codes[TG_KUBE_VERB_COUNT][KM_MAX_CODE];
    _Atomic uint64_t count[TG_KUBE_VERB_COUNT];
    _Atomic uint64_t sum_us[TG_KUBE_VERB_COUNT];
    _Atomic uint64_t retries[TG_KUBE_VERB_COUNT];
    _Atomic uint64_t events[TG_KUBE_MEV_COUNT];
    _Atomic uint64_t relists;
    pthread_mutex_t lock; /* guards users */
    int users;
} km = {.lock = PTHREAD_MUTEX_INITIALIZER};

const char *tg_kube_verb_name(tg_kube_verb_e verb)
{
    return (unsigned)verb < TG_KUBE_VERB_COUNT ? km_verbs[verb] : "unknown";
}

void tg_kube_metrics_acquire(void)
{
    pthread_mutex_lock(&km.lock);
    if (km.users++ == 0)
        tg_metrics_register(tg_kube_metrics_collect, NULL);
    pthread_mutex_unlock(&km.lock);
}

void tg_kube_metrics_release(void)
{
    pthread_mutex_lock(&km.lock);
    if (km.users > 0 && --km.users == 0)
        tg_metrics_unregister(tg_kube_metrics_collect, NULL);
    pthread_mutex_unlock(&km.lock);
}

void tg_kube_metrics_request(tg_kube_verb_e verb, long code, uint64_t duration_us)
{
    if ((unsigned)verb >= TG_KUBE_VERB_COUNT)
        return;
    if (code < 0 || code >= KM_MAX_CODE)
        code = 0;
    atomic_fetch_add_explicit(&km.codes[verb][code], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&km.count[verb], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&km.sum_us[verb], duration_us, memory_order_relaxed);
}

void tg_kube_metrics_retry(tg_kube_verb_e verb)
{
    if ((unsigned)verb < TG_KUBE_VERB_COUNT)
        atomic_fetch_add_explicit(&km.retries[verb], 1, memory_order_relaxed);
}

void tg_kube_metrics_event(tg_kube_mev_e type)
{
    if ((unsigned)type < TG_KUBE_MEV_COUNT)
        atomic_fetch_add_explicit(&km.events[type], 1, memory_order_relaxed);
}

void tg_kube_metrics_relist(void)
{
    atomic_fetch_add_explicit(&km.relists, 1, memory_order_relaxed);
}

uint64_t tg_kube_metrics_requests(tg_kube_verb_e verb, long code)
{
    if ((unsigned)verb >= TG_KUBE_VERB_COUNT || code < 0 || code >= KM_MAX_CODE)
        return 0;
    return atomic_load_explicit(&km.codes[verb][code], memory_order_relaxed);
}

/* Stops at the first append that fails (see tg_metrics_collect_fn). */
void tg_kube_metrics_collect(tg_buf_t *out, void *arg)
{
    (void)arg;
    if (tg_buf_puts(out, "# HELP taugate_kube_requests_total Kubernetes API requests (each "
                         "attempt), by verb and HTTP code (0 = no answer).\n"
                         "# TYPE taugate_kube_requests_total counter\n") != TG_OK)
        return;
    for (int v = 0; v < TG_KUBE_VERB_COUNT; v++)
        for (int code = 0; code < KM_MAX_CODE; code++) {
            uint64_t n = atomic_load_explicit(&km.codes[v][code], memory_order_relaxed);
            if (n)
                if (tg_buf_printf(out,
                                  "taugate_kube_requests_total{verb=\"%s\",code=\"%d\"} %llu\n",
                                  km_verbs[v], code, (unsigned long long)n) != TG_OK)
                    return;
        }
    if (tg_buf_puts(out, "# HELP taugate_kube_request_duration_seconds Time per Kubernetes API "
                         "attempt, by verb (streams count until they end).\n"
                         "# TYPE taugate_kube_request_duration_seconds summary\n") != TG_OK)
        return;
    for (int v = 0; v < TG_KUBE_VERB_COUNT; v++) {
        uint64_t n = atomic_load_explicit(&km.count[v], memory_order_relaxed);
        if (!n)
            continue;
        double sum = (double)atomic_load_explicit(&km.sum_us[v], memory_order_relaxed) / 1e6;
        if (tg_buf_printf(out,
                          "taugate_kube_request_duration_seconds_sum{verb=\"%s\"} %.6f\n"
                          "taugate_kube_request_duration_seconds_count{verb=\"%s\"} %llu\n",
                          km_verbs[v], sum, km_verbs[v], (unsigned long long)n) != TG_OK)
            return;
    }
    if (tg_buf_puts(out, "# HELP taugate_kube_retries_total Kubernetes API requests sent again "
                         "after a 429, 5xx or network error, by verb.\n"
                         "# TYPE taugate_kube_retries_total counter\n") != TG_OK)
        return;
    for (int v = 0; v < TG_KUBE_VERB_COUNT; v++)
        if (tg_buf_printf(out, "taugate_kube_retries_total{verb=\"%s\"} %llu\n", km_verbs[v],
                          (unsigned long long)atomic_load_explicit(&km.retries[v],
                                                                   memory_order_relaxed)) != TG_OK)
            return;
    if (tg_buf_puts(out, "# HELP taugate_kube_watch_events_total Watch events received, by "
                         "type.\n"
                         "# TYPE taugate_kube_watch_events_total counter\n") != TG_OK)
        return;
    for (int e = 0; e < TG_KUBE_MEV_COUNT; e++)
        if (tg_buf_printf(out, "taugate_kube_watch_events_total{type=\"%s\"} %llu\n", km_events[e],
                          (unsigned long long)atomic_load_explicit(&km.events[e],
                                                                   memory_order_relaxed)) != TG_OK)
            return;
    if (tg_buf_printf(
            out,
            "# HELP taugate_kube_informer_relists_total Full lists made by informers "
            "(start, expired watch, errors).\n"
            "# TYPE taugate_kube_informer_relists_total counter\n"
            "taugate_kube_informer_relists_total %llu\n",
            (unsigned long long)atomic_load_explicit(&km.relists, memory_order_relaxed)) != TG_OK)
        return;
}
