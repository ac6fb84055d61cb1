/* sha256 and base64 through OpenSSL EVP. */
#include "spec/digest.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static EVP_MD_CTX *digest_ctx(void)
{
    EVP_MD_CTX *ctx = pthread_getspecific(digest_ctx_key);
    if (!ctx) {
        ctx = EVP_MD_CTX_new();
        if (!ctx || pthread_setspecific(digest_ctx_key, ctx) != 0)
            abort();
    }
    return ctx;
}

void tg_spec_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    static const char hex[] = "0123456789abcdef";
    pthread_once(&digest_once, digest_init);
    const EVP_MD *alg = digest_sha256 ? digest_sha256 : EVP_sha256();
    EVP_MD_CTX *ctx = digest_ctx();
    if (!EVP_DigestInit_ex(ctx, alg, NULL) || !EVP_DigestUpdate(ctx, data, len) ||
        !EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 32) {
        /* EVP_Digest only fails on allocation failure; same policy as tg_xmalloc. */
        abort();
    }
    for (unsigned i = 0; i < 32; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
}

char *tg_spec_b64_encode(const void *data, size_t len)
{
    size_t outlen = 4 * ((len + 2) / 3);
    char *out = tg_xmalloc(outlen + 1);
    /* EVP_EncodeBlock takes an int length; chunk so large inputs stay exact
     * (3-byte multiples keep the output concatenable). */
    size_t done = 0, pos = 0;
    const unsigned char *p = data;
    while (done < len) {
        size_t chunk = len - done;
        if (chunk > 3 * 1024 * 1024)
            chunk = 3 * 1024 * 1024;
        int n = EVP_EncodeBlock((unsigned char *)out + pos, p + done, (int)chunk);
        pos += (size_t)n;
        done += chunk;
    }
    out[pos] = '\0';
    return out;
}

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int tg_spec_b64_decode(const char *s, size_t len, unsigned char **out, size_t *outlen)
{
    /* Hand-rolled so padding and garbage are handled exactly (EVP_DecodeBlock
     * counts padding bytes into its result). */
    while (len > 0 && s[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return -1;
    unsigned char *buf = tg_xmalloc(len / 4 * 3 + 4);
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64_val((unsigned char)s[i]);
        if (v < 0) {
            free(buf);
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[o++] = (unsigned char)((acc >> bits) & 0xFF);
        }
    }
    buf[o] = '\0';
    *out = buf;
    *outlen = o;
    return 0;
}
