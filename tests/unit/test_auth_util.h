/* Helpers shared by the gateway/auth unit tests: fixture keys, JWKs, and a
 * token signer that lets a test write any header it likes (which libjwt's
 * encoder would not), so every attack is built byte for byte. */
#ifndef TEST_AUTH_UTIL_H
#define TEST_AUTH_UTIL_H

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base64.h"
#include "auth/keys.h"

#define TU_FIX "tests/fixtures/auth"

/* Abort the test binary on a broken fixture: nothing after it means much. */
#define TU_CHECK(cond)                                                                             \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: fixture failure: %s\n", __FILE__, __LINE__, #cond);            \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static inline char *tu_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    TU_CHECK(f);
    char *buf = malloc(1 << 20);
    TU_CHECK(buf);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static inline void tu_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    TU_CHECK(f);
    TU_CHECK(fwrite(text, 1, strlen(text), f) == strlen(text));
    TU_CHECK(fclose(f) == 0);
}

/* A fixture private key (new; EVP_PKEY_free). */
static inline EVP_PKEY *tu_key(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", TU_FIX, name);
    char *pem = tu_read(path, NULL);
    BIO *b = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    free(pem);
    TU_CHECK(k);
    return k;
}

/* SubjectPublicKeyInfo PEM of a key (new string; free). */
static inline char *tu_pub_pem(EVP_PKEY *k)
{
    BIO *b = BIO_new(BIO_s_mem());
    TU_CHECK(PEM_write_bio_PUBKEY(b, k) == 1);
    char *data = NULL;
    long n = BIO_get_mem_data(b, &data);
    char *out = malloc((size_t)n + 1);
    memcpy(out, data, (size_t)n);
    out[n] = '\0';
    BIO_free(b);
    return out;
}

static inline char *tu_b64(const void *p, size_t n)
{
    return tg_base64_encode(p, n, TG_B64_URL);
}

static inline char *tu_bn_b64(const BIGNUM *bn, int pad)
{
    int n = pad ? pad : BN_num_bytes(bn);
    unsigned char *raw = malloc((size_t)n + 1);
    TU_CHECK(BN_bn2binpad(bn, raw, n) == n);
    char *s = tu_b64(raw, (size_t)n);
    free(raw);
    return s;
}

/* The public JWK of a key (new reference). `alg` may be NULL (omitted). */
static inline json_t *tu_jwk(EVP_PKEY *k, const char *kid, const char *alg)
{
    json_t *j = json_object();
    if (kid)
        json_object_set_new(j, "kid", json_string(kid));
    if (alg)
        json_object_set_new(j, "alg", json_string(alg));
    json_object_set_new(j, "use", json_string("sig"));
    if (EVP_PKEY_get_base_id(k) == EVP_PKEY_RSA) {
        BIGNUM *n = NULL, *e = NULL;
        TU_CHECK(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &n));
        TU_CHECK(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &e));
        char *ns = tu_bn_b64(n, 0), *es = tu_bn_b64(e, 0);
        json_object_set_new(j, "kty", json_string("RSA"));
        json_object_set_new(j, "n", json_string(ns));
        json_object_set_new(j, "e", json_string(es));
        free(ns);
        free(es);
        BN_free(n);
        BN_free(e);
    } else {
        BIGNUM *x = NULL, *y = NULL;
        int bits = EVP_PKEY_get_bits(k);
        int coord = (bits + 7) / 8;
        TU_CHECK(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, &x));
        TU_CHECK(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y, &y));
        char *xs = tu_bn_b64(x, coord), *ys = tu_bn_b64(y, coord);
        json_object_set_new(j, "kty", json_string("EC"));
        json_object_set_new(j, "crv", json_string(bits == 256 ? "P-256" : "P-384"));
        json_object_set_new(j, "x", json_string(xs));
        json_object_set_new(j, "y", json_string(ys));
        free(xs);
        free(ys);
        BN_free(x);
        BN_free(y);
    }
    return j;
}

/* {"keys":[...]} text from JWKs (steals the references; NULL-terminated). */
static inline char *tu_jwks(json_t *first, ...)
{
    json_t *arr = json_array();
    va_list ap;
    va_start(ap, first);
    for (json_t *j = first; j; j = va_arg(ap, json_t *))
        json_array_append_new(arr, j);
    va_end(ap);
    json_t *doc = json_pack("{s:o}", "keys", arr);
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return s;
}

/* Standard claims plus `extra` (a JSON object text merged over them, may be
 * NULL). New string. */
static inline char *tu_claims(const char *iss, const char *aud, const char *sub, long iat, long exp,
                              const char *extra)
{
    json_t *c = json_object();
    if (iss)
        json_object_set_new(c, "iss", json_string(iss));
    if (aud)
        json_object_set_new(c, "aud", json_string(aud));
    if (sub)
        json_object_set_new(c, "sub", json_string(sub));
    if (iat)
        json_object_set_new(c, "iat", json_integer(iat));
    if (exp)
        json_object_set_new(c, "exp", json_integer(exp));
    if (extra) {
        json_t *x = json_loads(extra, 0, NULL);
        TU_CHECK(json_is_object(x));
        json_object_update(c, x);
        json_decref(x);
    }
    char *s = json_dumps(c, JSON_COMPACT);
    json_decref(c);
    return s;
}

static inline const EVP_MD *tu_md(const char *alg)
{
    if (strstr(alg, "384"))
        return EVP_sha384();
    if (strstr(alg, "512"))
        return EVP_sha512();
    return EVP_sha256();
}

/* Sign "b64(header).b64(payload)" exactly as given.
 *   `alg` picks the primitive: "HS*" uses hmac/hmac_len, "RS*" and "ES*" use
 *   `key` (ES signatures converted to raw R||S unless `der` is set);
 *   "" or NULL leaves the signature empty.
 * The header text is used verbatim, so it may claim any alg it likes.
 * New string. */
static inline char *tu_sign_ex(const char *header, const char *payload, const char *alg,
                               EVP_PKEY *key, const void *hmac, size_t hmac_len, int der)
{
    char *h = tu_b64(header, strlen(header));
    char *p = tu_b64(payload, strlen(payload));
    size_t in_len = strlen(h) + 1 + strlen(p);
    char *in = malloc(in_len + 1);
    snprintf(in, in_len + 1, "%s.%s", h, p);
    unsigned char sig[1024];
    size_t sig_len = 0;

    if (alg && alg[0] == 'H') {
        unsigned int n = 0;
        TU_CHECK(HMAC(tu_md(alg), hmac, (int)hmac_len, (unsigned char *)in, in_len, sig, &n));
        sig_len = n;
    } else if (alg && alg[0]) {
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        sig_len = sizeof(sig);
        TU_CHECK(EVP_DigestSignInit(md, NULL, tu_md(alg), NULL, key) == 1);
        TU_CHECK(EVP_DigestSign(md, sig, &sig_len, (unsigned char *)in, in_len) == 1);
        EVP_MD_CTX_free(md);
        if (alg[0] == 'E' && !der) {
            const unsigned char *q = sig;
            ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &q, (long)sig_len);
            TU_CHECK(es);
            int coord = (EVP_PKEY_get_bits(key) + 7) / 8;
            TU_CHECK(BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, coord) == coord);
            TU_CHECK(BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + coord, coord) == coord);
            sig_len = (size_t)coord * 2;
            ECDSA_SIG_free(es);
        }
    }
    char *s = tu_b64(sig, sig_len);
    size_t out_len = in_len + 1 + strlen(s);
    char *out = malloc(out_len + 1);
    snprintf(out, out_len + 1, "%s.%s", in, s);
    free(h);
    free(p);
    free(in);
    free(s);
    return out;
}

static inline char *tu_sign(const char *header, const char *payload, const char *alg, EVP_PKEY *key)
{
    return tu_sign_ex(header, payload, alg, key, NULL, 0, 0);
}

/* "Bearer <tok>" (new string). */
static inline char *tu_bearer(const char *tok)
{
    size_t n = strlen(tok) + 8;
    char *s = malloc(n);
    snprintf(s, n, "Bearer %s", tok);
    return s;
}

/* A fresh temp directory (path in `buf`). */
static inline void tu_tmpdir(char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/tg-auth-test-XXXXXX");
    TU_CHECK(mkdtemp(buf));
}

/* Remove a flat temp directory made by tu_tmpdir. */
static inline void tu_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    TU_CHECK(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        TU_CHECK(unlink(path) == 0);
    }
    closedir(d);
    TU_CHECK(rmdir(dir) == 0);
}

#endif
