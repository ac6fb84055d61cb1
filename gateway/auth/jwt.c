/* JWT verification: structure, header, key pinning, signature, claims. */
#include "auth/jwt.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base64.h"
#include "core/mem.h"

/* Room for "Bearer " and a few stray spaces around a maximal token. */
#define BEARER_SLACK 64

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

tg_auth_reason_e tg_auth_bearer_token(const char *value, size_t max_token_bytes, const char **tok,
                                      size_t *len)
{
    *tok = NULL;
    *len = 0;
    if (!max_token_bytes)
        max_token_bytes = TG_AUTH_MAX_TOKEN_DEFAULT;
    if (!value)
        return TG_AUTH_MISSING;
    /* Never scan an unbounded header: anything this long is refused whole. */
    size_t vlen = strnlen(value, max_token_bytes + BEARER_SLACK + 1);
    if (vlen > max_token_bytes + BEARER_SLACK)
        return TG_AUTH_TOO_LARGE;

    size_t i = 0;
    while (i < vlen && is_space(value[i]))
        i++;
    if (i == vlen)
        return TG_AUTH_MISSING;
    if (vlen - i < 6 || strncasecmp(value + i, "Bearer", 6) != 0)
        return TG_AUTH_MALFORMED; /* Basic, Negotiate, a bare token... */
    i += 6;
    if (i < vlen && !is_space(value[i]))
        return TG_AUTH_MALFORMED; /* "Bearerxyz" */
    while (i < vlen && is_space(value[i]))
        i++;
    if (i == vlen)
        return TG_AUTH_MISSING; /* "Bearer" and nothing to go with it */
    size_t start = i;
    while (i < vlen && !is_space(value[i]) && value[i] != ',')
        i++;
    size_t end = i;
    while (i < vlen && is_space(value[i]))
        i++;
    if (i != vlen)
        return TG_AUTH_MALFORMED; /* a second token or parameter */
    if (end - start > max_token_bytes)
        return TG_AUTH_TOO_LARGE;
    *tok = value + start;
    *len = end - start;
    return TG_AUTH_OK;
}

void tg_auth_jwt_clean(tg_auth_jwt_t *j)
{
    if (!j)
        return;
    json_decref(j->header);
    json_decref(j->claims);
    free(j->sig);
    memset(j, 0, sizeof(*j));
}

/* Decode a base64url segment as a JSON object (new reference), refusing
 * duplicate members so that we and libjwt cannot read different values. */
static json_t *segment_json(const char *s, size_t n)
{
    unsigned char *raw = NULL;
    size_t rawlen = 0;
    if (tg_base64_decode(s, n, TG_B64_URL, &raw, &rawlen) != 0)
        return NULL;
    json_error_t jerr;
    json_t *o = json_loadb((const char *)raw, rawlen, JSON_REJECT_DUPLICATES, &jerr);
    free(raw);
    if (o && !json_is_object(o)) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

/* typ (a media type, compared case-insensitively, "application/" optional,
 * RFC 7515 4.1.9): a plain JWT, or an OAuth access token (RFC 9068
 * "at+jwt", which several identity providers issue). */
static int typ_ok(const char *typ)
{
    if (strncasecmp(typ, "application/", 12) == 0)
        typ += 12;
    return strcasecmp(typ, "JWT") == 0 || strcasecmp(typ, "at+jwt") == 0;
}

/* Header members other than alg/kid/typ that we must refuse. */
static tg_auth_reason_e header_check(tg_auth_jwt_t *j)
{
    json_t *h = j->header;
    json_t *alg = json_object_get(h, "alg");
    if (!json_is_string(alg))
        return TG_AUTH_MALFORMED;
    /* "none", "HS384", "PS256", "EdDSA": all simply unsupported here; a key
     * pinned to the token's alg is checked later. */
    j->alg = tg_auth_alg_parse(json_string_value(alg));
    if (j->alg == TG_AUTH_ALG_INVALID)
        return TG_AUTH_ALG_NOT_ALLOWED;
    /* crit lists extensions the recipient MUST understand (RFC 7515 §4.1.11);
     * we understand none. enc/zip belong to JWE, which we do not accept. */
    if (json_object_get(h, "crit") || json_object_get(h, "enc") || json_object_get(h, "zip") ||
        json_object_get(h, "b64"))
        return TG_AUTH_MALFORMED;
    json_t *typ = json_object_get(h, "typ");
    if (typ && (!json_is_string(typ) || !typ_ok(json_string_value(typ))))
        return TG_AUTH_MALFORMED;
    json_t *kid = json_object_get(h, "kid");
    if (kid) {
        if (!json_is_string(kid) || json_string_length(kid) == 0 ||
            json_string_length(kid) > TG_AUTH_MAX_KID)
            return TG_AUTH_MALFORMED;
        j->kid = json_string_value(kid);
    }
    return TG_AUTH_OK;
}

tg_auth_reason_e tg_auth_jwt_parse(const char *tok, size_t len, tg_auth_jwt_t *out)
{
    memset(out, 0, sizeof(*out));
    out->len = len;
    const char *dot1 = memchr(tok, '.', len);
    if (!dot1)
        return TG_AUTH_MALFORMED;
    const char *dot2 = memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - tok));
    if (!dot2)
        return TG_AUTH_MALFORMED;
    const char *sig = dot2 + 1;
    size_t hlen = (size_t)(dot1 - tok);
    size_t plen = (size_t)(dot2 - dot1 - 1);
    size_t slen = len - (size_t)(sig - tok);
    /* A fourth dot means JWE (five parts) or junk; an empty part is a
     * truncated token. */
    if (memchr(sig, '.', slen) || hlen == 0 || plen == 0)
        return TG_AUTH_MALFORMED;
    if (!tg_base64_valid(tok, hlen, TG_B64_URL, NULL) ||
        !tg_base64_valid(dot1 + 1, plen, TG_B64_URL, NULL) ||
        !tg_base64_valid(sig, slen, TG_B64_URL, NULL))
        return TG_AUTH_MALFORMED;

    out->header = segment_json(tok, hlen);
    if (!out->header)
        return TG_AUTH_MALFORMED;
    tg_auth_reason_e r = header_check(out);
    if (r != TG_AUTH_OK)
        return r;
    if (slen == 0)
        return TG_AUTH_MALFORMED; /* every algorithm we accept signs */
    if (tg_base64_decode(sig, slen, TG_B64_URL, &out->sig, &out->sig_len) != 0)
        return TG_AUTH_MALFORMED;
    /* The payload is parsed before the signature check only so that a token
     * whose claims are not a JSON object is reported as malformed rather than
     * as a bad signature (libjwt refuses both the same way); nothing in it is
     * trusted until the signature and the claims checks pass. */
    out->claims = segment_json(dot1 + 1, plen);
    if (!out->claims)
        return TG_AUTH_MALFORMED;
    out->signing_len = (size_t)(dot2 - tok);
    return TG_AUTH_OK;
}

static const EVP_MD *jwt_digest(tg_auth_alg_e alg)
{
    switch (alg) {
    case TG_AUTH_ALG_RS256:
    case TG_AUTH_ALG_ES256:
    case TG_AUTH_ALG_HS256:
        return EVP_sha256();
    case TG_AUTH_ALG_RS384:
    case TG_AUTH_ALG_ES384:
        return EVP_sha384();
    case TG_AUTH_ALG_RS512:
        return EVP_sha512();
    default:
        return NULL;
    }
}

/* A JWS ECDSA signature (R||S, RFC 7518 3.4) as the DER form OpenSSL
 * verifies. RET: length written into *der (OPENSSL_free it), or 0. */
static int jwt_es_der(const unsigned char *sig, size_t len, unsigned char **der)
{
    size_t half = len / 2;
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(sig, (int)half, NULL), *s = BN_bin2bn(sig + half, (int)half, NULL);
    int n = 0;
    if (!es || !r || !s || ECDSA_SIG_set0(es, r, s) != 1)
        goto out;
    r = s = NULL; /* owned by es now */
    n = i2d_ECDSA_SIG(es, der);
    if (n < 0)
        n = 0;
out:
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(es);
    return n;
}

/* RS and ES signatures, verified here with OpenSSL: libjwt 1.10 refuses
 * every typ but "JWT", so it cannot check an RFC 9068 access token. */
static tg_auth_reason_e jwt_verify_pkey(const tg_auth_jwt_t *j, const char *tok,
                                        const tg_auth_key_t *key)
{
    tg_auth_reason_e r = TG_AUTH_BAD_SIGNATURE;
    EVP_PKEY *pkey = NULL;
    EVP_MD_CTX *ctx = NULL;
    unsigned char *der = NULL;
    const unsigned char *sig = j->sig;
    size_t sig_len = j->sig_len;
    BIO *bio = BIO_new_mem_buf(key->material, (int)key->material_len);
    if (bio)
        pkey = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    int want = tg_auth_alg_es_sig_len(j->alg) ? EVP_PKEY_EC : EVP_PKEY_RSA;
    if (!pkey || EVP_PKEY_get_base_id(pkey) != want)
        goto out;
    if (want == EVP_PKEY_EC) {
        int n = jwt_es_der(j->sig, j->sig_len, &der);
        if (!n)
            goto out;
        sig = der;
        sig_len = (size_t)n;
    }
    ctx = EVP_MD_CTX_new();
    if (ctx && EVP_DigestVerifyInit(ctx, NULL, jwt_digest(j->alg), NULL, pkey) == 1 &&
        EVP_DigestVerify(ctx, sig, sig_len, (const unsigned char *)tok, j->signing_len) == 1)
        r = TG_AUTH_OK;
out:
    EVP_MD_CTX_free(ctx);
    OPENSSL_free(der);
    EVP_PKEY_free(pkey);
    BIO_free(bio);
    return r;
}

tg_auth_reason_e tg_auth_jwt_check_signature(const tg_auth_jwt_t *j, const char *tok,
                                             const tg_auth_key_t *key)
{
    /* The key decides the algorithm; the header only has to agree. */
    if (key->alg != j->alg || key->material_len == 0 || key->material_len > INT32_MAX ||
        !jwt_digest(j->alg))
        return TG_AUTH_ALG_NOT_ALLOWED;
    size_t es_len = tg_auth_alg_es_sig_len(j->alg);
    if (es_len && j->sig_len != es_len)
        return TG_AUTH_BAD_SIGNATURE;
    if (j->alg != TG_AUTH_ALG_HS256)
        return jwt_verify_pkey(j, tok, key);
    /* HMAC compared in constant time. */
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    if (!HMAC(EVP_sha256(), key->material, (int)key->material_len, (const unsigned char *)tok,
              j->signing_len, mac, &maclen) ||
        maclen != j->sig_len || CRYPTO_memcmp(mac, j->sig, maclen) != 0)
        return TG_AUTH_BAD_SIGNATURE;
    return TG_AUTH_OK;
}

/* A NumericDate claim: absent (0), a number (1, *v set), or wrong type (-1). */
static int claim_time(json_t *claims, const char *name, double *v)
{
    json_t *c = json_object_get(claims, name);
    if (!c)
        return 0;
    if (!json_is_number(c))
        return -1;
    *v = json_number_value(c);
    return 1;
}

static int audience_ok(json_t *aud, const tg_auth_jwt_policy_t *pol)
{
    if (json_is_string(aud)) {
        for (size_t k = 0; k < pol->n_audiences; k++)
            if (strcmp(json_string_value(aud), pol->audiences[k]) == 0)
                return 1;
        return 0;
    }
    if (!json_is_array(aud))
        return 0;
    size_t i;
    json_t *v;
    json_array_foreach(aud, i, v) {
        if (json_is_string(v) && audience_ok(v, pol))
            return 1;
    }
    return 0;
}

tg_auth_reason_e tg_auth_jwt_check_claims(json_t *claims, const tg_auth_jwt_policy_t *pol,
                                          time_t now)
{
    if (!json_is_object(claims))
        return TG_AUTH_BAD_CLAIMS;
    double t_now = (double)now;
    double leeway = pol->leeway_s > 0 ? pol->leeway_s : 0;
    double exp = 0, nbf = 0, iat = 0;

    /* exp is mandatory: a token that never expires cannot be revoked. */
    int has = claim_time(claims, "exp", &exp);
    if (has <= 0)
        return TG_AUTH_BAD_CLAIMS;
    if (t_now >= exp + leeway)
        return TG_AUTH_EXPIRED;
    has = claim_time(claims, "nbf", &nbf);
    if (has < 0)
        return TG_AUTH_BAD_CLAIMS;
    if (has && t_now + leeway < nbf)
        return TG_AUTH_NOT_YET_VALID;
    has = claim_time(claims, "iat", &iat);
    if (has < 0)
        return TG_AUTH_BAD_CLAIMS;
    if (has && iat > t_now + leeway)
        return TG_AUTH_NOT_YET_VALID; /* minted in the future: clock skew or forgery */
    /* A bounded lifetime, judged on what the token says (exp - iat) and on
     * what is left of it (exp - now): a token valid until 10^308 would
     * outlive every revocation. */
    if (pol->max_lifetime_s > 0) {
        double max = (double)pol->max_lifetime_s;
        if ((has && exp - iat > max) || exp - t_now > max + leeway)
            return TG_AUTH_LIFETIME;
    }

    const char *iss = json_string_value(json_object_get(claims, "iss"));
    if (!iss || !pol->issuer || strcmp(iss, pol->issuer) != 0)
        return TG_AUTH_WRONG_ISSUER;
    if (!audience_ok(json_object_get(claims, "aud"), pol))
        return TG_AUTH_WRONG_AUDIENCE;

    json_t *sub = json_object_get(claims, "sub");
    if (!json_is_string(sub) || json_string_length(sub) == 0 ||
        json_string_length(sub) > TG_AUTH_MAX_SUB)
        return TG_AUTH_BAD_CLAIMS;
    return TG_AUTH_OK;
}

tg_auth_reason_e tg_auth_jwt_verify(const tg_auth_keyset_t *ks, const tg_auth_jwt_policy_t *pol,
                                    const char *tok, size_t len, time_t now, json_t **claims)
{
    tg_auth_jwt_t j;
    const tg_auth_key_t *key = NULL;
    tg_auth_reason_e r;
    size_t max = pol->max_token_bytes ? pol->max_token_bytes : TG_AUTH_MAX_TOKEN_DEFAULT;

    *claims = NULL;
    memset(&j, 0, sizeof(j));
    if (!tok || len == 0)
        return TG_AUTH_MISSING;
    if (len > max)
        return TG_AUTH_TOO_LARGE;
    r = tg_auth_jwt_parse(tok, len, &j);
    if (r != TG_AUTH_OK)
        goto out;
    switch (tg_auth_keyset_lookup(ks, j.kid, j.alg, &key)) {
    case TG_AUTH_LOOKUP_FOUND:
        break;
    case TG_AUTH_LOOKUP_ALG_MISMATCH:
    case TG_AUTH_LOOKUP_NO_KEY_FOR_ALG:
        r = TG_AUTH_ALG_NOT_ALLOWED;
        goto out;
    case TG_AUTH_LOOKUP_UNKNOWN_KID:
    case TG_AUTH_LOOKUP_AMBIGUOUS:
    default:
        r = TG_AUTH_UNKNOWN_KEY;
        goto out;
    }
    r = tg_auth_jwt_check_signature(&j, tok, key);
    if (r != TG_AUTH_OK)
        goto out;
    r = tg_auth_jwt_check_claims(j.claims, pol, now);
    if (r != TG_AUTH_OK)
        goto out;
    *claims = json_incref(j.claims);
out:
    tg_auth_jwt_clean(&j);
    return r;
}
