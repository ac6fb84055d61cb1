/* Remote JWKS source: libcurl fetch, OIDC discovery, rate-limited refresh. */
#include "auth/jwks_fetch.h"

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/log.h"

#define FETCH_TIMEOUT_MS_DEFAULT  5000
#define FETCH_CONNECT_MS_DEFAULT  2000
#define FETCH_MAX_BYTES_DEFAULT   (256 * 1024)
#define JWKS_MIN_INTERVAL_DEFAULT 30
#define JWKS_TTL_DEFAULT          3600
#define DISCOVERY_PATH            "/.well-known/openid-configuration"

struct tg_auth_jwks_s {
    pthread_mutex_t lock; /* single flight: held for the whole fetch */
    char *url;            /* NULL until discovered */
    char *discovery_issuer;
    tg_auth_fetch_opts_t opts;
    char *ca_file; /* owned copy behind opts.ca_file */
    int min_interval_s;
    int ttl_s;
    /* Guarded by `stats_lock` so tg_auth_jwks_due never waits on a fetch. */
    pthread_mutex_t stats_lock;
    tg_auth_jwks_stats_t st;
};

/* ---- one GET ------------------------------------------------------------ */

typedef struct fetch_sink_s {
    tg_buf_t buf;
    int too_large;
} fetch_sink_t;

static size_t fetch_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    fetch_sink_t *sink = userdata;
    size_t n = size * nmemb;
    if (tg_buf_append(&sink->buf, ptr, n) != TG_OK) {
        sink->too_large = 1;
        return 0; /* makes curl stop with CURLE_WRITE_ERROR */
    }
    return n;
}

static int host_is_loopback(const char *host)
{
    return strcasecmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0 ||
           strcmp(host, "[::1]") == 0 || strcmp(host, "::1") == 0;
}

/* Accept https anywhere, http only to loopback unless allowed. */
tg_rc_e tg_auth_fetch_url_check(const char *url, const tg_auth_fetch_opts_t *opts, char *err,
                                size_t errlen)
{
    tg_rc_e rc = TG_EINVAL;
    char *scheme = NULL, *host = NULL;
    CURLU *u = curl_url();
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        snprintf(err, errlen, "invalid URL");
        goto out;
    }
    if (strcmp(scheme, "https") == 0 ||
        (strcmp(scheme, "http") == 0 && (opts->allow_http || host_is_loopback(host)))) {
        rc = TG_OK;
        goto out;
    }
    snprintf(err, errlen, "URL scheme must be https (http only to loopback unless allowed)");
out:
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return rc;
}

tg_rc_e tg_auth_http_get(const char *url, const tg_auth_fetch_opts_t *opts, char **body,
                         size_t *len, char *err, size_t errlen)
{
    tg_auth_fetch_opts_t o = opts ? *opts : (tg_auth_fetch_opts_t){0};
    if (!url) {
        snprintf(err, errlen, "no URL");
        return TG_EINVAL;
    }
    fetch_sink_t sink = {0};
    CURL *c = NULL;
    tg_rc_e rc;
    *body = NULL;
    *len = 0;

    if (!o.timeout_ms)
        o.timeout_ms = FETCH_TIMEOUT_MS_DEFAULT;
    if (!o.connect_timeout_ms)
        o.connect_timeout_ms = FETCH_CONNECT_MS_DEFAULT;
    if (!o.max_bytes)
        o.max_bytes = FETCH_MAX_BYTES_DEFAULT;
    tg_buf_init(&sink.buf, o.max_bytes);

    rc = tg_auth_fetch_url_check(url, &o, err, errlen);
    if (rc != TG_OK)
        goto out;
    c = curl_easy_init();
    if (!c) {
        snprintf(err, errlen, "curl_easy_init failed");
        rc = TG_EINTERNAL;
        goto out;
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    /* A redirect could lead anywhere, including to http; providers serve
     * their key documents directly. */
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* we run on worker threads */
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, o.timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o.connect_timeout_ms);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "taugate");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fetch_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (o.ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, o.ca_file);

    CURLcode cc = curl_easy_perform(c);
    if (sink.too_large) {
        snprintf(err, errlen, "response larger than %zu bytes", o.max_bytes);
        rc = TG_ETOOLARGE;
        goto out;
    }
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "fetch failed: %s", curl_easy_strerror(cc));
        rc = cc == CURLE_OPERATION_TIMEDOUT ? TG_ETIMEOUT : TG_EUNAVAILABLE;
        goto out;
    }
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        snprintf(err, errlen, "fetch answered HTTP %ld", status);
        rc = TG_EUPSTREAM;
        goto out;
    }
    *body = tg_buf_steal(&sink.buf, len);
    rc = TG_OK;
out:
    curl_easy_cleanup(c);
    tg_buf_clean(&sink.buf);
    return rc;
}

tg_rc_e tg_auth_oidc_discover(const char *issuer, const tg_auth_fetch_opts_t *opts, char **jwks_uri,
                              char *err, size_t errlen)
{
    tg_rc_e rc;
    tg_buf_t url;
    char *body = NULL;
    size_t len = 0;
    json_t *doc = NULL;
    *jwks_uri = NULL;

    tg_buf_init(&url, 4096);
    size_t ilen = strlen(issuer);
    while (ilen && issuer[ilen - 1] == '/') /* "https://idp/" and "https://idp" alike */
        ilen--;
    if (tg_buf_append(&url, issuer, ilen) != TG_OK || tg_buf_puts(&url, DISCOVERY_PATH) != TG_OK) {
        snprintf(err, errlen, "issuer URL too long");
        rc = TG_EINVAL;
        goto out;
    }
    rc = tg_auth_http_get(url.data, opts, &body, &len, err, errlen);
    if (rc != TG_OK)
        goto out;
    json_error_t jerr;
    doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    const char *iss = json_string_value(json_object_get(doc, "issuer"));
    const char *uri = json_string_value(json_object_get(doc, "jwks_uri"));
    rc = TG_EUPSTREAM;
    if (!json_is_object(doc) || !iss || !uri) {
        snprintf(err, errlen, "discovery document lacks issuer or jwks_uri");
        goto out;
    }
    /* A document for another issuer would let its keys vouch for ours. */
    if (strcmp(iss, issuer) != 0) {
        snprintf(err, errlen, "discovery document names a different issuer");
        goto out;
    }
    *jwks_uri = tg_xstrdup(uri);
    rc = TG_OK;
out:
    json_decref(doc);
    free(body);
    tg_buf_clean(&url);
    return rc;
}

/* ---- the cached source -------------------------------------------------- */

tg_auth_jwks_t *tg_auth_jwks_new(const char *url, const char *discovery_issuer,
                                 const tg_auth_fetch_opts_t *opts, int min_interval_s, int ttl_s)
{
    tg_auth_jwks_t *j = tg_xcalloc(1, sizeof(*j));
    pthread_mutex_init(&j->lock, NULL);
    pthread_mutex_init(&j->stats_lock, NULL);
    j->url = url ? tg_xstrdup(url) : NULL;
    j->discovery_issuer = discovery_issuer ? tg_xstrdup(discovery_issuer) : NULL;
    if (opts)
        j->opts = *opts;
    j->ca_file = opts && opts->ca_file ? tg_xstrdup(opts->ca_file) : NULL;
    j->opts.ca_file = j->ca_file;
    j->min_interval_s = min_interval_s > 0 ? min_interval_s : JWKS_MIN_INTERVAL_DEFAULT;
    j->ttl_s = ttl_s > 0 ? ttl_s : JWKS_TTL_DEFAULT;
    return j;
}

void tg_auth_jwks_free(tg_auth_jwks_t *j)
{
    if (!j)
        return;
    pthread_mutex_destroy(&j->lock);
    pthread_mutex_destroy(&j->stats_lock);
    free(j->url);
    free(j->discovery_issuer);
    free(j->ca_file);
    free(j);
}

/* Too soon since the last attempt? Caller holds stats_lock. */
static int jwks_limited_locked(const tg_auth_jwks_t *j, time_t now)
{
    if (j->st.last_attempt == 0 || now < j->st.last_attempt)
        return 0;
    return now - j->st.last_attempt < j->min_interval_s;
}

int tg_auth_jwks_due(tg_auth_jwks_t *j, time_t now)
{
    pthread_mutex_lock(&j->stats_lock);
    int stale = j->st.last_ok == 0 || now < j->st.last_ok || now - j->st.last_ok >= j->ttl_s;
    int due = stale && !jwks_limited_locked(j, now);
    pthread_mutex_unlock(&j->stats_lock);
    return due;
}

void tg_auth_jwks_stats(tg_auth_jwks_t *j, tg_auth_jwks_stats_t *out)
{
    pthread_mutex_lock(&j->stats_lock);
    *out = j->st;
    pthread_mutex_unlock(&j->stats_lock);
}

/* Fetch and parse once. Caller holds j->lock. RET: new set or NULL. */
static tg_auth_keyset_t *jwks_fetch_locked(tg_auth_jwks_t *j, char *err, size_t errlen)
{
    char *body = NULL;
    size_t len = 0;
    tg_auth_keyset_t *ks = NULL;

    if (!j->url) {
        /* Discovery is retried on every attempt until it works once; the
         * jwks_uri of a provider does not move while we run. */
        if (tg_auth_oidc_discover(j->discovery_issuer, &j->opts, &j->url, err, errlen) != TG_OK)
            goto out;
    }
    if (tg_auth_http_get(j->url, &j->opts, &body, &len, err, errlen) != TG_OK)
        goto out;
    ks = tg_auth_keyset_new();
    if (tg_auth_keyset_add_jwks(ks, body, len, "jwks_url", err, errlen) != TG_OK) {
        tg_auth_keyset_unref(ks);
        ks = NULL;
    }
out:
    free(body);
    return ks;
}

tg_auth_jwks_result_e tg_auth_jwks_refresh(tg_auth_jwks_t *j, time_t now, int flags,
                                           tg_auth_jwks_publish_fn publish, void *ctx, char *err,
                                           size_t errlen)
{
    if (flags & (TG_AUTH_JWKS_WAIT | TG_AUTH_JWKS_FORCE))
        pthread_mutex_lock(&j->lock);
    else if (pthread_mutex_trylock(&j->lock) != 0)
        return TG_AUTH_JWKS_BUSY;

    tg_auth_jwks_result_e res;
    pthread_mutex_lock(&j->stats_lock);
    if (!(flags & TG_AUTH_JWKS_FORCE) && jwks_limited_locked(j, now)) {
        j->st.limited++;
        pthread_mutex_unlock(&j->stats_lock);
        snprintf(err, errlen, "JWKS refetch rate-limited");
        res = TG_AUTH_JWKS_LIMITED;
        goto out;
    }
    /* Count the attempt before fetching: a provider that is down must not
     * be hammered by every request that carries an unknown kid. */
    j->st.last_attempt = now;
    pthread_mutex_unlock(&j->stats_lock);

    tg_auth_keyset_t *ks = jwks_fetch_locked(j, err, errlen);

    pthread_mutex_lock(&j->stats_lock);
    if (ks) {
        j->st.fetch_ok++;
        j->st.last_ok = now;
        j->st.keys = tg_auth_keyset_count(ks);
    } else {
        j->st.fetch_failed++;
    }
    pthread_mutex_unlock(&j->stats_lock);

    if (!ks) {
        tg_log_warn("auth", "JWKS fetch failed: %s", err);
        res = TG_AUTH_JWKS_FAILED;
        goto out;
    }
    tg_log_info("auth", "JWKS fetched: %zu keys", tg_auth_keyset_count(ks));
    if (publish)
        publish(ctx, ks);
    tg_auth_keyset_unref(ks);
    res = TG_AUTH_JWKS_FETCHED;
out:
    pthread_mutex_unlock(&j->lock);
    return res;
}
