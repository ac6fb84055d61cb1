/* Prometheus metrics.
 *
 * HTTP request counts and latency are kept in fixed lock-free arrays indexed
 * by route (bounded label values by construction: route templates, never raw
 * paths). Other modules add their own series by registering a collector that
 * appends text-format lines at scrape time. */
#ifndef TG_CORE_METRICS_H
#define TG_CORE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* A collector appends its lines to `out` and stops at the first append that
 * fails: the buffer remembers the failure (tg_buf_t.overflowed), and
 * tg_metrics_render reports it. */
typedef void (*tg_metrics_collect_fn)(tg_buf_t *out, void *arg);

/* Set up the per-route series; labels[i] = {method, path template}. */
void tg_metrics_init(int nroutes, const char *const *methods, const char *const *paths);
void tg_metrics_shutdown(void);
/* Record one finished request; route_index -1 means no route matched. */
void tg_metrics_http_observe(int route_index, unsigned status, uint64_t duration_us);
/* Add a collector; called on every scrape, from the scraping thread. */
void tg_metrics_register(tg_metrics_collect_fn fn, void *arg);
/* Remove a collector (before freeing what `arg` points to). */
void tg_metrics_unregister(tg_metrics_collect_fn fn, void *arg);
/* Render everything in the Prometheus text format 0.0.4. */
tg_rc_e tg_metrics_render(tg_buf_t *out) TG_MUSTCHECK;
/* Escape a label value into out (for collectors). */
void tg_metrics_label_escape(const char *in, char *out, size_t outlen);

#endif
