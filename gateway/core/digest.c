/* SHA-256 through OpenSSL EVP. */
#include "core/digest.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>

/* Per process: the fetched SHA-256 implementation, and a context per thread
 * (reused across digests, freed at thread exit): a cache, not state any
 * caller can see. */
static EVP_MD *digest_sha256;
static pthread_once_t digest_once = PTHREAD_ONCE_INIT;
static pthread_key_t digest_ctx_key;

static void digest_ctx_free(void *ctx)
{
    EVP_MD_CTX_free(ctx);
}

/* Fetch the implementation once: EVP_sha256() makes OpenSSL 3 look it up on
 * every call, which costs more than hashing a small file. Each thread also
 * keeps one digest context instead of allocating one per hash. */
static void digest_init(void)
{
    digest_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (pthread_key_create(&digest_ctx_key, digest_ctx_free) != 0)
        abort();
}

static const EVP_MD *digest_alg(void)
{
    pthread_once(&digest_once, digest_init);
    return digest_sha256 ? digest_sha256 : EVP_sha256();
}

static EVP_MD_CTX *digest_thread_ctx(void)
{
    pthread_once(&digest_once, digest_init);
    EVP_MD_CTX *ctx = pthread_getspecific(digest_ctx_key);
    if (!ctx) {
        ctx = EVP_MD_CTX_new();
        if (!ctx || pthread_setspecific(digest_ctx_key, ctx) != 0)
            abort();
    }
    return ctx;
}

void tg_sha256(const void *data, size_t len, unsigned char out[TG_SHA256_LEN])
{
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = digest_thread_ctx();
    if (!EVP_DigestInit_ex(ctx, digest_alg(), NULL) || !EVP_DigestUpdate(ctx, data, len) ||
        !EVP_DigestFinal_ex(ctx, out, &mdlen) || mdlen != TG_SHA256_LEN)
        abort();
}

void tg_hex_encode(const unsigned char *in, size_t len, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = hex[in[i] >> 4];
        out[2 * i + 1] = hex[in[i] & 15];
    }
    out[2 * len] = '\0';
}

void tg_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char md[TG_SHA256_LEN];
    tg_sha256(data, len, md);
    tg_hex_encode(md, sizeof(md), out);
}

void tg_sha256_init(tg_sha256_t *s)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || !EVP_DigestInit_ex(ctx, digest_alg(), NULL))
        abort();
    s->ctx = ctx;
}

void tg_sha256_update(tg_sha256_t *s, const void *data, size_t len)
{
    if (!EVP_DigestUpdate(s->ctx, data, len))
        abort();
}

void tg_sha256_final_hex(tg_sha256_t *s, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (!EVP_DigestFinal_ex(s->ctx, md, &n) || n != TG_SHA256_LEN)
        abort();
    EVP_MD_CTX_free(s->ctx);
    s->ctx = NULL;
    tg_hex_encode(md, n, out);
}
