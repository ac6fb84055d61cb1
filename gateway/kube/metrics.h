/* Kubernetes API client metrics.
 *
 * Process-wide counters (there is normally one client; tests make several,
 * and all of them add to the same series, which keeps the scrape free of
 * duplicate names). Labels are bounded by construction: verb is one of the
 * eight below and code is a number below 600 (0 = no HTTP answer).
 *   taugate_kube_requests_total{verb,code}            counter
 *   taugate_kube_request_duration_seconds{verb}       summary (sum and count)
 *   taugate_kube_retries_total{verb}                  counter
 *   taugate_kube_watch_events_total{type}             counter
 *   taugate_kube_informer_relists_total               counter
 * The collector is registered with core/metrics by the first client and
 * unregistered when the last one is freed (tg_kube_metrics_acquire/release).
 *
 * No jansson values. Thread-safety: every function may be called from any
 * thread; counters are relaxed atomics. */
#ifndef TG_KUBE_METRICS_H
#define TG_KUBE_METRICS_H

#include <stdint.h>

#include "core/buf.h"

typedef enum {
    TG_KUBE_VERB_GET = 0,
    TG_KUBE_VERB_LIST,
    TG_KUBE_VERB_CREATE,
    TG_KUBE_VERB_UPDATE,
    TG_KUBE_VERB_PATCH,
    TG_KUBE_VERB_DELETE,
    TG_KUBE_VERB_WATCH,
    TG_KUBE_VERB_LOGS,
    TG_KUBE_VERB_COUNT
} tg_kube_verb_e;

typedef enum {
    TG_KUBE_MEV_ADDED = 0,
    TG_KUBE_MEV_MODIFIED,
    TG_KUBE_MEV_DELETED,
    TG_KUBE_MEV_BOOKMARK,
    TG_KUBE_MEV_ERROR,
    TG_KUBE_MEV_COUNT
} tg_kube_mev_e;

const char *tg_kube_verb_name(tg_kube_verb_e verb);

/* Register the collector on first use; unregister after the last release. */
void tg_kube_metrics_acquire(void);
void tg_kube_metrics_release(void);

/* One finished HTTP attempt (code 0: no answer). */
void tg_kube_metrics_request(tg_kube_verb_e verb, long code, uint64_t duration_us);
void tg_kube_metrics_retry(tg_kube_verb_e verb);
void tg_kube_metrics_event(tg_kube_mev_e type);
void tg_kube_metrics_relist(void);

/* Read one counter (tests). */
uint64_t tg_kube_metrics_requests(tg_kube_verb_e verb, long code);

/* Append the text-format lines (the registered collector does this). */
void tg_kube_metrics_collect(tg_buf_t *out, void *arg);

#endif
