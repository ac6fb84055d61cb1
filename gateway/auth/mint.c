/* Development token minting with libjwt. */
#include "auth/mint.h"

#include <jansson.h>
#include <jwt.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"
#include "auth/keys.h"
#include "auth/list.h"

#define MINT_KEY_FILE_MAX (64 * 1024)

/* The claims object (new reference). */
static json_t *mint_claims(const tg_auth_mint_t *m, time_t iat, long ttl)
{
    unsigned char rnd[16];
    char jti[32] = "";
    if (RAND_bytes(rnd, sizeof(rnd)) == 1)
        (void)tg_base64_encode_to(rnd, sizeof(rnd), TG_B64_URL, jti, sizeof(jti));

    json_t *c = json_object();
    json_object_set_new(c, "iss", json_string(m->issuer));
    json_object_set_new(c, "aud", json_string(m->audience));
    json_object_set_new(c, "sub", json_string(m->subject));
    json_object_set_new(c, "iat", json_integer((json_int_t)iat));
    json_object_set_new(c, "exp", json_integer((json_int_t)iat + ttl));
    if (jti[0])
        json_object_set_new(c, "jti", json_string(jti));
    if (m->name && *m->name)
        json_object_set_new(c, "name", json_string(m->name));
    if (m->email && *m->email)
        json_object_set_new(c, "email", json_string(m->email));
    if (m->groups) {
        tg_auth_list_t gl;
        tg_auth_list_parse(&gl, m->groups);
        json_t *arr = json_array();
        for (size_t i = 0; i < gl.n; i++)
            json_array_append_new(arr, json_string(gl.v[i]));
        tg_auth_list_clean(&gl);
        json_object_set_new(c, m->groups_claim && *m->groups_claim ? m->groups_claim : "groups",
                            arr);
    }
    return c;
}

tg_rc_e tg_auth_mint(const tg_auth_mint_t *m, char **token, char *err, size_t errlen)
{
    tg_rc_e rc = TG_EINVAL;
    jwt_t *jwt = NULL;
    json_t *claims = NULL;
    char *claims_text = NULL;
    char *file_key = NULL;
    size_t file_len = 0;
    const char *key = m->key;
    size_t key_len = m->key_len;

    *token = NULL;
    if (!m->issuer || !*m->issuer || !m->audience || !*m->audience || !m->subject || !*m->subject) {
        snprintf(err, errlen, "issuer, audience and subject are required");
        goto out;
    }
    tg_auth_alg_e alg = tg_auth_alg_parse(m->alg && *m->alg ? m->alg : "RS256");
    if (alg == TG_AUTH_ALG_INVALID) {
        snprintf(err, errlen, "unsupported alg");
        goto out;
    }
    if (!key && m->key_file) {
        rc = tg_auth_read_file(m->key_file, MINT_KEY_FILE_MAX, &file_key, &file_len, err, errlen);
        if (rc != TG_OK)
            goto out;
        rc = TG_EINVAL;
        key = file_key;
        key_len = file_len;
    }
    if (!key) {
        snprintf(err, errlen, "a key or key_file is required");
        goto out;
    }
    if (!key_len)
        key_len = strlen(key);
    if (alg == TG_AUTH_ALG_HS256 && key_len < TG_AUTH_HS256_MIN_SECRET) {
        snprintf(err, errlen, "HS256 secret must be at least %d bytes", TG_AUTH_HS256_MIN_SECRET);
        goto out;
    }
    if (key_len > INT32_MAX) {
        snprintf(err, errlen, "key too large");
        goto out;
    }

    time_t iat = m->now ? m->now : time(NULL);
    long ttl = m->ttl_s ? m->ttl_s : 3600;
    claims = mint_claims(m, iat, ttl);
    claims_text = json_dumps(claims, JSON_COMPACT);
    if (!claims_text || jwt_new(&jwt) != 0 || jwt_add_grants_json(jwt, claims_text) != 0) {
        snprintf(err, errlen, "cannot build claims");
        rc = TG_EINTERNAL;
        goto out;
    }
    if (m->kid && *m->kid && jwt_add_header(jwt, "kid", m->kid) != 0) {
        snprintf(err, errlen, "cannot set kid");
        rc = TG_EINTERNAL;
        goto out;
    }
    if (jwt_set_alg(jwt, tg_auth_alg_libjwt(alg), (const unsigned char *)key, (int)key_len) != 0) {
        snprintf(err, errlen, "cannot use the key for %s", tg_auth_alg_name(alg));
        goto out;
    }
    /* libjwt parses the private key here; a key of the wrong type fails. */
    *token = jwt_encode_str(jwt);
    if (!*token) {
        snprintf(err, errlen, "signing failed: is the key a %s private key?",
                 tg_auth_alg_name(alg));
        goto out;
    }
    rc = TG_OK;
out:
    jwt_free(jwt); /* scrubs its copy of the key */
    free(claims_text);
    json_decref(claims);
    if (file_key) {
        OPENSSL_cleanse(file_key, file_len);
        free(file_key);
    }
    return rc;
}
