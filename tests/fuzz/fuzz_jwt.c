/* libFuzzer harness for the JWT path: Authorization header parsing, token
 * structure and header checks, key lookup, signature dispatch, claims checks
 * and principal extraction.
 *
 * The first input byte picks a mode:
 *   0  the rest is an Authorization header value, verified end to end;
 *   1  the rest is a bare token, parsed, and whatever claims object comes
 *      out is run through the claims checks and principal extraction even
 *      though nothing is signed (those must hold up on any JSON);
 *   2  the rest is "<header JSON>\0<payload JSON>": the harness encodes and
 *      HMAC-signs it with the HS256 key it configured, so inputs get past the
 *      signature and into libjwt's parser and our claims checks.
 * Keys: one HS256 secret and one ES256 key generated at start-up. */
#include <assert.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"
#include "auth/jwt.h"
#include "auth/keys.h"
#include "auth/principal.h"
#include "core/log.h"

#define FUZZ_SECRET "fuzz-secret-0123456789-abcdefghijklmnop"
#define FUZZ_NOW    1700000000

static tg_auth_keyset_t *fuzz_keys;
static const char *const fuzz_audiences[] = {"taugate", "taugate-cli"};
static const tg_auth_jwt_policy_t fuzz_policy = {
    .issuer = "https://idp.fuzz",
    .audiences = fuzz_audiences,
    .n_audiences = 2,
    .leeway_s = 60,
    .max_token_bytes = 8192,
};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char err[256];
    tg_log_set_level(TG_LOG_OFF);
    fuzz_keys = tg_auth_keyset_new();
    if (tg_auth_keyset_add_hs256(fuzz_keys, FUZZ_SECRET, strlen(FUZZ_SECRET), NULL, err,
                                 sizeof(err)) != TG_OK)
        abort();
    EVP_PKEY *ec = EVP_EC_gen("P-256");
    BIO *b = BIO_new(BIO_s_mem());
    if (!ec || !b || PEM_write_bio_PUBKEY(b, ec) != 1)
        abort();
    char *pem = NULL;
    long n = BIO_get_mem_data(b, &pem);
    if (tg_auth_keyset_add_pem(fuzz_keys, pem, (size_t)n, TG_AUTH_ALG_ES256, "ec-1", "fuzz", err,
                               sizeof(err)) != TG_OK)
        abort();
    BIO_free(b);
    EVP_PKEY_free(ec);
    return 0;
}

static void fuzz_claims(json_t *claims)
{
    tg_auth_list_t admins = {0};
    tg_auth_list_parse(&admins, "platform-admins");
    tg_principal_policy_t pp = {.groups_claim = "realm_access.roles", .admin_groups = &admins};
    (void)tg_auth_jwt_check_claims(claims, &fuzz_policy, FUZZ_NOW);
    if (json_is_object(claims)) {
        tg_principal_t p;
        tg_principal_init(&p);
        if (tg_principal_from_claims(&p, claims, &pp) != 0)
            assert(p.n_groups <= TG_PRINCIPAL_MAX_GROUPS); /* refused: cleaned the same way */
        tg_principal_clean(&p);
    }
    tg_auth_list_clean(&admins);
}

static void fuzz_header(const uint8_t *data, size_t size)
{
    char *hv = malloc(size + 1);
    memcpy(hv, data, size);
    hv[size] = '\0';
    const char *tok = NULL;
    size_t len = 0;
    if (tg_auth_bearer_token(hv, fuzz_policy.max_token_bytes, &tok, &len) == TG_AUTH_OK) {
        json_t *claims = NULL;
        if (tg_auth_jwt_verify(fuzz_keys, &fuzz_policy, tok, len, FUZZ_NOW, &claims) == TG_AUTH_OK)
            fuzz_claims(claims);
        json_decref(claims);
    }
    free(hv);
}

static void fuzz_token(const uint8_t *data, size_t size)
{
    tg_auth_jwt_t j;
    if (tg_auth_jwt_parse((const char *)data, size, &j) == TG_AUTH_OK)
        fuzz_claims(j.claims);
    tg_auth_jwt_clean(&j);
}

static void fuzz_signed(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    if (!nul)
        return;
    size_t hlen = (size_t)(nul - data);
    char *h = tg_base64_encode(data, hlen, TG_B64_URL);
    char *p = tg_base64_encode(nul + 1, size - hlen - 1, TG_B64_URL);
    size_t in_len = strlen(h) + 1 + strlen(p);
    char *tok = malloc(in_len + 1 + 64);
    memcpy(tok, h, strlen(h));
    tok[strlen(h)] = '.';
    memcpy(tok + strlen(h) + 1, p, strlen(p));
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    HMAC(EVP_sha256(), FUZZ_SECRET, (int)strlen(FUZZ_SECRET), (const unsigned char *)tok, in_len,
         mac, &maclen);
    tok[in_len] = '.';
    size_t slen = tg_base64_encode_to(mac, maclen, TG_B64_URL, tok + in_len + 1, 64);
    json_t *claims = NULL;
    if (slen != (size_t)-1 && tg_auth_jwt_verify(fuzz_keys, &fuzz_policy, tok, in_len + 1 + slen,
                                                 FUZZ_NOW, &claims) == TG_AUTH_OK)
        fuzz_claims(claims);
    json_decref(claims);
    free(tok);
    free(h);
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 16384)
        return 0;
    switch (data[0] % 3) {
    case 0:
        fuzz_header(data + 1, size - 1);
        break;
    case 1:
        fuzz_token(data + 1, size - 1);
        break;
    default:
        fuzz_signed(data + 1, size - 1);
        break;
    }
    return 0;
}
