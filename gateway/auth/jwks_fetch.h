/* Remote JWKS: an OIDC issuer's jwks_uri fetched with libcurl, cached, and
 * refreshed at a bounded rate.
 *
 * Identity providers rotate signing keys by publishing the new key first and
 * signing with it later, so a token whose kid we do not know is the signal to
 * refetch. Because anyone can send such a token, refetches are limited to one
 * per `min_interval_s` (default 30 s) no matter how many requests ask, and
 * only one fetch runs at a time. A set older than `ttl_s` is refreshed too, so
 * a key the provider withdrew stops being accepted.
 *
 * Rate-limit clock: the `now` the caller passes (the same clock tokens are
 * checked against), which keeps the behaviour testable. A clock that steps
 * backwards lifts the limit rather than freezing it. */
#ifndef TG_AUTH_JWKS_FETCH_H
#define TG_AUTH_JWKS_FETCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "auth/keys.h"
#include "core/mem.h"
#include "core/status.h"

typedef struct tg_auth_fetch_opts_s {
    long timeout_ms;         /* whole transfer; 0 → 5000 */
    long connect_timeout_ms; /* 0 → 2000 */
    size_t max_bytes;        /* response body ceiling; 0 → 256 KiB */
    const char *ca_file;     /* borrowed; NULL → system trust store */
    /* Plain http to a host other than loopback. A JWKS fetched in clear text
     * can be replaced by anyone on the path, which forges every token, so
     * this is off unless the operator says so. */
    int allow_http;
} tg_auth_fetch_opts_t;

/* GET `url` and return the body of a 200 response.
 * OUT: *body (new, NUL-terminated, caller frees with free()), *len.
 * RET: TG_OK; TG_EINVAL (bad or disallowed URL); TG_EUPSTREAM (non-200);
 *      TG_ETOOLARGE; TG_EUNAVAILABLE (connect/TLS/timeout). `err` says why. */
tg_rc_e tg_auth_http_get(const char *url, const tg_auth_fetch_opts_t *opts, char **body,
                         size_t *len, char *err, size_t errlen) TG_MUSTCHECK;

/* Would tg_auth_http_get fetch `url`? (parses, checks scheme and host).
 * RET: TG_OK or TG_EINVAL with `err` set. */
tg_rc_e tg_auth_fetch_url_check(const char *url, const tg_auth_fetch_opts_t *opts, char *err,
                                size_t errlen) TG_MUSTCHECK;

/* OpenID Connect discovery: fetch `<issuer>/.well-known/openid-configuration`,
 * check that its "issuer" is `issuer` (OIDC Discovery §4.3), and return its
 * "jwks_uri" (new string, caller frees). */
tg_rc_e tg_auth_oidc_discover(const char *issuer, const tg_auth_fetch_opts_t *opts, char **jwks_uri,
                              char *err, size_t errlen) TG_MUSTCHECK;

typedef struct tg_auth_jwks_s tg_auth_jwks_t;

/* A remote key source. Exactly one of `url` (a jwks_uri) and
 * `discovery_issuer` (discover the jwks_uri from this issuer) is non-NULL.
 * Strings and `opts` are copied. min_interval_s 0 → 30; ttl_s 0 → 3600. */
tg_auth_jwks_t *tg_auth_jwks_new(const char *url, const char *discovery_issuer,
                                 const tg_auth_fetch_opts_t *opts, int min_interval_s, int ttl_s);
void tg_auth_jwks_free(tg_auth_jwks_t *j);

typedef enum {
    TG_AUTH_JWKS_FETCHED = 0, /* a new key set was fetched and published */
    TG_AUTH_JWKS_LIMITED,     /* too soon since the last attempt; nothing done */
    TG_AUTH_JWKS_BUSY,        /* another thread is fetching and we did not wait */
    TG_AUTH_JWKS_FAILED       /* fetched, but the fetch or the document was bad */
} tg_auth_jwks_result_e;

/* Called with the fetched set (borrowed; take a reference to keep it) while
 * the source's lock is held, so publications happen in fetch order. */
typedef void (*tg_auth_jwks_publish_fn)(void *ctx, tg_auth_keyset_t *fetched);

#define TG_AUTH_JWKS_WAIT  1 /* wait for a fetch already running instead of BUSY */
#define TG_AUTH_JWKS_FORCE 2 /* ignore the rate limit (operator reload); waits too */

/* Fetch now unless the last attempt was under min_interval_s before `now`.
 * `flags`: 0 returns BUSY when another thread is fetching; TG_AUTH_JWKS_WAIT
 * waits for it (and then usually gets LIMITED); TG_AUTH_JWKS_FORCE fetches
 * regardless of the limit. On FAILED the previous keys stay in force.
 * Thread-safe. */
tg_auth_jwks_result_e tg_auth_jwks_refresh(tg_auth_jwks_t *j, time_t now, int flags,
                                           tg_auth_jwks_publish_fn publish, void *ctx, char *err,
                                           size_t errlen);

/* 1 when the last good fetch is older than ttl_s (or there never was one) and
 * the rate limit would allow another attempt. Thread-safe, never blocks. */
int tg_auth_jwks_due(tg_auth_jwks_t *j, time_t now);

typedef struct tg_auth_jwks_stats_s {
    uint64_t fetch_ok;
    uint64_t fetch_failed;
    uint64_t limited; /* refreshes refused by the rate limit */
    time_t last_ok;   /* 0 when never */
    time_t last_attempt;
    size_t keys; /* keys in the last good set */
} tg_auth_jwks_stats_t;

void tg_auth_jwks_stats(tg_auth_jwks_t *j, tg_auth_jwks_stats_t *out);

#endif
