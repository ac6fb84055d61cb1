/* Long-lived streaming responses (Server-Sent Events, or plain text) fed
 * from the database without a worker thread per client: the one hub behind
 * the run-change stream (api/run_changes.h) and log follows
 * (api/run_logs_stream.h). One hub per process, owned by tg_app_t.
 *
 * Design. Every stream is an MHD callback response. Its content reader runs
 * on an MHD worker thread and never touches the database: it copies bytes
 * out of the stream's buffer, and when the buffer is empty it suspends the
 * connection (MHD_suspend_connection, then returns 0). One notifier thread
 * owns all database work: every tick (poll_ms, or sooner when woken) it
 * checks out one connection, runs each source's `tick` once (shared work,
 * such as finding the newest id), then the source's `serve` for each of its
 * streams whose buffer has room, which appends whole events
 * (tg_sse_stream_write); appending resumes a suspended connection. A
 * suspended connection costs a socket and its buffer, never a thread; the
 * MHD daemon runs with MHD_ALLOW_SUSPEND_RESUME and MHD_USE_ITC, so a
 * resumed connection is served at once.
 *
 * Bounded buffering: `serve` is not called while a stream holds
 * buffer_bytes or more that the client has not read, and one call appends
 * about tg_sse_stream_budget bytes at most (whole events, at least one), so
 * a slow client leaves its events in the database instead of in memory; a
 * write past the source's ceiling ends the stream with reason "overflow".
 *
 * Access: a stream opened with an access (api/stream_access.h) is checked
 * again every access_check_s seconds; one that lost it gets nothing more
 * than what the client has started to read, then `event: end` with reason
 * "revoked". Idle event streams get ": keepalive" comments every
 * keepalive_s. tg_sse_hub_stop ends every stream with reason "shutdown"
 * (call it before the HTTP server stops: MHD must never stop with a
 * suspended connection) and refuses new ones. Plain-text streams
 * (TG_SSE_PLAIN) get no comments and no end event: they just end.
 *
 * Suspend/resume races are closed by the stream mutex: the reader suspends
 * while holding it and sets `suspended`; writers resume only a stream they
 * see suspended, under the same mutex. A suspended connection cannot
 * complete, so the connection pointer stays valid while it is set.
 *
 * Metrics, one series per source (label `stream`): taugate_sse_streams,
 * taugate_sse_bytes_total, taugate_sse_revoked_total.
 *
 * Lifecycle (main.c): start after the pool and the tenancy cache, add the
 * sources, stop before the HTTP server drains, free after it is freed
 * (every stream's state is freed there, before the sources' owners free
 * what their `arg` points to).
 *
 * Ownership: the hub borrows the pool and the tenancy cache; a stream owns
 * its state (freed with the source's state_free) and its access. */
#ifndef TG_API_SSE_HUB_H
#define TG_API_SSE_HUB_H

#include <stddef.h>
#include <stdint.h>

#include "api/stream_access.h"
#include "http/request.h"
#include "store/pool.h"

struct tg_tenancy_cache_s;

typedef struct tg_sse_hub_s tg_sse_hub_t;
typedef struct tg_sse_source_s tg_sse_source_t;
typedef struct tg_sse_stream_s tg_sse_stream_t;

typedef struct tg_sse_hub_config_s {
    long poll_ms;        /* notifier tick: 250 */
    long keepalive_s;    /* comment while idle: 15 */
    long access_check_s; /* access re-check period: 5 */
    size_t buffer_bytes; /* serve a stream only while it holds less: 64 KiB */
} tg_sse_hub_config_t;

/* Start the hub and its notifier thread. cfg may be NULL; zero fields take
 * the defaults. NULL when the thread cannot start. */
tg_sse_hub_t *tg_sse_hub_start(tg_db_pool_t *pool, struct tg_tenancy_cache_s *tenancy,
                               const tg_sse_hub_config_t *cfg);
/* End every stream ("shutdown"), resume suspended connections, refuse new
 * streams. NULL-safe. */
void tg_sse_hub_stop(tg_sse_hub_t *h);
/* Stop the notifier, free every stream and the hub; after the HTTP server
 * is freed. NULL-safe. */
void tg_sse_hub_free(tg_sse_hub_t *h);

/* One kind of stream. */
typedef struct tg_sse_source_config_s {
    const char *name;     /* the metrics' `stream` label, e.g. "run_changes" */
    int max_streams;      /* counted streams open at once: 256 */
    size_t ceiling_bytes; /* a stream's buffer never holds more: 4 × buffer_bytes;
                           * SIZE_MAX: none (serve bounds what it appends) */
    /* Once per tick with a connection, before the source's streams are
     * served; also every minute while none is open (housekeeping must not
     * wait for a client). Not TG_OK: none of them is served this tick. */
    tg_rc_e (*tick)(void *arg, tg_db_conn_t *conn);
    /* Serve one stream (notifier thread): append what is new with
     * tg_sse_stream_write, end it with tg_sse_stream_end. TG_EUNAVAILABLE
     * when the connection broke (the tick stops). */
    tg_rc_e (*serve)(void *arg, tg_sse_stream_t *s, void *state, tg_db_conn_t *conn);
    void (*state_free)(void *arg, void *state);
    void *arg; /* borrowed; passed to the callbacks; must outlive tg_sse_hub_free */
} tg_sse_source_config_t;

/* Add a source (at most 4). NULL when h is NULL or full. The source lives
 * as long as the hub. */
tg_sse_source_t *tg_sse_hub_source(tg_sse_hub_t *h, const tg_sse_source_config_t *cfg);

enum {
    TG_SSE_PLAIN = 1,     /* text/plain: no comments, no end event */
    TG_SSE_UNCOUNTED = 2, /* not counted against max_streams (short reads) */
};

/* Answer `req` with a stream of `src` (not NULL; flags: TG_SSE_*). `state`
 * and `access` (may be NULL) are taken over in every case (state freed with
 * state_free). RET: TG_OK, or TG_EUNAVAILABLE when the hub is stopping or
 * the source is full (nothing answered: the caller replies 503). */
tg_rc_e tg_sse_hub_reply(tg_sse_source_t *src, tg_req_t *req, void *state,
                         tg_stream_access_t *access, int flags) TG_MUSTCHECK;

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
 * (event streams) and end the response once the client has read
 * everything. */
void tg_sse_stream_end(tg_sse_stream_t *s, const char *reason);

#endif
