/* Streaming stored logs to HTTP clients (plain text or Server-Sent
 * Events, follow or not) without a worker thread each: every response is a
 * stream of the process's hub (api/sse_hub.h, source "run_logs"), which
 * owns the suspend/resume, per-client buffering, keepalive, access
 * re-checks and shutdown; this module decides what to send.
 *
 * Polling. Once per tick the newest chunk id in the table is read; a
 * follow looks for new chunks when it moved since its last look, when its
 * last fetch found chunks, and at least every 2 s (commits can become
 * visible out of id order); it asks whether the log is complete (store
 * tg_store_log_complete) before fetching, and ends ("complete") after a
 * fetch that found nothing once complete. A non-follow stream ends at the
 * first empty fetch. A follow that got no new line for idle_timeout_s ends
 * ("idle"; SSE streams get ": keepalive" comments meanwhile). Only follows
 * count against max_followers.
 *
 * Lifecycle (main.c): start once the hub runs (tg_app_t.log_streams); free
 * after tg_sse_hub_free.
 *
 * Ownership: specs passed to tg_run_logs_stream_reply are taken over (see
 * there). */
#ifndef TG_API_RUN_LOGS_STREAM_H
#define TG_API_RUN_LOGS_STREAM_H

#include <jansson.h>
#include <stdint.h>

#include "api/sse_hub.h"
#include "api/stream_access.h"
#include "core/buf.h"
#include "http/request.h"
#include "store/logs_read.h"

typedef struct tg_logs_streams_s tg_logs_streams_t;

typedef struct tg_logs_streams_config_s {
    int max_followers;   /* follow streams open at once: 256 */
    long idle_timeout_s; /* a follow without new lines this long ends: 300 */
} tg_logs_streams_config_t;

/* Add log streams to `hub`; cfg may be NULL (zero fields take defaults).
 * NULL when hub is NULL or full (log reads then answer 503). */
tg_logs_streams_t *tg_logs_streams_start(tg_sse_hub_t *hub, const tg_logs_streams_config_t *cfg);
/* NULL-safe; after tg_sse_hub_free. */
void tg_logs_streams_free(tg_logs_streams_t *ls);

/* How stored lines are written for a client. */
typedef struct tg_run_logs_fmt_s {
    int sse;        /* text/event-stream framing */
    int timestamps; /* keep the kubelet timestamps */
    int prefix;     /* "[pod/container] " before each line */
    int has_since;
    int64_t since_ns; /* drop lines before this */
} tg_run_logs_fmt_t;

/* What one response streams. */
typedef struct tg_logs_stream_spec_s {
    const char *run_id; /* copied */
    int attempt;
    const char *pod;       /* copied; NULL: all */
    const char *container; /* copied; NULL: all */
    int follow;
    tg_run_logs_fmt_t fmt;
    long skip;         /* drop this many lines first (tail) */
    json_t *positions; /* [{pod, container, seq}] start; stolen */
    /* the caller's access, re-checked while a follow runs (it then ends
     * with `event: end`, reason "revoked"); stolen, may be NULL */
    tg_stream_access_t *access;
} tg_logs_stream_spec_t;

/* Answer `req` with a streaming response for spec (positions and access are
 * stolen in every case). RET: TG_OK, or TG_EUNAVAILABLE when ls is NULL, the
 * hub is stopping or too many follow streams are open (nothing answered:
 * the caller replies). */
tg_rc_e tg_run_logs_stream_reply(tg_logs_streams_t *ls, tg_req_t *req,
                                 tg_logs_stream_spec_t *spec) TG_MUSTCHECK;

/* Format a stored chunk for a client (exposed for the unit tests): appends
 * to out the lines of chunk->content after fmt's since filter and the skip
 * count (decremented as lines are dropped; NULL: none). For SSE, one event
 * "id: <chunk id>" with a data line per log line (CR becomes a space), or
 * nothing when every line was dropped. RET: lines written, -1 when out has no
 * room (out then as it was). */
long tg_run_logs_format(tg_buf_t *out, const tg_log_chunk_t *chunk, const tg_run_logs_fmt_t *fmt,
                        long *skip);

#endif
