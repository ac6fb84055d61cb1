/* Personal access tokens: generation, recognition, hashing. */
#include "auth/pat.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <string.h>

#include "core/base64.h"
#include "core/digest.h"

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
    size_t n = tg_base64_encode_to(rnd, sizeof(rnd), TG_B64_URL, out + TG_AUTH_PAT_PREFIX_LEN,
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
           tg_base64_valid(tok + TG_AUTH_PAT_PREFIX_LEN, len - TG_AUTH_PAT_PREFIX_LEN, TG_B64_URL,
                           NULL);
}

tg_rc_e tg_auth_pat_hash(const char *tok, size_t len, char *out, size_t cap)
{
    if (cap < TG_AUTH_PAT_HASH_BUFSIZE)
        return TG_EINVAL;
    tg_sha256_hex(tok, len, out);
    return TG_OK;
}
