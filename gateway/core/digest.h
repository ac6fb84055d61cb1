/* SHA-256 and hex: the one digest of the project (file digests, the config
 * hash, token hashes, evidence log sums). OpenSSL fails a digest only when
 * it cannot allocate, which aborts as tg_xmalloc does. */
#ifndef TG_CORE_DIGEST_H
#define TG_CORE_DIGEST_H

#include <stddef.h>

#define TG_SHA256_LEN 32

/* Raw SHA-256 of `len` bytes. */
void tg_sha256(const void *data, size_t len, unsigned char out[TG_SHA256_LEN]);

/* Lowercase hex SHA-256 of `len` bytes into out[65]. */
void tg_sha256_hex(const void *data, size_t len, char out[65]);

/* Lowercase hex of `len` bytes into out (2 * len + 1 characters, NUL-terminated). */
void tg_hex_encode(const unsigned char *in, size_t len, char *out);

/* A SHA-256 over data that arrives in pieces. */
typedef struct {
    void *ctx; /* EVP_MD_CTX, owned until tg_sha256_final_hex */
} tg_sha256_t;

void tg_sha256_init(tg_sha256_t *s);
void tg_sha256_update(tg_sha256_t *s, const void *data, size_t len);
/* Writes the hex digest into out[65] and frees the state. */
void tg_sha256_final_hex(tg_sha256_t *s, char out[65]);

#endif
