/* JWT (JWS compact) verification against a key set, done the strict way.
 *
 * libjwt 1.10 checks a signature with whatever algorithm the token's header
 * names and enforces no claim at all, so this module does the rest:
 *   1. size limit, then the exact shape `b64url.b64url.b64url`;
 *   2. the header, decoded and parsed here (duplicate members refused): alg
 *      must be one we support and never `none`; `crit`, `enc`, `zip` refused;
 *      `typ`, when present, must be "JWT" or "at+jwt" (RFC 9068 access
 *      tokens; "application/" prefix optional, any case);
 *   3. the key, looked up by kid and required to be pinned to that very alg;
 *      ES signatures must be exactly 64/96 bytes;
 *   4. the signature, with OpenSSL: HS256 compared in constant time; RS and
 *      ES with the key's public key of the matching type (libjwt, which
 *      refuses every typ but "JWT", is used for minting only);
 *   5. the claims (parsed with the header, trusted only now): exp required;
 *      nbf and iat honoured with leeway; a bounded lifetime (exp - iat and
 *      exp - now at most max_lifetime_s); iss and aud must match; sub
 *      required.
 * Pure: no I/O, no globals; safe to call from many threads at once. */
#ifndef TG_AUTH_JWT_H
#define TG_AUTH_JWT_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "auth/keys.h"
#include "auth/reason.h"

#define TG_AUTH_MAX_TOKEN_DEFAULT 8192
#define TG_AUTH_LEEWAY_DEFAULT    60
#define TG_AUTH_MAX_KID           256
#define TG_AUTH_MAX_SUB           255

typedef struct tg_auth_jwt_policy_s {
    const char *issuer;           /* required; compared exactly */
    const char *const *audiences; /* accepted aud values; at least one */
    size_t n_audiences;
    int leeway_s;           /* applied to exp, nbf and iat */
    long max_lifetime_s;    /* longest exp - iat and exp - now accepted; 0: unbounded */
    size_t max_token_bytes; /* 0 → TG_AUTH_MAX_TOKEN_DEFAULT */
} tg_auth_jwt_policy_t;

/* Take the token out of an Authorization header value ("Bearer <token>",
 * scheme case-insensitive, surrounding spaces tolerated).
 * OUT: *tok points into `value` (borrowed), *len its length.
 * RET: TG_AUTH_OK; MISSING (NULL/empty); MALFORMED (another scheme, spaces or
 *      commas inside the token); TOO_LARGE (over `max_token_bytes`, judged
 *      without reading past max + a little of `value`). */
tg_auth_reason_e tg_auth_bearer_token(const char *value, size_t max_token_bytes, const char **tok,
                                      size_t *len);

/* A token split, its header checked and its payload parsed (steps 1-2).
 * Nothing here is trusted until tg_auth_jwt_check_signature and
 * tg_auth_jwt_check_claims have passed. */
typedef struct tg_auth_jwt_s {
    json_t *header; /* owned reference */
    json_t *claims; /* owned reference; the payload as a JSON object */
    tg_auth_alg_e alg;
    const char *kid;    /* borrowed from `header`; NULL when absent */
    size_t len;         /* whole token */
    size_t signing_len; /* length of "header.payload" at the token's start */
    unsigned char *sig; /* owned, decoded */
    size_t sig_len;
} tg_auth_jwt_t;

/* Split `tok` (`len` bytes, need not be NUL-terminated), check its header and
 * parse its payload. RET: OK, MALFORMED or ALG_NOT_ALLOWED.
 * `out` must be cleaned with tg_auth_jwt_clean whatever the result. */
tg_auth_reason_e tg_auth_jwt_parse(const char *tok, size_t len, tg_auth_jwt_t *out);
void tg_auth_jwt_clean(tg_auth_jwt_t *j);

/* Check a parsed token's signature with `key`; `tok` is the text given to
 * tg_auth_jwt_parse. RET: OK, BAD_SIGNATURE, or ALG_NOT_ALLOWED when the key
 * is pinned to another algorithm. */
tg_auth_reason_e tg_auth_jwt_check_signature(const tg_auth_jwt_t *j, const char *tok,
                                             const tg_auth_key_t *key);

/* Check verified claims (borrowed) against `pol` at `now`. */
tg_auth_reason_e tg_auth_jwt_check_claims(json_t *claims, const tg_auth_jwt_policy_t *pol,
                                          time_t now);

/* The whole of steps 1-5 for a bare token.
 * OUT: *claims, on TG_AUTH_OK only, is a new reference to the verified claims
 *      object (caller json_decref's it); NULL otherwise. */
tg_auth_reason_e tg_auth_jwt_verify(const tg_auth_keyset_t *ks, const tg_auth_jwt_policy_t *pol,
                                    const char *tok, size_t len, time_t now, json_t **claims);

#endif
