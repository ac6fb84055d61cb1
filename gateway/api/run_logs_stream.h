/* Streaming stored logs to HTTP clients without a worker thread each.
 *
 * Design. Every log response (plain or SSE, follow or not) is an MHD
 * callback response. Its content reader runs on an MHD worker thread and
 * never touches the database: it copies bytes from the stream's buffer, and
 * when the buffer is empty it suspends the connection
 * (MHD_suspend_connection, then returns 0) and signals the notifier. One
 * notifier thread owns all database work: it fetches the next chunks of
 * each stream that needs data (store/logs_read.h), formats them into the
 * stream's buffer and resumes the connection (MHD_resume_connection). A
 * suspended connection costs a socket and a few hundred KiB at most, never
 * a thread; the MHD daemon runs with MHD_ALLOW_SUSPEND_RESUME and
 * MHD_USE_ITC, so a resumed connection is served at once.
 *
 * Suspend/resume races are closed by the stream mutex: the reader suspends
 * while holding it and sets `suspended`; the notifier resumes only a stream
 * it sees suspended, under the same mutex. A suspended connection cannot
 * complete, so the connection pointer stays valid while `suspended` is set.
 *
 * Polling. A follow stream looks for new chunks when the newest chunk id in
 * the table changed since its last look, and at least every 2 s (commits can
 * become visible out of id order); it asks whether the log is complete
 * (store tg_store_log_complete) before fetching, and ends after a fetch that
 * found nothing once complete. A non-follow stream ends at the first empty
 * fetch. A follow stream that got no new line for idle_timeout_s ends too
 * (SSE streams get ": keepalive" comments every keepalive_s meanwhile).
 *
 * Shutdown order (main.c): tg_run_logs_hub_stop() before
 * tg_server_drain_and_stop() (it ends every stream and resumes suspended
 * connections: MHD_stop_daemon must never see one), then
 * tg_run_logs_hub_free() after tg_server_free().
 *
 * Ownership: the hub borrows the pool. Specs passed to
 * tg_run_logs_stream_reply are taken over (see there). */
#ifndef TG_API_RUN_LOGS_STREAM_H
#define TG_API_RUN_LOGS_STREAM_H

#include <jansson.h>
#include <stdint.h>

#include "api/stream_access.h"
#include "http/request.h"
#include "store/pool.h"

typedef struct tg_logs_hub_config_s {
    int max_followers;                  /* follow streams open at once: 256 */
    long idle_timeout_s;                /* a follow without new lines this long ends: 300 */
    long poll_ms;                       /* notifier tick: 250 */
    long keepalive_s;                   /* SSE comment while idle: 15 */
    size_t buffer_bytes;                /* fetch when a stream's buffer holds less: 64 KiB */
    long access_check_s;                /* a follow re-checks its caller's access this often: 5 */
    struct tg_tenancy_cache_s *tenancy; /* borrowed; NULL: roles read every time */
} tg_logs_hub_config_t;

/* Start the notifier (one per process). cfg may be NULL; zero fields take
 * defaults. RET: 0, or -1 when the thread cannot start or it runs already. */
int tg_run_logs_hub_start(tg_db_pool_t *pool, const tg_logs_hub_config_t *cfg);
/* End every stream (SSE clients get `event: end` with reason "shutdown"),
 * resume suspended connections and refuse new streams (503). */
void tg_run_logs_hub_stop(void);
/* Stop the notifier and free the hub; after the HTTP server is freed. */
void tg_run_logs_hub_free(void);

/* What one response streams. */
typedef struct tg_logs_stream_spec_s {
    const char *run_id; /* copied */
    int attempt;
    const char *pod;       /* copied; NULL: all */
    const char *container; /* copied; NULL: all */
    int follow;
    int sse;
    int timestamps; /* keep the kubelet timestamps */
    int prefix;     /* "[pod/container] " before each line */
    int has_since;
    int64_t since_ns;  /* drop lines before this */
    long skip;         /* drop this many lines first (tail) */
    json_t *positions; /* [{pod, container, seq}] start; stolen */
    /* the caller's access, re-checked while a follow runs (it then ends
     * with `event: end`, reason "revoked"); stolen, may be NULL */
    tg_stream_access_t *access;
} tg_logs_stream_spec_t;

/* Answer `req` with a streaming response for spec (positions and access are
 * stolen in every case). RET: TG_OK, or TG_EUNAVAILABLE when the hub is not running or
 * too many follow streams are open (nothing answered: the caller replies). */
tg_rc_e tg_run_logs_stream_reply(tg_req_t *req, tg_logs_stream_spec_t *spec) TG_MUSTCHECK;

/* Format stored chunk content for a client (exposed for the unit tests):
 * appends to out the lines of `content` after the since/skip filters (skip
 * is decremented as lines are dropped). For SSE, one event "id: <id>" with a
 * data line per log line (CR becomes a space), or nothing when every line
 * was dropped. RET: lines written. */
long tg_run_logs_format(tg_buf_t *out, const char *content, size_t len, long long id,
                        const char *pod, const char *container, int sse, int timestamps, int prefix,
                        int has_since, int64_t since_ns, long *skip);

#endif
