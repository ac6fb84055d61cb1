/* auth/keys: JWKS and PEM parsing rules, key pinning and lookup, algorithm
 * names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/base64.h"
#include "auth/jwt.h"
#include "auth/keys.h"
#include "core/log.h"
#include "test_auth_util.h"

static struct {
    EVP_PKEY *rsa1, *rsa1024, *ec256, *ec384;
} F;

static int group_setup(void **state)
{
    (void)state;
    if (!getenv("TG_TEST_LOG"))
        tg_log_set_level(TG_LOG_OFF);
    F.rsa1 = tu_key("rsa1.key");
    F.rsa1024 = tu_key("rsa1024.key");
    F.ec256 = tu_key("ec256.key");
    F.ec384 = tu_key("ec384.key");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    EVP_PKEY_free(F.rsa1);
    EVP_PKEY_free(F.rsa1024);
    EVP_PKEY_free(F.ec256);
    EVP_PKEY_free(F.ec384);
    return 0;
}

/* ---- key sets ------------------------------------------------------------ */

static tg_rc_e add_jwks(tg_auth_keyset_t *ks, const char *text)
{
    char err[256] = "";
    return tg_auth_keyset_add_jwks(ks, text, strlen(text), "test", err, sizeof(err));
}

static void test_jwks_pinning_and_skips(void **state)
{
    (void)state;
    json_t *enc = tu_jwk(F.rsa1, "enc-key", NULL);
    json_object_set_new(enc, "use", json_string("enc"));
    json_t *ops = tu_jwk(F.rsa1, "wrap-only", NULL);
    json_object_set_new(ops, "key_ops", json_pack("[s]", "wrapKey"));
    json_t *mismatch = tu_jwk(F.ec256, "ec-as-384", "ES384");
    json_t *small = tu_jwk(F.rsa1024, "rsa-1024", NULL);
    json_t *rsa_es = tu_jwk(F.rsa1, "rsa-es", "ES256");
    json_t *ps = tu_jwk(F.rsa1, "rsa-ps", "PS256");
    json_t *hs = tu_jwk(F.rsa1, "rsa-hs", "HS256");
    json_t *oct = json_pack("{s:s, s:s, s:s}", "kty", "oct", "kid", "sym", "k", "c2VjcmV0");
    json_t *bad_n =
        json_pack("{s:s, s:s, s:s, s:s}", "kty", "RSA", "kid", "bad-n", "n", "!!", "e", "AQAB");
    json_t *short_x = tu_jwk(F.ec256, "short-x", NULL);
    json_object_set_new(short_x, "x", json_string("AQAB"));
    json_t *p521 = json_pack("{s:s, s:s, s:s, s:s, s:s}", "kty", "EC", "kid", "p521", "crv",
                             "P-521", "x", "AA", "y", "AA");
    json_t *numkid = tu_jwk(F.rsa1, NULL, NULL);
    json_object_set_new(numkid, "kid", json_integer(5));
    char *text = tu_jwks(tu_jwk(F.rsa1, "rsa", NULL), tu_jwk(F.ec256, "ec", NULL),
                         tu_jwk(F.ec384, "ec384", NULL), tu_jwk(F.rsa1, "rsa-512", "RS512"), enc,
                         ops, mismatch, small, rsa_es, ps, hs, oct, bad_n, short_x, p521, numkid,
                         json_string("not an object"), NULL);
    tg_auth_keyset_t *ks = tg_auth_keyset_new();
    assert_int_equal(add_jwks(ks, text), TG_OK);
    free(text);

    /* Only the four usable keys, each pinned. */
    assert_int_equal(tg_auth_keyset_count(ks), 4);
    const tg_auth_key_t *k = NULL;
    assert_int_equal(tg_auth_keyset_lookup(ks, "rsa", TG_AUTH_ALG_RS256, &k), TG_AUTH_LOOKUP_FOUND);
    assert_string_equal(k->source, "test");
    assert_non_null(strstr((const char *)k->material, "BEGIN PUBLIC KEY"));
    assert_int_equal(tg_auth_keyset_lookup(ks, "rsa", TG_AUTH_ALG_RS512, &k),
                     TG_AUTH_LOOKUP_ALG_MISMATCH);
    assert_null(k);
    assert_int_equal(tg_auth_keyset_lookup(ks, "ec", TG_AUTH_ALG_ES256, &k), TG_AUTH_LOOKUP_FOUND);
    assert_int_equal(tg_auth_keyset_lookup(ks, "ec384", TG_AUTH_ALG_ES384, &k),
                     TG_AUTH_LOOKUP_FOUND);
    assert_int_equal(tg_auth_keyset_lookup(ks, "rsa-512", TG_AUTH_ALG_RS512, &k),
                     TG_AUTH_LOOKUP_FOUND);
    assert_int_equal(tg_auth_keyset_lookup(ks, "enc-key", TG_AUTH_ALG_RS256, &k),
                     TG_AUTH_LOOKUP_UNKNOWN_KID);
    assert_int_equal(tg_auth_keyset_lookup(ks, "sym", TG_AUTH_ALG_HS256, &k),
                     TG_AUTH_LOOKUP_UNKNOWN_KID);
    /* Without a kid: one key per alg here, so unambiguous... */
    assert_int_equal(tg_auth_keyset_lookup(ks, NULL, TG_AUTH_ALG_ES256, &k), TG_AUTH_LOOKUP_FOUND);
    assert_string_equal(k->kid, "ec");
    assert_int_equal(tg_auth_keyset_lookup(ks, NULL, TG_AUTH_ALG_HS256, &k),
                     TG_AUTH_LOOKUP_NO_KEY_FOR_ALG);
    /* An empty set cannot judge an alg: the key is just unknown (refetch). */
    tg_auth_keyset_t *empty = tg_auth_keyset_new();
    assert_int_equal(tg_auth_keyset_lookup(empty, NULL, TG_AUTH_ALG_RS256, &k),
                     TG_AUTH_LOOKUP_UNKNOWN_KID);
    tg_auth_keyset_unref(empty);
    /* ...until a second RS256 key arrives. */
    char err[256];
    char *pem = tu_read(TU_FIX "/rsa1.pub", NULL);
    assert_int_equal(tg_auth_keyset_add_pem(ks, pem, strlen(pem), TG_AUTH_ALG_RS256, NULL, "pem",
                                            err, sizeof(err)),
                     TG_OK);
    assert_int_equal(tg_auth_keyset_lookup(ks, NULL, TG_AUTH_ALG_RS256, &k),
                     TG_AUTH_LOOKUP_AMBIGUOUS);
    /* Duplicate kids are refused. */
    assert_int_equal(tg_auth_keyset_add_pem(ks, pem, strlen(pem), TG_AUTH_ALG_RS256, "rsa", "pem",
                                            err, sizeof(err)),
                     TG_EINVAL);
    assert_non_null(strstr(err, "duplicate"));
    free(pem);

    /* Merging: kids already present are skipped, the rest copied. */
    tg_auth_keyset_t *other = tg_auth_keyset_new();
    text = tu_jwks(tu_jwk(F.ec256, "ec", NULL), tu_jwk(F.ec256, "ec-new", NULL), NULL);
    assert_int_equal(add_jwks(other, text), TG_OK);
    free(text);
    size_t skipped = 0;
    size_t before = tg_auth_keyset_count(ks);
    tg_auth_keyset_add_all(ks, other, &skipped);
    assert_int_equal(skipped, 1);
    assert_int_equal(tg_auth_keyset_count(ks), before + 1);
    tg_auth_keyset_unref(other);

    /* References. */
    assert_ptr_equal(tg_auth_keyset_ref(ks), ks);
    tg_auth_keyset_unref(ks);
    assert_int_equal(tg_auth_keyset_count(ks), before + 1);
    tg_auth_keyset_unref(ks);
    tg_auth_keyset_unref(NULL);
    assert_null(tg_auth_keyset_ref(NULL));
}

static void test_jwks_refusals(void **state)
{
    (void)state;
    const char *bad[] = {
        "",
        "[]",
        "{}",
        "{\"keys\":{}}",
        "{\"keys\":[]}",
        "{\"keys\":[1,2]}",
        "{\"keys\":[],\"keys\":[]}",
        "not json",
        "{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\"}]}",
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(bad); i++) {
        tg_auth_keyset_t *ks = tg_auth_keyset_new();
        assert_int_equal(add_jwks(ks, bad[i]), TG_EINVAL);
        tg_auth_keyset_unref(ks);
    }
    /* Two usable keys under one kid. */
    char *text = tu_jwks(tu_jwk(F.rsa1, "same", NULL), tu_jwk(F.ec256, "same", NULL), NULL);
    tg_auth_keyset_t *ks = tg_auth_keyset_new();
    char err[256] = "";
    assert_int_equal(tg_auth_keyset_add_jwks(ks, text, strlen(text), "t", err, sizeof(err)),
                     TG_EINVAL);
    assert_non_null(strstr(err, "duplicate"));
    tg_auth_keyset_unref(ks);
    free(text);

    /* RSA with e = 1 (where every "signature" verifies) and an even modulus. */
    json_t *e1 = tu_jwk(F.rsa1, "e1", NULL);
    json_object_set_new(e1, "e", json_string("AQ"));
    text = tu_jwks(e1, NULL);
    ks = tg_auth_keyset_new();
    assert_int_equal(add_jwks(ks, text), TG_EINVAL);
    tg_auth_keyset_unref(ks);
    free(text);

    /* An off-curve EC point: flip a bit of y. */
    json_t *j = tu_jwk(F.ec256, "off", NULL);
    const char *y = json_string_value(json_object_get(j, "y"));
    char *y2 = strdup(y);
    y2[5] = y2[5] == 'A' ? 'B' : 'A';
    json_object_set_new(j, "y", json_string(y2));
    free(y2);
    text = tu_jwks(j, NULL);
    ks = tg_auth_keyset_new();
    assert_int_equal(add_jwks(ks, text), TG_EINVAL);
    tg_auth_keyset_unref(ks);
    free(text);

    /* Files: missing, too large, a directory. */
    ks = tg_auth_keyset_new();
    assert_int_equal(tg_auth_keyset_add_jwks_file(ks, "/nonexistent", err, sizeof(err)),
                     TG_ENOTFOUND);
    assert_int_not_equal(tg_auth_keyset_add_jwks_file(ks, "/tmp", err, sizeof(err)), TG_OK);
    assert_int_equal(tg_auth_keyset_add_pem_file(ks, TU_FIX "/README.md", TG_AUTH_ALG_RS256, NULL,
                                                 err, sizeof(err)),
                     TG_EINVAL);
    assert_int_equal(tg_auth_keyset_add_pem_file(ks, TU_FIX "/rsa1024.key", TG_AUTH_ALG_RS256, NULL,
                                                 err, sizeof(err)),
                     TG_EINVAL); /* a private key file is not a public key */
    assert_int_equal(tg_auth_keyset_add_hs256(ks, "short", 5, NULL, err, sizeof(err)), TG_EINVAL);
    assert_int_equal(tg_auth_keyset_count(ks), 0);
    tg_auth_keyset_unref(ks);

    char *big = NULL;
    size_t blen = 0;
    assert_int_equal(tg_auth_read_file(TU_FIX "/rsa1.key", 100, &big, &blen, err, sizeof(err)),
                     TG_ETOOLARGE);
    assert_null(big);
}

static void test_alg_names(void **state)
{
    (void)state;
    assert_int_equal(tg_auth_alg_parse("RS256"), TG_AUTH_ALG_RS256);
    assert_int_equal(tg_auth_alg_parse("ES384"), TG_AUTH_ALG_ES384);
    assert_int_equal(tg_auth_alg_parse("HS256"), TG_AUTH_ALG_HS256);
    const char *bad[] = {"none",  "None",  "rs256",   "RS256 ", "HS384",
                         "ES512", "PS256", "invalid", ""};
    for (size_t i = 0; i < TG_ARRAY_LEN(bad); i++)
        assert_int_equal(tg_auth_alg_parse(bad[i]), TG_AUTH_ALG_INVALID);
    assert_int_equal(tg_auth_alg_parse(NULL), TG_AUTH_ALG_INVALID);
    assert_string_equal(tg_auth_alg_name(TG_AUTH_ALG_ES256), "ES256");
    assert_string_equal(tg_auth_alg_name(TG_AUTH_ALG_COUNT), "invalid");
    assert_int_equal(tg_auth_alg_es_sig_len(TG_AUTH_ALG_ES256), 64);
    assert_int_equal(tg_auth_alg_es_sig_len(TG_AUTH_ALG_ES384), 96);
    assert_int_equal(tg_auth_alg_es_sig_len(TG_AUTH_ALG_RS256), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jwks_pinning_and_skips),
        cmocka_unit_test(test_jwks_refusals),
        cmocka_unit_test(test_alg_names),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
