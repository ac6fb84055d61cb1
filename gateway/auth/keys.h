/* Verification key sets: every key pinned to exactly one algorithm.
 *
 * A token's header names an algorithm and maybe a key id; the verifier only
 * ever accepts the algorithm the *key* is pinned to, so an attacker cannot
 * turn an RSA public key into an HMAC secret ("algorithm confusion") or pick
 * `none`. Sources: a JWKS document (file, text or URL), a PEM public key or
 * certificate file with a configured algorithm, and an HS256 secret (only
 * when the operator configures one; never from a JWKS).
 *
 * A published key set is immutable and reference counted: the verifier takes
 * a reference for the duration of one verification, and a reload swaps in a
 * new set while older verifications finish on the old one. */
#ifndef TG_AUTH_KEYS_H
#define TG_AUTH_KEYS_H

#include <jwt.h>
#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"

typedef enum {
    TG_AUTH_ALG_INVALID = 0, /* also "none" and anything we do not support */
    TG_AUTH_ALG_RS256,
    TG_AUTH_ALG_RS384,
    TG_AUTH_ALG_RS512,
    TG_AUTH_ALG_ES256,
    TG_AUTH_ALG_ES384,
    TG_AUTH_ALG_HS256,
    TG_AUTH_ALG_COUNT
} tg_auth_alg_e;

/* JOSE name ("RS256"); "invalid" for TG_AUTH_ALG_INVALID. */
const char *tg_auth_alg_name(tg_auth_alg_e alg);
/* Exact, case-sensitive JOSE name → alg; TG_AUTH_ALG_INVALID otherwise
 * (including "none", "None", "HS384", "PS256", "EdDSA"). */
tg_auth_alg_e tg_auth_alg_parse(const char *name);
/* libjwt's constant for the algorithm (JWT_ALG_INVAL for INVALID): verifying
 * and minting must name an algorithm to libjwt the same way. */
jwt_alg_t tg_auth_alg_libjwt(tg_auth_alg_e alg);
/* Raw R||S signature length for ES algorithms (64, 96); 0 for the others. */
size_t tg_auth_alg_es_sig_len(tg_auth_alg_e alg);

typedef struct tg_auth_key_s {
    char *kid; /* owned; NULL when the source names none */
    tg_auth_alg_e alg;
    /* owned: SubjectPublicKeyInfo PEM text for RS/ES (what libjwt 1.10
     * takes), the raw secret for HS256. Not NUL-counted. */
    unsigned char *material;
    size_t material_len;
    char source[16]; /* "jwks_file", "jwks_url", "pem_file", "hs256_secret", ... */
} tg_auth_key_t;

typedef struct tg_auth_keyset_s tg_auth_keyset_t;

/* New empty set with one reference. Never NULL. */
tg_auth_keyset_t *tg_auth_keyset_new(void);
/* Take another reference (thread-safe). Returns `ks`. NULL-safe. */
tg_auth_keyset_t *tg_auth_keyset_ref(tg_auth_keyset_t *ks);
/* Drop a reference; the last one frees the set and wipes secrets. NULL-safe. */
void tg_auth_keyset_unref(tg_auth_keyset_t *ks);

size_t tg_auth_keyset_count(const tg_auth_keyset_t *ks);
/* Borrowed; valid while the caller holds a reference. */
const tg_auth_key_t *tg_auth_keyset_at(const tg_auth_keyset_t *ks, size_t i);

/* The add functions below must only be used on a set nobody else can see yet
 * (before it is published); a published set is read-only.
 * `kid` may be NULL. A key id already present in the set is an error.
 * `err` gets a message without key material. After an error the set may hold
 * some of the keys that came before it: discard it. */

/* Parse a JWKS document ({"keys":[...]}). Keys we cannot or must not use
 * (kty "oct", use "enc", unsupported alg or curve, RSA under 2048 bits,
 * malformed members) are skipped with a warning, so one odd key an identity
 * provider publishes does not take the others down.
 * RET: TG_OK when at least one key was added; TG_EINVAL when the text is not
 *      a JWKS, no key was usable, or a kid repeats. `source` is copied. */
tg_rc_e tg_auth_keyset_add_jwks(tg_auth_keyset_t *ks, const char *text, size_t len,
                                const char *source, char *err, size_t errlen) TG_MUSTCHECK;
tg_rc_e tg_auth_keyset_add_jwks_file(tg_auth_keyset_t *ks, const char *path, char *err,
                                     size_t errlen) TG_MUSTCHECK;

/* A PEM public key ("BEGIN PUBLIC KEY") or X.509 certificate, pinned to
 * `alg` (an RS or ES algorithm; the key type and curve must fit it). */
tg_rc_e tg_auth_keyset_add_pem(tg_auth_keyset_t *ks, const char *pem, size_t len, tg_auth_alg_e alg,
                               const char *kid, const char *source, char *err,
                               size_t errlen) TG_MUSTCHECK;
tg_rc_e tg_auth_keyset_add_pem_file(tg_auth_keyset_t *ks, const char *path, tg_auth_alg_e alg,
                                    const char *kid, char *err, size_t errlen) TG_MUSTCHECK;

/* An HS256 shared secret of at least TG_AUTH_HS256_MIN_SECRET bytes (RFC 7518
 * §3.2 asks for a key as long as the hash). */
#define TG_AUTH_HS256_MIN_SECRET 32
tg_rc_e tg_auth_keyset_add_hs256(tg_auth_keyset_t *ks, const void *secret, size_t len,
                                 const char *kid, char *err, size_t errlen) TG_MUSTCHECK;

/* Copy every key of `from` into `ks`; keys whose kid `ks` already has are
 * skipped (the earlier source wins) and counted in *skipped when non-NULL. */
void tg_auth_keyset_add_all(tg_auth_keyset_t *ks, const tg_auth_keyset_t *from, size_t *skipped);

typedef enum {
    TG_AUTH_LOOKUP_FOUND = 0,
    TG_AUTH_LOOKUP_UNKNOWN_KID,    /* the kid names no key, or the set is empty */
    TG_AUTH_LOOKUP_ALG_MISMATCH,   /* the key exists but is pinned to another alg */
    TG_AUTH_LOOKUP_NO_KEY_FOR_ALG, /* no kid, and no key is pinned to this alg */
    TG_AUTH_LOOKUP_AMBIGUOUS       /* no kid, and several keys are pinned to this alg */
} tg_auth_lookup_e;

/* Find the key for a token header. With a kid: that key, whose pinned alg
 * must equal `alg`. Without: the only key pinned to `alg`.
 * *out is borrowed from `ks`; NULL unless FOUND. */
tg_auth_lookup_e tg_auth_keyset_lookup(const tg_auth_keyset_t *ks, const char *kid,
                                       tg_auth_alg_e alg, const tg_auth_key_t **out);

/* Read a whole regular file of at most `max` bytes into a new NUL-terminated
 * buffer (caller frees with free()). RET: TG_OK, TG_ENOTFOUND (cannot open),
 * TG_ETOOLARGE, or TG_EINTERNAL (read error); `err` says which. */
tg_rc_e tg_auth_read_file(const char *path, size_t max, char **out, size_t *outlen, char *err,
                          size_t errlen) TG_MUSTCHECK;

#endif
