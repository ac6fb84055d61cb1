/* The Kubernetes API client: handle pool, credentials, one request with retries. */
#include "kube/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/version.h"

#define CLIENT_MAGIC        0x6b756265u /* "kube" */
#define CLIENT_POOL_MAX     64
#define CLIENT_ERRBODY_MAX  (64 * 1024) /* a Status is small; the rest is dropped */
#define CLIENT_TOKEN_MAX    (64 * 1024)
#define CLIENT_URL_MAX      (64 * 1024)
#define CLIENT_WARNINGS_MAX 3 /* Warning headers logged per request */

struct tg_kube_client_s {
    uint32_t magic;
    tg_kube_conn_t conn;
    long connect_timeout_ms;
    long timeout_ms;
    int max_retries;
    long retry_base_ms;
    long retry_max_ms;
    long retry_after_max_ms;
    size_t max_response_bytes;
    size_t max_event_bytes;
    long token_reread_s;
    char *user_agent;

    /* Transfers in flight that carry a stop flag, with their sockets, so
     * that tg_kube_client_interrupt ends them at once: libcurl looks at the
     * flag only in its progress callback, about once a second on an idle
     * watch, and a shutdown waited that long for each component. Sockets
     * are closed under this lock too (client_closesocket), so a socket
     * number is never shut down after it was closed and reused. */
    pthread_mutex_t live_lock;
    struct client_xfer_s *live;

    pthread_mutex_t pool_lock; /* guards idle/nidle */
    CURL *idle[CLIENT_POOL_MAX];
    int nidle;
    int pool_size;

    pthread_mutex_t token_lock; /* guards the token_* fields */
    char *token;                /* current bearer token, or NULL */
    dev_t token_dev;
    ino_t token_ino;
    off_t token_size;
    struct timespec token_mtim;
    long token_read_at; /* monotonic seconds */
    int token_warned;

    pthread_mutex_t reach_lock; /* guards reach_* */
    int reach;                  /* -1 unknown, 0 the last attempt got no answer, 1 it did */
    char reach_why[256];
};

/* ---- small helpers ---------------------------------------------------------- */

static uint64_t client_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Jitter only needs to spread clients apart, not to be unpredictable; a
 * per-thread xorshift avoids a lock and rand()'s shared state. */
static uint64_t client_rand(void)
{
    static __thread uint64_t s;
    if (!s) {
        s = client_now_us() ^ ((uint64_t)(uintptr_t)&s << 17) ^ 0x9e3779b97f4a7c15ull;
        if (!s)
            s = 1;
    }
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

long tg_kube_rand_range(long lo, long hi)
{
    if (hi <= lo)
        return lo;
    return lo + (long)(client_rand() % (uint64_t)(hi - lo + 1));
}

long tg_kube_backoff_ms(long base_ms, long max_ms, int attempt)
{
    if (base_ms <= 0)
        base_ms = 1;
    long d = base_ms;
    for (int i = 0; i < attempt && d < max_ms; i++)
        d *= 2;
    if (d > max_ms)
        d = max_ms;
    long half = d / 2;
    return half + (long)(client_rand() % (uint64_t)(d - half + 1));
}

int tg_kube_sleep_ms(long ms, atomic_int *stop)
{
    uint64_t end = client_now_us() + (uint64_t)(ms > 0 ? ms : 0) * 1000u;
    for (;;) {
        if (stop && atomic_load(stop))
            return 1;
        uint64_t now = client_now_us();
        if (now >= end)
            return 0;
        uint64_t left = end - now;
        if (left > 50000) /* wake up to look at the stop flag */
            left = 50000;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)left * 1000};
        nanosleep(&ts, NULL);
    }
}

const char *tg_kube_client_server(const tg_kube_client_t *c)
{
    return c->conn.server;
}

const char *tg_kube_client_namespace(const tg_kube_client_t *c)
{
    return c->conn.namespace_;
}

size_t tg_kube_client_max_event_bytes(const tg_kube_client_t *c)
{
    return c->max_event_bytes;
}

/* ---- the token ------------------------------------------------------------------ */

static void client_token_set(tg_kube_client_t *c, char *tok)
{
    if (c->token)
        tg_kube_secret_free(c->token, strlen(c->token));
    c->token = tok;
}

/* Caller holds token_lock. RET as tg_kube_client_reload_token. */
static int client_token_refresh_locked(tg_kube_client_t *c, int force)
{
    struct stat st;
    long now = (long)(client_now_us() / 1000000u);
    if (stat(c->conn.token_file, &st) != 0) {
        if (!c->token_warned++)
            tg_log_warn("kube", "token file %s: %s; keeping the previous token", c->conn.token_file,
                        strerror(errno));
        return -1;
    }
    int same = c->token && st.st_dev == c->token_dev && st.st_ino == c->token_ino &&
               st.st_size == c->token_size && st.st_mtim.tv_sec == c->token_mtim.tv_sec &&
               st.st_mtim.tv_nsec == c->token_mtim.tv_nsec;
    if (same && !force && now - c->token_read_at < c->token_reread_s)
        return 0;
    char *data = NULL;
    size_t len = 0;
    if (tg_kube_read_file(c->conn.token_file, CLIENT_TOKEN_MAX, &data, &len) != TG_OK) {
        if (!c->token_warned++)
            tg_log_warn("kube", "token file %s unreadable; keeping the previous token",
                        c->conn.token_file);
        return -1;
    }
    size_t n = len;
    while (n && (data[n - 1] == '\n' || data[n - 1] == '\r' || data[n - 1] == ' ' ||
                 data[n - 1] == '\t'))
        data[--n] = '\0';
    /* A header value cannot carry a line break; a file with one is not a token. */
    if (!n || memchr(data, '\n', n) || memchr(data, '\r', n)) {
        tg_kube_secret_free(data, len);
        if (!c->token_warned++)
            tg_log_warn("kube", "token file %s is empty or malformed; keeping the previous token",
                        c->conn.token_file);
        return -1;
    }
    c->token_dev = st.st_dev;
    c->token_ino = st.st_ino;
    c->token_size = st.st_size;
    c->token_mtim = st.st_mtim;
    c->token_read_at = now;
    c->token_warned = 0;
    int changed = !c->token || strcmp(c->token, data) != 0;
    if (changed) {
        client_token_set(c, data);
        tg_log_debug("kube", "bearer token loaded from %s", c->conn.token_file);
    } else {
        tg_kube_secret_free(data, len);
    }
    return changed;
}

int tg_kube_client_reload_token(tg_kube_client_t *c)
{
    if (!c->conn.token_file)
        return 0;
    pthread_mutex_lock(&c->token_lock);
    int r = client_token_refresh_locked(c, 1);
    pthread_mutex_unlock(&c->token_lock);
    return r;
}

/* "Authorization: Bearer <token>" as a new string (wiped by the caller), or
 * NULL when there is no token to send. */
static char *client_auth_header(tg_kube_client_t *c)
{
    char *h = NULL;
    if (!c->conn.send_credentials)
        return NULL;
    pthread_mutex_lock(&c->token_lock);
    if (c->conn.token_file)
        (void)client_token_refresh_locked(c, 0);
    if (c->token) {
        size_t n = strlen(c->token) + sizeof("Authorization: Bearer ");
        h = tg_xmalloc(n);
        snprintf(h, n, "Authorization: Bearer %s", c->token);
    }
    pthread_mutex_unlock(&c->token_lock);
    return h;
}

/* curl_slist_append copies strings; wipe the copies before freeing them. */
static void client_slist_free(struct curl_slist *l)
{
    for (struct curl_slist *p = l; p; p = p->next)
        if (p->data && strncasecmp(p->data, "Authorization:", 14) == 0)
            explicit_bzero(p->data, strlen(p->data));
    curl_slist_free_all(l);
}

/* ---- lifetime ------------------------------------------------------------------- */

/* What the constructor set up, undone (the token, locks, strings, curl's
 * global state); the one teardown of both a failed construction and
 * tg_kube_client_free. */
static void client_release(tg_kube_client_t *c)
{
    client_token_set(c, NULL);
    pthread_mutex_destroy(&c->live_lock);
    pthread_mutex_destroy(&c->pool_lock);
    pthread_mutex_destroy(&c->token_lock);
    pthread_mutex_destroy(&c->reach_lock);
    free(c->user_agent);
    tg_kube_conn_clean(&c->conn);
    c->magic = ~CLIENT_MAGIC;
    free(c);
    curl_global_cleanup();
}

tg_rc_e tg_kube_client_new_conn(const tg_kube_conn_t *conn, const tg_kube_config_t *t,
                                tg_kube_client_t **out, char *err, size_t errlen)
{
    static const tg_kube_config_t zero;
    if (!t)
        t = &zero;
    *out = NULL;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init failed");
        return TG_EINTERNAL;
    }
    tg_kube_client_t *c = tg_xcalloc(1, sizeof(*c));
    c->magic = CLIENT_MAGIC;
    tg_kube_conn_copy(&c->conn, conn);
    c->connect_timeout_ms = t->connect_timeout_ms > 0 ? t->connect_timeout_ms : 5000;
    c->timeout_ms = t->timeout_ms > 0 ? t->timeout_ms : 30000;
    c->max_retries = t->max_retries < 0 ? 0 : t->max_retries > 0 ? t->max_retries : 4;
    c->retry_base_ms = t->retry_base_ms > 0 ? t->retry_base_ms : 200;
    c->retry_max_ms = t->retry_max_ms > 0 ? t->retry_max_ms : 10000;
    c->retry_after_max_ms = t->retry_after_max_ms > 0 ? t->retry_after_max_ms : 30000;
    c->max_response_bytes = t->max_response_bytes ? t->max_response_bytes : 16u << 20;
    c->max_event_bytes = t->max_event_bytes ? t->max_event_bytes : 16u << 20;
    c->pool_size = t->pool_size > 0 ? t->pool_size : 8;
    if (c->pool_size > CLIENT_POOL_MAX)
        c->pool_size = CLIENT_POOL_MAX;
    c->token_reread_s = t->token_reread_s > 0 ? t->token_reread_s : 60;
    if (t->user_agent) {
        c->user_agent = tg_xstrdup(t->user_agent);
    } else {
        size_t n = strlen(tg_version()) + 16;
        c->user_agent = tg_xmalloc(n);
        snprintf(c->user_agent, n, "taugate/%s", tg_version());
    }
    pthread_mutex_init(&c->pool_lock, NULL);
    pthread_mutex_init(&c->live_lock, NULL);
    pthread_mutex_init(&c->token_lock, NULL);
    pthread_mutex_init(&c->reach_lock, NULL);
    c->reach = -1;
    if (c->conn.token) {
        c->token = tg_xstrdup(c->conn.token);
    } else if (c->conn.token_file && tg_kube_client_reload_token(c) < 0) {
        snprintf(err, errlen, "cannot read the bearer token file %s", c->conn.token_file);
        client_release(c); /* not registered with metrics yet, no handle made */
        return TG_EINVAL;
    }
    tg_kube_metrics_acquire();
    tg_log_info("kube", "Kubernetes API %s (source %s, context %s, namespace %s)", c->conn.server,
                c->conn.source == TG_KUBE_SRC_URL          ? "url"
                : c->conn.source == TG_KUBE_SRC_KUBECONFIG ? "kubeconfig"
                                                           : "in-cluster",
                c->conn.context ? c->conn.context : "-", c->conn.namespace_);
    *out = c;
    return TG_OK;
}

tg_rc_e tg_kube_client_new(const tg_kube_config_t *cfg, tg_kube_client_t **out, char *err,
                           size_t errlen)
{
    tg_kube_conn_t conn;
    *out = NULL;
    tg_rc_e rc = tg_kube_conn_load(cfg, &conn, err, errlen);
    if (rc != TG_OK)
        return rc;
    rc = tg_kube_client_new_conn(&conn, cfg, out, err, errlen);
    tg_kube_conn_clean(&conn);
    return rc;
}

void tg_kube_client_free(tg_kube_client_t *c)
{
    if (!c)
        return;
    if (c->magic != CLIENT_MAGIC)
        abort(); /* double free or garbage: fail loudly */
    tg_kube_metrics_release();
    for (int i = 0; i < c->nidle; i++)
        curl_easy_cleanup(c->idle[i]); /* closes their connections: live_lock still needed */
    client_release(c);
}

/* ---- handle pool ---------------------------------------------------------------- */

static CURL *client_handle_get(tg_kube_client_t *c)
{
    CURL *h = NULL;
    pthread_mutex_lock(&c->pool_lock);
    if (c->nidle > 0)
        h = c->idle[--c->nidle];
    pthread_mutex_unlock(&c->pool_lock);
    /* A pooled handle was reset when it came back: its options are gone but
     * its live connections, TLS sessions and DNS cache are kept. */
    return h ? h : curl_easy_init();
}

static void client_handle_put(tg_kube_client_t *c, CURL *h)
{
    if (!h)
        return;
    /* Drop the options now: they point at this request's stack (error
     * buffer, header list, sink), which is gone once we return. */
    curl_easy_reset(h);
    pthread_mutex_lock(&c->pool_lock);
    if (c->nidle < c->pool_size) {
        c->idle[c->nidle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->pool_lock);
    if (h)
        curl_easy_cleanup(h);
}

/* ---- one attempt -------------------------------------------------------------- */

typedef struct client_xfer_s {
    CURL *h;
    const tg_kube_req_t *req;
    tg_buf_t body; /* the whole body, or an error body when streaming */
    int too_large;
    int sink_stopped;
    int delivered; /* some 2xx bytes went to the sink */
    int warnings;
    /* in c->live while it runs (a request with a stop flag) */
    tg_kube_client_t *c;
    curl_socket_t fd; /* its connection's socket once connected */
    struct client_xfer_s *next_live;
} client_xfer_t;

static size_t client_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    client_xfer_t *x = ud;
    size_t n = size * nmemb;
    if (x->req->sink) {
        long code = 0;
        curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 200 && code < 300) {
            x->delivered = 1;
            if (x->req->sink(ptr, n, x->req->sink_arg) != 0) {
                x->sink_stopped = 1;
                return 0; /* curl stops with CURLE_WRITE_ERROR */
            }
            return n;
        }
        /* An error body on a stream: keep the start (the Status), drop the rest. */
        size_t room = x->body.max - x->body.len;
        if (tg_buf_append(&x->body, ptr, n < room ? n : room) != TG_OK)
            return n; /* cannot happen: we never ask for more than the room */
        return n;
    }
    if (tg_buf_append(&x->body, ptr, n) != TG_OK) {
        x->too_large = 1;
        return 0;
    }
    return n;
}

/* Log the apiserver's Warning headers (deprecations, the Job orphan trap):
 * they point at bugs in what we send. */
static size_t client_header(char *buf, size_t size, size_t nitems, void *ud)
{
    client_xfer_t *x = ud;
    size_t n = size * nitems;
    if (n > 8 && strncasecmp(buf, "Warning:", 8) == 0 && x->warnings < CLIENT_WARNINGS_MAX) {
        size_t len = n - 8;
        const char *v = buf + 8;
        while (len && (*v == ' ' || *v == '\t'))
            v++, len--;
        while (len && (v[len - 1] == '\r' || v[len - 1] == '\n'))
            len--;
        x->warnings++;
        tg_log_warn("kube", "apiserver warning for %s: %.*s", x->req->path,
                    (int)(len > 400 ? 400 : len), v);
    }
    return n;
}

static int client_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                           curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    client_xfer_t *x = ud;
    return x->req->stop && atomic_load(x->req->stop) ? 1 : 0;
}

/* A streamed transfer with a stop flag (a watch, a log follow: long and
 * mostly idle) can be interrupted (tg_kube_client_interrupt). */
static int client_interruptible(const tg_kube_req_t *req)
{
    return req->stop && req->sink;
}

/* The transfer's socket, for an interrupt. Such a transfer takes a connection of its own
 * (CURLOPT_FRESH_CONNECT), so its socket is the one made here: libcurl
 * names the socket of a reused connection only after a transfer on it. */
static int client_sockopt(void *ud, curl_socket_t fd, curlsocktype purpose)
{
    client_xfer_t *x = ud;
    if (purpose == CURLSOCKTYPE_IPCXN) {
        pthread_mutex_lock(&x->c->live_lock);
        x->fd = fd;
        pthread_mutex_unlock(&x->c->live_lock);
    }
    return CURL_SOCKOPT_OK;
}

/* Every connection's socket is closed here, under live_lock. */
static int client_closesocket(void *ud, curl_socket_t fd)
{
    tg_kube_client_t *c = ud;
    pthread_mutex_lock(&c->live_lock);
    for (client_xfer_t *x = c->live; x; x = x->next_live)
        if (x->fd == fd)
            x->fd = CURL_SOCKET_BAD;
    int r = close(fd);
    pthread_mutex_unlock(&c->live_lock);
    return r;
}

static void client_live_add(tg_kube_client_t *c, client_xfer_t *x)
{
    x->c = c;
    x->fd = CURL_SOCKET_BAD;
    pthread_mutex_lock(&c->live_lock);
    x->next_live = c->live;
    c->live = x;
    pthread_mutex_unlock(&c->live_lock);
}

static void client_live_remove(tg_kube_client_t *c, client_xfer_t *x)
{
    pthread_mutex_lock(&c->live_lock);
    for (client_xfer_t **p = &c->live; *p; p = &(*p)->next_live) {
        if (*p == x) {
            *p = x->next_live;
            break;
        }
    }
    pthread_mutex_unlock(&c->live_lock);
}

void tg_kube_client_interrupt(tg_kube_client_t *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->live_lock);
    for (client_xfer_t *x = c->live; x; x = x->next_live)
        if (x->fd != CURL_SOCKET_BAD && x->req->stop && atomic_load(x->req->stop))
            shutdown(x->fd, SHUT_RDWR); /* the transfer sees the end, then its flag */
    pthread_mutex_unlock(&c->live_lock);
}

static const char *client_method(const tg_kube_req_t *req)
{
    if (req->method)
        return req->method;
    switch (req->verb) {
    case TG_KUBE_VERB_CREATE:
        return "POST";
    case TG_KUBE_VERB_UPDATE:
        return "PUT";
    case TG_KUBE_VERB_PATCH:
        return "PATCH";
    case TG_KUBE_VERB_DELETE:
        return "DELETE";
    default:
        return "GET";
    }
}

static void client_setup(tg_kube_client_t *c, client_xfer_t *x, const char *url,
                         struct curl_slist *headers, char *errbuf)
{
    CURL *h = x->h;
    const tg_kube_req_t *req = x->req;
    const char *method = client_method(req);
    long timeout = req->timeout_ms < 0 ? 0 : req->timeout_ms > 0 ? req->timeout_ms : c->timeout_ms;

    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* many threads; no SIGALRM games */
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout);
    /* Long watches and log follows sit idle for minutes: keepalive notices a
     * peer that vanished without a FIN. */
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, client_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, client_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
    /* every connection, pooled ones included, closes under c->live_lock */
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, client_closesocket);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, c);
    if (client_interruptible(req)) {
        curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, client_sockopt);
        curl_easy_setopt(h, CURLOPT_SOCKOPTDATA, x);
    }
    if (req->stop) {
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, client_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }
    if (!req->sink) /* big lists compress well; streams are not compressed */
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");

    /* TLS: verify the server unless told not to. */
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, c->conn.insecure ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, c->conn.insecure ? 0L : 2L);
    if (c->conn.ca_pem) {
        struct curl_blob b = {c->conn.ca_pem, c->conn.ca_pem_len, CURL_BLOB_NOCOPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
    } else if (c->conn.ca_file) {
        curl_easy_setopt(h, CURLOPT_CAINFO, c->conn.ca_file);
    }
    if (c->conn.send_credentials) {
        if (c->conn.cert_pem) {
            struct curl_blob b = {c->conn.cert_pem, c->conn.cert_pem_len, CURL_BLOB_NOCOPY};
            curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
            curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        } else if (c->conn.cert_file) {
            curl_easy_setopt(h, CURLOPT_SSLCERT, c->conn.cert_file);
        }
        if (c->conn.key_pem) {
            struct curl_blob b = {c->conn.key_pem, c->conn.key_pem_len, CURL_BLOB_NOCOPY};
            curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
            curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
        } else if (c->conn.key_file) {
            curl_easy_setopt(h, CURLOPT_SSLKEY, c->conn.key_file);
        }
    }

    if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
        if (strcmp(method, "POST") == 0)
            curl_easy_setopt(h, CURLOPT_POST, 1L);
        else
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        if (req->body || strcmp(method, "DELETE") != 0) {
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                             (curl_off_t)(req->body ? req->body_len : 0));
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body ? req->body : "");
        }
    }
}

static int client_curl_transient(CURLcode cc)
{
    switch (cc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR: /* a reset mid-handshake; verification failures differ */
        return 1;
    default:
        return 0;
    }
}

/* Did the request certainly not reach the server? */
static int client_unsent(CURL *h, CURLcode cc)
{
    if (cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_CONNECT)
        return 1;
    long sent = 0;
    curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent);
    return cc != CURLE_OK && sent == 0;
}

static struct curl_slist *client_headers(tg_kube_client_t *c, const tg_kube_req_t *req)
{
    struct curl_slist *l = NULL;
    char line[256];
    snprintf(line, sizeof(line), "Accept: %s", req->accept ? req->accept : "application/json");
    l = curl_slist_append(l, line);
    if (req->body && req->content_type) {
        snprintf(line, sizeof(line), "Content-Type: %s", req->content_type);
        l = curl_slist_append(l, line);
    }
    /* No "Expect: 100-continue" round trip before bodies over 1 KiB. */
    l = curl_slist_append(l, "Expect:");
    char *auth = client_auth_header(c);
    if (auth) {
        l = curl_slist_append(l, auth);
        tg_kube_secret_free(auth, strlen(auth));
    }
    return l;
}

/* Fill res from one finished attempt. RET: whether the failure is transient
 * (the retry policy decides whether that is enough). */
static int client_classify(client_xfer_t *x, CURLcode cc, long code, const char *errbuf,
                           tg_kube_result_t *res)
{
    res->http_code = code;
    if (x->too_large) {
        tg_kube_result_fail(res, TG_KUBE_R_TOO_LARGE, "response larger than %zu bytes",
                            x->body.max);
        return 0;
    }
    if (x->sink_stopped) {
        tg_kube_result_fail(res, TG_KUBE_R_CANCELLED, "stream stopped by its consumer");
        return 0;
    }
    if (cc == CURLE_ABORTED_BY_CALLBACK) {
        tg_kube_result_fail(res, TG_KUBE_R_CANCELLED, "request cancelled");
        return 0;
    }
    if (cc != CURLE_OK) {
        tg_kube_result_fail(
            res, cc == CURLE_OPERATION_TIMEDOUT ? TG_KUBE_R_CLIENT_TIMEOUT : TG_KUBE_R_NETWORK,
            "%s%s%s", curl_easy_strerror(cc), errbuf[0] ? ": " : "", errbuf);
        return client_curl_transient(cc);
    }
    json_t *body = NULL;
    int ok = code >= 200 && code < 300;
    if (x->body.len && !(ok && x->req->sink)) {
        json_error_t jerr;
        body = json_loadb(x->body.data, x->body.len, 0, &jerr);
        if (!body && ok) {
            tg_kube_result_fail(res, TG_KUBE_R_DECODE, "response is not JSON: %s", jerr.text);
            return 0;
        }
    }
    tg_kube_result_from_http(res, code, body, x->body.data, x->body.len);
    return tg_kube_reason_transient(res->reason);
}

/* Whether the API server answered this attempt (any HTTP status will do). */
static void client_note_reach(tg_kube_client_t *c, const tg_kube_result_t *res)
{
    int reached = res->http_code > 0;
    if (!reached && res->reason != TG_KUBE_R_NETWORK && res->reason != TG_KUBE_R_CLIENT_TIMEOUT)
        return; /* cancelled, or stopped by its consumer: says nothing */
    pthread_mutex_lock(&c->reach_lock);
    c->reach = reached;
    if (!reached)
        snprintf(c->reach_why, sizeof(c->reach_why), "%s",
                 res->message ? res->message : tg_kube_reason_name(res->reason));
    pthread_mutex_unlock(&c->reach_lock);
}

int tg_kube_client_reachable(tg_kube_client_t *c, char *why, size_t whylen)
{
    pthread_mutex_lock(&c->reach_lock);
    int r = c->reach;
    if (why && whylen)
        snprintf(why, whylen, "%s", r == 0 ? c->reach_why : "");
    pthread_mutex_unlock(&c->reach_lock);
    return r;
}

tg_rc_e tg_kube_request(tg_kube_client_t *c, const tg_kube_req_t *req, tg_kube_result_t *res)
{
    tg_buf_t url;
    char errbuf[CURL_ERROR_SIZE];
    int attempts = 0, retried = 0, auth_retry_done = 0;
    const char *method = client_method(req);

    tg_kube_result_clean(res);
    tg_buf_init(&url, CLIENT_URL_MAX);
    if (!req->path || req->path[0] != '/' || tg_buf_puts(&url, c->conn.server) != TG_OK ||
        tg_buf_puts(&url, req->path) != TG_OK ||
        (req->query && *req->query &&
         (tg_buf_puts(&url, "?") != TG_OK || tg_buf_puts(&url, req->query) != TG_OK))) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "bad or over-long request path");
        goto out;
    }

    for (;;) {
        client_xfer_t x = {.req = req};
        tg_buf_init(&x.body, req->sink ? CLIENT_ERRBODY_MAX : c->max_response_bytes);
        errbuf[0] = '\0';
        attempts++;
        x.h = client_handle_get(c);
        if (!x.h) {
            tg_buf_clean(&x.body);
            tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "curl_easy_init failed");
            break;
        }
        struct curl_slist *headers = client_headers(c, req);
        client_setup(c, &x, url.data, headers, errbuf);
        uint64_t t0 = client_now_us();
        if (client_interruptible(req))
            client_live_add(c, &x);
        CURLcode cc = curl_easy_perform(x.h);
        if (client_interruptible(req))
            client_live_remove(c, &x);
        uint64_t dur = client_now_us() - t0;
        long code = 0;
        curl_off_t ra = 0;
        curl_easy_getinfo(x.h, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(x.h, CURLINFO_RETRY_AFTER, &ra);
        tg_kube_metrics_request(req->verb, cc == CURLE_OK || x.sink_stopped ? code : 0, dur);

        tg_kube_result_clean(res);
        int transient = client_classify(&x, cc, code, errbuf, res);
        client_note_reach(c, res);
        res->retry_after_s = ra > 0 ? (long)ra : -1;
        int unsent = client_unsent(x.h, cc);
        int delivered = x.delivered;
        client_slist_free(headers);
        client_handle_put(c, x.h);
        tg_buf_clean(&x.body);
        tg_log_debug("kube", "%s %s -> %ld %s (%llu ms, attempt %d)", method, req->path, code,
                     tg_kube_reason_name(res->reason), (unsigned long long)(dur / 1000), attempts);

        int stopped = req->stop && atomic_load(req->stop);
        if (stopped || delivered)
            break;
        /* A rotated token: the kubelet may have rewritten the file since we
         * last looked. One immediate retry with the new one. */
        if (code == 401 && !auth_retry_done && c->conn.token_file) {
            auth_retry_done = 1;
            if (tg_kube_client_reload_token(c) == 1) {
                retried = 1;
                tg_kube_metrics_retry(req->verb);
                continue;
            }
        }
        int may = 0;
        if (req->retry == TG_KUBE_RETRY_SAFE)
            may = transient;
        else if (req->retry == TG_KUBE_RETRY_UNSENT)
            may = res->reason == TG_KUBE_R_TOO_MANY_REQUESTS ||
                  (res->reason == TG_KUBE_R_NETWORK && unsent && transient);
        if (!may || attempts > c->max_retries)
            break;
        long delay;
        if (ra > 0) {
            if (ra > c->retry_after_max_ms / 1000) {
                tg_log_warn("kube", "%s %s: Retry-After %lld s is over our limit; giving up",
                            method, req->path, (long long)ra);
                break;
            }
            delay = (long)ra * 1000;
        } else {
            delay = tg_kube_backoff_ms(c->retry_base_ms, c->retry_max_ms, attempts - 1);
        }
        tg_log_warn("kube", "%s %s: %s (HTTP %ld); retry %d of %d in %ld ms", method, req->path,
                    tg_kube_reason_name(res->reason), code, attempts, c->max_retries, delay);
        tg_kube_metrics_retry(req->verb);
        retried = 1;
        if (tg_kube_sleep_ms(delay, req->stop))
            break;
    }
out:
    res->attempts = attempts;
    res->retried = retried;
    tg_buf_clean(&url);
    return res->rc;
}
