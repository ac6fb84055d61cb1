/* Bearer-token authentication for the request path: the one header the HTTP
 * layer includes.
 *
 *     tg_auth_config_t cfg;
 *     tg_auth_config_defaults(&cfg);
 *     cfg.jwks_url = ...; cfg.issuer = ...; cfg.audience = ...;
 *     tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
 *     ...per request, on any thread:
 *     tg_principal_t who;
 *     tg_auth_reason_e why;
 *     if (tg_auth_verify(a, authorization, time(NULL), &who, &why) != TG_OK)
 *         -> 401, WWW-Authenticate: tg_auth_www_authenticate(why),
 *            metric label tg_auth_reason_str(why)
 *     tg_principal_clean(&who);
 *
 * Personal access tokens ("tgp_..."): take the token with
 * tg_auth_bearer_token, and when tg_auth_pat_detect says it is one, look its
 * tg_auth_pat_hash up in the database instead of calling tg_auth_verify
 * (which refuses it as malformed). tg_auth_apply_admin then marks a PAT
 * principal built from the database as admin by the same rules.
 *
 * Thread-safety: tg_auth_verify, tg_auth_reload, tg_auth_tick and
 * tg_auth_stats may run concurrently from any threads. Each verification
 * works on a reference-counted snapshot of the key set; a reload or a JWKS
 * refresh publishes a new snapshot atomically and the old one is freed when
 * its last verification ends. Tokens and secrets are never logged. */
#ifndef TG_AUTH_AUTH_H
#define TG_AUTH_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "auth/jwt.h"
#include "auth/pat.h"
#include "auth/principal.h"
#include "auth/reason.h"
#include "core/mem.h"
#include "core/status.h"

/* Strings are borrowed for the duration of tg_auth_new (it copies them).
 * Call tg_auth_config_defaults first: after it, 0 and NULL mean "off" or
 * "use the default" as noted, except leeway_s where 0 means no leeway. */
typedef struct tg_auth_config_s {
    /* Key sources; at least one. Keys from all of them are accepted. */
    const char *jwks_file;    /* JWKS JSON file */
    const char *jwks_url;     /* an OIDC provider's jwks_uri */
    int oidc_discovery;       /* with no jwks_url: discover it from `issuer` */
    const char *pem_file;     /* PEM public key or certificate */
    const char *pem_alg;      /* the alg pem_file's key is pinned to; default "RS256" */
    const char *pem_kid;      /* optional kid for pem_file's key */
    const char *hs256_secret; /* enables HS256 (>= 32 bytes); for development */
    const char *hs256_kid;    /* optional kid for the HS256 key */

    /* Claims. */
    const char *issuer;     /* required: tokens' iss must equal it */
    const char *audience;   /* required: comma-separated; aud must name one */
    int leeway_s;           /* clock skew allowed on exp/nbf/iat; default 60, max 600 */
    size_t max_token_bytes; /* default 8192, at most 65536 */
    long max_lifetime_s;    /* longest exp - iat / exp - now; 0: unbounded (the default) */

    /* Principal. */
    const char *groups_claim;   /* default "groups" (member name or dotted path) */
    const char *name_claims;    /* default "name,preferred_username,email" */
    const char *admin_groups;   /* comma-separated */
    const char *admin_subjects; /* comma-separated */

    /* Remote JWKS fetching. */
    int jwks_min_refresh_s;   /* at most one refetch per this many seconds; default 30 */
    int jwks_ttl_s;           /* refetch a set older than this; default 3600 */
    long jwks_timeout_ms;     /* whole fetch; default 5000 */
    const char *jwks_ca_file; /* CA bundle for the provider; default system store */
    int jwks_allow_http;      /* plain http to non-loopback hosts (unsafe) */
} tg_auth_config_t;

void tg_auth_config_defaults(tg_auth_config_t *cfg);

typedef struct tg_auth_s tg_auth_t;

/* Validate `cfg`, load the static keys, and make a first JWKS fetch when a
 * remote source is configured. A failed first fetch is logged, not fatal:
 * the provider may come up after us, and unknown-kid refetches retry.
 * RET: new object, or NULL with a message (no secrets) in `err`. */
tg_auth_t *tg_auth_new(const tg_auth_config_t *cfg, char *err, size_t errlen);
/* NULL-safe. No verification may be running. */
void tg_auth_free(tg_auth_t *a);

/* Verify an Authorization header value (NULL when the header is absent).
 * OUT: *out (may be NULL) is initialised always and filled on TG_OK (clean
 *      it with tg_principal_clean either way); *reason (may be NULL) is
 *      TG_AUTH_OK or why the token was refused.
 * A token whose kid is unknown triggers one JWKS refetch (rate-limited; see
 * jwks_min_refresh_s) and one retry. `now` is the wall clock (time(NULL));
 * tests pass fixed values.
 * RET: TG_OK or TG_EUNAUTH. */
tg_rc_e tg_auth_verify(tg_auth_t *a, const char *authorization, time_t now, tg_principal_t *out,
                       tg_auth_reason_e *reason) TG_MUSTCHECK;

/* Key rotation: re-read jwks_file and pem_file and refetch the
 * JWKS (ignoring the rate limit), then publish the new set atomically.
 * RET: TG_OK; on a bad file nothing changes and the error is returned; when
 *      only the refetch fails, the file keys are swapped, the remote keys
 *      stay as they were, and TG_EUNAVAILABLE is returned. */
tg_rc_e tg_auth_reload(tg_auth_t *a, time_t now, char *err, size_t errlen) TG_MUSTCHECK;

/* For a background loop (every few seconds): refetch the JWKS when it is
 * older than jwks_ttl_s. Keeps that fetch off the request path; without it
 * tg_auth_verify does it itself, in whichever request comes first. */
void tg_auth_tick(tg_auth_t *a, time_t now);

/* Mark `p` admin when its subject or one of its groups is configured so. */
void tg_auth_apply_admin(const tg_auth_t *a, tg_principal_t *p);

/* The configured max_token_bytes, for tg_auth_bearer_token. */
size_t tg_auth_max_token_bytes(const tg_auth_t *a);

typedef struct tg_auth_stats_s {
    size_t keys;            /* keys in the current set */
    uint64_t reloads;       /* successful tg_auth_reload calls */
    uint64_t jwks_fetch_ok; /* remote fetches that produced a set */
    uint64_t jwks_fetch_failed;
    uint64_t jwks_limited; /* refetches refused by the rate limit */
    time_t jwks_last_ok;   /* 0 when never */
} tg_auth_stats_t;

void tg_auth_stats(tg_auth_t *a, tg_auth_stats_t *out);

#endif
