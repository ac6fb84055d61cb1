/* Verification key sets: JWKS, PEM and HS256 sources, each key pinned to one
 * algorithm. */
#include "auth/keys.h"

#include <errno.h>
#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/base64.h"
#include "core/log.h"

/* RSA keys below this are refused: 1024-bit RSA is within reach of a
 * motivated attacker, and no identity provider still issues them. */
#define KEYS_RSA_MIN_BITS 2048
/* A JWKS file is a handful of keys; anything larger is a mistake. */
#define KEYS_JWKS_FILE_MAX (1024 * 1024)
#define KEYS_PEM_FILE_MAX  (64 * 1024)

struct tg_auth_keyset_s {
    int refs; /* atomic */
    size_t n;
    size_t cap;
    tg_auth_key_t *keys;
};

static const char *const alg_names[TG_AUTH_ALG_COUNT] = {
    [TG_AUTH_ALG_INVALID] = "invalid", [TG_AUTH_ALG_RS256] = "RS256", [TG_AUTH_ALG_RS384] = "RS384",
    [TG_AUTH_ALG_RS512] = "RS512",     [TG_AUTH_ALG_ES256] = "ES256", [TG_AUTH_ALG_ES384] = "ES384",
    [TG_AUTH_ALG_HS256] = "HS256",
};

static const jwt_alg_t alg_libjwt[TG_AUTH_ALG_COUNT] = {
    [TG_AUTH_ALG_INVALID] = JWT_ALG_INVAL, [TG_AUTH_ALG_RS256] = JWT_ALG_RS256,
    [TG_AUTH_ALG_RS384] = JWT_ALG_RS384,   [TG_AUTH_ALG_RS512] = JWT_ALG_RS512,
    [TG_AUTH_ALG_ES256] = JWT_ALG_ES256,   [TG_AUTH_ALG_ES384] = JWT_ALG_ES384,
    [TG_AUTH_ALG_HS256] = JWT_ALG_HS256,
};

const char *tg_auth_alg_name(tg_auth_alg_e alg)
{
    return (unsigned)alg < TG_AUTH_ALG_COUNT ? alg_names[alg] : "invalid";
}

tg_auth_alg_e tg_auth_alg_parse(const char *name)
{
    if (!name)
        return TG_AUTH_ALG_INVALID;
    /* Start at 1: "invalid" is not a name anyone may ask for. */
    for (int i = 1; i < TG_AUTH_ALG_COUNT; i++)
        if (strcmp(name, alg_names[i]) == 0)
            return (tg_auth_alg_e)i;
    return TG_AUTH_ALG_INVALID;
}

jwt_alg_t tg_auth_alg_libjwt(tg_auth_alg_e alg)
{
    return (unsigned)alg < TG_AUTH_ALG_COUNT ? alg_libjwt[alg] : JWT_ALG_INVAL;
}

size_t tg_auth_alg_es_sig_len(tg_auth_alg_e alg)
{
    switch (alg) {
    case TG_AUTH_ALG_ES256:
        return 64;
    case TG_AUTH_ALG_ES384:
        return 96;
    default:
        return 0;
    }
}

static int alg_is_rsa(tg_auth_alg_e alg)
{
    return alg == TG_AUTH_ALG_RS256 || alg == TG_AUTH_ALG_RS384 || alg == TG_AUTH_ALG_RS512;
}

/* OpenSSL's group name for the curve an ES algorithm requires. */
static const char *alg_ec_group(tg_auth_alg_e alg)
{
    switch (alg) {
    case TG_AUTH_ALG_ES256:
        return "prime256v1";
    case TG_AUTH_ALG_ES384:
        return "secp384r1";
    default:
        return NULL;
    }
}

/* ---- set lifetime ------------------------------------------------------ */

tg_auth_keyset_t *tg_auth_keyset_new(void)
{
    tg_auth_keyset_t *ks = tg_xcalloc(1, sizeof(*ks));
    ks->refs = 1;
    return ks;
}

tg_auth_keyset_t *tg_auth_keyset_ref(tg_auth_keyset_t *ks)
{
    if (ks)
        __atomic_add_fetch(&ks->refs, 1, __ATOMIC_RELAXED);
    return ks;
}

static void key_clean(tg_auth_key_t *k)
{
    free(k->kid);
    if (k->material) {
        /* HS256 material is a secret; wipe it before it goes back to malloc. */
        OPENSSL_cleanse(k->material, k->material_len);
        free(k->material);
    }
    memset(k, 0, sizeof(*k));
}

void tg_auth_keyset_unref(tg_auth_keyset_t *ks)
{
    if (!ks)
        return;
    if (__atomic_sub_fetch(&ks->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    for (size_t i = 0; i < ks->n; i++)
        key_clean(&ks->keys[i]);
    free(ks->keys);
    free(ks);
}

size_t tg_auth_keyset_count(const tg_auth_keyset_t *ks)
{
    return ks ? ks->n : 0;
}

const tg_auth_key_t *tg_auth_keyset_at(const tg_auth_keyset_t *ks, size_t i)
{
    return ks && i < ks->n ? &ks->keys[i] : NULL;
}

static int keyset_has_kid(const tg_auth_keyset_t *ks, const char *kid)
{
    if (!kid)
        return 0;
    for (size_t i = 0; i < ks->n; i++)
        if (ks->keys[i].kid && strcmp(ks->keys[i].kid, kid) == 0)
            return 1;
    return 0;
}

/* Append a key; takes ownership of `material`. */
static void keyset_push(tg_auth_keyset_t *ks, const char *kid, tg_auth_alg_e alg,
                        unsigned char *material, size_t material_len, const char *source)
{
    if (ks->n == ks->cap) {
        ks->cap = ks->cap ? ks->cap * 2 : 4;
        ks->keys = tg_xrealloc(ks->keys, ks->cap * sizeof(*ks->keys));
    }
    tg_auth_key_t *k = &ks->keys[ks->n++];
    memset(k, 0, sizeof(*k));
    k->kid = kid ? tg_xstrdup(kid) : NULL;
    k->alg = alg;
    k->material = material;
    k->material_len = material_len;
    snprintf(k->source, sizeof(k->source), "%s", source ? source : "unknown");
}

void tg_auth_keyset_add_all(tg_auth_keyset_t *ks, const tg_auth_keyset_t *from, size_t *skipped)
{
    size_t skip = 0;
    for (size_t i = 0; from && i < from->n; i++) {
        const tg_auth_key_t *k = &from->keys[i];
        if (keyset_has_kid(ks, k->kid)) {
            skip++;
            continue;
        }
        unsigned char *m = tg_xmalloc(k->material_len + 1);
        memcpy(m, k->material, k->material_len);
        m[k->material_len] = '\0';
        keyset_push(ks, k->kid, k->alg, m, k->material_len, k->source);
    }
    if (skipped)
        *skipped = skip;
}

tg_auth_lookup_e tg_auth_keyset_lookup(const tg_auth_keyset_t *ks, const char *kid,
                                       tg_auth_alg_e alg, const tg_auth_key_t **out)
{
    *out = NULL;
    if (kid) {
        for (size_t i = 0; i < ks->n; i++) {
            const tg_auth_key_t *k = &ks->keys[i];
            if (!k->kid || strcmp(k->kid, kid) != 0)
                continue;
            if (k->alg != alg)
                return TG_AUTH_LOOKUP_ALG_MISMATCH;
            *out = k;
            return TG_AUTH_LOOKUP_FOUND;
        }
        return TG_AUTH_LOOKUP_UNKNOWN_KID;
    }
    /* An empty set (provider not reached yet) cannot judge the alg: report
     * the key as unknown so the caller may refetch. */
    if (ks->n == 0)
        return TG_AUTH_LOOKUP_UNKNOWN_KID;
    /* No kid: only unambiguous when exactly one key is pinned to this alg;
     * guessing among several would let a token pick its own key. */
    const tg_auth_key_t *found = NULL;
    for (size_t i = 0; i < ks->n; i++) {
        if (ks->keys[i].alg != alg)
            continue;
        if (found)
            return TG_AUTH_LOOKUP_AMBIGUOUS;
        found = &ks->keys[i];
    }
    if (!found)
        return TG_AUTH_LOOKUP_NO_KEY_FOR_ALG;
    *out = found;
    return TG_AUTH_LOOKUP_FOUND;
}

/* ---- files ------------------------------------------------------------- */

tg_rc_e tg_auth_read_file(const char *path, size_t max, char **out, size_t *outlen, char *err,
                          size_t errlen)
{
    tg_rc_e rc = TG_EINTERNAL;
    char *buf = NULL;
    *out = NULL;
    *outlen = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return TG_ENOTFOUND;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file", path);
        goto out;
    }
    if ((unsigned long long)st.st_size > max) {
        snprintf(err, errlen, "%s is larger than %zu bytes", path, max);
        rc = TG_ETOOLARGE;
        goto out;
    }
    /* Read up to max+1 so a file that grew after fstat is still caught. */
    buf = tg_xmalloc(max + 2);
    size_t n = fread(buf, 1, max + 1, f);
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read %s", path);
        goto out;
    }
    if (n > max) {
        snprintf(err, errlen, "%s is larger than %zu bytes", path, max);
        rc = TG_ETOOLARGE;
        goto out;
    }
    buf[n] = '\0';
    *out = buf;
    *outlen = n;
    buf = NULL;
    rc = TG_OK;
out:
    free(buf);
    fclose(f);
    return rc;
}

/* ---- asymmetric keys ------------------------------------------------------ */

/* Check that `pkey` can serve `alg`, then store it as SubjectPublicKeyInfo
 * PEM (the form libjwt 1.10 verifies with). Does not take `pkey`. */
static tg_rc_e keyset_add_pkey(tg_auth_keyset_t *ks, EVP_PKEY *pkey, tg_auth_alg_e alg,
                               const char *kid, const char *source, char *err, size_t errlen)
{
    tg_rc_e rc = TG_EINVAL;
    BIO *mem = NULL;
    EVP_PKEY_CTX *chk = NULL;

    if (keyset_has_kid(ks, kid)) {
        snprintf(err, errlen, "duplicate key id \"%s\"", kid);
        goto out;
    }
    if (alg_is_rsa(alg)) {
        /* EVP_PKEY_RSA only: an RSA-PSS-restricted key must not sign PKCS#1. */
        if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA) {
            snprintf(err, errlen, "%s needs an RSA key", tg_auth_alg_name(alg));
            goto out;
        }
        if (EVP_PKEY_get_bits(pkey) < KEYS_RSA_MIN_BITS) {
            snprintf(err, errlen, "RSA key has %d bits; at least %d required",
                     EVP_PKEY_get_bits(pkey), KEYS_RSA_MIN_BITS);
            goto out;
        }
        /* Catches e = 1 (every "signature" verifies) and other junk. */
        chk = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
        if (!chk || EVP_PKEY_public_check(chk) != 1) {
            snprintf(err, errlen, "RSA public key fails validation");
            goto out;
        }
    } else if (alg_ec_group(alg)) {
        char group[64] = "";
        size_t glen = 0;
        if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC ||
            !EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
                                            &glen) ||
            strcmp(group, alg_ec_group(alg)) != 0) {
            snprintf(err, errlen, "%s needs an EC key on %s", tg_auth_alg_name(alg),
                     alg_ec_group(alg));
            goto out;
        }
        /* An off-curve point is the classic invalid-curve attack surface. */
        chk = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
        if (!chk || EVP_PKEY_public_check(chk) != 1) {
            snprintf(err, errlen, "EC public key fails validation");
            goto out;
        }
    } else {
        snprintf(err, errlen, "%s is not a public-key algorithm", tg_auth_alg_name(alg));
        goto out;
    }

    mem = BIO_new(BIO_s_mem());
    if (!mem || PEM_write_bio_PUBKEY(mem, pkey) != 1) {
        snprintf(err, errlen, "cannot serialise public key");
        rc = TG_EINTERNAL;
        goto out;
    }
    char *data = NULL;
    long dlen = BIO_get_mem_data(mem, &data);
    if (dlen <= 0) {
        snprintf(err, errlen, "cannot serialise public key");
        rc = TG_EINTERNAL;
        goto out;
    }
    unsigned char *m = tg_xmalloc((size_t)dlen + 1);
    memcpy(m, data, (size_t)dlen);
    m[dlen] = '\0';
    keyset_push(ks, kid, alg, m, (size_t)dlen, source);
    rc = TG_OK;
out:
    EVP_PKEY_CTX_free(chk);
    BIO_free(mem);
    return rc;
}

tg_rc_e tg_auth_keyset_add_pem(tg_auth_keyset_t *ks, const char *pem, size_t len, tg_auth_alg_e alg,
                               const char *kid, const char *source, char *err, size_t errlen)
{
    tg_rc_e rc = TG_EINVAL;
    EVP_PKEY *pkey = NULL;
    X509 *cert = NULL;
    BIO *bio = NULL;

    if (len > INT32_MAX) {
        snprintf(err, errlen, "PEM text too large");
        return TG_EINVAL;
    }
    bio = BIO_new_mem_buf(pem, (int)len);
    if (!bio)
        goto out;
    pkey = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    if (!pkey) {
        /* Some providers hand out certificates rather than bare keys. */
        (void)BIO_reset(bio);
        cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
        if (cert)
            pkey = X509_get_pubkey(cert);
    }
    if (!pkey) {
        snprintf(err, errlen, "no PEM public key or certificate found");
        goto out;
    }
    rc = keyset_add_pkey(ks, pkey, alg, kid, source, err, errlen);
out:
    EVP_PKEY_free(pkey);
    X509_free(cert);
    BIO_free(bio);
    return rc;
}

tg_rc_e tg_auth_keyset_add_pem_file(tg_auth_keyset_t *ks, const char *path, tg_auth_alg_e alg,
                                    const char *kid, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    char sub[200] = "";
    tg_rc_e rc = tg_auth_read_file(path, KEYS_PEM_FILE_MAX, &text, &len, err, errlen);
    if (rc != TG_OK)
        return rc;
    rc = tg_auth_keyset_add_pem(ks, text, len, alg, kid, "pem_file", sub, sizeof(sub));
    if (rc != TG_OK)
        snprintf(err, errlen, "%s: %s", path, sub);
    free(text);
    return rc;
}

/* ---- HS256 ------------------------------------------------------------- */

tg_rc_e tg_auth_keyset_add_hs256(tg_auth_keyset_t *ks, const void *secret, size_t len,
                                 const char *kid, char *err, size_t errlen)
{
    if (len < TG_AUTH_HS256_MIN_SECRET) {
        snprintf(err, errlen, "HS256 secret must be at least %d bytes", TG_AUTH_HS256_MIN_SECRET);
        return TG_EINVAL;
    }
    if (keyset_has_kid(ks, kid)) {
        snprintf(err, errlen, "duplicate key id \"%s\"", kid);
        return TG_EINVAL;
    }
    unsigned char *m = tg_xmalloc(len + 1);
    memcpy(m, secret, len);
    m[len] = '\0';
    keyset_push(ks, kid, TG_AUTH_ALG_HS256, m, len, "hs256_secret");
    return TG_OK;
}

/* ---- JWKS -------------------------------------------------------------- */

/* A base64url JWK member decoded to a BIGNUM (new; caller frees). */
static BIGNUM *jwk_bn(json_t *jwk, const char *name)
{
    const char *s = json_string_value(json_object_get(jwk, name));
    unsigned char *raw = NULL;
    size_t rawlen = 0;
    if (!s || !*s || tg_base64_decode(s, strlen(s), TG_B64_URL, &raw, &rawlen) != 0)
        return NULL;
    BIGNUM *bn = rawlen <= INT32_MAX ? BN_bin2bn(raw, (int)rawlen, NULL) : NULL;
    free(raw);
    return bn;
}

/* Build an RSA public key from a JWK's n and e. RET: new EVP_PKEY or NULL. */
static EVP_PKEY *jwk_rsa(json_t *jwk, char *err, size_t errlen)
{
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    OSSL_PARAM_BLD *bld = NULL;
    OSSL_PARAM *params = NULL;
    BIGNUM *n = jwk_bn(jwk, "n");
    BIGNUM *e = jwk_bn(jwk, "e");
    if (!n || !e) {
        snprintf(err, errlen, "RSA key needs base64url \"n\" and \"e\"");
        goto out;
    }
    bld = OSSL_PARAM_BLD_new();
    if (!bld || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) ||
        !(params = OSSL_PARAM_BLD_to_param(bld))) {
        snprintf(err, errlen, "cannot build RSA parameters");
        goto out;
    }
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    if (!ctx || EVP_PKEY_fromdata_init(ctx) != 1 ||
        EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1) {
        snprintf(err, errlen, "invalid RSA key");
        pkey = NULL;
        goto out;
    }
out:
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    return pkey;
}

/* Build an EC public key from a JWK's x and y on the curve `alg` needs.
 * RET: new EVP_PKEY or NULL. */
static EVP_PKEY *jwk_ec(json_t *jwk, tg_auth_alg_e alg, char *err, size_t errlen)
{
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    unsigned char *x = NULL, *y = NULL;
    size_t xlen = 0, ylen = 0;
    size_t coord = tg_auth_alg_es_sig_len(alg) / 2;
    unsigned char point[1 + 2 * 66];
    const char *xs = json_string_value(json_object_get(jwk, "x"));
    const char *ys = json_string_value(json_object_get(jwk, "y"));

    /* RFC 7518 §6.2.1.2: coordinates are full-length octet strings. */
    if (!xs || !ys || tg_base64_decode(xs, strlen(xs), TG_B64_URL, &x, &xlen) != 0 ||
        tg_base64_decode(ys, strlen(ys), TG_B64_URL, &y, &ylen) != 0 || xlen != coord ||
        ylen != coord) {
        snprintf(err, errlen, "EC key needs base64url \"x\" and \"y\" of %zu bytes", coord);
        goto out;
    }
    point[0] = 0x04; /* uncompressed */
    memcpy(point + 1, x, coord);
    memcpy(point + 1 + coord, y, coord);
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)alg_ec_group(alg), 0),
        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, point, 1 + 2 * coord),
        OSSL_PARAM_construct_end(),
    };
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (!ctx || EVP_PKEY_fromdata_init(ctx) != 1 ||
        EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1) {
        snprintf(err, errlen, "invalid EC key");
        pkey = NULL;
        goto out;
    }
out:
    EVP_PKEY_CTX_free(ctx);
    free(x);
    free(y);
    return pkey;
}

/* Work out which algorithm one JWK is pinned to.
 * RET: the alg, or TG_AUTH_ALG_INVALID with `why` set when the key is not one
 *      we verify with. */
static tg_auth_alg_e jwk_alg(json_t *jwk, const char **why)
{
    const char *kty = json_string_value(json_object_get(jwk, "kty"));
    json_t *jalg = json_object_get(jwk, "alg");
    const char *use = json_string_value(json_object_get(jwk, "use"));
    json_t *ops = json_object_get(jwk, "key_ops");

    if (!kty) {
        *why = "no kty";
        return TG_AUTH_ALG_INVALID;
    }
    if (json_object_get(jwk, "use") && (!use || strcmp(use, "sig") != 0)) {
        *why = "use is not \"sig\"";
        return TG_AUTH_ALG_INVALID;
    }
    if (ops) {
        int verify = 0;
        size_t i;
        json_t *op;
        json_array_foreach(ops, i, op) {
            if (json_is_string(op) && strcmp(json_string_value(op), "verify") == 0)
                verify = 1;
        }
        if (!verify) {
            *why = "key_ops lacks \"verify\"";
            return TG_AUTH_ALG_INVALID;
        }
    }
    tg_auth_alg_e alg = TG_AUTH_ALG_INVALID;
    if (jalg) {
        alg = tg_auth_alg_parse(json_string_value(jalg));
        if (alg == TG_AUTH_ALG_INVALID || alg == TG_AUTH_ALG_HS256) {
            *why = "unsupported alg";
            return TG_AUTH_ALG_INVALID;
        }
    }
    if (strcmp(kty, "RSA") == 0) {
        if (!jalg)
            return TG_AUTH_ALG_RS256; /* what every OIDC provider uses */
        if (!alg_is_rsa(alg)) {
            *why = "alg does not fit kty RSA";
            return TG_AUTH_ALG_INVALID;
        }
        return alg;
    }
    if (strcmp(kty, "EC") == 0) {
        const char *crv = json_string_value(json_object_get(jwk, "crv"));
        tg_auth_alg_e by_crv = TG_AUTH_ALG_INVALID;
        if (crv && strcmp(crv, "P-256") == 0)
            by_crv = TG_AUTH_ALG_ES256;
        else if (crv && strcmp(crv, "P-384") == 0)
            by_crv = TG_AUTH_ALG_ES384;
        if (by_crv == TG_AUTH_ALG_INVALID) {
            *why = "unsupported curve";
            return TG_AUTH_ALG_INVALID;
        }
        if (jalg && alg != by_crv) {
            *why = "alg does not fit crv";
            return TG_AUTH_ALG_INVALID;
        }
        return by_crv;
    }
    /* "oct" included: shared secrets never come from a key document. */
    *why = "unsupported kty";
    return TG_AUTH_ALG_INVALID;
}

tg_rc_e tg_auth_keyset_add_jwks(tg_auth_keyset_t *ks, const char *text, size_t len,
                                const char *source, char *err, size_t errlen)
{
    tg_rc_e rc = TG_EINVAL;
    json_error_t jerr;
    size_t added = 0;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    json_t *keys = json_object_get(root, "keys");
    if (!json_is_object(root) || !json_is_array(keys)) {
        snprintf(err, errlen, "not a JWKS document (want {\"keys\":[...]})");
        goto out;
    }
    size_t i;
    json_t *jwk;
    json_array_foreach(keys, i, jwk) {
        char why[160] = "";
        const char *skip = NULL;
        EVP_PKEY *pkey = NULL;
        json_t *jkid = json_object_get(jwk, "kid");
        const char *kid = json_string_value(jkid);
        if (!json_is_object(jwk)) {
            tg_log_warn("auth", "%s: key %zu skipped: not an object", source, i);
            continue;
        }
        if (jkid && (!kid || !*kid)) {
            tg_log_warn("auth", "%s: key %zu skipped: kid is not a non-empty string", source, i);
            continue;
        }
        tg_auth_alg_e alg = jwk_alg(jwk, &skip);
        if (alg == TG_AUTH_ALG_INVALID) {
            tg_log_debug("auth", "%s: key %zu skipped: %s", source, i, skip);
            continue;
        }
        if (alg_is_rsa(alg))
            pkey = jwk_rsa(jwk, why, sizeof(why));
        else
            pkey = jwk_ec(jwk, alg, why, sizeof(why));
        if (pkey) {
            if (keyset_has_kid(ks, kid)) {
                /* Two keys under one name would make lookup depend on order. */
                snprintf(err, errlen, "duplicate key id \"%s\"", kid);
                EVP_PKEY_free(pkey);
                goto out;
            }
            if (keyset_add_pkey(ks, pkey, alg, kid, source, why, sizeof(why)) == TG_OK)
                added++;
            EVP_PKEY_free(pkey);
        }
        if (why[0])
            tg_log_warn("auth", "%s: key %zu skipped: %s", source, i, why);
    }
    if (added == 0) {
        snprintf(err, errlen, "JWKS has no usable signing key");
        goto out;
    }
    rc = TG_OK;
out:
    json_decref(root);
    return rc;
}

tg_rc_e tg_auth_keyset_add_jwks_file(tg_auth_keyset_t *ks, const char *path, char *err,
                                     size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    char sub[200] = "";
    tg_rc_e rc = tg_auth_read_file(path, KEYS_JWKS_FILE_MAX, &text, &len, err, errlen);
    if (rc != TG_OK)
        return rc;
    rc = tg_auth_keyset_add_jwks(ks, text, len, "jwks_file", sub, sizeof(sub));
    if (rc != TG_OK)
        snprintf(err, errlen, "%s: %s", path, sub);
    free(text);
    return rc;
}
