/* HTTP to the gateway: libcurl with bounded buffers, bearer auth, retries of
 * idempotent requests, streaming bodies, and the mapping from HTTP status to
 * the CLI's exit codes.
 *
 * Retries: transport failures and 429/502/503/504 are retried
 * ctx->retries times (TAU_RETRIES, default 2) with backoff, honouring
 * Retry-After, but only for GET/PUT/PATCH/DELETE and for POSTs that carry an
 * Idempotency-Key (the server then answers a repeat with the original
 * result). A stream that has started delivering data is never retried. */
#ifndef TAU_HTTP_H
#define TAU_HTTP_H

#include <jansson.h>
#include <stddef.h>

#include "core/buf.h"
#include "tau.h"

#define TAU_HTTP_MAX_BODY (32u * 1024 * 1024)

/* Receives a 2xx body as it arrives; returns n to continue, anything else aborts. */
typedef size_t (*tau_http_sink_fn)(const char *p, size_t n, void *arg);

typedef struct tau_http_req_s {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* "/v1/..." with segments already escaped */
    const void *body;   /* may be NULL */
    size_t body_len;
    const char *content_type;    /* of the body */
    const char *accept;          /* default application/json */
    const char *idempotency_key; /* sent as Idempotency-Key; makes a POST retryable */
    tau_http_sink_fn sink;       /* stream 2xx bodies here instead of buffering */
    void *sink_arg;
    int upload_progress;        /* show upload progress on stderr (terminal only) */
    long timeout_s;             /* 0: 120 s; -1: none (follow streams) */
    const char *const *headers; /* more "Name: value" lines (NULL-terminated), or NULL */
    int keep_headers;           /* keep the answer's header lines in resp->headers */
} tau_http_req_t;

typedef struct tau_http_resp_s {
    long status;   /* HTTP status; 0 when no answer came */
    tg_buf_t body; /* the body, unless streamed into a sink */
    char content_type[128];
    char request_id[130];
    char error[256];  /* transport error text when status is 0 */
    int replayed;     /* Idempotency-Replayed: true (a repeat of an earlier request) */
    tg_buf_t headers; /* the status line and header lines, with keep_headers */
} tau_http_resp_t;

void tau_http_resp_init(tau_http_resp_t *r);
void tau_http_resp_clean(tau_http_resp_t *r);

/* Send one request (with retries as above) to ctx->gateway. Returns 0 when an
 * HTTP answer arrived (any status; see resp->status) or -1 when none did
 * (resp->error says why). */
int tau_http_do(const tau_ctx_t *ctx, const tau_http_req_t *rq, tau_http_resp_t *resp);

/* The exit code for an HTTP status: 2xx 0, 401/403 4, other 4xx 3, else 5. */
int tau_http_exit_code(long status);

/* A JSON request. `body` is borrowed (may be NULL). On a 2xx answer stores the
 * parsed body in *out (new reference; NULL for an empty body) and returns 0.
 * Otherwise prints the problem (errors[] as FILE:LINE:COLUMN when `file` is
 * given) and returns the exit code. A POST gets a fresh Idempotency-Key. */
int tau_api(const tau_ctx_t *ctx, const char *method, const char *path, const json_t *body,
            json_t **out);
int tau_api_file(const tau_ctx_t *ctx, const char *method, const char *path, const json_t *body,
                 const char *file, json_t **out);

/* What tau_api_req learnt besides the body. */
typedef struct tau_api_meta_s {
    long status;     /* the HTTP status; 0 when no answer came */
    int replayed;    /* the answer repeats an earlier request's (Idempotency-Key) */
    json_t *problem; /* a failure's problem document (new reference), or NULL */
} tau_api_meta_t;

/* Like tau_api for a prepared request; fills *meta when not NULL (the
 * caller json_decref()s meta->problem). */
int tau_api_req(const tau_ctx_t *ctx, const tau_http_req_t *rq, const char *file, json_t **out,
                tau_api_meta_t *meta);

/* GET a list at `path` (which may carry a query), following next_cursor
 * when `all`. Appends the items to *items (a new array) and stores the
 * last next_cursor (new string, or NULL) in *next when not NULL. Returns 0
 * or the exit code (after printing the problem). */
int tau_api_list(const tau_ctx_t *ctx, const char *path, int all, json_t **items, char **next);

/* Path building over a bounded buffer: literal text, one escaped path segment
 * ("/" + percent-encoded), and query parameters (skipped when value is NULL).
 * Past the bound the URL turns bad and tau_url_str returns NULL, which
 * tau_api* report as a usage error. */
typedef struct tau_url_s {
    tg_buf_t b;
    int bad;
} tau_url_t;

void tau_url_init(tau_url_t *u);
void tau_url_clean(tau_url_t *u);
void tau_url_lit(tau_url_t *u, const char *lit);
void tau_url_seg(tau_url_t *u, const char *seg);
void tau_url_query(tau_url_t *u, const char *key, const char *value);
const char *tau_url_str(const tau_url_t *u);

/* 1 when the gateway answered "this route does not exist here" (404 for an
 * unknown path or 405 for an unsupported method): the feature is not built
 * on this server. */
int tau_http_no_route(const tau_http_resp_t *resp);

#endif
