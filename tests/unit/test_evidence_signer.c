/* Unit tests: Ed25519 evidence keys (evidence/signer.c): sign/verify round trip,
 * tampering, key ids, PEM loading and its errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "core/digest.h"
#include "core/log.h"
#include "evidence/signer.h"

/* --- helpers -------------------------------------------------------------------------------- */

static char *tmp_write(const char *text)
{
    char *path = strdup("/tmp/tg-evkey-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

static void tmp_drop(char *path)
{
    unlink(path);
    free(path);
}

/* PEM text of a key: private (PKCS#8) or public (SPKI); malloc'd. */
static char *pem_of(EVP_PKEY *k, int private_key, const char *cipher_pass)
{
    BIO *b = BIO_new(BIO_s_mem());
    int ok;
    if (private_key && cipher_pass)
        ok = PEM_write_bio_PKCS8PrivateKey(b, k, EVP_aes_256_cbc(), cipher_pass,
                                           (int)strlen(cipher_pass), NULL, NULL);
    else if (private_key)
        ok = PEM_write_bio_PKCS8PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
    else
        ok = PEM_write_bio_PUBKEY(b, k);
    assert_int_equal(ok, 1);
    char *data = NULL;
    long n = BIO_get_mem_data(b, &data);
    char *s = strndup(data, (size_t)n);
    BIO_free(b);
    return s;
}

static EVP_PKEY *gen(int type)
{
    EVP_PKEY *k = NULL;
    if (type == EVP_PKEY_EC)
        k = EVP_EC_gen("P-256");
    else {
        EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(type, NULL);
        assert_non_null(c);
        assert_int_equal(EVP_PKEY_keygen_init(c), 1);
        assert_int_equal(EVP_PKEY_keygen(c, &k), 1);
        EVP_PKEY_CTX_free(c);
    }
    assert_non_null(k);
    return k;
}

static void flip(char *s, size_t i)
{
    s[i] = s[i] == 'A' ? 'B' : 'A';
}

/* --- tests ---------------------------------------------------------------------------------- */

static void test_sign_verify_round_trip(void **state)
{
    (void)state;
    char err[256];
    tg_signer_t *s = tg_signer_generate(err, sizeof(err));
    assert_non_null(s);
    assert_true(tg_signer_can_sign(s));
    assert_true(tg_signer_is_ephemeral(s));
    const char msg[] = "{\"run\":{\"id\":\"x\"},\"schema\":\"taugate.evidence/v1\"}";
    char *sig = NULL;
    assert_int_equal(tg_signer_sign(s, msg, strlen(msg), &sig), TG_OK);
    assert_int_equal(strlen(sig), 88); /* 64 bytes in padded base64 */
    assert_true(tg_signer_verify(s, msg, strlen(msg), sig));

    /* one byte of the message changed */
    char *bad = strdup(msg);
    bad[10] ^= 1;
    assert_false(tg_signer_verify(s, bad, strlen(bad), sig));
    free(bad);
    /* one byte of the signature changed; a malformed or truncated one */
    char *badsig = strdup(sig);
    flip(badsig, 5);
    assert_false(tg_signer_verify(s, msg, strlen(msg), badsig));
    badsig[86] = '\0';
    assert_false(tg_signer_verify(s, msg, strlen(msg), badsig));
    assert_false(tg_signer_verify(s, msg, strlen(msg), "not base64!"));
    assert_false(tg_signer_verify(s, msg, strlen(msg), ""));
    assert_false(tg_signer_verify(s, msg, strlen(msg), NULL));
    free(badsig);

    /* another key does not verify it */
    tg_signer_t *other = tg_signer_generate(err, sizeof(err));
    assert_false(tg_signer_verify(other, msg, strlen(msg), sig));
    assert_string_not_equal(tg_signer_key_id(s), tg_signer_key_id(other));
    tg_signer_free(other);

    /* the public half verifies it and cannot sign */
    tg_signer_t *pub = tg_signer_from_public_b64(tg_signer_public_b64(s), err, sizeof(err));
    assert_non_null(pub);
    assert_false(tg_signer_can_sign(pub));
    assert_true(tg_signer_verify(pub, msg, strlen(msg), sig));
    char *none = (char *)"x";
    assert_int_equal(tg_signer_sign(pub, msg, strlen(msg), &none), TG_EINVAL);
    assert_null(none);
    tg_signer_free(pub);
    free(sig);
    tg_signer_free(s);
    tg_signer_free(NULL);
}

static void test_key_id_is_sha256_of_raw_public_key_and_stable(void **state)
{
    (void)state;
    char err[256];
    EVP_PKEY *k = gen(EVP_PKEY_ED25519);
    unsigned char raw[32];
    size_t rawlen = sizeof(raw);
    assert_int_equal(EVP_PKEY_get_raw_public_key(k, raw, &rawlen), 1);
    char hex[65];
    tg_sha256_hex(raw, rawlen, hex);
    hex[16] = '\0';

    char *priv_pem = pem_of(k, 1, NULL), *pub_pem = pem_of(k, 0, NULL);
    char *priv = tmp_write(priv_pem), *pub = tmp_write(pub_pem);
    tg_signer_t *a = tg_signer_load(priv, err, sizeof(err));
    assert_non_null(a);
    tg_signer_t *b = tg_signer_load(priv, err, sizeof(err));
    tg_signer_t *c = tg_signer_load_public(pub, err, sizeof(err));
    tg_signer_t *d =
        tg_signer_load_public(priv, err, sizeof(err)); /* public half of a private key */
    assert_non_null(b);
    assert_non_null(c);
    assert_non_null(d);
    assert_string_equal(tg_signer_key_id(a), hex);
    assert_string_equal(tg_signer_key_id(b), hex);
    assert_string_equal(tg_signer_key_id(c), hex);
    assert_string_equal(tg_signer_key_id(d), hex);
    assert_false(tg_signer_is_ephemeral(a));
    assert_false(tg_signer_can_sign(d));
    /* the exported PEM is the key's SubjectPublicKeyInfo */
    assert_string_equal(tg_signer_public_pem(a), pub_pem);
    assert_string_equal(tg_signer_public_pem(c), pub_pem);
    assert_string_equal(tg_signer_public_b64(a), tg_signer_public_b64(c));
    assert_int_equal(strlen(tg_signer_public_b64(a)), 44);

    /* a signature by the loaded key verifies with the public-only one */
    char *sig = NULL;
    assert_int_equal(tg_signer_sign(a, "abc", 3, &sig), TG_OK);
    assert_true(tg_signer_verify(c, "abc", 3, sig));
    free(sig);

    /* an ephemeral key keeps its id for its life */
    tg_signer_t *e = tg_signer_from_config(NULL, err, sizeof(err));
    assert_non_null(e);
    assert_true(tg_signer_is_ephemeral(e));
    char first[32];
    snprintf(first, sizeof(first), "%s", tg_signer_key_id(e));
    assert_int_equal(strlen(first), TG_SIGNER_KEY_ID_LEN);
    assert_string_equal(tg_signer_key_id(e), first);
    tg_signer_t *f = tg_signer_from_config(priv, err, sizeof(err));
    assert_non_null(f);
    assert_string_equal(tg_signer_key_id(f), hex);

    tg_signer_free(a);
    tg_signer_free(b);
    tg_signer_free(c);
    tg_signer_free(d);
    tg_signer_free(e);
    tg_signer_free(f);
    tmp_drop(priv);
    tmp_drop(pub);
    free(priv_pem);
    free(pub_pem);
    EVP_PKEY_free(k);
}

/* tg_signer_load(text) fails and its message contains `want` and never the key. */
static void load_fails(const char *text, const char *want, int public_key)
{
    char err[512] = "";
    char *path = tmp_write(text);
    tg_signer_t *s = public_key ? tg_signer_load_public(path, err, sizeof(err))
                                : tg_signer_load(path, err, sizeof(err));
    assert_null(s);
    if (!strstr(err, want))
        fail_msg("error \"%s\" does not mention \"%s\"", err, want);
    assert_non_null(strstr(err, path));           /* names the file */
    assert_null(strstr(err, "MC4CAQAwBQYDK2Vw")); /* no key material (Ed25519 PKCS#8 prefix) */
    tmp_drop(path);
}

static void test_pem_load_errors(void **state)
{
    (void)state;
    char err[512] = "";
    assert_null(tg_signer_load("/nonexistent/evidence.pem", err, sizeof(err)));
    assert_non_null(strstr(err, "cannot open key file /nonexistent/evidence.pem"));
    assert_null(tg_signer_load_public("/nonexistent/pub.pem", err, sizeof(err)));

    load_fails("", "is not PEM", 0);
    load_fails("just some text\n", "is not PEM", 0);
    load_fails("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n",
               "cannot be decoded", 0);

    EVP_PKEY *ed = gen(EVP_PKEY_ED25519);
    char *pub = pem_of(ed, 0, NULL);
    load_fails(pub, "holds no private key", 0);
    char *enc = pem_of(ed, 1, "secret-passphrase");
    load_fails(enc, "is encrypted", 0);
    load_fails(enc, "is encrypted", 1);

    EVP_PKEY *ec = gen(EVP_PKEY_EC);
    char *ecpem = pem_of(ec, 1, NULL), *ecpub = pem_of(ec, 0, NULL);
    load_fails(ecpem, "needs an Ed25519 key", 0);
    load_fails(ecpub, "needs an Ed25519 key", 1);
    EVP_PKEY *x = gen(EVP_PKEY_X25519);
    char *xpem = pem_of(x, 1, NULL);
    load_fails(xpem, "needs an Ed25519 key", 0);

    load_fails("hello\n", "is not a PEM public key", 1);
    load_fails("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "cannot be decoded",
               1);

    assert_null(tg_signer_from_public_b64("AAAA", err, sizeof(err)));
    assert_null(tg_signer_from_public_b64(NULL, err, sizeof(err)));
    assert_null(tg_signer_from_public_b64("!!!!", err, sizeof(err)));

    free(pub);
    free(enc);
    free(ecpem);
    free(ecpub);
    free(xpem);
    EVP_PKEY_free(ed);
    EVP_PKEY_free(ec);
    EVP_PKEY_free(x);
}

int main(void)
{
    tg_log_set_level(TG_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sign_verify_round_trip),
        cmocka_unit_test(test_key_id_is_sha256_of_raw_public_key_and_stable),
        cmocka_unit_test(test_pem_load_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
