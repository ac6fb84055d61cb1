/* Shared fixture for the tg_auth_verify suites (test_auth_jwt.c,
 * test_auth_sources.c): fixture keys, a JWKS file in a temp directory, one
 * tg_auth_t over it, and helpers that build and check tokens. Included by
 * exactly one translation unit per test binary. */
#ifndef TEST_AUTH_SUITE_H
#define TEST_AUTH_SUITE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <time.h>

#include "auth/auth.h"
#include "auth/mint.h"
#include "core/log.h"
#include "test_auth_util.h"

#define ISS       "https://idp.example.test/realms/gpu"
#define AUD       "taugate"
#define HS_SECRET "dev-secret-0123456789-abcdefghijklmnop"

static struct {
    EVP_PKEY *rsa1, *rsa2, *attacker, *ec256, *ec384, *ec256b;
    char *rsa1_pub; /* what an attacker downloads from the JWKS, as PEM */
    char dir[64];
    char jwks_path[128];
    tg_auth_t *auth;
    time_t now;
} F;

static void base_config(tg_auth_config_t *cfg)
{
    tg_auth_config_defaults(cfg);
    cfg->issuer = ISS;
    cfg->audience = AUD ", taugate-cli";
    cfg->admin_groups = "platform-admins";
    cfg->admin_subjects = "root-sub";
}

static int group_setup(void **state)
{
    (void)state;
    /* Refusals and reloads log by design; keep test output readable. */
    if (!getenv("TG_TEST_LOG"))
        tg_log_set_level(TG_LOG_OFF);
    F.now = time(NULL);
    F.rsa1 = tu_key("rsa1.key");
    F.rsa2 = tu_key("rsa2.key");
    F.attacker = tu_key("rsa_attacker.key");
    F.ec256 = tu_key("ec256.key");
    F.ec384 = tu_key("ec384.key");
    F.ec256b = tu_key("ec256_b.key");
    F.rsa1_pub = tu_pub_pem(F.rsa1);
    tu_tmpdir(F.dir, sizeof(F.dir));
    snprintf(F.jwks_path, sizeof(F.jwks_path), "%s/jwks.json", F.dir);
    char *jwks =
        tu_jwks(tu_jwk(F.rsa1, "rsa-1", "RS256"), tu_jwk(F.ec256, "ec-1", NULL),
                tu_jwk(F.ec384, "ec-384", "ES384"), tu_jwk(F.rsa2, "rsa-512", "RS512"), NULL);
    tu_write(F.jwks_path, jwks);
    free(jwks);

    tg_auth_config_t cfg;
    base_config(&cfg);
    cfg.jwks_file = F.jwks_path;
    char err[256] = "";
    F.auth = tg_auth_new(&cfg, err, sizeof(err));
    if (!F.auth)
        fprintf(stderr, "tg_auth_new: %s\n", err);
    return F.auth ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    tg_auth_free(F.auth);
    EVP_PKEY_free(F.rsa1);
    EVP_PKEY_free(F.rsa2);
    EVP_PKEY_free(F.attacker);
    EVP_PKEY_free(F.ec256);
    EVP_PKEY_free(F.ec384);
    EVP_PKEY_free(F.ec256b);
    free(F.rsa1_pub);
    tu_rmdir(F.dir);
    return 0;
}

/* Verify "Bearer <tok>" and check the result's invariants. When `who` is
 * non-NULL the principal is handed over (caller cleans it). */
static tg_auth_reason_e check_on(tg_auth_t *a, const char *tok, time_t now, tg_principal_t *who)
{
    char *h = tu_bearer(tok);
    tg_principal_t p;
    tg_auth_reason_e r = TG_AUTH_REASON_COUNT;
    tg_rc_e rc = tg_auth_verify(a, h, now, &p, &r);
    assert_int_equal(rc == TG_OK, r == TG_AUTH_OK);
    assert_true(rc == TG_OK || rc == TG_EUNAUTH);
    if (rc != TG_OK)
        assert_null(p.subject);
    if (who)
        *who = p;
    else
        tg_principal_clean(&p);
    free(h);
    return r;
}

static tg_auth_reason_e check(const char *tok)
{
    return check_on(F.auth, tok, F.now, NULL);
}

/* {"alg":alg,"typ":"JWT","kid":kid} signed with `key` under `sign_alg`. */
static char *token(EVP_PKEY *key, const char *header_alg, const char *kid, const char *payload)
{
    char hdr[1024];
    if (kid)
        snprintf(hdr, sizeof(hdr), "{\"alg\":\"%s\",\"typ\":\"JWT\",\"kid\":\"%s\"}", header_alg,
                 kid);
    else
        snprintf(hdr, sizeof(hdr), "{\"alg\":\"%s\",\"typ\":\"JWT\"}", header_alg);
    return tu_sign(hdr, payload, header_alg, key);
}

static char *good_claims(const char *extra)
{
    return tu_claims(ISS, AUD, "alice", F.now, F.now + 600, extra);
}

#endif
