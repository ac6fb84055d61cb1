/* A tiny scriptable HTTP/1.1 server for the kube client tests: loopback,
 * ephemeral port, plain or TLS (certificates made in-process with OpenSSL),
 * keep-alive, one thread per connection. A test supplies a handler that
 * writes whatever bytes it likes (including chunked streams and broken
 * answers); the server records every request it parsed.
 *
 * Header-only (static functions) because the Makefile turns every
 * tests/unit/test_*.c into its own binary. */
#ifndef TEST_KUBE_SERVER_H
#define TEST_KUBE_SERVER_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TS_FN        static __attribute__((unused))
#define TS_MAX_LOG   128
#define TS_MAX_CONNS 256

/* ---- PKI made at test time --------------------------------------------------- */

typedef struct ts_pki_s {
    char *ca_pem; /* the CA that signed server and client certs */
    char *ca_key_pem;
    char *server_cert_pem;
    char *server_key_pem;
    char *client_cert_pem; /* CN=test-admin */
    char *client_key_pem;
    char *other_ca_pem; /* a CA that signed nothing we serve */
} ts_pki_t;

TS_FN char *ts_bio_string(BIO *b)
{
    char *p = NULL;
    long n = BIO_get_mem_data(b, &p);
    char *s = malloc((size_t)n + 1);
    memcpy(s, p, (size_t)n);
    s[n] = '\0';
    return s;
}

TS_FN char *ts_cert_pem(X509 *x)
{
    BIO *b = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(b, x);
    char *s = ts_bio_string(b);
    BIO_free(b);
    return s;
}

TS_FN char *ts_key_pem(EVP_PKEY *k)
{
    BIO *b = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
    char *s = ts_bio_string(b);
    BIO_free(b);
    return s;
}

TS_FN void ts_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!e) {
        fprintf(stderr, "ts_ext: bad extension %d=%s\n", nid, value);
        abort();
    }
    X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
}

/* issuer NULL → self-signed CA. */
TS_FN X509 *ts_make_cert(const char *cn, EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key,
                         int kind /* 0 CA, 1 server, 2 client */)
{
    static long serial = 1;
    X509 *x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 7 * 86400);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509 *iss = issuer ? issuer : x;
    ts_ext(x, iss, NID_subject_key_identifier, "hash");
    ts_ext(x, iss, NID_authority_key_identifier, "keyid:always");
    if (kind == 0) {
        ts_ext(x, iss, NID_basic_constraints, "critical,CA:TRUE");
        ts_ext(x, iss, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
    } else {
        ts_ext(x, iss, NID_basic_constraints, "critical,CA:FALSE");
        ts_ext(x, iss, NID_key_usage, "critical,digitalSignature,keyEncipherment");
        ts_ext(x, iss, NID_ext_key_usage, kind == 1 ? "serverAuth" : "clientAuth");
        if (kind == 1)
            ts_ext(x, iss, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
    }
    X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256());
    return x;
}

TS_FN void ts_pki_make(ts_pki_t *p)
{
    EVP_PKEY *cak = EVP_EC_gen("P-256");
    EVP_PKEY *sk = EVP_EC_gen("P-256");
    EVP_PKEY *ck = EVP_EC_gen("P-256");
    EVP_PKEY *ok = EVP_EC_gen("P-256");
    X509 *ca = ts_make_cert("taugate-test-ca", cak, NULL, NULL, 0);
    X509 *srv = ts_make_cert("127.0.0.1", sk, ca, cak, 1);
    X509 *cli = ts_make_cert("test-admin", ck, ca, cak, 2);
    X509 *other = ts_make_cert("someone-else-ca", ok, NULL, NULL, 0);
    p->ca_pem = ts_cert_pem(ca);
    p->ca_key_pem = ts_key_pem(cak);
    p->server_cert_pem = ts_cert_pem(srv);
    p->server_key_pem = ts_key_pem(sk);
    p->client_cert_pem = ts_cert_pem(cli);
    p->client_key_pem = ts_key_pem(ck);
    p->other_ca_pem = ts_cert_pem(other);
    X509_free(ca);
    X509_free(srv);
    X509_free(cli);
    X509_free(other);
    EVP_PKEY_free(cak);
    EVP_PKEY_free(sk);
    EVP_PKEY_free(ck);
    EVP_PKEY_free(ok);
}

TS_FN void ts_pki_free(ts_pki_t *p)
{
    free(p->ca_pem);
    free(p->ca_key_pem);
    free(p->server_cert_pem);
    free(p->server_key_pem);
    free(p->client_cert_pem);
    free(p->client_key_pem);
    free(p->other_ca_pem);
    memset(p, 0, sizeof(*p));
}

/* ---- temp files ------------------------------------------------------------------ */

TS_FN void ts_write_file(const char *path, const char *data)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        abort();
    }
    fputs(data, f);
    fclose(f);
}

/* mkdtemp under $TMPDIR; caller frees and removes with ts_rmdir. */
TS_FN char *ts_mkdtemp(void)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    size_t n = strlen(base) + 32;
    char *d = malloc(n);
    snprintf(d, n, "%s/tgkube.XXXXXX", base);
    if (!mkdtemp(d)) {
        perror("mkdtemp");
        abort();
    }
    return d;
}

TS_FN void ts_rmdir(char *dir)
{
    /* only flat directories of files are made by these tests */
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    free(dir);
}

TS_FN char *ts_path(const char *dir, const char *file)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, file);
    return p;
}

/* ---- the server ------------------------------------------------------------------ */

typedef struct ts_req_s {
    char method[16];
    char path[2048];
    char query[4096];
    char authorization[1024];
    char content_type[128];
    char accept[128];
    char user_agent[128];
    char client_cn[128]; /* from the TLS client certificate, if any */
    char body[8192];     /* first bytes of the body */
    size_t body_len;
    int conn_id;
    int index;
} ts_req_t;

struct ts_server_s;

typedef struct ts_conn_s {
    struct ts_server_s *srv;
    int fd;
    SSL *ssl;
    int id;
    int close; /* a handler sets this to end the connection after its answer */
    pthread_t thread;
} ts_conn_t;

/* Write the answer to `r` on `c`. Runs on the connection's thread. */
typedef void (*ts_handler_fn)(ts_conn_t *c, const ts_req_t *r, void *arg);

typedef struct ts_server_s {
    int lfd;
    int port;
    SSL_CTX *ctx;
    pthread_t thread;
    atomic_int stop;
    ts_handler_fn handler;
    void *arg;
    pthread_mutex_t lock;
    ts_req_t log[TS_MAX_LOG];
    int nlog;
    ts_conn_t *conns[TS_MAX_CONNS];
    int nconns;
    char url[64];
} ts_server_t;

TS_FN int ts_write(ts_conn_t *c, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = c->ssl ? SSL_write(c->ssl, p, (int)len) : send(c->fd, p, len, MSG_NOSIGNAL);
        if (n <= 0) {
            if (!c->ssl && n < 0 && errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

TS_FN int ts_printf(ts_conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
TS_FN int ts_printf(ts_conn_t *c, const char *fmt, ...)
{
    char buf[16384];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf))
        abort();
    return ts_write(c, buf, (size_t)n);
}

/* A whole answer with Content-Length. extra: more header lines, each ending "\r\n". */
TS_FN void ts_respond(ts_conn_t *c, int code, const char *ctype, const char *extra,
                      const char *body)
{
    size_t n = body ? strlen(body) : 0;
    ts_printf(c, "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n", code,
              ctype ? ctype : "application/json", n, extra ? extra : "");
    if (n)
        ts_write(c, body, n);
}

TS_FN void ts_status(ts_conn_t *c, int code, const char *reason, const char *message,
                     const char *extra)
{
    char body[2048];
    snprintf(body, sizeof(body),
             "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
             "\"message\":\"%s\",\"reason\":\"%s\",\"details\":{},\"code\":%d}",
             message, reason, code);
    ts_respond(c, code, "application/json", extra, body);
}

TS_FN void ts_chunked_start(ts_conn_t *c, int code, const char *ctype)
{
    ts_printf(c, "HTTP/1.1 %d X\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n", code,
              ctype);
}

TS_FN int ts_chunk(ts_conn_t *c, const char *data, size_t len)
{
    if (!len)
        return 0;
    if (ts_printf(c, "%zx\r\n", len) || ts_write(c, data, len) || ts_write(c, "\r\n", 2))
        return -1;
    return 0;
}

TS_FN int ts_chunk_str(ts_conn_t *c, const char *s)
{
    return ts_chunk(c, s, strlen(s));
}

TS_FN void ts_chunked_end(ts_conn_t *c)
{
    ts_write(c, "0\r\n\r\n", 5);
}

TS_FN void ts_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Read up to n bytes; waits in 50 ms slices so a stopping server is noticed.
 * RET: bytes, 0 at EOF, -1 on error or stop. */
TS_FN ssize_t ts_read(ts_conn_t *c, char *buf, size_t n)
{
    for (;;) {
        if (atomic_load(&c->srv->stop))
            return -1;
        if (!(c->ssl && SSL_pending(c->ssl))) {
            struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
            int pr = poll(&pfd, 1, 50);
            if (pr == 0)
                continue;
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr < 0)
                return -1;
        }
        ssize_t r = c->ssl ? SSL_read(c->ssl, buf, (int)n) : recv(c->fd, buf, n, 0);
        if (r < 0 && !c->ssl && errno == EINTR)
            continue;
        return r < 0 ? -1 : r;
    }
}

TS_FN void ts_header(const char *head, const char *name, char *out, size_t outlen)
{
    size_t nl = strlen(name);
    out[0] = '\0';
    for (const char *p = strstr(head, "\r\n"); p; p = strstr(p, "\r\n")) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            const char *e = strstr(v, "\r\n");
            size_t n = e ? (size_t)(e - v) : strlen(v);
            if (n >= outlen)
                n = outlen - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return;
        }
    }
}

/* Truncating copy (the log keeps the start of long values). */
TS_FN void ts_copy(char *dst, size_t dstlen, const char *src)
{
    size_t n = strlen(src);
    if (n >= dstlen)
        n = dstlen - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

TS_FN void *ts_conn_main(void *arg)
{
    ts_conn_t *c = arg;
    ts_server_t *s = c->srv;
    char *buf = malloc(65536);
    size_t have = 0;
    char client_cn[128] = "";
    if (s->ctx) {
        c->ssl = SSL_new(s->ctx);
        SSL_set_fd(c->ssl, c->fd);
        if (SSL_accept(c->ssl) != 1)
            goto out;
        X509 *peer = SSL_get1_peer_certificate(c->ssl);
        if (peer) {
            X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, client_cn,
                                      sizeof(client_cn));
            X509_free(peer);
        }
    }
    while (!c->close) {
        /* the request head */
        char *end = NULL;
        while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
            if (have >= 65535)
                goto out;
            ssize_t r = ts_read(c, buf + have, 65535 - have);
            if (r <= 0)
                goto out;
            have += (size_t)r;
        }
        size_t head_len = (size_t)(end - buf) + 4;
        char *head = strndup(buf, head_len);
        ts_req_t *req = calloc(1, sizeof(*req));
        char target[6200] = "", version[16] = "";
        if (sscanf(head, "%15s %6199s %15s", req->method, target, version) != 3) {
            free(head);
            free(req);
            goto out;
        }
        char *q = strchr(target, '?');
        if (q) {
            *q = '\0';
            ts_copy(req->query, sizeof(req->query), q + 1);
        }
        ts_copy(req->path, sizeof(req->path), target);
        ts_header(head, "Authorization", req->authorization, sizeof(req->authorization));
        ts_header(head, "Content-Type", req->content_type, sizeof(req->content_type));
        ts_header(head, "Accept", req->accept, sizeof(req->accept));
        ts_header(head, "User-Agent", req->user_agent, sizeof(req->user_agent));
        char cl[32], conn_hdr[32];
        ts_header(head, "Content-Length", cl, sizeof(cl));
        ts_header(head, "Connection", conn_hdr, sizeof(conn_hdr));
        free(head);
        ts_copy(req->client_cn, sizeof(req->client_cn), client_cn);
        size_t blen = cl[0] ? (size_t)strtoul(cl, NULL, 10) : 0;
        memmove(buf, buf + head_len, have - head_len);
        have -= head_len;
        /* the body, keeping the first bytes */
        size_t got = 0;
        while (got < blen) {
            if (!have) {
                ssize_t r = ts_read(c, buf, 65535);
                if (r <= 0) {
                    free(req);
                    goto out;
                }
                have = (size_t)r;
            }
            size_t take = have < blen - got ? have : blen - got;
            if (got < sizeof(req->body) - 1) {
                size_t keep =
                    take < sizeof(req->body) - 1 - got ? take : sizeof(req->body) - 1 - got;
                memcpy(req->body + got, buf, keep);
            }
            got += take;
            memmove(buf, buf + take, have - take);
            have -= take;
        }
        req->body_len = blen;
        req->conn_id = c->id;
        pthread_mutex_lock(&s->lock);
        req->index = s->nlog;
        if (s->nlog < TS_MAX_LOG)
            s->log[s->nlog++] = *req;
        pthread_mutex_unlock(&s->lock);
        if (strcasecmp(conn_hdr, "close") == 0)
            c->close = 1;
        s->handler(c, req, s->arg);
        free(req);
    }
out:
    free(buf);
    if (c->ssl) {
        SSL_shutdown(c->ssl);
        SSL_free(c->ssl);
        c->ssl = NULL;
    }
    shutdown(c->fd, SHUT_RDWR);
    close(c->fd);
    c->fd = -1;
    return NULL;
}

TS_FN void *ts_accept_main(void *arg)
{
    ts_server_t *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd pfd = {.fd = s->lfd, .events = POLLIN};
        if (poll(&pfd, 1, 50) <= 0)
            continue;
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        pthread_mutex_lock(&s->lock);
        if (s->nconns >= TS_MAX_CONNS) {
            pthread_mutex_unlock(&s->lock);
            close(fd);
            continue;
        }
        ts_conn_t *c = calloc(1, sizeof(*c));
        c->srv = s;
        c->fd = fd;
        c->id = s->nconns;
        s->conns[s->nconns++] = c;
        pthread_mutex_unlock(&s->lock);
        pthread_create(&c->thread, NULL, ts_conn_main, c);
    }
    return NULL;
}

/* tls: 0 plain, 1 TLS, 2 TLS requiring a client certificate from pki->ca. */
TS_FN ts_server_t *ts_start(const ts_pki_t *pki, int tls, ts_handler_fn h, void *arg)
{
    signal(SIGPIPE, SIG_IGN);
    ts_server_t *s = calloc(1, sizeof(*s));
    s->handler = h;
    s->arg = arg;
    pthread_mutex_init(&s->lock, NULL);
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s->lfd, 64) != 0 ||
        getsockname(s->lfd, (struct sockaddr *)&a, &al) != 0) {
        perror("ts_start");
        abort();
    }
    s->port = ntohs(a.sin_port);
    if (tls) {
        s->ctx = SSL_CTX_new(TLS_server_method());
        BIO *b = BIO_new_mem_buf(pki->server_cert_pem, -1);
        X509 *cert = PEM_read_bio_X509(b, NULL, NULL, NULL);
        BIO_free(b);
        b = BIO_new_mem_buf(pki->server_key_pem, -1);
        EVP_PKEY *key = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
        BIO_free(b);
        SSL_CTX_use_certificate(s->ctx, cert);
        SSL_CTX_use_PrivateKey(s->ctx, key);
        X509_free(cert);
        EVP_PKEY_free(key);
        if (tls == 2) {
            b = BIO_new_mem_buf(pki->ca_pem, -1);
            X509 *ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
            BIO_free(b);
            X509_STORE_add_cert(SSL_CTX_get_cert_store(s->ctx), ca);
            X509_free(ca);
            SSL_CTX_set_verify(s->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        }
    }
    snprintf(s->url, sizeof(s->url), "%s://127.0.0.1:%d", tls ? "https" : "http", s->port);
    pthread_create(&s->thread, NULL, ts_accept_main, s);
    return s;
}

TS_FN void ts_stop(ts_server_t *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    for (int i = 0; i < s->nconns; i++) {
        pthread_join(s->conns[i]->thread, NULL);
        free(s->conns[i]);
    }
    close(s->lfd);
    SSL_CTX_free(s->ctx);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

TS_FN int ts_nlog(ts_server_t *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->nlog;
    pthread_mutex_unlock(&s->lock);
    return n;
}

TS_FN int ts_nconns(ts_server_t *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->nconns;
    pthread_mutex_unlock(&s->lock);
    return n;
}

TS_FN double ts_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
