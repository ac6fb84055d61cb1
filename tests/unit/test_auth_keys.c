/* gateway/auth building blocks: strict base64url, JWKS parsing rules, key
 * lookup, personal access tokens, principal extraction, config lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/base64.h"
#include "auth/jwt.h"
#include "auth/keys.h"
#include "auth/list.h"
#include "auth/pat.h"
#include "auth/principal.h"
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

/* ---- personal access tokens ---------------------------------------------- */

static void test_pat(void **state)
{
    (void)state;
    char a[TG_AUTH_PAT_BUFSIZE], b[TG_AUTH_PAT_BUFSIZE];
    assert_int_equal(tg_auth_pat_generate(a, sizeof(a)), TG_OK);
    assert_int_equal(tg_auth_pat_generate(b, sizeof(b)), TG_OK);
    assert_int_equal(strlen(a), TG_AUTH_PAT_LEN);
    assert_int_equal(strncmp(a, "tgp_", 4), 0);
    assert_string_not_equal(a, b);
    assert_true(tg_auth_pat_detect(a, strlen(a)));
    assert_true(tg_auth_pat_well_formed(a, strlen(a)));
    /* What the request path sees: a bearer value it must route to the DB. */
    const char *tok = NULL;
    size_t len = 0;
    char hdr[80];
    snprintf(hdr, sizeof(hdr), "Bearer %s", a);
    assert_int_equal(tg_auth_bearer_token(hdr, 0, &tok, &len), TG_AUTH_OK);
    assert_true(tg_auth_pat_detect(tok, len));

    assert_false(tg_auth_pat_detect("eyJhbGciOi", 10));
    assert_false(tg_auth_pat_detect("tgp", 3));
    assert_false(tg_auth_pat_detect(NULL, 0));
    assert_true(tg_auth_pat_detect("tgp_short", 9));
    assert_false(tg_auth_pat_well_formed("tgp_short", 9));
    char c[TG_AUTH_PAT_BUFSIZE];
    memcpy(c, a, sizeof(c));
    c[10] = '+';
    assert_false(tg_auth_pat_well_formed(c, strlen(c)));

    char small[10] = "x";
    assert_int_equal(tg_auth_pat_generate(small, sizeof(small)), TG_EINVAL);
    assert_string_equal(small, "");

    /* sha256("abc") */
    char h[TG_AUTH_PAT_HASH_BUFSIZE];
    assert_int_equal(tg_auth_pat_hash("abc", 3, h, sizeof(h)), TG_OK);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    char h2[TG_AUTH_PAT_HASH_BUFSIZE];
    assert_int_equal(tg_auth_pat_hash(a, strlen(a), h, sizeof(h)), TG_OK);
    assert_int_equal(tg_auth_pat_hash(a, strlen(a), h2, sizeof(h2)), TG_OK);
    assert_string_equal(h, h2);
    assert_int_equal(tg_auth_pat_hash(b, strlen(b), h2, sizeof(h2)), TG_OK);
    assert_string_not_equal(h, h2);
    assert_int_equal(tg_auth_pat_hash("abc", 3, h, 64), TG_EINVAL);
}

/* ---- principal ----------------------------------------------------------- */

static void test_principal_claims(void **state)
{
    (void)state;
    tg_auth_list_t admins, names;
    tg_auth_list_parse(&admins, "gpu-admins");
    tg_auth_list_parse(&names, "display_name, email");
    tg_principal_policy_t pol = {
        .groups_claim = "realm_access.roles", .name_claims = &names, .admin_groups = &admins};
    json_t *claims = json_loads("{\"sub\":\"u1\",\"email\":\"u1@example.test\","
                                "\"realm_access\":{\"roles\":[\"gpu-admins\",\"ml\"]}}",
                                0, NULL);
    tg_principal_t p;
    tg_principal_init(&p);
    assert_int_equal(tg_principal_from_claims(&p, claims, &pol), 0);
    assert_string_equal(p.subject, "u1");
    assert_string_equal(p.name, "u1@example.test"); /* display_name absent */
    assert_int_equal(p.n_groups, 2);
    assert_true(p.is_admin);
    tg_principal_clean(&p);
    json_decref(claims);

    /* A namespaced claim name with dots is found as a member first. */
    pol.groups_claim = "https://taugate.example/groups";
    claims = json_loads("{\"sub\":\"u2\",\"https://taugate.example/groups\":[\"ml\"]}", 0, NULL);
    assert_int_equal(tg_principal_from_claims(&p, claims, &pol), 0);
    assert_int_equal(p.n_groups, 1);
    assert_string_equal(p.groups[0], "ml");
    assert_false(p.is_admin);
    assert_string_equal(p.name, "u2");
    tg_principal_clean(&p);
    json_decref(claims);

    /* A lone string is not read as one group (issue #17): refused. */
    claims =
        json_loads("{\"sub\":\"u2\",\"https://taugate.example/groups\":\"gpu-admins\"}", 0, NULL);
    tg_principal_init(&p);
    assert_int_equal(tg_principal_from_claims(&p, claims, &pol), -1);
    tg_principal_clean(&p);
    json_decref(claims);

    /* Limits: too many, too long, empty. */
    json_t *arr = json_array();
    for (int i = 0; i < TG_PRINCIPAL_MAX_GROUPS + 20; i++) {
        char g[16];
        snprintf(g, sizeof(g), "g%d", i);
        json_array_append_new(arr, json_string(g));
    }
    char longg[TG_PRINCIPAL_MAX_GROUP_LEN + 2];
    memset(longg, 'x', sizeof(longg) - 1);
    longg[sizeof(longg) - 1] = '\0';
    json_array_insert_new(arr, 0, json_string(longg));
    json_array_insert_new(arr, 0, json_string(""));
    claims = json_pack("{s:s, s:o}", "sub", "u3", "groups", arr);
    pol.groups_claim = NULL; /* default "groups" */
    pol.name_claims = NULL;  /* default name list */
    tg_principal_init(&p);
    assert_int_equal(tg_principal_from_claims(&p, claims, &pol), 0);
    assert_int_equal(p.n_groups, TG_PRINCIPAL_MAX_GROUPS);
    assert_string_equal(p.groups[0], "g0");
    tg_principal_clean(&p);
    json_decref(claims);

    /* Groups claim absent: no groups; of another type, or with a member
     * that is not a string: refused. */
    claims = json_loads("{\"sub\":\"u4\",\"name\":\"U Four\"}", 0, NULL);
    tg_principal_init(&p);
    assert_int_equal(tg_principal_from_claims(&p, claims, &pol), 0);
    assert_int_equal(p.n_groups, 0);
    assert_string_equal(p.name, "U Four");
    tg_principal_clean(&p);
    json_decref(claims);
    static const char *const bad[] = {"{\"sub\":\"u4\",\"groups\":{\"a\":1}}",
                                      "{\"sub\":\"u4\",\"groups\":[\"a\",1]}",
                                      "{\"sub\":\"u4\",\"groups\":true}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        claims = json_loads(bad[i], 0, NULL);
        tg_principal_init(&p);
        assert_int_equal(tg_principal_from_claims(&p, claims, &pol), -1);
        tg_principal_clean(&p);
        json_decref(claims);
    }

    /* Admin by subject, applied to a PAT principal built by hand. */
    tg_auth_list_t subs;
    tg_auth_list_parse(&subs, "svc-ci, u5");
    tg_principal_init(&p);
    p.kind = TG_PRINCIPAL_PAT;
    p.subject = strdup("u5");
    tg_principal_apply_admin(&p, &admins, &subs);
    assert_true(p.is_admin);
    tg_principal_clean(&p);
    tg_principal_clean(NULL);
    tg_auth_list_clean(&subs);
    tg_auth_list_clean(&admins);
    tg_auth_list_clean(&names);
}

static void test_lists(void **state)
{
    (void)state;
    tg_auth_list_t l;
    tg_auth_list_parse(&l, " a ,b,,\tc\t, ");
    assert_int_equal(l.n, 3);
    assert_string_equal(l.v[0], "a");
    assert_string_equal(l.v[2], "c");
    assert_true(tg_auth_list_has(&l, "b"));
    assert_false(tg_auth_list_has(&l, "B"));
    assert_false(tg_auth_list_has(&l, NULL));
    tg_auth_list_clean(&l);
    tg_auth_list_parse(&l, NULL);
    assert_int_equal(l.n, 0);
    tg_auth_list_clean(&l);
    tg_auth_list_parse(&l, "");
    assert_int_equal(l.n, 0);
    tg_auth_list_clean(&l);
}

/* ---- header parsing ------------------------------------------------------ */

static void test_bearer_and_parse(void **state)
{
    (void)state;
    const char *tok;
    size_t len;
    assert_int_equal(tg_auth_bearer_token("Bearer abc.def.ghi", 0, &tok, &len), TG_AUTH_OK);
    assert_int_equal(len, 11);
    assert_memory_equal(tok, "abc.def.ghi", 11);
    assert_int_equal(tg_auth_bearer_token("bearer\tx", 0, &tok, &len), TG_AUTH_OK);
    assert_int_equal(tg_auth_bearer_token("Token x", 0, &tok, &len), TG_AUTH_MALFORMED);
    assert_int_equal(tg_auth_bearer_token("Bear", 0, &tok, &len), TG_AUTH_MALFORMED);
    assert_int_equal(tg_auth_bearer_token("Bearer a,b", 0, &tok, &len), TG_AUTH_MALFORMED);
    assert_int_equal(tg_auth_bearer_token("Bearer 12345678901", 10, &tok, &len), TG_AUTH_TOO_LARGE);
    assert_null(tok);
    assert_int_equal(tg_auth_bearer_token("Bearer 1234567890", 10, &tok, &len), TG_AUTH_OK);

    /* Parse without a key set: header problems surface before any lookup. */
    tg_auth_jwt_t j;
    char *t = tu_sign("{\"alg\":\"ES256\",\"kid\":\"k\"}", "{\"sub\":\"x\"}", "ES256", F.ec256);
    assert_int_equal(tg_auth_jwt_parse(t, strlen(t), &j), TG_AUTH_OK);
    assert_int_equal(j.alg, TG_AUTH_ALG_ES256);
    assert_string_equal(j.kid, "k");
    assert_int_equal(j.sig_len, 64);
    assert_int_equal(j.signing_len, (size_t)(strrchr(t, '.') - t));
    assert_true(json_is_object(j.claims));
    tg_auth_jwt_clean(&j);
    tg_auth_jwt_clean(NULL);
    free(t);

    /* Claims checks on their own. */
    const char *auds[] = {"svc"};
    tg_auth_jwt_policy_t pol = {
        .issuer = "iss", .audiences = auds, .n_audiences = 1, .leeway_s = 0};
    json_t *c = json_loads("{\"iss\":\"iss\",\"aud\":\"svc\",\"sub\":\"s\",\"exp\":100}", 0, NULL);
    assert_int_equal(tg_auth_jwt_check_claims(c, &pol, 99), TG_AUTH_OK);
    assert_int_equal(tg_auth_jwt_check_claims(c, &pol, 100), TG_AUTH_EXPIRED);
    pol.leeway_s = 5;
    assert_int_equal(tg_auth_jwt_check_claims(c, &pol, 104), TG_AUTH_OK);
    assert_int_equal(tg_auth_jwt_check_claims(c, &pol, 105), TG_AUTH_EXPIRED);
    json_decref(c);
    assert_int_equal(tg_auth_jwt_check_claims(NULL, &pol, 0), TG_AUTH_BAD_CLAIMS);
    /* A sub longer than the limit. */
    char longsub[TG_AUTH_MAX_SUB + 2];
    memset(longsub, 's', sizeof(longsub) - 1);
    longsub[sizeof(longsub) - 1] = '\0';
    c = json_pack("{s:s, s:s, s:s, s:i}", "iss", "iss", "aud", "svc", "sub", longsub, "exp", 100);
    assert_int_equal(tg_auth_jwt_check_claims(c, &pol, 0), TG_AUTH_BAD_CLAIMS);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jwks_pinning_and_skips),
        cmocka_unit_test(test_jwks_refusals),
        cmocka_unit_test(test_alg_names),
        cmocka_unit_test(test_pat),
        cmocka_unit_test(test_principal_claims),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_bearer_and_parse),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
