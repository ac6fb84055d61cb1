/* sha256 through OpenSSL EVP. */
#ifndef TG_CORE_DIGEST_H
#define TG_CORE_DIGEST_H

#include <stddef.h>

/* Lowercase hex sha256 of `len` bytes into out[65]. */
void tg_sha256_hex(const void *data, size_t len, char out[65]);

#endif
