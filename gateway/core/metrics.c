/* Prometheus metrics: fixed per-route HTTP series plus registered collectors. */
#include "core/metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/mem.h"
#include "core/process_metrics.h"
#include "core/version.h"

#define METRICS_MAX_STATUS     600
#define METRICS_MAX_COLLECTORS 32

static const double metrics_buckets_s[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                           0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                           1,      2.5,     5,      10};
#define METRICS_NBUCKETS (sizeof(metrics_buckets_s) / sizeof(metrics_buckets_s[0]))

typedef struct {
    _Atomic uint64_t codes[METRICS_MAX_STATUS];
    _Atomic uint64_t buckets[METRICS_NBUCKETS];
    _Atomic uint64_t count;
    _Atomic uint64_t sum_us;
} metrics_route_t;

static struct {
    metrics_route_t *routes; /* nroutes + 1: the last is "unmatched" */
    int nroutes;
    const char *const *methods;
    const char *const *paths;
    pthread_mutex_t lock; /* guards the collector list */
    struct {
        tg_metrics_collect_fn fn;
        void *arg;
    } collectors[METRICS_MAX_COLLECTORS];
    int ncollectors;
    time_t start;
} metrics = {.lock = PTHREAD_MUTEX_INITIALIZER};

void tg_metrics_init(int nroutes, const char *const *methods, const char *const *paths)
{
    metrics.routes = tg_xcalloc((size_t)nroutes + 1, sizeof(metrics_route_t));
    metrics.nroutes = nroutes;
    metrics.methods = methods;
    metrics.paths = paths;
    metrics.start = time(NULL);
}

void tg_metrics_shutdown(void)
{
    TG_FREE_NULL(metrics.routes);
    pthread_mutex_lock(&metrics.lock);
    metrics.ncollectors = 0;
    pthread_mutex_unlock(&metrics.lock);
}

void tg_metrics_http_observe(int route_index, unsigned status, uint64_t duration_us)
{
    if (!metrics.routes)
        return;
    int i = route_index >= 0 && route_index < metrics.nroutes ? route_index : metrics.nroutes;
    metrics_route_t *r = &metrics.routes[i];
    if (status < METRICS_MAX_STATUS)
        atomic_fetch_add_explicit(&r->codes[status], 1, memory_order_relaxed);
    double s = (double)duration_us / 1e6;
    for (size_t b = 0; b < METRICS_NBUCKETS; b++)
        if (s <= metrics_buckets_s[b]) {
            atomic_fetch_add_explicit(&r->buckets[b], 1, memory_order_relaxed);
            break;
        }
    atomic_fetch_add_explicit(&r->count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->sum_us, duration_us, memory_order_relaxed);
}

void tg_metrics_register(tg_metrics_collect_fn fn, void *arg)
{
    pthread_mutex_lock(&metrics.lock);
    if (metrics.ncollectors < METRICS_MAX_COLLECTORS) {
        metrics.collectors[metrics.ncollectors].fn = fn;
        metrics.collectors[metrics.ncollectors].arg = arg;
        metrics.ncollectors++;
    }
    pthread_mutex_unlock(&metrics.lock);
}

void tg_metrics_unregister(tg_metrics_collect_fn fn, void *arg)
{
    pthread_mutex_lock(&metrics.lock);
    for (int i = 0; i < metrics.ncollectors; i++)
        if (metrics.collectors[i].fn == fn && metrics.collectors[i].arg == arg) {
            metrics.collectors[i] = metrics.collectors[--metrics.ncollectors];
            break;
        }
    pthread_mutex_unlock(&metrics.lock);
}

void tg_metrics_label_escape(const char *in, char *out, size_t outlen)
{
    size_t o = 0;
    for (; *in && o + 3 < outlen; in++) {
        if (*in == '\\' || *in == '"') {
            out[o++] = '\\';
            out[o++] = *in;
        } else if (*in == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = *in;
        }
    }
    out[o] = '\0';
}

static tg_rc_e metrics_render_http(tg_buf_t *out)
{
    if (tg_buf_puts(out, "# HELP taugate_http_requests_total HTTP requests answered, by route "
                         "template, method and status code.\n"
                         "# TYPE taugate_http_requests_total counter\n") != TG_OK)
        return TG_ETOOLARGE;
    for (int i = 0; i <= metrics.nroutes; i++) {
        char path[256];
        const char *method = i < metrics.nroutes ? metrics.methods[i] : "ANY";
        tg_metrics_label_escape(i < metrics.nroutes ? metrics.paths[i] : "unmatched", path,
                                sizeof(path));
        for (unsigned code = 100; code < METRICS_MAX_STATUS; code++) {
            uint64_t v = atomic_load_explicit(&metrics.routes[i].codes[code], memory_order_relaxed);
            if (v)
                if (tg_buf_printf(out,
                                  "taugate_http_requests_total{route=\"%s\",method=\"%s\","
                                  "code=\"%u\"} %llu\n",
                                  path, method, code, (unsigned long long)v) != TG_OK)
                    return TG_ETOOLARGE;
        }
    }
    if (tg_buf_puts(out, "# HELP taugate_http_request_duration_seconds Time from the first "
                         "byte of a request to its completion, by route template.\n"
                         "# TYPE taugate_http_request_duration_seconds histogram\n") != TG_OK)
        return TG_ETOOLARGE;
    for (int i = 0; i <= metrics.nroutes; i++) {
        metrics_route_t *r = &metrics.routes[i];
        uint64_t count = atomic_load_explicit(&r->count, memory_order_relaxed);
        if (!count)
            continue;
        char path[256];
        const char *method = i < metrics.nroutes ? metrics.methods[i] : "ANY";
        tg_metrics_label_escape(i < metrics.nroutes ? metrics.paths[i] : "unmatched", path,
                                sizeof(path));
        uint64_t cum = 0;
        for (size_t b = 0; b < METRICS_NBUCKETS; b++) {
            cum += atomic_load_explicit(&r->buckets[b], memory_order_relaxed);
            if (tg_buf_printf(out,
                              "taugate_http_request_duration_seconds_bucket{route=\"%s\","
                              "method=\"%s\",le=\"%g\"} %llu\n",
                              path, method, metrics_buckets_s[b], (unsigned long long)cum) != TG_OK)
                return TG_ETOOLARGE;
        }
        if (tg_buf_printf(out,
                          "taugate_http_request_duration_seconds_bucket{route=\"%s\","
                          "method=\"%s\",le=\"+Inf\"} %llu\n"
                          "taugate_http_request_duration_seconds_sum{route=\"%s\","
                          "method=\"%s\"} %.6f\n"
                          "taugate_http_request_duration_seconds_count{route=\"%s\","
                          "method=\"%s\"} %llu\n",
                          path, method, (unsigned long long)count, path, method,
                          (double)atomic_load_explicit(&r->sum_us, memory_order_relaxed) / 1e6,
                          path, method, (unsigned long long)count) != TG_OK)
            return TG_ETOOLARGE;
    }
    return TG_OK;
}

tg_rc_e tg_metrics_render(tg_buf_t *out)
{
    if (tg_buf_printf(out,
                      "# HELP taugate_build_info Build information; the value is always 1.\n"
                      "# TYPE taugate_build_info gauge\n"
                      "taugate_build_info{version=\"%s\"} 1\n"
                      "# HELP taugate_start_time_seconds Unix time the process started.\n"
                      "# TYPE taugate_start_time_seconds gauge\n"
                      "taugate_start_time_seconds %lld\n",
                      tg_version(), (long long)metrics.start) != TG_OK)
        return TG_ETOOLARGE;
    if (tg_process_metrics_render(out) != TG_OK)
        return TG_ETOOLARGE;
    if (metrics.routes && metrics_render_http(out) != TG_OK)
        return TG_ETOOLARGE;
    pthread_mutex_lock(&metrics.lock);
    for (int i = 0; i < metrics.ncollectors && !out->overflowed; i++)
        metrics.collectors[i].fn(out, metrics.collectors[i].arg);
    pthread_mutex_unlock(&metrics.lock);
    /* a collector cannot return its failure: the buffer remembers it */
    return out->overflowed ? TG_ETOOLARGE : TG_OK;
}
