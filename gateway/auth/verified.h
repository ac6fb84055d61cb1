/* Tokens whose signature was already checked. A client sends the same
 * bearer token with every request until it expires; checking its signature
 * each time (an HMAC, or an RSA/ECDSA verification) and parsing it again is
 * most of what authentication costs. This remembers, per token digest, the
 * claims of tokens that verified against a given key set generation. A hit
 * skips only the signature: the caller still checks exp, nbf, iss and aud
 * every time, and a new key set (rotation, reload) voids every entry. */
#ifndef TG_AUTH_VERIFIED_H
#define TG_AUTH_VERIFIED_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tg_auth_verified_s tg_auth_verified_t;

tg_auth_verified_t *tg_auth_verified_new(void);
void tg_auth_verified_free(tg_auth_verified_t *v);

/* The claims (new reference) of `tok` if it verified under key set
 * generation `gen`, else NULL. */
json_t *tg_auth_verified_get(tg_auth_verified_t *v, const char *tok, size_t len, uint64_t gen);
/* Remember that `tok` verified under `gen` with these claims. */
void tg_auth_verified_put(tg_auth_verified_t *v, const char *tok, size_t len, uint64_t gen,
                          const json_t *claims);

#endif
