/* Server-Sent Event streams fed from the database without a worker thread
 * per client.
 *
 * Design (the one api/run_logs_stream.h describes for log follows). Every
 * stream is an MHD callback response. Its content reader runs on an MHD
 * worker thread and never touches the database: it copies bytes out of the
 * stream's buffer, and when the buffer is empty it suspends the connection
 * (MHD_suspend_connection, then returns 0) and wakes the hub. One notifier
 * thread per hub owns all database work: every tick (and when woken) it
 * runs the hub's `tick` once, then the hub's `serve` for each stream whose
 * buffer has room, which appends events (tg_sse_stream_write); appending
 * resumes a suspended connection. A suspended connection costs a socket and
 * its buffer, never a thread.
 *
 * Bounded buffering: `serve` is not called while a stream holds
 * buffer_bytes or more that the client has not read, and one call appends
 * at most about tg_sse_stream_budget bytes (whole events), so a slow client
 * leaves its events in the database instead of in memory; a write past
 * the buffer's hard ceiling (4 × buffer_bytes) ends the stream with
 * reason "overflow".
 *
 * Access: a stream opened with an access (api/stream_access.h) is checked
 * again every access_check_s seconds; one that lost it ends with an
 * `event: end` of reason "revoked". Idle streams get ": keepalive" comments
 * every keepalive_s. tg_sse_hub_stop ends every stream with reason
 * "shutdown" (call it before the HTTP server stops: MHD must never stop
 * with a suspended connection) and refuses new ones.
 *
 * Suspend/resume races are closed by the stream mutex: the reader suspends
 * while holding it and sets `suspended`; writers resume only a stream they
 * see suspended, under the same mutex. A suspended connection cannot
 * complete, so the connection pointer stays valid while it is set.
 *
 * Ownership: the hub borrows the pool and the tenancy cache; a stream owns
 * its state (freed with state_free) and its access. */
#ifndef TG_API_SSE_HUB_H
#define TG_API_SSE_HUB_H

#include <stddef.h>
#include <stdint.h>

#include "api/stream_access.h"
#include "http/request.h"
#include "store/pool.h"

struct tg_tenancy_cache_s;

typedef struct tg_sse_hub_s tg_sse_hub_t;
typedef struct tg_sse_stream_s tg_sse_stream_t;

typedef struct tg_sse_hub_config_s {
    const char *name;    /* the metrics' `stream` label, e.g. "run_changes" */
    int max_streams;     /* open at once: 256 */
    long poll_ms;        /* notifier tick: 250 */
    long keepalive_s;    /* comment while idle: 15 */
    long access_check_s; /* access re-check period: 5 */
    size_t buffer_bytes; /* serve a stream only while it holds less: 64 KiB */
    /* Once per tick with a connection, before any stream is served (shared
     * work); also every minute while no stream is open. Not TG_OK: no
     * stream is served this tick. */
    tg_rc_e (*tick)(void *arg, tg_db_conn_t *conn);
    /* Serve one stream (notifier thread): append what is new with
     * tg_sse_stream_write, end it with tg_sse_stream_end. TG_EUNAVAILABLE
     * when the connection broke (the tick stops). */
    tg_rc_e (*serve)(void *arg, tg_sse_stream_t *s, void *state, tg_db_conn_t *conn);
    void (*state_free)(void *state);
    void *arg; /* passed to tick and serve */
} tg_sse_hub_config_t;

/* Start a hub and its notifier thread. NULL when the thread cannot start. */
tg_sse_hub_t *tg_sse_hub_start(tg_db_pool_t *pool, struct tg_tenancy_cache_s *tenancy,
                               const tg_sse_hub_config_t *cfg);
/* End every stream ("shutdown"), resume suspended connections, refuse new
 * streams. NULL-safe. */
void tg_sse_hub_stop(tg_sse_hub_t *h);
/* Stop the notifier and free the hub; after the HTTP server is freed.
 * NULL-safe. */
void tg_sse_hub_free(tg_sse_hub_t *h);

/* Answer `req` with a stream (Content-Type text/event-stream). `state` and
 * `access` (may be NULL) are taken over in every case. RET: TG_OK, or
 * TG_EUNAVAILABLE when the hub is stopping or full (nothing answered: the
 * caller replies 503). */
tg_rc_e tg_sse_hub_reply(tg_sse_hub_t *h, tg_req_t *req, void *state,
                         tg_stream_access_t *access) TG_MUSTCHECK;

/* From serve: append `len` bytes (whole events) and wake the client.
 * TG_ETOOLARGE past the ceiling (the stream then ends with "overflow"). */
tg_rc_e tg_sse_stream_write(tg_sse_stream_t *s, const char *data, size_t len) TG_MUSTCHECK;
/* From serve: how many bytes one call should append at most; it stops
 * after the event that reaches this (at least one event, so a stream always
 * moves) and calls tg_sse_stream_more. */
size_t tg_sse_stream_budget(const tg_sse_stream_t *s);
/* From serve: there is more to send; serve again as soon as the client has
 * read what is buffered, without waiting for the next tick. */
void tg_sse_stream_more(tg_sse_stream_t *s);
/* From serve (or any thread): append `event: end` with {"reason": reason}
 * and end the response once the client has read everything. */
void tg_sse_stream_end(tg_sse_stream_t *s, const char *reason);

#endif
