/* Bearer-token authentication: configuration, key-set snapshots, rotation,
 * and the per-request verification entry point. */
#include "auth/auth.h"

#include <openssl/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/jwks_fetch.h"
#include "auth/keys.h"
#include "auth/list.h"
#include "auth/verified.h"
#include "core/log.h"

#define AUTH_LEEWAY_MAX 600
/* Real access tokens are 1-4 KiB; a limit far above that only helps abuse. */
#define AUTH_MAX_TOKEN_LIMIT (64 * 1024)

struct tg_auth_s {
    /* Copies of the configuration strings that outlive tg_auth_new. */
    char *jwks_file;
    char *pem_file;
    char *pem_kid;
    char *hs256_secret;
    char *hs256_kid;
    char *issuer;
    char *groups_claim;
    tg_auth_alg_e pem_alg;
    tg_auth_list_t audiences;
    tg_auth_list_t name_claims;
    tg_auth_list_t admin_groups;
    tg_auth_list_t admin_subjects;
    tg_auth_jwt_policy_t policy;   /* points into the fields above */
    tg_principal_policy_t ppolicy; /* likewise */
    tg_auth_jwks_t *jwks;          /* NULL without a remote source */

    /* `lock` guards `current` and `reloads`; it is held for a pointer swap or
     * a reference increment, never across I/O, crypto or allocation, so
     * verifications never queue behind a reload. */
    pthread_mutex_t lock;
    tg_auth_keyset_t *current; /* published: file keys, then remote keys */
    uint64_t generation;       /* of `current`: bumped with every publish */
    uint64_t reloads;
    /* `publish_lock` serialises publishers (reload, JWKS refresh) and guards
     * the two source sets the published one is built from. */
    pthread_mutex_t publish_lock;
    tg_auth_keyset_t *local;  /* from jwks_file / pem_file / hs256_secret */
    tg_auth_keyset_t *remote; /* last good JWKS fetch */
    /* Serialises tg_auth_reload calls so two cannot interleave their swaps. */
    pthread_mutex_t reload_lock;
    tg_auth_verified_t *verified; /* tokens already checked, per generation */
};

void tg_auth_config_defaults(tg_auth_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->pem_alg = "RS256";
    cfg->leeway_s = TG_AUTH_LEEWAY_DEFAULT;
    cfg->max_token_bytes = TG_AUTH_MAX_TOKEN_DEFAULT;
    cfg->groups_claim = TG_PRINCIPAL_DEFAULT_GROUPS_CLAIM;
    cfg->name_claims = TG_PRINCIPAL_DEFAULT_NAME_CLAIMS;
    cfg->jwks_min_refresh_s = 30;
    cfg->jwks_ttl_s = 3600;
    cfg->jwks_timeout_ms = 5000;
}

static char *dup_or_null(const char *s)
{
    return s && *s ? tg_xstrdup(s) : NULL;
}

/* ---- snapshots ------------------------------------------------------------ */

static tg_auth_keyset_t *auth_snapshot(tg_auth_t *a, uint64_t *generation)
{
    pthread_mutex_lock(&a->lock);
    tg_auth_keyset_t *ks = tg_auth_keyset_ref(a->current);
    if (generation)
        *generation = a->generation;
    pthread_mutex_unlock(&a->lock);
    return ks;
}

/* Combine local and remote into a fresh set and publish it. Local keys win a
 * kid clash: the operator's files are the more deliberate source. Takes a
 * reference to each non-NULL argument it stores. Lock order: reload_lock,
 * then the JWKS source's lock, then publish_lock, then lock. */
static void auth_publish(tg_auth_t *a, tg_auth_keyset_t *local, tg_auth_keyset_t *remote,
                         int set_local, int set_remote)
{
    pthread_mutex_lock(&a->publish_lock);
    tg_auth_keyset_t *old_local = NULL, *old_remote = NULL, *old_current = NULL;
    if (set_local) {
        old_local = a->local;
        a->local = tg_auth_keyset_ref(local);
    }
    if (set_remote) {
        old_remote = a->remote;
        a->remote = tg_auth_keyset_ref(remote);
    }
    tg_auth_keyset_t *next = tg_auth_keyset_new();
    size_t skipped = 0;
    tg_auth_keyset_add_all(next, a->local, NULL);
    tg_auth_keyset_add_all(next, a->remote, &skipped);
    pthread_mutex_lock(&a->lock);
    old_current = a->current;
    a->current = next;
    a->generation++;
    pthread_mutex_unlock(&a->lock);
    pthread_mutex_unlock(&a->publish_lock);

    if (skipped)
        tg_log_warn("auth", "%zu JWKS keys ignored: their kid is also a configured key", skipped);
    /* Verifications holding the old sets keep them alive until they finish. */
    tg_auth_keyset_unref(old_current);
    tg_auth_keyset_unref(old_local);
    tg_auth_keyset_unref(old_remote);
}

static void auth_publish_remote(void *ctx, tg_auth_keyset_t *fetched)
{
    auth_publish(ctx, NULL, fetched, 0, 1);
}

/* Build the file/secret key set.
 * RET: TG_OK with *out set, or the first source's error with `err` set. */
static tg_rc_e auth_load_local(tg_auth_t *a, tg_auth_keyset_t **out, char *err, size_t errlen)
{
    tg_rc_e rc = TG_OK;
    tg_auth_keyset_t *ks = tg_auth_keyset_new();
    *out = NULL;
    if (a->jwks_file)
        rc = tg_auth_keyset_add_jwks_file(ks, a->jwks_file, err, errlen);
    if (rc == TG_OK && a->pem_file)
        rc = tg_auth_keyset_add_pem_file(ks, a->pem_file, a->pem_alg, a->pem_kid, err, errlen);
    if (rc == TG_OK && a->hs256_secret)
        rc = tg_auth_keyset_add_hs256(ks, a->hs256_secret, strlen(a->hs256_secret), a->hs256_kid,
                                      err, errlen);
    if (rc != TG_OK) {
        tg_auth_keyset_unref(ks);
        return rc;
    }
    *out = ks;
    return TG_OK;
}

/* ---- lifetime ------------------------------------------------------------ */

tg_auth_t *tg_auth_new(const tg_auth_config_t *cfg, char *err, size_t errlen)
{
    tg_auth_t *a = NULL;
    tg_auth_keyset_t *local = NULL;

    if (!cfg->issuer || !*cfg->issuer) {
        snprintf(err, errlen, "auth: issuer is required");
        return NULL;
    }
    if (!cfg->audience || !*cfg->audience) {
        snprintf(err, errlen, "auth: audience is required");
        return NULL;
    }
    if (cfg->leeway_s < 0 || cfg->leeway_s > AUTH_LEEWAY_MAX) {
        snprintf(err, errlen, "auth: leeway must be 0..%d seconds", AUTH_LEEWAY_MAX);
        return NULL;
    }
    if (cfg->max_token_bytes > AUTH_MAX_TOKEN_LIMIT) {
        snprintf(err, errlen, "auth: max_token_bytes must be at most %d", AUTH_MAX_TOKEN_LIMIT);
        return NULL;
    }
    if (!(cfg->jwks_file && *cfg->jwks_file) && !(cfg->jwks_url && *cfg->jwks_url) &&
        !cfg->oidc_discovery && !(cfg->pem_file && *cfg->pem_file) &&
        !(cfg->hs256_secret && *cfg->hs256_secret)) {
        snprintf(err, errlen,
                 "auth: no key source (jwks_file, jwks_url, oidc_discovery, pem_file, "
                 "hs256_secret)");
        return NULL;
    }

    a = tg_xcalloc(1, sizeof(*a));
    pthread_mutex_init(&a->lock, NULL);
    pthread_mutex_init(&a->reload_lock, NULL);
    pthread_mutex_init(&a->publish_lock, NULL);
    a->verified = tg_auth_verified_new();
    a->jwks_file = dup_or_null(cfg->jwks_file);
    a->pem_file = dup_or_null(cfg->pem_file);
    a->pem_kid = dup_or_null(cfg->pem_kid);
    a->hs256_secret = dup_or_null(cfg->hs256_secret);
    a->hs256_kid = dup_or_null(cfg->hs256_kid);
    a->issuer = tg_xstrdup(cfg->issuer);
    a->groups_claim =
        tg_xstrdup(cfg->groups_claim && *cfg->groups_claim ? cfg->groups_claim
                                                           : TG_PRINCIPAL_DEFAULT_GROUPS_CLAIM);
    tg_auth_list_parse(&a->audiences, cfg->audience);
    tg_auth_list_parse(&a->name_claims,
                       cfg->name_claims ? cfg->name_claims : TG_PRINCIPAL_DEFAULT_NAME_CLAIMS);
    tg_auth_list_parse(&a->admin_groups, cfg->admin_groups);
    tg_auth_list_parse(&a->admin_subjects, cfg->admin_subjects);
    if (a->audiences.n == 0) {
        snprintf(err, errlen, "auth: audience is required");
        goto fail;
    }
    a->pem_alg = tg_auth_alg_parse(cfg->pem_alg && *cfg->pem_alg ? cfg->pem_alg : "RS256");
    if (a->pem_file && (a->pem_alg == TG_AUTH_ALG_INVALID || a->pem_alg == TG_AUTH_ALG_HS256)) {
        snprintf(err, errlen, "auth: pem_alg must be RS256, RS384, RS512, ES256 or ES384");
        goto fail;
    }

    a->policy.issuer = a->issuer;
    a->policy.audiences = (const char *const *)a->audiences.v;
    a->policy.n_audiences = a->audiences.n;
    a->policy.leeway_s = cfg->leeway_s;
    a->policy.max_lifetime_s = cfg->max_lifetime_s;
    a->policy.max_token_bytes =
        cfg->max_token_bytes ? cfg->max_token_bytes : TG_AUTH_MAX_TOKEN_DEFAULT;
    a->ppolicy.groups_claim = a->groups_claim;
    a->ppolicy.name_claims = &a->name_claims;
    a->ppolicy.admin_groups = &a->admin_groups;
    a->ppolicy.admin_subjects = &a->admin_subjects;

    if (auth_load_local(a, &local, err, errlen) != TG_OK)
        goto fail;

    const char *url = cfg->jwks_url && *cfg->jwks_url ? cfg->jwks_url : NULL;
    if (url || cfg->oidc_discovery) {
        tg_auth_fetch_opts_t fo = {
            .timeout_ms = cfg->jwks_timeout_ms,
            .ca_file = cfg->jwks_ca_file && *cfg->jwks_ca_file ? cfg->jwks_ca_file : NULL,
            .allow_http = cfg->jwks_allow_http,
        };
        /* A URL we would never fetch is a configuration error, not an outage:
         * refuse it now rather than fail every request later. */
        char uerr[160] = "";
        if (tg_auth_fetch_url_check(url ? url : a->issuer, &fo, uerr, sizeof(uerr)) != TG_OK) {
            snprintf(err, errlen, "auth: %s: %s", url ? "jwks_url" : "issuer (for discovery)",
                     uerr);
            goto fail;
        }
        a->jwks = tg_auth_jwks_new(url, url ? NULL : a->issuer, &fo, cfg->jwks_min_refresh_s,
                                   cfg->jwks_ttl_s);
    }
    auth_publish(a, local, NULL, 1, 0);
    tg_auth_keyset_unref(local);
    local = NULL;

    if (a->jwks) {
        char ferr[256] = "";
        if (tg_auth_jwks_refresh(a->jwks, time(NULL), TG_AUTH_JWKS_WAIT, auth_publish_remote, a,
                                 ferr, sizeof(ferr)) != TG_AUTH_JWKS_FETCHED)
            tg_log_warn("auth", "first JWKS fetch failed (will retry on demand): %s", ferr);
    }
    return a;
fail:
    tg_auth_keyset_unref(local);
    tg_auth_free(a);
    return NULL;
}

void tg_auth_free(tg_auth_t *a)
{
    if (!a)
        return;
    tg_auth_jwks_free(a->jwks);
    tg_auth_keyset_unref(a->current);
    tg_auth_keyset_unref(a->local);
    tg_auth_keyset_unref(a->remote);
    pthread_mutex_destroy(&a->lock);
    tg_auth_verified_free(a->verified);
    pthread_mutex_destroy(&a->reload_lock);
    pthread_mutex_destroy(&a->publish_lock);
    free(a->jwks_file);
    free(a->pem_file);
    free(a->pem_kid);
    if (a->hs256_secret) {
        OPENSSL_cleanse(a->hs256_secret, strlen(a->hs256_secret));
        free(a->hs256_secret);
    }
    free(a->hs256_kid);
    free(a->issuer);
    free(a->groups_claim);
    tg_auth_list_clean(&a->audiences);
    tg_auth_list_clean(&a->name_claims);
    tg_auth_list_clean(&a->admin_groups);
    tg_auth_list_clean(&a->admin_subjects);
    free(a);
}

/* ---- per request ------------------------------------------------------------ */

size_t tg_auth_max_token_bytes(const tg_auth_t *a)
{
    return a->policy.max_token_bytes;
}

void tg_auth_apply_admin(const tg_auth_t *a, tg_principal_t *p)
{
    tg_principal_apply_admin(p, &a->admin_groups, &a->admin_subjects);
}

tg_rc_e tg_auth_verify(tg_auth_t *a, const char *authorization, time_t now, tg_principal_t *out,
                       tg_auth_reason_e *reason)
{
    const char *tok = NULL;
    size_t len = 0;
    json_t *claims = NULL;
    tg_auth_keyset_t *ks = NULL;
    tg_auth_reason_e r;
    tg_principal_t scratch;

    if (!out)
        out = &scratch; /* a caller that only wants yes/no */
    tg_principal_init(out);
    r = tg_auth_bearer_token(authorization, a->policy.max_token_bytes, &tok, &len);
    if (r != TG_AUTH_OK)
        goto out;
    uint64_t gen = 0;
    ks = auth_snapshot(a, &gen);
    claims = tg_auth_verified_get(a->verified, tok, len, gen);
    if (claims) {
        /* the signature is known good; time and audience are not */
        r = tg_auth_jwt_check_claims(claims, &a->policy, now);
    } else {
        r = tg_auth_jwt_verify(ks, &a->policy, tok, len, now, &claims);
        if (r == TG_AUTH_OK)
            tg_auth_verified_put(a->verified, tok, len, gen, claims);
    }

    if (r == TG_AUTH_UNKNOWN_KEY && a->jwks) {
        /* The provider may have rotated: refetch (at most once per
         * jwks_min_refresh_s, whoever asks) and retry once on the new set.
         * Waiting here means a burst of such requests shares one fetch. */
        char ferr[256] = "";
        (void)tg_auth_jwks_refresh(a->jwks, now, TG_AUTH_JWKS_WAIT, auth_publish_remote, a, ferr,
                                   sizeof(ferr));
        tg_auth_keyset_t *fresh = auth_snapshot(a, NULL);
        if (fresh != ks) {
            tg_auth_keyset_unref(ks);
            ks = fresh;
            r = tg_auth_jwt_verify(ks, &a->policy, tok, len, now, &claims);
        } else {
            tg_auth_keyset_unref(fresh);
        }
    } else if (a->jwks && tg_auth_jwks_due(a->jwks, now)) {
        /* Stale set and nobody ran tg_auth_tick: refresh for later requests
         * without making anyone wait (BUSY when another thread is on it). */
        char ferr[256] = "";
        (void)tg_auth_jwks_refresh(a->jwks, now, 0, auth_publish_remote, a, ferr, sizeof(ferr));
    }
    if (r != TG_AUTH_OK)
        goto out;
    if (tg_principal_from_claims(out, claims, &a->ppolicy) != 0) {
        tg_principal_clean(out);
        tg_principal_init(out);
        r = TG_AUTH_BAD_CLAIMS;
    }
out:
    if (out == &scratch)
        tg_principal_clean(&scratch);
    json_decref(claims);
    tg_auth_keyset_unref(ks);
    if (reason)
        *reason = r;
    return r == TG_AUTH_OK ? TG_OK : TG_EUNAUTH;
}

/* ---- rotation ------------------------------------------------------------ */

tg_rc_e tg_auth_reload(tg_auth_t *a, time_t now, char *err, size_t errlen)
{
    tg_rc_e rc = TG_OK;
    pthread_mutex_lock(&a->reload_lock);
    tg_auth_keyset_t *local = NULL;
    rc = auth_load_local(a, &local, err, errlen);
    if (rc != TG_OK) {
        tg_log_error("auth", "key reload failed; keeping the current keys: %s", err);
        goto out;
    }
    auth_publish(a, local, NULL, 1, 0);
    tg_auth_keyset_unref(local);
    if (a->jwks) {
        char ferr[256] = "";
        /* An operator asked for this: bypass the rate limit by treating the
         * last attempt as long ago. */
        if (tg_auth_jwks_refresh(a->jwks, now, TG_AUTH_JWKS_FORCE, auth_publish_remote, a, ferr,
                                 sizeof(ferr)) != TG_AUTH_JWKS_FETCHED) {
            snprintf(err, errlen, "JWKS refetch failed; remote keys unchanged: %s", ferr);
            rc = TG_EUNAVAILABLE;
        }
    }
    pthread_mutex_lock(&a->lock);
    a->reloads++;
    pthread_mutex_unlock(&a->lock);
    tg_log_info("auth", "keys reloaded");
out:
    pthread_mutex_unlock(&a->reload_lock);
    return rc;
}

void tg_auth_tick(tg_auth_t *a, time_t now)
{
    if (!a->jwks || !tg_auth_jwks_due(a->jwks, now))
        return;
    char ferr[256] = "";
    (void)tg_auth_jwks_refresh(a->jwks, now, 0, auth_publish_remote, a, ferr, sizeof(ferr));
}

void tg_auth_stats(tg_auth_t *a, tg_auth_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&a->lock);
    out->keys = tg_auth_keyset_count(a->current);
    out->reloads = a->reloads;
    pthread_mutex_unlock(&a->lock);
    if (a->jwks) {
        tg_auth_jwks_stats_t js;
        tg_auth_jwks_stats(a->jwks, &js);
        out->jwks_fetch_ok = js.fetch_ok;
        out->jwks_fetch_failed = js.fetch_failed;
        out->jwks_limited = js.limited;
        out->jwks_last_ok = js.last_ok;
    }
}
