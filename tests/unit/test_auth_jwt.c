/* JWT verification: the attack suite and the accepted cases.
 *
 * Every token is built byte for byte here (header text included) and signed
 * with OpenSSL, so the tests do not depend on what libjwt's encoder would
 * allow; the verifier under test is tg_auth_verify on a real tg_auth_t with
 * a JWKS file. Keys are fixtures in tests/fixtures/auth. */
#include "test_auth_suite.h"

/* ---- accepted ------------------------------------------------------------ */

static void test_accept_rs256(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    tg_principal_t p;
    assert_int_equal(check_on(F.auth, t, F.now, &p), TG_AUTH_OK);
    assert_string_equal(p.subject, "alice");
    assert_string_equal(p.issuer, ISS);
    assert_int_equal(p.kind, TG_PRINCIPAL_JWT);
    assert_int_equal(p.expires_at, F.now + 600);
    assert_false(p.is_admin);
    tg_principal_clean(&p);
    free(t);
    free(c);
}

static void test_accept_es256(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    char *t = token(F.ec256, "ES256", "ec-1", c);
    assert_int_equal(check(t), TG_AUTH_OK);
    free(t);
    free(c);
}

static void test_accept_es384_rs512(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    char *t = token(F.ec384, "ES384", "ec-384", c);
    assert_int_equal(check(t), TG_AUTH_OK);
    free(t);
    t = token(F.rsa2, "RS512", "rsa-512", c);
    assert_int_equal(check(t), TG_AUTH_OK);
    free(t);
    free(c);
}

static void test_accept_within_leeway(void **state)
{
    (void)state;
    /* exp 30 s ago, nbf and iat 30 s ahead: all inside the 60 s default. */
    char extra[128];
    snprintf(extra, sizeof(extra), "{\"nbf\":%ld}", (long)F.now + 30);
    char *c = tu_claims(ISS, AUD, "alice", F.now + 30, F.now - 30, extra);
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_OK);
    /* ...and one second past it on each side. */
    assert_int_equal(check_on(F.auth, t, F.now + 31, NULL), TG_AUTH_EXPIRED);
    free(t);
    free(c);
    snprintf(extra, sizeof(extra), "{\"nbf\":%ld}", (long)F.now + 61);
    c = tu_claims(ISS, AUD, "alice", 0, F.now + 600, extra);
    t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_NOT_YET_VALID);
    free(t);
    free(c);
}

static void test_accept_aud_array_and_real_numbers(void **state)
{
    (void)state;
    char extra[200];
    /* aud as an array naming our second configured audience; exp as a real. */
    snprintf(extra, sizeof(extra), "{\"aud\":[\"other\",\"taugate-cli\"],\"exp\":%ld.5}",
             (long)F.now + 100);
    char *c = tu_claims(ISS, NULL, "alice", F.now, 0, extra);
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_OK);
    free(t);
    free(c);
}

static void test_accept_far_future_exp(void **state)
{
    (void)state;
    /* Valid JSON, far past time_t: accepted, and expires_at stays sane. */
    char *c = tu_claims(ISS, AUD, "alice", F.now, 0, "{\"exp\":1e300}");
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    tg_principal_t p;
    assert_int_equal(check_on(F.auth, t, F.now, &p), TG_AUTH_OK);
    assert_true(p.expires_at > F.now);
    tg_principal_clean(&p);
    free(t);
    free(c);
}

/* RFC 9068 access tokens (typ at+jwt, which several identity providers
 * issue) verify with every algorithm, as plain JWTs do (issue #17). */
static void test_accept_at_jwt(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    static const struct {
        const char *typ, *alg, *kid;
    } cases[] = {
        {"at+jwt", "RS256", "rsa-1"},          {"application/at+jwt", "ES256", "ec-1"},
        {"AT+JWT", "ES384", "ec-384"},         {"at+jwt", "RS512", "rsa-512"},
        {"application/jwt", "RS256", "rsa-1"},
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(cases); i++) {
        EVP_PKEY *k = !strcmp(cases[i].kid, "rsa-1")    ? F.rsa1
                      : !strcmp(cases[i].kid, "ec-1")   ? F.ec256
                      : !strcmp(cases[i].kid, "ec-384") ? F.ec384
                                                        : F.rsa2;
        char hdr[160];
        snprintf(hdr, sizeof(hdr), "{\"alg\":\"%s\",\"typ\":\"%s\",\"kid\":\"%s\"}", cases[i].alg,
                 cases[i].typ, cases[i].kid);
        char *t = tu_sign(hdr, c, cases[i].alg, k);
        if (check(t) != TG_AUTH_OK)
            fail_msg("typ %s with %s refused", cases[i].typ, cases[i].alg);
        /* and the signature still has to be right */
        t[strlen(t) - 2] = t[strlen(t) - 2] == 'A' ? 'B' : 'A';
        assert_int_equal(check(t), TG_AUTH_BAD_SIGNATURE);
        free(t);
    }
    free(c);
}

/* A configured maximum lifetime bounds exp - iat and exp - now. */
static void test_max_lifetime(void **state)
{
    (void)state;
    tg_auth_config_t cfg;
    base_config(&cfg);
    cfg.jwks_file = F.jwks_path;
    cfg.max_lifetime_s = 3600;
    char err[256] = "";
    tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
    assert_non_null(a);
    static const struct {
        long iat, exp; /* relative to now; iat 1 means absent */
        const char *exp_text;
        tg_auth_reason_e want;
    } cases[] = {
        {0, 3600, NULL, TG_AUTH_OK},
        {-600, 3000, NULL, TG_AUTH_OK},
        {0, 3601, NULL, TG_AUTH_LIFETIME},      /* exp - iat */
        {-7200, 600, NULL, TG_AUTH_LIFETIME},   /* minted long-lived, used late */
        {1, 3600 + 60, NULL, TG_AUTH_OK},       /* no iat: exp - now, with leeway */
        {1, 3600 + 61, NULL, TG_AUTH_LIFETIME}, /* no iat: one second past it */
        {0, 0, "1e308", TG_AUTH_LIFETIME},      /* issue #17 */
        {1, 0, "1e308", TG_AUTH_LIFETIME},
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(cases); i++) {
        char extra[128] = "";
        if (cases[i].exp_text)
            snprintf(extra, sizeof(extra), "{\"exp\":%s}", cases[i].exp_text);
        char *c = tu_claims(ISS, AUD, "alice", cases[i].iat == 1 ? 0 : F.now + cases[i].iat,
                            cases[i].exp_text ? 0 : F.now + cases[i].exp, extra[0] ? extra : NULL);
        char *t = token(F.rsa1, "RS256", "rsa-1", c);
        tg_auth_reason_e r = check_on(a, t, F.now, NULL);
        if (r != cases[i].want)
            fail_msg("case %zu: %s, want %s", i, tg_auth_reason_str(r),
                     tg_auth_reason_str(cases[i].want));
        /* the verified-token cache must not let it through the second time */
        assert_int_equal(check_on(a, t, F.now, NULL), cases[i].want);
        free(t);
        free(c);
    }
    assert_string_equal(tg_auth_reason_str(TG_AUTH_LIFETIME), "lifetime");
    assert_non_null(strstr(tg_auth_www_authenticate(TG_AUTH_LIFETIME), "invalid_token"));
    tg_auth_free(a);
}

/* groups must be an array of strings: a lone string is not one group. */
static void test_reject_groups_not_an_array_of_strings(void **state)
{
    (void)state;
    static const char *const extra[] = {"{\"groups\":\"platform-admins\"}",
                                        "{\"groups\":[\"ml\",7]}", "{\"groups\":{}}"};
    for (size_t i = 0; i < TG_ARRAY_LEN(extra); i++) {
        char *c = good_claims(extra[i]);
        char *t = token(F.rsa1, "RS256", "rsa-1", c);
        assert_int_equal(check(t), TG_AUTH_BAD_CLAIMS);
        free(t);
        free(c);
    }
}

static void test_accept_principal_fields(void **state)
{
    (void)state;
    char *c = good_claims("{\"groups\":[\"ml\",\"platform-admins\",\"ml\"],"
                          "\"preferred_username\":\"alice.s\",\"email\":\"alice@example.test\"}");
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    tg_principal_t p;
    assert_int_equal(check_on(F.auth, t, F.now, &p), TG_AUTH_OK);
    assert_string_equal(p.name, "alice.s");
    assert_string_equal(p.email, "alice@example.test");
    assert_int_equal(p.n_groups, 2); /* the duplicate dropped */
    assert_true(tg_principal_in_group(&p, "ml"));
    assert_true(p.is_admin);
    tg_principal_clean(&p);
    assert_null(p.subject); /* clean leaves it initialised */
    tg_principal_clean(&p); /* and a second clean is harmless */
    free(t);
    free(c);

    /* Admin by subject; name falls back to the subject. */
    c = tu_claims(ISS, AUD, "root-sub", F.now, F.now + 600, NULL);
    t = token(F.ec256, "ES256", "ec-1", c);
    assert_int_equal(check_on(F.auth, t, F.now, &p), TG_AUTH_OK);
    assert_true(p.is_admin);
    assert_string_equal(p.name, "root-sub");
    assert_null(p.email);
    tg_principal_clean(&p);
    free(t);
    free(c);
}

/* ---- rejected ------------------------------------------------------------ */

static void test_reject_missing(void **state)
{
    (void)state;
    tg_principal_t p;
    tg_auth_reason_e r;
    assert_int_equal(tg_auth_verify(F.auth, NULL, F.now, &p, &r), TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_MISSING);
    assert_int_equal(tg_auth_verify(F.auth, "", F.now, &p, &r), TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_MISSING);
    assert_int_equal(tg_auth_verify(F.auth, "   ", F.now, &p, &r), TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_MISSING);
    assert_int_equal(tg_auth_verify(F.auth, "Bearer", F.now, &p, &r), TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_MISSING);
    assert_int_equal(tg_auth_verify(F.auth, "Bearer   ", F.now, &p, &r), TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_MISSING);
    /* Another scheme is not a bearer token. */
    assert_int_equal(tg_auth_verify(F.auth, "Basic dXNlcjpwYXNz", F.now, &p, &r), TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_MALFORMED);
    /* reason may be NULL */
    assert_int_equal(tg_auth_verify(F.auth, NULL, F.now, &p, NULL), TG_EUNAUTH);
    tg_principal_clean(&p);
}

static void test_reject_alg_none(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    const char *headers[] = {
        "{\"alg\":\"none\",\"typ\":\"JWT\"}",
        "{\"alg\":\"none\",\"kid\":\"rsa-1\"}",
        "{\"alg\":\"None\"}",
        "{\"alg\":\"NONE\"}",
        "{\"alg\":\"nOnE\",\"kid\":\"ec-1\"}",
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(headers); i++) {
        char *t = tu_sign(headers[i], c, "", NULL); /* empty signature */
        assert_int_equal(check(t), TG_AUTH_ALG_NOT_ALLOWED);
        free(t);
        /* ...and with a signature tacked on anyway. */
        t = tu_sign(headers[i], c, "RS256", F.rsa1);
        assert_int_equal(check(t), TG_AUTH_ALG_NOT_ALLOWED);
        free(t);
    }
    free(c);
}

static void test_reject_hs256_confusion(void **state)
{
    (void)state;
    /* The classic: HMAC the token with the RSA public key's PEM text, which
     * a naive verifier would hand to HMAC as the "key" for kid rsa-1. */
    char *c = good_claims(NULL);
    const char *headers[] = {
        "{\"alg\":\"HS256\",\"typ\":\"JWT\",\"kid\":\"rsa-1\"}",
        "{\"alg\":\"HS256\",\"typ\":\"JWT\"}",
        "{\"alg\":\"HS384\",\"kid\":\"rsa-1\"}",
        "{\"alg\":\"HS512\"}",
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(headers); i++) {
        const char *alg = strstr(headers[i], "HS512")   ? "HS512"
                          : strstr(headers[i], "HS384") ? "HS384"
                                                        : "HS256";
        char *t = tu_sign_ex(headers[i], c, alg, NULL, F.rsa1_pub, strlen(F.rsa1_pub), 0);
        assert_int_equal(check(t), TG_AUTH_ALG_NOT_ALLOWED);
        free(t);
    }
    /* The same with the key's DER bytes as the secret. */
    unsigned char *der = NULL;
    int der_len = i2d_PUBKEY(F.rsa1, &der);
    assert_true(der_len > 0);
    char *t = tu_sign_ex(headers[0], c, "HS256", NULL, der, (size_t)der_len, 0);
    assert_int_equal(check(t), TG_AUTH_ALG_NOT_ALLOWED);
    free(t);
    OPENSSL_free(der);
    free(c);
}

static void test_reject_expired(void **state)
{
    (void)state;
    char *c = tu_claims(ISS, AUD, "alice", F.now - 3600, F.now - 120, NULL);
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_EXPIRED);
    free(t);
    free(c);
    /* Exactly at exp + leeway is already too late. */
    c = tu_claims(ISS, AUD, "alice", 0, F.now - 60, NULL);
    t = token(F.ec256, "ES256", "ec-1", c);
    assert_int_equal(check(t), TG_AUTH_EXPIRED);
    free(t);
    free(c);
}

static void test_reject_not_yet_valid(void **state)
{
    (void)state;
    char extra[64];
    snprintf(extra, sizeof(extra), "{\"nbf\":%ld}", (long)F.now + 300);
    char *c = tu_claims(ISS, AUD, "alice", F.now, F.now + 900, extra);
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_NOT_YET_VALID);
    assert_int_equal(check_on(F.auth, t, F.now + 300, NULL), TG_AUTH_OK);
    free(t);
    free(c);
    /* Issued in the future. */
    c = tu_claims(ISS, AUD, "alice", F.now + 300, F.now + 900, NULL);
    t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_NOT_YET_VALID);
    free(t);
    free(c);
}

static void test_reject_wrong_issuer(void **state)
{
    (void)state;
    const char *bad[] = {"https://evil.example.test/realms/gpu", ISS "/", "", NULL};
    for (size_t i = 0; i < TG_ARRAY_LEN(bad); i++) {
        char *c = tu_claims(bad[i], AUD, "alice", F.now, F.now + 600, NULL);
        char *t = token(F.rsa1, "RS256", "rsa-1", c);
        assert_int_equal(check(t), TG_AUTH_WRONG_ISSUER);
        free(t);
        free(c);
    }
    char *c = good_claims("{\"iss\":42}");
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_WRONG_ISSUER);
    free(t);
    free(c);
}

static void test_reject_wrong_audience(void **state)
{
    (void)state;
    const char *extras[] = {
        "{\"aud\":\"another-service\"}",
        "{\"aud\":\"TAUGATE\"}",
        "{\"aud\":[\"a\",\"b\"]}",
        "{\"aud\":[]}",
        "{\"aud\":[7]}",
        "{\"aud\":{\"taugate\":true}}",
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(extras); i++) {
        char *c = good_claims(extras[i]);
        char *t = token(F.rsa1, "RS256", "rsa-1", c);
        assert_int_equal(check(t), TG_AUTH_WRONG_AUDIENCE);
        free(t);
        free(c);
    }
    char *c = tu_claims(ISS, NULL, "alice", F.now, F.now + 600, NULL);
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_WRONG_AUDIENCE);
    free(t);
    free(c);
}

/* Replace the character at `pos` with a different alphabet character that
 * keeps the base64url canonical. */
static void flip_char(char *t, size_t pos)
{
    t[pos] = t[pos] == 'A' ? 'Q' : 'A';
}

static void test_reject_bad_signature(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    /* Signed by a key that is not rsa-1, but claiming to be. */
    char *t = token(F.attacker, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_BAD_SIGNATURE);
    free(t);
    t = token(F.ec256b, "ES256", "ec-1", c);
    assert_int_equal(check(t), TG_AUTH_BAD_SIGNATURE);
    free(t);

    /* A flipped signature byte. */
    t = token(F.rsa1, "RS256", "rsa-1", c);
    flip_char(t, strrchr(t, '.') - t + 10);
    assert_int_equal(check(t), TG_AUTH_BAD_SIGNATURE);
    free(t);
    t = token(F.ec256, "ES256", "ec-1", c);
    flip_char(t, strrchr(t, '.') - t + 10);
    assert_int_equal(check(t), TG_AUTH_BAD_SIGNATURE);
    free(t);

    /* A payload swapped under a valid signature (sub alice → mallory). */
    char *good = token(F.rsa1, "RS256", "rsa-1", c);
    char *c2 = tu_claims(ISS, AUD, "mallory", F.now, F.now + 600, NULL);
    char *other = token(F.rsa1, "RS256", "rsa-1", c2);
    char forged[4096];
    const char *g_dot2 = strrchr(good, '.');
    const char *o_dot1 = strchr(other, '.');
    const char *o_dot2 = strrchr(other, '.');
    snprintf(forged, sizeof(forged), "%.*s%.*s%s", (int)(o_dot1 - other), other,
             (int)(o_dot2 - o_dot1), o_dot1, g_dot2);
    assert_int_equal(check(forged), TG_AUTH_BAD_SIGNATURE);
    free(good);
    free(other);
    free(c2);
    free(c);
}

static void test_reject_unknown_kid(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    char *t = token(F.attacker, "RS256", "attacker-key", c);
    assert_int_equal(check(t), TG_AUTH_UNKNOWN_KEY);
    free(t);
    /* A kid that only differs in case. */
    t = token(F.rsa1, "RS256", "RSA-1", c);
    assert_int_equal(check(t), TG_AUTH_UNKNOWN_KEY);
    free(t);
    /* No kid and two keys pinned to ES256? Here only one is, so use RS256,
     * for which rsa-1 is the only RS256 key: accepted without a kid. */
    t = token(F.rsa1, "RS256", NULL, c);
    assert_int_equal(check(t), TG_AUTH_OK);
    free(t);
    free(c);
}

static void test_reject_truncated(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    size_t len = strlen(t);
    char *cut = malloc(len + 1);
    /* No prefix of a valid token is valid. */
    for (size_t n = 0; n < len; n++) {
        memcpy(cut, t, n);
        cut[n] = '\0';
        tg_principal_t p;
        tg_auth_reason_e r;
        char *h = tu_bearer(cut);
        assert_int_equal(tg_auth_verify(F.auth, h, F.now, &p, &r), TG_EUNAUTH);
        assert_true(r == TG_AUTH_MALFORMED || r == TG_AUTH_BAD_SIGNATURE || r == TG_AUTH_MISSING);
        tg_principal_clean(&p);
        free(h);
    }
    /* The typical shapes: signature dropped, empty, or missing its tail. */
    size_t dot2 = (size_t)(strrchr(t, '.') - t);
    memcpy(cut, t, dot2);
    cut[dot2] = '\0';
    assert_int_equal(check(cut), TG_AUTH_MALFORMED);
    cut[dot2] = '.';
    cut[dot2 + 1] = '\0';
    assert_int_equal(check(cut), TG_AUTH_MALFORMED);
    /* 342 base64url characters carry a 256-byte RSA signature; 340 decode to
     * 255 bytes, a wrong-length signature. */
    assert_int_equal(len - dot2 - 1, 342);
    memcpy(cut, t, len - 2);
    cut[len - 2] = '\0';
    tg_auth_reason_e r = check(cut);
    assert_true(r == TG_AUTH_BAD_SIGNATURE || r == TG_AUTH_MALFORMED);
    free(cut);
    free(t);
    free(c);
}

static void test_reject_oversized(void **state)
{
    (void)state;
    /* A signed, otherwise valid token just over 8 KiB. */
    char *pad = malloc(8200);
    memset(pad, 'x', 8199);
    pad[8199] = '\0';
    char *extra = malloc(8300);
    snprintf(extra, 8300, "{\"pad\":\"%s\"}", pad);
    char *c = good_claims(extra);
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_true(strlen(t) > 8192);
    assert_int_equal(check(t), TG_AUTH_TOO_LARGE);
    free(t);
    free(c);
    free(extra);
    free(pad);

    /* A megabyte of header is refused without being scanned to the end. */
    size_t big = 1 << 20;
    char *h = malloc(big + 1);
    memcpy(h, "Bearer ", 7);
    memset(h + 7, 'A', big - 7);
    h[big] = '\0';
    tg_principal_t p;
    tg_auth_reason_e r;
    assert_int_equal(tg_auth_verify(F.auth, h, F.now, &p, &r), TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_TOO_LARGE);
    free(h);

    /* A smaller configured limit applies to ordinary tokens too. */
    tg_auth_config_t cfg;
    base_config(&cfg);
    cfg.jwks_file = F.jwks_path;
    cfg.max_token_bytes = 400;
    char err[256];
    tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
    assert_non_null(a);
    c = good_claims(NULL);
    t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_TOO_LARGE);
    free(t);
    t = token(F.ec256, "ES256", "ec-1", c);
    assert_true(strlen(t) <= 400);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_OK);
    free(t);
    free(c);
    tg_auth_free(a);
}

static void test_reject_alg_mismatch_pinned(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    /* RS256 header naming the ES256-pinned key. */
    char *t = token(F.rsa1, "RS256", "ec-1", c);
    assert_int_equal(check(t), TG_AUTH_ALG_NOT_ALLOWED);
    free(t);
    /* ES384 header naming the ES256 key, and ES256 naming the ES384 key. */
    t = token(F.ec384, "ES384", "ec-1", c);
    assert_int_equal(check(t), TG_AUTH_ALG_NOT_ALLOWED);
    free(t);
    t = token(F.ec256, "ES256", "ec-384", c);
    assert_int_equal(check(t), TG_AUTH_ALG_NOT_ALLOWED);
    free(t);
    /* RS384 against the RS256-pinned rsa-1 (same key, other hash). */
    t = token(F.rsa1, "RS384", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_ALG_NOT_ALLOWED);
    free(t);
    /* Algorithms we never accept. */
    const char *unsupported[] = {"PS256", "ES512", "EdDSA", "HS384", "RS1", ""};
    for (size_t i = 0; i < TG_ARRAY_LEN(unsupported); i++) {
        char hdr[128];
        snprintf(hdr, sizeof(hdr), "{\"alg\":\"%s\",\"kid\":\"rsa-1\"}", unsupported[i]);
        t = tu_sign(hdr, c, "RS256", F.rsa1);
        assert_int_equal(check(t), TG_AUTH_ALG_NOT_ALLOWED);
        free(t);
    }
    free(c);
}

static void test_reject_es_signature_length(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    /* A DER-encoded ECDSA signature (what OpenSSL emits, 70-72 bytes) is not
     * the JOSE R||S form even though it is a valid signature. */
    char *t = tu_sign_ex("{\"alg\":\"ES256\",\"kid\":\"ec-1\"}", c, "ES256", F.ec256, NULL, 0, 1);
    assert_int_equal(check(t), TG_AUTH_BAD_SIGNATURE);
    free(t);
    /* An ES384-sized signature under ES256, and a short one. */
    unsigned char sig[96];
    memset(sig, 0x5a, sizeof(sig));
    size_t lens[] = {96, 63, 65, 0 + 1, 32};
    for (size_t i = 0; i < TG_ARRAY_LEN(lens); i++) {
        char *good = tu_sign("{\"alg\":\"ES256\",\"kid\":\"ec-1\"}", c, "ES256", F.ec256);
        char *s = tu_b64(sig, lens[i]);
        char tok[4096];
        snprintf(tok, sizeof(tok), "%.*s.%s", (int)(strrchr(good, '.') - good), good, s);
        assert_int_equal(check(tok), TG_AUTH_BAD_SIGNATURE);
        free(s);
        free(good);
    }
    free(c);
}

static void test_reject_malformed(void **state)
{
    (void)state;
    char *c = good_claims(NULL);
    char *good = token(F.rsa1, "RS256", "rsa-1", c);
    char buf[4096];

    const char *raw[] = {
        "abc",       "a.b", "a.b.c.d", "a.b.c.d.e", "..", ".eyJ9.", "eyJhbGciOiJSUzI1NiJ9..sig",
        "e30.e30.A", /* a 1-character segment is never base64url */
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(raw); i++)
        assert_int_equal(check(raw[i]), TG_AUTH_MALFORMED);

    /* Padding, standard-alphabet and stray characters. */
    snprintf(buf, sizeof(buf), "%s==", good);
    assert_int_equal(check(buf), TG_AUTH_MALFORMED);
    snprintf(buf, sizeof(buf), "%s", good);
    buf[5] = '+';
    assert_int_equal(check(buf), TG_AUTH_MALFORMED);
    snprintf(buf, sizeof(buf), "%s", good);
    buf[strlen(buf) - 3] = '/';
    assert_int_equal(check(buf), TG_AUTH_MALFORMED);
    snprintf(buf, sizeof(buf), "%s.", good);
    assert_int_equal(check(buf), TG_AUTH_MALFORMED);

    /* Header-level problems, each properly signed by rsa-1. */
    const char *headers[] = {
        "not json",
        "[\"RS256\"]",
        "\"RS256\"",
        "{\"alg\":\"RS256\",\"alg\":\"RS256\",\"kid\":\"rsa-1\"}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"crit\":[\"exp\"]}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"crit\":[]}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"b64\":false,\"crit\":[\"b64\"]}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"enc\":\"A256GCM\"}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"zip\":\"DEF\"}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"typ\":\"JOSE\"}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"typ\":\"application/jose+json\"}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"typ\":\"at+jwtx\"}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"typ\":7}",
        "{\"alg\":\"RS256\",\"kid\":1}",
        "{\"alg\":\"RS256\",\"kid\":\"\"}",
        "{\"alg\":\"RS256\",\"kid\":null}",
        "{\"kid\":\"rsa-1\"}",
        "{\"alg\":256,\"kid\":\"rsa-1\"}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\"} trailing",
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(headers); i++) {
        char *t = tu_sign(headers[i], c, "RS256", F.rsa1);
        if (check(t) != TG_AUTH_MALFORMED)
            fail_msg("header %zu (%s) not refused as malformed", i, headers[i]);
        free(t);
    }
    /* A kid past the length limit. */
    char longkid[400];
    memset(longkid, 'k', 300);
    longkid[300] = '\0';
    char *t = token(F.rsa1, "RS256", longkid, c);
    assert_int_equal(check(t), TG_AUTH_MALFORMED);
    free(t);

    /* Payloads that are not a JSON object, properly signed. */
    const char *payloads[] = {"not json", "[1,2]", "\"alice\"", "",
                              "{\"sub\":\"a\",\"sub\":\"b\"}"};
    for (size_t i = 0; i < TG_ARRAY_LEN(payloads); i++) {
        t = token(F.rsa1, "RS256", "rsa-1", payloads[i]);
        if (check(t) != TG_AUTH_MALFORMED)
            fail_msg("payload %zu (%s) not refused as malformed", i, payloads[i]);
        free(t);
    }

    /* Two credentials, or junk after the token. */
    tg_principal_t p;
    tg_auth_reason_e r;
    snprintf(buf, sizeof(buf), "Bearer %s, Bearer %s", good, good);
    assert_int_equal(tg_auth_verify(F.auth, buf, F.now, &p, &r), TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_MALFORMED);
    snprintf(buf, sizeof(buf), "Bearer %s x", good);
    assert_int_equal(tg_auth_verify(F.auth, buf, F.now, &p, &r), TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_MALFORMED);
    snprintf(buf, sizeof(buf), "Bearer%s", good);
    assert_int_equal(tg_auth_verify(F.auth, buf, F.now, &p, &r), TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_MALFORMED);
    /* Scheme is case-insensitive and surrounding blanks are fine. */
    snprintf(buf, sizeof(buf), "  bEARER \t%s  ", good);
    assert_int_equal(tg_auth_verify(F.auth, buf, F.now, &p, &r), TG_OK);
    tg_principal_clean(&p);
    /* A PAT is not a JWT. */
    assert_int_equal(tg_auth_verify(F.auth,
                                    "Bearer tgp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", F.now,
                                    &p, &r),
                     TG_EUNAUTH);
    assert_int_equal(r, TG_AUTH_MALFORMED);
    free(good);
    free(c);
}

static void test_reject_bad_claims(void **state)
{
    (void)state;
    char extra[128];
    /* exp missing, or not a number. */
    char *c = tu_claims(ISS, AUD, "alice", F.now, 0, NULL);
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_BAD_CLAIMS);
    free(t);
    free(c);
    snprintf(extra, sizeof(extra), "{\"exp\":\"%ld\"}", (long)F.now + 600);
    c = tu_claims(ISS, AUD, "alice", F.now, 0, extra);
    t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_BAD_CLAIMS);
    free(t);
    free(c);
    /* nbf / iat of the wrong type. */
    c = good_claims("{\"nbf\":\"soon\"}");
    t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_BAD_CLAIMS);
    free(t);
    free(c);
    c = good_claims("{\"iat\":null}");
    t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_BAD_CLAIMS);
    free(t);
    free(c);
    /* sub missing, empty, or not a string. */
    c = tu_claims(ISS, AUD, NULL, F.now, F.now + 600, NULL);
    t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_BAD_CLAIMS);
    free(t);
    free(c);
    c = tu_claims(ISS, AUD, "", F.now, F.now + 600, NULL);
    t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_BAD_CLAIMS);
    free(t);
    free(c);
    c = good_claims("{\"sub\":12345}");
    t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check(t), TG_AUTH_BAD_CLAIMS);
    free(t);
    free(c);
}

/* ---- rotation ------------------------------------------------------------ */

static void test_rotation_reload(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof(path), "%s/rotating.json", F.dir);
    char *v1 = tu_jwks(tu_jwk(F.rsa1, "rsa-1", "RS256"), NULL);
    char *v2 = tu_jwks(tu_jwk(F.rsa2, "rsa-2", "RS256"), NULL);
    tu_write(path, v1);

    tg_auth_config_t cfg;
    base_config(&cfg);
    cfg.jwks_file = path;
    char err[256] = "";
    tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
    assert_non_null(a);

    char *c = good_claims(NULL);
    char *old_tok = token(F.rsa1, "RS256", "rsa-1", c);
    char *new_tok = token(F.rsa2, "RS256", "rsa-2", c);
    assert_int_equal(check_on(a, old_tok, F.now, NULL), TG_AUTH_OK);
    assert_int_equal(check_on(a, new_tok, F.now, NULL), TG_AUTH_UNKNOWN_KEY);

    /* The provider rotates: rsa-1 withdrawn, rsa-2 published. */
    tu_write(path, v2);
    assert_int_equal(tg_auth_reload(a, F.now, err, sizeof(err)), TG_OK);
    assert_int_equal(check_on(a, old_tok, F.now, NULL), TG_AUTH_UNKNOWN_KEY);
    assert_int_equal(check_on(a, new_tok, F.now, NULL), TG_AUTH_OK);

    /* A broken file on reload keeps the keys in force. */
    tu_write(path, "{\"keys\":");
    assert_int_not_equal(tg_auth_reload(a, F.now, err, sizeof(err)), TG_OK);
    assert_int_equal(check_on(a, new_tok, F.now, NULL), TG_AUTH_OK);
    unlink(path);
    assert_int_equal(tg_auth_reload(a, F.now, err, sizeof(err)), TG_ENOTFOUND);
    assert_int_equal(check_on(a, new_tok, F.now, NULL), TG_AUTH_OK);

    tg_auth_stats_t st;
    tg_auth_stats(a, &st);
    assert_int_equal(st.keys, 1);
    assert_int_equal(st.reloads, 1);

    tg_auth_free(a);
    free(old_tok);
    free(new_tok);
    free(c);
    free(v1);
    free(v2);
}

static void test_www_authenticate_and_labels(void **state)
{
    (void)state;
    const char *labels[] = {"ok",
                            "missing",
                            "malformed",
                            "too_large",
                            "alg_not_allowed",
                            "unknown_key",
                            "bad_signature",
                            "expired",
                            "not_yet_valid",
                            "wrong_issuer",
                            "wrong_audience",
                            "bad_claims",
                            "lifetime"};
    assert_int_equal(TG_ARRAY_LEN(labels), TG_AUTH_REASON_COUNT);
    for (int r = 0; r < TG_AUTH_REASON_COUNT; r++) {
        assert_string_equal(tg_auth_reason_str((tg_auth_reason_e)r), labels[r]);
        const char *w = tg_auth_www_authenticate((tg_auth_reason_e)r);
        assert_true(strncmp(w, "Bearer realm=\"taugate\"", 22) == 0);
        if (r > TG_AUTH_MISSING) {
            assert_non_null(strstr(w, "error=\"invalid_token\""));
            assert_non_null(strstr(w, "error_description=\""));
        } else {
            assert_null(strstr(w, "error="));
        }
    }
    assert_string_equal(tg_auth_reason_str(TG_AUTH_REASON_COUNT), "unknown");
    assert_non_null(strstr(tg_auth_www_authenticate(TG_AUTH_EXPIRED), "expired"));
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
        cmocka_unit_test(test_accept_rs256),
        cmocka_unit_test(test_accept_es256),
        cmocka_unit_test(test_accept_es384_rs512),
        cmocka_unit_test(test_accept_within_leeway),
        cmocka_unit_test(test_accept_at_jwt),
        cmocka_unit_test(test_max_lifetime),
        cmocka_unit_test(test_reject_groups_not_an_array_of_strings),
        cmocka_unit_test(test_accept_aud_array_and_real_numbers),
        cmocka_unit_test(test_accept_far_future_exp),
        cmocka_unit_test(test_accept_principal_fields),
        cmocka_unit_test(test_reject_missing),
        cmocka_unit_test(test_reject_alg_none),
        cmocka_unit_test(test_reject_hs256_confusion),
        cmocka_unit_test(test_reject_expired),
        cmocka_unit_test(test_reject_not_yet_valid),
        cmocka_unit_test(test_reject_wrong_issuer),
        cmocka_unit_test(test_reject_wrong_audience),
        cmocka_unit_test(test_reject_bad_signature),
        cmocka_unit_test(test_reject_unknown_kid),
        cmocka_unit_test(test_reject_truncated),
        cmocka_unit_test(test_reject_oversized),
        cmocka_unit_test(test_reject_alg_mismatch_pinned),
        cmocka_unit_test(test_reject_es_signature_length),
        cmocka_unit_test(test_reject_malformed),
        cmocka_unit_test(test_reject_bad_claims),
        cmocka_unit_test(test_rotation_reload),
        cmocka_unit_test(test_www_authenticate_and_labels),
        cmocka_unit_test(test_bearer_and_parse),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
