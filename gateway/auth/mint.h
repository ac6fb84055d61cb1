/* Token minting for development and tests (`taugate mint-token`, `make run`).
 *
 * Production tokens come from the identity provider; this signs a token with
 * a key the operator holds so a local stack works without one. The claims it
 * writes are the ones tg_auth_verify checks: iss, aud, sub, iat, exp, plus
 * jti, name, email and the groups claim. */
#ifndef TG_AUTH_MINT_H
#define TG_AUTH_MINT_H

#include <stddef.h>
#include <time.h>

#include "core/mem.h"
#include "core/status.h"

typedef struct tg_auth_mint_s {
    const char *alg;      /* "RS256" (default), "RS384", "RS512", "ES256", "ES384", "HS256" */
    const char *key;      /* PEM private key (RS/ES) or the HS256 secret; or NULL and key_file */
    size_t key_len;       /* 0 → strlen(key) */
    const char *key_file; /* read `key` from this file when `key` is NULL */
    const char *kid;      /* optional header kid */
    const char *issuer;   /* required */
    const char *audience; /* required */
    const char *subject;  /* required */
    const char *name;     /* optional */
    const char *email;    /* optional */
    const char *groups;   /* optional, comma-separated */
    const char *groups_claim; /* default "groups" */
    time_t now;               /* iat; 0 → time(NULL) */
    long ttl_s;               /* exp = iat + ttl_s; 0 → 3600; negative mints an expired token */
} tg_auth_mint_t;

/* Sign a token. OUT: *token, a new string (caller frees with free()).
 * RET: TG_OK; TG_EINVAL (missing field, unknown alg, key unusable for alg,
 *      HS256 secret under 32 bytes); TG_ENOTFOUND (key_file); TG_EINTERNAL.
 * `err` never contains key material. */
tg_rc_e tg_auth_mint(const tg_auth_mint_t *m, char **token, char *err, size_t errlen) TG_MUSTCHECK;

#endif
