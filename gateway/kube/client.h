/* The Kubernetes API client: one object shared by every thread of the daemon.
 *
 * Transport: libcurl over HTTP/1.1. Connection reuse comes from a small pool
 * of idle CURL easy handles (each keeps its own live connections, TLS
 * session and DNS cache across curl_easy_reset). A request takes a handle
 * from the pool (or makes one), runs on it, and gives it back; at most
 * `pool_size` idle handles are kept. We chose the pool over a CURLSH
 * connection share because a handle is then used by one thread at a time
 * with no lock callbacks on the hot path, and a long watch or log stream
 * simply holds its own handle and connection for as long as it runs.
 *
 * Credentials: a static token, or a token file re-read whenever its inode,
 * size or mtime changes and at least every `token_reread_s` seconds (the
 * kubelet rotates projected service-account tokens before they expire). A
 * 401 forces a re-read and, if the token changed, one immediate retry.
 * Tokens are never logged.
 *
 * Retries: 429, 5xx, network errors and our own timeouts are retried with
 * exponential backoff and jitter (uniform in [d/2, d], d = base * 2^n capped),
 * at most `max_retries` times. A Retry-After header sets the delay instead;
 * one longer than retry_after_max_ms ends the retries and is reported in
 * result.retry_after_s so a durable caller (the outbox) can reschedule.
 * Other 4xx are never retried. Creates are retried only when that cannot
 * create two objects: a create with a fixed metadata.name (a duplicate gets
 * 409 AlreadyExists, reported with result.retried set), or any create whose
 * earlier attempt never reached the server.
 *
 * Thread-safety: tg_kube_client_new/free are not concurrent with anything
 * else on the same client. Every other function may be called from many
 * threads at once. A request's result and callbacks belong to the calling
 * thread.
 *
 * jansson: this header's functions take no jansson values; results carry an
 * owned body (see kube/result.h). */
#ifndef TG_KUBE_CLIENT_H
#define TG_KUBE_CLIENT_H

#include <stdatomic.h>
#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"
#include "kube/config.h"
#include "kube/metrics.h"
#include "kube/result.h"

typedef struct tg_kube_client_s tg_kube_client_t;

/* Resolve `cfg` (tg_kube_conn_load) and make a client. Registers the kube
 * metrics collector. OUT: *out. On failure *out is NULL and err says why.
 * curl_global_init is called here (libcurl refcounts it), so create the
 * client before starting threads that use it. */
tg_rc_e tg_kube_client_new(const tg_kube_config_t *cfg, tg_kube_client_t **out, char *err,
                           size_t errlen) TG_MUSTCHECK;
/* Make a client from an already-resolved connection (copied). */
tg_rc_e tg_kube_client_new_conn(const tg_kube_conn_t *conn, const tg_kube_config_t *tuning,
                                tg_kube_client_t **out, char *err, size_t errlen) TG_MUSTCHECK;
/* Free the client, its idle handles and secrets. Every request on it must
 * have returned (stop watches first). NULL-safe. */
void tg_kube_client_free(tg_kube_client_t *c);

/* Borrowed strings, valid until tg_kube_client_free. */
const char *tg_kube_client_server(const tg_kube_client_t *c);
const char *tg_kube_client_namespace(const tg_kube_client_t *c);
size_t tg_kube_client_max_event_bytes(const tg_kube_client_t *c);

/* ---- the generic request (verbs.c, watch.c and logs.c are built on it) ---- */

typedef enum {
    TG_KUBE_RETRY_NONE = 0, /* never send twice */
    TG_KUBE_RETRY_SAFE,     /* idempotent (GET, PUT, PATCH, DELETE, named create) */
    TG_KUBE_RETRY_UNSENT,   /* only when the server cannot have acted: 429, or the
                               request never left (connect/TLS failure) */
} tg_kube_retry_e;

/* Streaming sink for a 2xx body: return 0 to go on, non-zero to stop the
 * transfer (the result then says CANCELLED unless the caller overrides it). */
typedef int (*tg_kube_sink_fn)(const char *data, size_t len, void *arg);

typedef struct tg_kube_req_s {
    tg_kube_verb_e verb;      /* metrics label; also picks the method */
    const char *method;       /* NULL → from verb (PATCH for patch...) */
    const char *path;         /* absolute, escaped ("/api/v1/..."); borrowed */
    const char *query;        /* "a=b&c=d" escaped, no '?'; NULL for none */
    const char *content_type; /* of `body` */
    const char *body;         /* borrowed; NULL for none */
    size_t body_len;
    const char *accept;    /* NULL → "application/json" */
    tg_kube_retry_e retry; /* what may be retried */
    long timeout_ms;       /* per attempt; 0 → the client's, -1 → none (streams) */
    atomic_int *stop;      /* optional: non-zero cancels (checked at least every second) */
    tg_kube_sink_fn sink;  /* optional: stream a 2xx body here instead of parsing */
    void *sink_arg;
} tg_kube_req_t;

/* Run one request with the retry policy above and fill `res` (which the
 * caller initialised; previous contents are cleaned). Without a sink, a 2xx
 * JSON body is parsed into res->body. Non-2xx bodies are parsed as Status.
 * With a sink, retries stop as soon as any 2xx byte has been delivered.
 * RET: res->rc. */
tg_rc_e tg_kube_request(tg_kube_client_t *c, const tg_kube_req_t *req, tg_kube_result_t *res);

/* Did the API server answer the client's last request (any HTTP status)?
 * RET: 1 yes, 0 no (why, optional, says what failed: connection refused,
 * timeout...), -1 no request has finished yet. Any thread. */
int tg_kube_client_reachable(tg_kube_client_t *c, char *why, size_t whylen);
/* End at once every streamed transfer in flight (a request with a sink and
 * a stop flag: watches, log follows) whose stop flag is raised; an idle one
 * would otherwise notice within about a second. Whoever raises such flags
 * calls this after (informers, the log collector). Any thread. */
void tg_kube_client_interrupt(tg_kube_client_t *c);

/* Re-read the token file now (normally automatic). RET: 1 if the token
 * changed, 0 if not (or no token file), -1 if the file could not be read
 * (the previous token stays in use). */
int tg_kube_client_reload_token(tg_kube_client_t *c);

/* Interruptible sleep used by retry loops: returns 1 early if *stop became
 * non-zero (stop may be NULL). */
int tg_kube_sleep_ms(long ms, atomic_int *stop);
/* A pseudo-random number in [lo, hi] (for spreading timeouts; not secure). */
long tg_kube_rand_range(long lo, long hi);
/* Backoff with jitter in [d/2, d] where d = min(max_ms, base_ms << attempt). */
long tg_kube_backoff_ms(long base_ms, long max_ms, int attempt);

#endif
