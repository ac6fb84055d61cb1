/* sha256 and base64 through OpenSSL EVP, for file digests, the config hash
 * and payloads embedded in pod templates. */
#ifndef TG_SPEC_DIGEST_H
#define TG_SPEC_DIGEST_H

#include <stddef.h>

#include "core/mem.h"

/* Lowercase hex sha256 of `len` bytes into out[65]. */
void tg_spec_sha256_hex(const void *data, size_t len, char out[65]);

/* Standard base64 with padding. Returns a new NUL-terminated string (free()). */
char *tg_spec_b64_encode(const void *data, size_t len);

/* Decode standard base64 (padding optional, no whitespace). Returns 0 and a
 * new buffer in *out (free(); NUL-terminated for convenience) or -1. */
int tg_spec_b64_decode(const char *s, size_t len, unsigned char **out, size_t *outlen) TG_MUSTCHECK;

#endif
