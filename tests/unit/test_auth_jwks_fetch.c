/* Remote JWKS: fetch from a local HTTP server, refetch on an unknown kid
 * exactly once, rate limiting, single flight, failures, OIDC discovery, TTL.
 *
 * The server is a thread with a listening socket on 127.0.0.1 (ephemeral
 * port) that answers one request per connection from bodies the test sets,
 * and counts the requests per path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

#include "auth/auth.h"
#include "auth/jwks_fetch.h"
#include "core/log.h"
#include "test_auth_util.h"

#define AUD "taugate"

/* ---- the server ---------------------------------------------------------- */

typedef struct srv_s {
    int lfd;
    int port;
    pthread_t th;
    int stop; /* atomic */
    pthread_mutex_t mu;
    /* guarded by mu */
    char *jwks;      /* body for /jwks */
    int jwks_status; /* 200 unless set */
    char *discovery; /* body for /.well-known/openid-configuration */
    int delay_ms;    /* before answering /jwks */
    int hits_jwks;
    int hits_discovery;
    int hits_total;
} srv_t;

static void srv_send(int fd, int status, const char *extra_headers, const char *body, size_t len)
{
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n%s\r\n",
                     status, len, extra_headers ? extra_headers : "");
    (void)!write(fd, head, (size_t)n);
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, body + off, len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

static void srv_handle(srv_t *s, int fd)
{
    char req[4096];
    size_t got = 0;
    /* Read the request head (GETs have no body). */
    while (got < sizeof(req) - 1) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 2000) <= 0)
            break;
        ssize_t r = read(fd, req + got, sizeof(req) - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        req[got] = '\0';
        if (strstr(req, "\r\n\r\n"))
            break;
    }
    req[got] = '\0';
    char path[256] = "";
    if (sscanf(req, "GET %255s ", path) != 1) {
        srv_send(fd, 400, NULL, "", 0);
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->hits_total++;
    if (strcmp(path, "/jwks") == 0) {
        s->hits_jwks++;
        int delay = s->delay_ms;
        int status = s->jwks_status ? s->jwks_status : 200;
        char *body = strdup(s->jwks ? s->jwks : "");
        pthread_mutex_unlock(&s->mu);
        if (delay)
            usleep((useconds_t)delay * 1000);
        srv_send(fd, status, NULL, body, strlen(body));
        free(body);
        return;
    }
    if (strcmp(path, "/.well-known/openid-configuration") == 0) {
        s->hits_discovery++;
        char *body = strdup(s->discovery ? s->discovery : "");
        pthread_mutex_unlock(&s->mu);
        srv_send(fd, 200, NULL, body, strlen(body));
        free(body);
        return;
    }
    pthread_mutex_unlock(&s->mu);
    if (strcmp(path, "/redirect") == 0) {
        char loc[128];
        snprintf(loc, sizeof(loc), "Location: http://127.0.0.1:%d/jwks\r\n", s->port);
        srv_send(fd, 302, loc, "", 0);
    } else if (strcmp(path, "/big") == 0) {
        size_t n = 300 * 1024;
        char *big = malloc(n);
        memset(big, ' ', n);
        srv_send(fd, 200, NULL, big, n);
        free(big);
    } else {
        srv_send(fd, 404, NULL, "{}", 2);
    }
}

static void *srv_main(void *arg)
{
    srv_t *s = arg;
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        struct pollfd p = {.fd = s->lfd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        srv_handle(s, fd);
        close(fd);
    }
    return NULL;
}

static srv_t *srv_start(void)
{
    srv_t *s = calloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    TU_CHECK(s->lfd >= 0);
    int one = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    TU_CHECK(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) == 0);
    TU_CHECK(listen(s->lfd, 64) == 0);
    socklen_t alen = sizeof(a);
    TU_CHECK(getsockname(s->lfd, (struct sockaddr *)&a, &alen) == 0);
    s->port = ntohs(a.sin_port);
    TU_CHECK(pthread_create(&s->th, NULL, srv_main, s) == 0);
    return s;
}

static void srv_stop(srv_t *s)
{
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
    pthread_join(s->th, NULL);
    close(s->lfd);
    pthread_mutex_destroy(&s->mu);
    free(s->jwks);
    free(s->discovery);
    free(s);
}

/* Replace the /jwks body (takes `body`) and status. */
static void srv_set_jwks(srv_t *s, char *body, int status)
{
    pthread_mutex_lock(&s->mu);
    free(s->jwks);
    s->jwks = body;
    s->jwks_status = status;
    pthread_mutex_unlock(&s->mu);
}

static int srv_hits(srv_t *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->hits_jwks;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* ---- fixtures ------------------------------------------------------------ */

static struct {
    EVP_PKEY *rsa1, *rsa2, *ec256, *attacker;
    srv_t *srv;
    char url[128];
    char issuer[128];
} F;

static int group_setup(void **state)
{
    (void)state;
    if (!getenv("TG_TEST_LOG"))
        tg_log_set_level(TG_LOG_OFF);
    F.rsa1 = tu_key("rsa1.key");
    F.rsa2 = tu_key("rsa2.key");
    F.ec256 = tu_key("ec256.key");
    F.attacker = tu_key("rsa_attacker.key");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    EVP_PKEY_free(F.rsa1);
    EVP_PKEY_free(F.rsa2);
    EVP_PKEY_free(F.ec256);
    EVP_PKEY_free(F.attacker);
    return 0;
}

/* Each test gets a fresh server serving {k1} and URLs pointing at it. */
static int test_setup(void **state)
{
    (void)state;
    F.srv = srv_start();
    snprintf(F.url, sizeof(F.url), "http://127.0.0.1:%d/jwks", F.srv->port);
    snprintf(F.issuer, sizeof(F.issuer), "http://127.0.0.1:%d", F.srv->port);
    srv_set_jwks(F.srv, tu_jwks(tu_jwk(F.rsa1, "k1", "RS256"), NULL), 200);
    return 0;
}

static int test_teardown(void **state)
{
    (void)state;
    srv_stop(F.srv);
    F.srv = NULL;
    return 0;
}

static tg_auth_t *new_auth(int ttl_s)
{
    tg_auth_config_t cfg;
    tg_auth_config_defaults(&cfg);
    cfg.jwks_url = F.url;
    cfg.issuer = F.issuer;
    cfg.audience = AUD;
    if (ttl_s)
        cfg.jwks_ttl_s = ttl_s;
    char err[256] = "";
    tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
    if (!a)
        fprintf(stderr, "tg_auth_new: %s\n", err);
    return a;
}

static char *tok_for(EVP_PKEY *key, const char *alg, const char *kid, time_t now)
{
    char hdr[128];
    snprintf(hdr, sizeof(hdr), "{\"alg\":\"%s\",\"typ\":\"JWT\",\"kid\":\"%s\"}", alg, kid);
    char *c = tu_claims(F.issuer, AUD, "alice", now, now + 3600, NULL);
    char *t = tu_sign(hdr, c, alg, key);
    free(c);
    return t;
}

static tg_auth_reason_e check_at(tg_auth_t *a, const char *tok, time_t now)
{
    char *h = tu_bearer(tok);
    tg_principal_t p;
    tg_auth_reason_e r;
    tg_rc_e rc = tg_auth_verify(a, h, now, &p, &r);
    assert_int_equal(rc == TG_OK, r == TG_AUTH_OK);
    tg_principal_clean(&p);
    free(h);
    return r;
}

/* ---- tests --------------------------------------------------------------- */

static void test_rotation_refetches_exactly_once(void **state)
{
    (void)state;
    tg_auth_t *a = new_auth(0);
    assert_non_null(a);
    time_t base = time(NULL);
    assert_int_equal(srv_hits(F.srv), 1); /* the first fetch, at startup */

    char *t1 = tok_for(F.rsa1, "RS256", "k1", base);
    char *t2 = tok_for(F.rsa2, "RS256", "k2", base);
    assert_int_equal(check_at(a, t1, base), TG_AUTH_OK);
    assert_int_equal(srv_hits(F.srv), 1); /* known kid: no fetch */

    /* The provider publishes k2; a token signed with it arrives. */
    srv_set_jwks(F.srv, tu_jwks(tu_jwk(F.rsa1, "k1", "RS256"), tu_jwk(F.rsa2, "k2", "RS256"), NULL),
                 200);
    time_t t = base + 31;
    assert_int_equal(check_at(a, t2, t), TG_AUTH_OK);
    assert_int_equal(srv_hits(F.srv), 2); /* exactly one refetch */
    assert_int_equal(check_at(a, t2, t), TG_AUTH_OK);
    assert_int_equal(check_at(a, t1, t), TG_AUTH_OK);
    assert_int_equal(srv_hits(F.srv), 2);

    tg_auth_stats_t st;
    tg_auth_stats(a, &st);
    assert_int_equal(st.keys, 2);
    assert_int_equal(st.jwks_fetch_ok, 2);
    assert_int_equal(st.jwks_last_ok, t);

    tg_auth_free(a);
    free(t1);
    free(t2);
}

/* A token that verified before is remembered (auth/verified.c), yet it is
 * refused once its key is gone and once it has expired. */
static void test_remembered_tokens_follow_rotation_and_time(void **state)
{
    (void)state;
    tg_auth_t *a = new_auth(0);
    assert_non_null(a);
    time_t base = time(NULL);
    char *t1 = tok_for(F.rsa1, "RS256", "k1", base);
    assert_int_equal(check_at(a, t1, base), TG_AUTH_OK);
    assert_int_equal(check_at(a, t1, base), TG_AUTH_OK); /* remembered */
    assert_int_equal(check_at(a, t1, base + 3600 + 600), TG_AUTH_EXPIRED);
    assert_int_equal(check_at(a, t1, base - 600), TG_AUTH_NOT_YET_VALID);

    /* The provider drops k1 for k2; a reload publishes the new set. */
    srv_set_jwks(F.srv, tu_jwks(tu_jwk(F.rsa2, "k2", "RS256"), NULL), 200);
    char err[256];
    assert_int_equal(tg_auth_reload(a, base, err, sizeof(err)), TG_OK);
    assert_int_equal(check_at(a, t1, base), TG_AUTH_UNKNOWN_KEY);
    tg_auth_free(a);
    free(t1);
}

static void test_unknown_kid_refetch_is_rate_limited(void **state)
{
    (void)state;
    tg_auth_t *a = new_auth(0);
    assert_non_null(a);
    time_t base = time(NULL) + 31; /* clear of the startup fetch */
    char *t3 = tok_for(F.ec256, "ES256", "k3", base);

    /* Unknown kid: one refetch, still unknown. */
    assert_int_equal(check_at(a, t3, base), TG_AUTH_UNKNOWN_KEY);
    assert_int_equal(srv_hits(F.srv), 2);
    /* A flood of unknown kids inside the window fetches nothing more. */
    for (int i = 0; i < 25; i++) {
        char kid[32];
        snprintf(kid, sizeof(kid), "junk-%d", i);
        char *tj = tok_for(F.attacker, "RS256", kid, base);
        assert_int_equal(check_at(a, tj, base + i), TG_AUTH_UNKNOWN_KEY);
        free(tj);
    }
    assert_int_equal(srv_hits(F.srv), 2);

    /* k3 appears at the provider, but the window is not over. */
    srv_set_jwks(F.srv, tu_jwks(tu_jwk(F.rsa1, "k1", NULL), tu_jwk(F.ec256, "k3", NULL), NULL),
                 200);
    assert_int_equal(check_at(a, t3, base + 29), TG_AUTH_UNKNOWN_KEY);
    assert_int_equal(srv_hits(F.srv), 2);
    /* 30 s after the last attempt, the next unknown kid refetches. */
    assert_int_equal(check_at(a, t3, base + 30), TG_AUTH_OK);
    assert_int_equal(srv_hits(F.srv), 3);

    tg_auth_stats_t st;
    tg_auth_stats(a, &st);
    assert_true(st.jwks_limited >= 26);
    /* A clock that steps backwards does not freeze refreshes. */
    char *t4 = tok_for(F.attacker, "RS256", "k4", base);
    assert_int_equal(check_at(a, t4, base - 1000), TG_AUTH_UNKNOWN_KEY);
    assert_int_equal(srv_hits(F.srv), 4);
    free(t4);
    tg_auth_free(a);
    free(t3);
}

typedef struct {
    tg_auth_t *a;
    const char *tok;
    time_t now;
    tg_auth_reason_e r;
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;
    char *h = tu_bearer(w->tok);
    tg_principal_t p;
    if (tg_auth_verify(w->a, h, w->now, &p, &w->r) != TG_OK && w->r == TG_AUTH_OK)
        w->r = TG_AUTH_REASON_COUNT; /* inconsistent: fail the test */
    tg_principal_clean(&p);
    free(h);
    return NULL;
}

static void test_concurrent_unknown_kid_single_fetch(void **state)
{
    (void)state;
    tg_auth_t *a = new_auth(0);
    assert_non_null(a);
    time_t t = time(NULL) + 31;
    srv_set_jwks(F.srv, tu_jwks(tu_jwk(F.rsa2, "k2", NULL), NULL), 200);
    pthread_mutex_lock(&F.srv->mu);
    F.srv->delay_ms = 300; /* keep the fetch in flight while the others arrive */
    pthread_mutex_unlock(&F.srv->mu);

    char *t2 = tok_for(F.rsa2, "RS256", "k2", t);
    enum { N = 8 };
    pthread_t th[N];
    worker_t w[N];
    for (int i = 0; i < N; i++) {
        w[i] = (worker_t){.a = a, .tok = t2, .now = t, .r = TG_AUTH_REASON_COUNT};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].r, TG_AUTH_OK);
    }
    assert_int_equal(srv_hits(F.srv), 2); /* startup + one shared refetch */
    tg_auth_free(a);
    free(t2);
}

static void test_fetch_failures_keep_keys(void **state)
{
    (void)state;
    tg_auth_t *a = new_auth(0);
    assert_non_null(a);
    time_t t = time(NULL) + 31;
    char *t1 = tok_for(F.rsa1, "RS256", "k1", t);
    char *t2 = tok_for(F.rsa2, "RS256", "k2", t);

    const struct {
        const char *body;
        int status;
    } bad[] = {
        {"{\"error\":\"boom\"}", 500},
        {"{\"keys\":", 200},
        {"{\"keys\":[]}", 200},
        {"{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}]}", 200},
        {"[]", 200},
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(bad); i++) {
        srv_set_jwks(F.srv, strdup(bad[i].body), bad[i].status);
        /* Unknown kid → a (failed) refetch; the known key still works. */
        assert_int_equal(check_at(a, t2, t), TG_AUTH_UNKNOWN_KEY);
        assert_int_equal(srv_hits(F.srv), 2 + (int)i);
        assert_int_equal(check_at(a, t1, t), TG_AUTH_OK);
        t += 30;
    }
    tg_auth_stats_t st;
    tg_auth_stats(a, &st);
    assert_int_equal(st.jwks_fetch_failed, TG_ARRAY_LEN(bad));
    assert_int_equal(st.keys, 1);

    /* The provider recovers with k2. */
    srv_set_jwks(F.srv, tu_jwks(tu_jwk(F.rsa2, "k2", "RS256"), NULL), 200);
    assert_int_equal(check_at(a, t2, t), TG_AUTH_OK);
    /* k1 was withdrawn at the provider, so it is gone here too. */
    assert_int_equal(check_at(a, t1, t), TG_AUTH_UNKNOWN_KEY);
    tg_auth_free(a);
    free(t1);
    free(t2);
}

static void test_provider_down_at_startup(void **state)
{
    (void)state;
    srv_set_jwks(F.srv, strdup("unavailable"), 503);
    tg_auth_t *a = new_auth(0);
    assert_non_null(a); /* not fatal */
    tg_auth_stats_t st;
    tg_auth_stats(a, &st);
    assert_int_equal(st.keys, 0);
    assert_int_equal(st.jwks_fetch_failed, 1);

    time_t t = time(NULL) + 31;
    char *t1 = tok_for(F.rsa1, "RS256", "k1", t);
    srv_set_jwks(F.srv, tu_jwks(tu_jwk(F.rsa1, "k1", NULL), NULL), 200);
    assert_int_equal(check_at(a, t1, t), TG_AUTH_OK);
    assert_int_equal(srv_hits(F.srv), 2);
    tg_auth_free(a);
    free(t1);

    /* The same with a token that names no kid: an empty set refetches too. */
    srv_set_jwks(F.srv, strdup("unavailable"), 503);
    a = new_auth(0);
    assert_non_null(a);
    srv_set_jwks(F.srv, tu_jwks(tu_jwk(F.rsa1, "k1", NULL), NULL), 200);
    t = time(NULL) + 31; /* clear of this instance's startup attempt */
    char hdr[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
    char *c = tu_claims(F.issuer, AUD, "alice", t, t + 3600, NULL);
    t1 = tu_sign(hdr, c, "RS256", F.rsa1);
    assert_int_equal(check_at(a, t1, t), TG_AUTH_OK);
    assert_int_equal(srv_hits(F.srv), 4);
    free(c);
    tg_auth_free(a);
    free(t1);
}

static void test_ttl_refresh_and_tick(void **state)
{
    (void)state;
    tg_auth_t *a = new_auth(120);
    assert_non_null(a);
    time_t base = time(NULL);
    char *t1 = tok_for(F.rsa1, "RS256", "k1", base);
    assert_int_equal(check_at(a, t1, base + 60), TG_AUTH_OK);
    assert_int_equal(srv_hits(F.srv), 1); /* fresh enough */
    /* Past the TTL a known-kid request refreshes in passing. */
    assert_int_equal(check_at(a, t1, base + 121), TG_AUTH_OK);
    assert_int_equal(srv_hits(F.srv), 2);
    /* The background tick does the same, and only when due. */
    tg_auth_tick(a, base + 130);
    assert_int_equal(srv_hits(F.srv), 2);
    srv_set_jwks(F.srv, tu_jwks(tu_jwk(F.rsa2, "k2", NULL), NULL), 200);
    tg_auth_tick(a, base + 250);
    assert_int_equal(srv_hits(F.srv), 3);
    /* The refresh withdrew k1. */
    assert_int_equal(check_at(a, t1, base + 251), TG_AUTH_UNKNOWN_KEY);
    tg_auth_free(a);
    free(t1);
}

static void test_reload_forces_refetch(void **state)
{
    (void)state;
    tg_auth_t *a = new_auth(0);
    assert_non_null(a);
    time_t now = time(NULL);
    char err[256] = "";
    assert_int_equal(tg_auth_reload(a, now, err, sizeof(err)), TG_OK);
    assert_int_equal(srv_hits(F.srv), 2); /* inside the window, but asked for */
    srv_set_jwks(F.srv, strdup("nope"), 500);
    assert_int_equal(tg_auth_reload(a, now, err, sizeof(err)), TG_EUNAVAILABLE);
    assert_non_null(strstr(err, "HTTP 500"));
    char *t1 = tok_for(F.rsa1, "RS256", "k1", now);
    assert_int_equal(check_at(a, t1, now), TG_AUTH_OK);
    tg_auth_free(a);
    free(t1);
}

static void test_oidc_discovery(void **state)
{
    (void)state;
    char doc[512];
    snprintf(doc, sizeof(doc), "{\"issuer\":\"%s\",\"jwks_uri\":\"%s\"}", F.issuer, F.url);
    pthread_mutex_lock(&F.srv->mu);
    F.srv->discovery = strdup(doc);
    pthread_mutex_unlock(&F.srv->mu);

    tg_auth_config_t cfg;
    tg_auth_config_defaults(&cfg);
    cfg.oidc_discovery = 1;
    cfg.issuer = F.issuer;
    cfg.audience = AUD;
    char err[256] = "";
    tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
    assert_non_null(a);
    time_t now = time(NULL);
    char *t1 = tok_for(F.rsa1, "RS256", "k1", now);
    assert_int_equal(check_at(a, t1, now), TG_AUTH_OK);
    pthread_mutex_lock(&F.srv->mu);
    int disco_hits = F.srv->hits_discovery;
    pthread_mutex_unlock(&F.srv->mu);
    assert_int_equal(disco_hits, 1);
    assert_int_equal(srv_hits(F.srv), 1);
    tg_auth_free(a);

    /* A discovery document for another issuer is refused. */
    char *uri = NULL;
    tg_auth_fetch_opts_t fo = {0};
    pthread_mutex_lock(&F.srv->mu);
    free(F.srv->discovery);
    F.srv->discovery = strdup("{\"issuer\":\"https://evil.example\",\"jwks_uri\":\"x\"}");
    pthread_mutex_unlock(&F.srv->mu);
    assert_int_equal(tg_auth_oidc_discover(F.issuer, &fo, &uri, err, sizeof(err)), TG_EUPSTREAM);
    assert_null(uri);
    /* A trailing slash on the issuer finds the same document path. */
    pthread_mutex_lock(&F.srv->mu);
    free(F.srv->discovery);
    F.srv->discovery = strdup(doc);
    pthread_mutex_unlock(&F.srv->mu);
    assert_int_equal(tg_auth_oidc_discover(F.issuer, &fo, &uri, err, sizeof(err)), TG_OK);
    assert_string_equal(uri, F.url);
    free(uri);
    free(t1);
}

static void test_http_get_policy(void **state)
{
    (void)state;
    tg_auth_fetch_opts_t fo = {0};
    char err[256];
    const char *ok[] = {"https://idp.example.test/jwks", "http://127.0.0.1:1/x",
                        "http://localhost:8080/x", "http://[::1]:8080/x"};
    const char *bad[] = {"http://idp.example.test/jwks", "ftp://127.0.0.1/x", "file:///etc/passwd",
                         "not a url", ""};
    for (size_t i = 0; i < TG_ARRAY_LEN(ok); i++)
        assert_int_equal(tg_auth_fetch_url_check(ok[i], &fo, err, sizeof(err)), TG_OK);
    for (size_t i = 0; i < TG_ARRAY_LEN(bad); i++)
        assert_int_equal(tg_auth_fetch_url_check(bad[i], &fo, err, sizeof(err)), TG_EINVAL);
    fo.allow_http = 1;
    assert_int_equal(tg_auth_fetch_url_check(bad[0], &fo, err, sizeof(err)), TG_OK);
    fo.allow_http = 0;

    /* Such a URL is a configuration error at startup. */
    tg_auth_config_t cfg;
    tg_auth_config_defaults(&cfg);
    cfg.jwks_url = "http://idp.example.test/jwks";
    cfg.issuer = "https://idp.example.test";
    cfg.audience = AUD;
    assert_null(tg_auth_new(&cfg, err, sizeof(err)));
    assert_non_null(strstr(err, "jwks_url"));

    char *body = NULL;
    size_t len = 0;
    char url[128];
    /* Redirects are not followed; oversized bodies are cut off. */
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/redirect", F.srv->port);
    assert_int_equal(tg_auth_http_get(url, &fo, &body, &len, err, sizeof(err)), TG_EUPSTREAM);
    assert_null(body);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/big", F.srv->port);
    assert_int_equal(tg_auth_http_get(url, &fo, &body, &len, err, sizeof(err)), TG_ETOOLARGE);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/missing", F.srv->port);
    assert_int_equal(tg_auth_http_get(url, &fo, &body, &len, err, sizeof(err)), TG_EUPSTREAM);
    assert_int_equal(tg_auth_http_get(F.url, &fo, &body, &len, err, sizeof(err)), TG_OK);
    assert_true(len > 0 && strstr(body, "\"k1\""));
    free(body);

    /* Nothing listening. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof(a);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    close(fd);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/jwks", ntohs(a.sin_port));
    assert_int_equal(tg_auth_http_get(url, &fo, &body, &len, err, sizeof(err)), TG_EUNAVAILABLE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rotation_refetches_exactly_once, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_remembered_tokens_follow_rotation_and_time, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_kid_refetch_is_rate_limited, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_unknown_kid_single_fetch, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_fetch_failures_keep_keys, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_provider_down_at_startup, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_ttl_refresh_and_tick, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_reload_forces_refetch, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_oidc_discovery, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_http_get_policy, test_setup, test_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
