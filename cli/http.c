/* HTTP to the gateway. */
#include "http.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/ids.h"
#include "core/version.h"
#include "problem.h"
#include "progress.h"

#define HTTP_URL_MAX      (16 * 1024)
#define HTTP_RETRY_CAP_MS 10000
#define HTTP_PROGRESS_MIN (8 * 1024) /* smaller uploads finish before a line helps */
#define HTTP_HEADERS_MAX  (64 * 1024)

/* ---- URLs ------------------------------------------------------------------ */

void tau_url_init(tau_url_t *u)
{
    tg_buf_init(&u->b, HTTP_URL_MAX);
    u->bad = 0;
    tau_url_lit(u, "");
}

void tau_url_clean(tau_url_t *u)
{
    tg_buf_clean(&u->b);
}

void tau_url_lit(tau_url_t *u, const char *lit)
{
    if (!u->bad && tg_buf_puts(&u->b, lit) != TG_OK)
        u->bad = 1;
}

static void url_escape(tau_url_t *u, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p && !u->bad; p++) {
        unsigned char c = *p;
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_' || c == '~';
        char enc[3] = {'%', hex[c >> 4], hex[c & 15]};
        if (tg_buf_append(&u->b, plain ? (const char *)p : enc, plain ? 1 : 3) != TG_OK)
            u->bad = 1;
    }
}

void tau_url_seg(tau_url_t *u, const char *seg)
{
    tau_url_lit(u, "/");
    /* "." and ".." would be folded away by URL normalisation */
    if (strcmp(seg, ".") == 0 || strcmp(seg, "..") == 0)
        tau_url_lit(u, strcmp(seg, ".") == 0 ? "%2E" : "%2E%2E");
    else
        url_escape(u, seg);
}

void tau_url_query(tau_url_t *u, const char *key, const char *value)
{
    if (!value)
        return;
    tau_url_lit(u, strchr(u->b.data ? u->b.data : "", '?') ? "&" : "?");
    url_escape(u, key);
    tau_url_lit(u, "=");
    url_escape(u, value);
}

const char *tau_url_str(const tau_url_t *u)
{
    return u->bad ? NULL : u->b.data;
}

/* ---- responses ------------------------------------------------------------- */

void tau_http_resp_init(tau_http_resp_t *r)
{
    memset(r, 0, sizeof(*r));
    tg_buf_init(&r->body, TAU_HTTP_MAX_BODY);
    tg_buf_init(&r->headers, HTTP_HEADERS_MAX);
}

void tau_http_resp_clean(tau_http_resp_t *r)
{
    tg_buf_clean(&r->body);
    tg_buf_clean(&r->headers);
}

int tau_http_exit_code(long status)
{
    if (status >= 200 && status < 300)
        return TAU_EXIT_OK;
    if (status == 401 || status == 403)
        return TAU_EXIT_AUTH;
    if (status >= 400 && status < 500)
        return TAU_EXIT_REJECTED;
    return TAU_EXIT_NETWORK;
}

int tau_http_no_route(const tau_http_resp_t *resp)
{
    if (resp->status == 405)
        return 1;
    if (resp->status != 404)
        return 0;
    json_t *p = json_loadb(resp->body.data ? resp->body.data : "", resp->body.len, 0, NULL);
    const char *d = json_string_value(json_object_get(p, "detail"));
    int r = d && strncmp(d, "no resource at", 14) == 0;
    json_decref(p);
    return r;
}

/* ---- transfers ------------------------------------------------------------- */

typedef struct {
    CURL *curl;
    const tau_http_req_t *rq;
    tau_http_resp_t *resp;
    int streamed;  /* bytes went to the sink */
    int truncated; /* the buffer hit its bound */
    long retry_after_s;
    tau_progress_t *progress;
} http_xfer_t;

static size_t http_write(char *p, size_t size, size_t n, void *arg)
{
    http_xfer_t *x = arg;
    size_t len = size * n;
    long code = 0;
    curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &code);
    if (x->rq->sink && code >= 200 && code < 300) {
        x->streamed = 1;
        return x->rq->sink(p, len, x->rq->sink_arg);
    }
    if (tg_buf_append(&x->resp->body, p, len) != TG_OK) {
        x->truncated = 1;
        return 0;
    }
    return len;
}

static void http_copy_header(char *dst, size_t dstlen, const char *v, size_t vlen)
{
    while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
        vlen--;
    while (vlen && *v == ' ') {
        v++;
        vlen--;
    }
    if (vlen >= dstlen)
        vlen = dstlen - 1;
    memcpy(dst, v, vlen);
    dst[vlen] = '\0';
}

static size_t http_header(char *p, size_t size, size_t n, void *arg)
{
    http_xfer_t *x = arg;
    size_t len = size * n;
    if (x->rq->keep_headers) {
        if (len > 5 && strncmp(p, "HTTP/", 5) == 0)
            tg_buf_reset(&x->resp->headers); /* a new answer (after a 100 Continue) */
        if (tg_buf_append(&x->resp->headers, p, len) != TG_OK)
            return 0;
    }
    const char *colon = memchr(p, ':', len);
    if (!colon)
        return len;
    size_t klen = (size_t)(colon - p);
    const char *v = colon + 1;
    size_t vlen = len - klen - 1;
    if (klen == 12 && strncasecmp(p, "Content-Type", 12) == 0) {
        http_copy_header(x->resp->content_type, sizeof(x->resp->content_type), v, vlen);
    } else if (klen == 12 && strncasecmp(p, "X-Request-Id", 12) == 0) {
        http_copy_header(x->resp->request_id, sizeof(x->resp->request_id), v, vlen);
    } else if (klen == 20 && strncasecmp(p, "Idempotency-Replayed", 20) == 0) {
        char tmp[16];
        http_copy_header(tmp, sizeof(tmp), v, vlen);
        x->resp->replayed = strcasecmp(tmp, "true") == 0;
    } else if (klen == 11 && strncasecmp(p, "Retry-After", 11) == 0) {
        char tmp[32];
        http_copy_header(tmp, sizeof(tmp), v, vlen);
        char *end = NULL;
        long s = strtol(tmp, &end, 10);
        x->retry_after_s = (*tmp && !*end && s >= 0) ? s : -1;
    }
    return len;
}

static int http_xferinfo(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                         curl_off_t ulnow)
{
    (void)dltotal;
    (void)dlnow;
    http_xfer_t *x = arg;
    if (x->progress && ultotal > 0)
        tau_progress_bytes(x->progress, "uploading", (long long)ulnow, (long long)ultotal);
    return 0;
}

static int http_retryable_method(const tau_http_req_t *rq)
{
    if (rq->sink && rq->timeout_s < 0)
        return 1; /* a follow stream that failed before any data */
    if (strcmp(rq->method, "POST") == 0)
        return rq->idempotency_key != NULL;
    return 1;
}

static int http_retryable_code(CURLcode cc)
{
    switch (cc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
        return 1;
    default:
        return 0;
    }
}

static void http_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* One attempt. Returns the curl code; the response lands in resp. */
static CURLcode http_once(const tau_ctx_t *ctx, const tau_http_req_t *rq, const char *url,
                          struct curl_slist *hdrs, tau_http_resp_t *resp, http_xfer_t *x)
{
    CURL *c = curl_easy_init();
    if (!c)
        return CURLE_FAILED_INIT;
    x->curl = c;
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    if (rq->timeout_s >= 0)
        curl_easy_setopt(c, CURLOPT_TIMEOUT, rq->timeout_s ? rq->timeout_s : 120L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, http_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    /* never send the bearer token on to another host */
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    if (strcmp(rq->method, "HEAD") == 0)
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L); /* no body follows: do not wait for one */
    else if (strcmp(rq->method, "GET") != 0)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
    if (rq->body || strcmp(rq->method, "POST") == 0 || strcmp(rq->method, "PATCH") == 0 ||
        strcmp(rq->method, "PUT") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, rq->body ? (const char *)rq->body : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
    }
    if (x->progress) {
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, http_xferinfo);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    }
    (void)ctx;
    CURLcode cc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    resp->status = cc == CURLE_OK || (x->streamed && code) ? code : 0;
    if (cc != CURLE_OK)
        snprintf(resp->error, sizeof(resp->error), "%s",
                 x->truncated ? "the answer is larger than the client accepts"
                 : *errbuf    ? errbuf
                              : curl_easy_strerror(cc));
    curl_easy_cleanup(c);
    x->curl = NULL;
    return cc;
}

int tau_http_do(const tau_ctx_t *ctx, const tau_http_req_t *rq, tau_http_resp_t *resp)
{
    int rc = -1;
    struct curl_slist *hdrs = NULL;
    tg_buf_t url, h;
    tg_buf_init(&url, HTTP_URL_MAX + 1024);
    tg_buf_init(&h, 16 * 1024);
    tau_progress_t *progress = NULL;
    if (!ctx->gateway) {
        snprintf(resp->error, sizeof(resp->error), "no gateway configured");
        goto out;
    }
    if (tg_buf_printf(&url, "%s%s", ctx->gateway, rq->path) != TG_OK) {
        snprintf(resp->error, sizeof(resp->error), "the URL is too long");
        goto out;
    }
    tg_rc_e br = tg_buf_printf(&h, "User-Agent: tau/%s", tg_version());
    hdrs = curl_slist_append(hdrs, h.data);
    tg_buf_reset(&h);
    br = tg_buf_printf(&h, "Accept: %s", rq->accept ? rq->accept : "application/json");
    hdrs = curl_slist_append(hdrs, br == TG_OK ? h.data : "Accept: */*");
    if (rq->content_type) {
        tg_buf_reset(&h);
        if (tg_buf_printf(&h, "Content-Type: %s", rq->content_type) == TG_OK)
            hdrs = curl_slist_append(hdrs, h.data);
    }
    if (rq->idempotency_key) {
        tg_buf_reset(&h);
        if (tg_buf_printf(&h, "Idempotency-Key: %s", rq->idempotency_key) == TG_OK)
            hdrs = curl_slist_append(hdrs, h.data);
    }
    for (const char *const *x = rq->headers; x && *x; x++)
        hdrs = curl_slist_append(hdrs, *x);
    /* curl would otherwise send "Expect: 100-continue" for larger uploads */
    hdrs = curl_slist_append(hdrs, "Expect:");
    if (ctx->token && *ctx->token) {
        tg_buf_reset(&h);
        if (tg_buf_printf(&h, "Authorization: Bearer %s", ctx->token) != TG_OK) {
            snprintf(resp->error, sizeof(resp->error), "the token is too long");
            goto out;
        }
        hdrs = curl_slist_append(hdrs, h.data);
        OPENSSL_cleanse(h.data, h.len);
    }
    if (rq->upload_progress && ctx->stderr_tty && rq->body_len >= HTTP_PROGRESS_MIN)
        progress = tau_progress_new(ctx);
    int attempts = http_retryable_method(rq) ? ctx->retries + 1 : 1;
    for (int i = 0; i < attempts; i++) {
        http_xfer_t x = {.rq = rq, .resp = resp, .retry_after_s = -1, .progress = progress};
        tg_buf_reset(&resp->body);
        tg_buf_reset(&resp->headers);
        resp->content_type[0] = resp->request_id[0] = resp->error[0] = '\0';
        resp->replayed = 0;
        uint64_t t0 = tg_now_mono_us();
        CURLcode cc = http_once(ctx, rq, url.data, hdrs, resp, &x);
        tau_progress_clear(progress);
        if (ctx->verbose) {
            unsigned long ms = (unsigned long)((tg_now_mono_us() - t0) / 1000);
            if (resp->status)
                fprintf(stderr, "* %s %s -> %ld (%lu ms%s%s)\n", rq->method, url.data, resp->status,
                        ms, resp->request_id[0] ? ", request id " : "", resp->request_id);
            else
                fprintf(stderr, "* %s %s -> %s (%lu ms)\n", rq->method, url.data, resp->error, ms);
        }
        int again = 0;
        long wait_ms = 500L << i;
        if (x.streamed || x.truncated)
            again = 0;
        else if (resp->status == 0)
            again = http_retryable_code(cc);
        else if (resp->status == 429 || resp->status == 502 || resp->status == 503 ||
                 resp->status == 504)
            again = 1;
        if (x.retry_after_s >= 0)
            wait_ms = x.retry_after_s * 1000;
        if (wait_ms > HTTP_RETRY_CAP_MS)
            wait_ms = HTTP_RETRY_CAP_MS;
        if (!again || i + 1 == attempts) {
            rc = resp->status ? 0 : -1;
            break;
        }
        if (ctx->verbose)
            fprintf(stderr, "* retrying in %ld ms\n", wait_ms);
        http_sleep_ms(wait_ms);
    }
out:
    tau_progress_free(progress);
    curl_slist_free_all(hdrs);
    if (h.data)
        OPENSSL_cleanse(h.data, h.len);
    tg_buf_clean(&h);
    tg_buf_clean(&url);
    return rc;
}

/* ---- JSON API ---------------------------------------------------------------- */

int tau_api_req(const tau_ctx_t *ctx, const tau_http_req_t *rq, const char *file, json_t **out,
                tau_api_meta_t *meta)
{
    if (out)
        *out = NULL;
    if (meta)
        memset(meta, 0, sizeof(*meta));
    if (!rq->path)
        return tau_fail(ctx, TAU_EXIT_USAGE, "an argument is too long for a request URL");
    if (!ctx->gateway)
        return tau_fail(ctx, TAU_EXIT_USAGE,
                        "no gateway: run `tau login --gateway URL` or set TAU_GATEWAY");
    tau_http_resp_t resp;
    tau_http_resp_init(&resp);
    int rc;
    if (tau_http_do(ctx, rq, &resp) != 0) {
        rc = tau_fail(ctx, TAU_EXIT_NETWORK, "cannot reach the gateway at %s: %s", ctx->gateway,
                      resp.error);
        goto out;
    }
    if (meta) {
        meta->status = resp.status;
        meta->replayed = resp.replayed;
    }
    rc = tau_http_exit_code(resp.status);
    if (rc != TAU_EXIT_OK) {
        tau_problem_print(ctx, &resp, file);
        if (meta && resp.body.len)
            meta->problem = json_loadb(resp.body.data, resp.body.len, 0, NULL);
        goto out;
    }
    if (resp.error[0]) { /* a stream that started and then broke */
        rc = tau_fail(ctx, TAU_EXIT_NETWORK, "the stream from the gateway broke: %s", resp.error);
        goto out;
    }
    if (out && resp.body.len) {
        json_error_t jerr;
        *out = json_loadb(resp.body.data, resp.body.len, JSON_DECODE_ANY, &jerr);
        if (!*out)
            rc = tau_fail(ctx, TAU_EXIT_NETWORK, "the gateway sent JSON that does not parse: %s",
                          jerr.text);
    }
out:
    tau_http_resp_clean(&resp);
    return rc;
}

int tau_api_file(const tau_ctx_t *ctx, const char *method, const char *path, const json_t *body,
                 const char *file, json_t **out)
{
    char *text = NULL;
    char key[TG_UUID_LEN + 1];
    tau_http_req_t rq = {.method = method, .path = path};
    if (body) {
        text = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!text)
            return tau_fail(ctx, TAU_EXIT_USAGE, "the request body cannot be encoded as JSON");
        rq.body = text;
        rq.body_len = strlen(text);
        rq.content_type = "application/json";
    }
    if (strcmp(method, "POST") == 0) {
        tg_uuid_v4(key);
        rq.idempotency_key = key;
    }
    int rc = tau_api_req(ctx, &rq, file, out, NULL);
    free(text);
    return rc;
}

int tau_api(const tau_ctx_t *ctx, const char *method, const char *path, const json_t *body,
            json_t **out)
{
    return tau_api_file(ctx, method, path, body, NULL, out);
}

int tau_api_list(const tau_ctx_t *ctx, const char *path, int all, json_t **items, char **next)
{
    *items = json_array();
    if (next)
        *next = NULL;
    char *cursor = NULL;
    int rc = TAU_EXIT_OK;
    for (int page = 0; page < 100000; page++) {
        tau_url_t u;
        tau_url_init(&u);
        tau_url_lit(&u, path ? path : "");
        tau_url_query(&u, "cursor", cursor);
        json_t *out = NULL;
        rc = tau_api(ctx, "GET", path ? tau_url_str(&u) : NULL, NULL, &out);
        tau_url_clean(&u);
        if (rc != TAU_EXIT_OK)
            break;
        json_t *got = json_object_get(out, "items");
        if (!json_is_array(got)) {
            json_decref(out);
            rc = tau_fail(ctx, TAU_EXIT_NETWORK, "the gateway's answer is not a list");
            break;
        }
        json_array_extend(*items, got);
        const char *nc = json_string_value(json_object_get(out, "next_cursor"));
        free(cursor);
        cursor = nc && *nc ? tg_xstrdup(nc) : NULL;
        json_decref(out);
        if (!cursor || !all)
            break;
    }
    if (rc == TAU_EXIT_OK && next)
        *next = cursor;
    else
        free(cursor);
    return rc;
}
