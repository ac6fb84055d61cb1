/* tg_auth_verify over the other key sources and options: PEM keys and
 * certificates, HS256 when configured, minted tokens, configuration errors,
 * and verification racing key reloads. Fixture: test_auth_suite.h. */
#include "test_auth_suite.h"

typedef struct {
    tg_auth_t *a;
    const char *tok;
    int iterations;
    int failures;
} verify_worker_t;

static void *verify_worker(void *arg)
{
    verify_worker_t *w = arg;
    char *h = tu_bearer(w->tok);
    for (int i = 0; i < w->iterations; i++) {
        tg_principal_t p;
        tg_auth_reason_e r;
        if (tg_auth_verify(w->a, h, F.now, &p, &r) != TG_OK)
            w->failures++;
        tg_principal_clean(&p);
    }
    free(h);
    return NULL;
}

static void test_concurrent_verify_during_reload(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof(path), "%s/concurrent.json", F.dir);
    char *v1 = tu_jwks(tu_jwk(F.ec256, "ec-1", NULL), tu_jwk(F.rsa1, "rsa-1", NULL), NULL);
    char *v2 = tu_jwks(tu_jwk(F.ec256, "ec-1", NULL), tu_jwk(F.rsa2, "rsa-2", NULL), NULL);
    tu_write(path, v1);
    tg_auth_config_t cfg;
    base_config(&cfg);
    cfg.jwks_file = path;
    char err[256] = "";
    tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
    assert_non_null(a);

    /* ec-1 is in every version of the file, so every verification must pass
     * while the set under it is swapped over and over. */
    char *c = good_claims(NULL);
    char *t = token(F.ec256, "ES256", "ec-1", c);
    enum { NTHREADS = 4 };
    pthread_t th[NTHREADS];
    verify_worker_t w[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (verify_worker_t){.a = a, .tok = t, .iterations = 60};
        assert_int_equal(pthread_create(&th[i], NULL, verify_worker, &w[i]), 0);
    }
    for (int i = 0; i < 40; i++) {
        tu_write(path, i % 2 ? v1 : v2);
        assert_int_equal(tg_auth_reload(a, F.now, err, sizeof(err)), TG_OK);
    }
    for (int i = 0; i < NTHREADS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(w[i].failures, 0);
    }
    tg_auth_free(a);
    free(t);
    free(c);
    free(v1);
    free(v2);
}

static void test_pem_file_and_certificate(void **state)
{
    (void)state;
    tg_auth_config_t cfg;
    base_config(&cfg);
    cfg.pem_file = TU_FIX "/rsa1.pub";
    char err[256] = "";
    tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
    assert_non_null(a);
    char *c = good_claims(NULL);
    /* One key, no kid anywhere: a kid-less RS256 token finds it. */
    char *t = token(F.rsa1, "RS256", NULL, c);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_OK);
    free(t);
    /* A kid names no key here. */
    t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_UNKNOWN_KEY);
    free(t);
    /* The key is pinned to RS256: RS512 and HS256-with-the-PEM are refused. */
    t = token(F.rsa1, "RS512", NULL, c);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_ALG_NOT_ALLOWED);
    free(t);
    char *pem = tu_read(TU_FIX "/rsa1.pub", NULL);
    t = tu_sign_ex("{\"alg\":\"HS256\",\"typ\":\"JWT\"}", c, "HS256", NULL, pem, strlen(pem), 0);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_ALG_NOT_ALLOWED);
    free(t);
    free(pem);
    tg_auth_free(a);

    /* A certificate with a kid and RS384 pin. */
    cfg.pem_file = TU_FIX "/rsa1.crt";
    cfg.pem_alg = "RS384";
    cfg.pem_kid = "cert-1";
    a = tg_auth_new(&cfg, err, sizeof(err));
    assert_non_null(a);
    t = token(F.rsa1, "RS384", "cert-1", c);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_OK);
    free(t);
    tg_auth_free(a);

    /* A P-256 key cannot be pinned to RS256, nor an RSA key to ES256. */
    cfg.pem_file = TU_FIX "/ec256.pub";
    cfg.pem_alg = "RS256";
    cfg.pem_kid = NULL;
    assert_null(tg_auth_new(&cfg, err, sizeof(err)));
    cfg.pem_file = TU_FIX "/rsa1.pub";
    cfg.pem_alg = "ES256";
    assert_null(tg_auth_new(&cfg, err, sizeof(err)));
    cfg.pem_alg = "HS256";
    assert_null(tg_auth_new(&cfg, err, sizeof(err)));
    cfg.pem_alg = "none";
    assert_null(tg_auth_new(&cfg, err, sizeof(err)));
    free(c);
}

static void test_hs256_when_configured(void **state)
{
    (void)state;
    tg_auth_config_t cfg;
    base_config(&cfg);
    cfg.jwks_file = F.jwks_path;
    cfg.hs256_secret = HS_SECRET;
    char err[256] = "";
    tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
    assert_non_null(a);
    char *c = good_claims(NULL);
    const char *hdr = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    char *t = tu_sign_ex(hdr, c, "HS256", NULL, HS_SECRET, strlen(HS_SECRET), 0);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_OK);
    /* The same token where HS256 is not configured. */
    assert_int_equal(check(t), TG_AUTH_ALG_NOT_ALLOWED);
    free(t);
    /* Wrong secret; and the RSA-PEM confusion, with and without kid. */
    t = tu_sign_ex(hdr, c, "HS256", NULL, "wrong-secret-wrong-secret-wrong-secret", 38, 0);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_BAD_SIGNATURE);
    free(t);
    t = tu_sign_ex(hdr, c, "HS256", NULL, F.rsa1_pub, strlen(F.rsa1_pub), 0);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_BAD_SIGNATURE);
    free(t);
    t = tu_sign_ex("{\"alg\":\"HS256\",\"kid\":\"rsa-1\"}", c, "HS256", NULL, F.rsa1_pub,
                   strlen(F.rsa1_pub), 0);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_ALG_NOT_ALLOWED);
    free(t);
    /* A truncated MAC. */
    t = tu_sign_ex(hdr, c, "HS256", NULL, HS_SECRET, strlen(HS_SECRET), 0);
    t[strlen(t) - 3] = '\0';
    assert_int_not_equal(check_on(a, t, F.now, NULL), TG_AUTH_OK);
    free(t);
    tg_auth_free(a);

    /* Short secrets are refused at configuration time. */
    cfg.hs256_secret = "short";
    assert_null(tg_auth_new(&cfg, err, sizeof(err)));
    free(c);
}

static void test_mint_roundtrip(void **state)
{
    (void)state;
    char err[256] = "";
    char *t = NULL;
    tg_auth_mint_t m = {
        .alg = "RS256",
        .key_file = TU_FIX "/rsa1.key",
        .kid = "rsa-1",
        .issuer = ISS,
        .audience = AUD,
        .subject = "dev-user",
        .name = "Dev User",
        .groups = "ml, platform-admins",
        .now = F.now,
        .ttl_s = 300,
    };
    assert_int_equal(tg_auth_mint(&m, &t, err, sizeof(err)), TG_OK);
    tg_principal_t p;
    assert_int_equal(check_on(F.auth, t, F.now, &p), TG_AUTH_OK);
    assert_string_equal(p.subject, "dev-user");
    assert_string_equal(p.name, "Dev User");
    assert_int_equal(p.n_groups, 2);
    assert_true(p.is_admin);
    tg_principal_clean(&p);
    assert_int_equal(check_on(F.auth, t, F.now + 361, NULL), TG_AUTH_EXPIRED);
    free(t);

    /* ES256 with an in-memory key. */
    char *ec = tu_read(TU_FIX "/ec256.key", NULL);
    m.alg = "ES256";
    m.key = ec;
    m.key_file = NULL;
    m.kid = "ec-1";
    assert_int_equal(tg_auth_mint(&m, &t, err, sizeof(err)), TG_OK);
    assert_int_equal(check(t), TG_AUTH_OK);
    free(t);
    /* An EC key cannot sign RS256. */
    m.alg = "RS256";
    assert_int_not_equal(tg_auth_mint(&m, &t, err, sizeof(err)), TG_OK);
    assert_null(t);
    m.alg = "none";
    assert_int_equal(tg_auth_mint(&m, &t, err, sizeof(err)), TG_EINVAL);
    free(ec);

    /* HS256 against an HS256-configured verifier. */
    tg_auth_mint_t hs = {.alg = "HS256",
                         .key = HS_SECRET,
                         .issuer = ISS,
                         .audience = AUD,
                         .subject = "hs-user",
                         .groups = "ml",
                         .now = F.now,
                         .ttl_s = 60};
    assert_int_equal(tg_auth_mint(&hs, &t, err, sizeof(err)), TG_OK);
    tg_auth_config_t cfg;
    base_config(&cfg);
    cfg.hs256_secret = HS_SECRET;
    tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_OK);
    tg_auth_free(a);
    free(t);
    hs.key = "short"; /* under 32 bytes */
    assert_int_equal(tg_auth_mint(&hs, &t, err, sizeof(err)), TG_EINVAL);
    hs.key = HS_SECRET;
    hs.subject = NULL;
    assert_int_equal(tg_auth_mint(&hs, &t, err, sizeof(err)), TG_EINVAL);
    m.alg = "RS256";
    m.key = NULL;
    m.key_file = TU_FIX "/does-not-exist.key";
    assert_int_equal(tg_auth_mint(&m, &t, err, sizeof(err)), TG_ENOTFOUND);
}

static void test_config_errors(void **state)
{
    (void)state;
    tg_auth_config_t cfg;
    char err[256];
    base_config(&cfg);
    assert_null(tg_auth_new(&cfg, err, sizeof(err))); /* no key source */
    assert_non_null(strstr(err, "key source"));
    cfg.jwks_file = F.jwks_path;
    cfg.issuer = NULL;
    assert_null(tg_auth_new(&cfg, err, sizeof(err)));
    base_config(&cfg);
    cfg.jwks_file = F.jwks_path;
    cfg.audience = " , ";
    assert_null(tg_auth_new(&cfg, err, sizeof(err)));
    base_config(&cfg);
    cfg.jwks_file = F.jwks_path;
    cfg.leeway_s = -1;
    assert_null(tg_auth_new(&cfg, err, sizeof(err)));
    cfg.leeway_s = 0;
    tg_auth_t *a = tg_auth_new(&cfg, err, sizeof(err));
    assert_non_null(a);
    /* With no leeway, one second past exp is expired. */
    char *c = tu_claims(ISS, AUD, "alice", 0, F.now - 1, NULL);
    char *t = token(F.rsa1, "RS256", "rsa-1", c);
    assert_int_equal(check_on(a, t, F.now, NULL), TG_AUTH_EXPIRED);
    free(t);
    free(c);
    tg_auth_free(a);
    cfg.jwks_file = "/nonexistent/jwks.json";
    assert_null(tg_auth_new(&cfg, err, sizeof(err)));
    assert_non_null(strstr(err, "/nonexistent/jwks.json"));
    tg_auth_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_verify_during_reload),
        cmocka_unit_test(test_pem_file_and_certificate),
        cmocka_unit_test(test_hs256_when_configured),
        cmocka_unit_test(test_mint_roundtrip),
        cmocka_unit_test(test_config_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
