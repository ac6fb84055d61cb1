/* Personal access tokens: generation, recognition, hashing. */
#include "auth/pat.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

#include "auth/b64url.h"

tg_rc_e tg_auth_pat_generate(char *out, size_t cap)
{
    unsigned char rnd[TG_AUTH_PAT_RANDOM];
    if (cap)
        out[0] = '\0';
    if (cap < TG_AUTH_PAT_BUFSIZE)
        return TG_EINVAL;
    if (RAND_bytes(rnd, sizeof(rnd)) != 1)
        return TG_EINTERNAL;
    memcpy(out, TG_AUTH_PAT_PREFIX, TG_AUTH_PAT_PREFIX_LEN);
    size_t n = tg_auth_b64url_encode_to(rnd, sizeof(rnd), out + TG_AUTH_PAT_PREFIX_LEN,
                                        cap - TG_AUTH_PAT_PREFIX_LEN);
    OPENSSL_cleanse(rnd, sizeof(rnd));
    if (n != TG_AUTH_PAT_LEN - TG_AUTH_PAT_PREFIX_LEN) {
        out[0] = '\0';
        return TG_EINTERNAL;
    }
    return TG_OK;
}

int tg_auth_pat_detect(const char *tok, size_t len)
{
    return tok && len >= TG_AUTH_PAT_PREFIX_LEN &&
           memcmp(tok, TG_AUTH_PAT_PREFIX, TG_AUTH_PAT_PREFIX_LEN) == 0;
}

int tg_auth_pat_well_formed(const char *tok, size_t len)
{
    return len == TG_AUTH_PAT_LEN && tg_auth_pat_detect(tok, len) &&
           tg_auth_b64url_valid(tok + TG_AUTH_PAT_PREFIX_LEN, len - TG_AUTH_PAT_PREFIX_LEN);
}

tg_rc_e tg_auth_pat_hash(const char *tok, size_t len, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (cap < TG_AUTH_PAT_HASH_BUFSIZE)
        return TG_EINVAL;
    if (EVP_Digest(tok, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
        out[0] = '\0';
        return TG_EINTERNAL;
    }
    for (unsigned i = 0; i < mdlen; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[2 * mdlen] = '\0';
    return TG_OK;
}
