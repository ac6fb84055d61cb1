/* The verified-token table: direct-mapped by the token's SHA-256. */
#include "auth/verified.h"

#include <openssl/crypto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "core/mem.h"

#define VERIFIED_SLOTS 4096 /* distinct live tokens worth remembering */

typedef struct {
    unsigned char digest[TG_SHA256_LEN];
    uint64_t gen; /* 0: empty */
    char *claims; /* JSON text */
} verified_slot_t;

struct tg_auth_verified_s {
    pthread_mutex_t lock;
    verified_slot_t slots[VERIFIED_SLOTS];
};

tg_auth_verified_t *tg_auth_verified_new(void)
{
    tg_auth_verified_t *v = tg_xcalloc(1, sizeof(*v));
    pthread_mutex_init(&v->lock, NULL);
    return v;
}

void tg_auth_verified_free(tg_auth_verified_t *v)
{
    if (!v)
        return;
    for (int i = 0; i < VERIFIED_SLOTS; i++)
        free(v->slots[i].claims);
    pthread_mutex_destroy(&v->lock);
    free(v);
}

static verified_slot_t *verified_slot(tg_auth_verified_t *v, const unsigned char *d)
{
    uint32_t h;
    memcpy(&h, d, sizeof(h));
    return &v->slots[h % VERIFIED_SLOTS];
}

json_t *tg_auth_verified_get(tg_auth_verified_t *v, const char *tok, size_t len, uint64_t gen)
{
    unsigned char d[TG_SHA256_LEN];
    tg_sha256(tok, len, d);
    verified_slot_t *s = verified_slot(v, d);
    json_t *claims = NULL;
    pthread_mutex_lock(&v->lock);
    if (s->gen == gen && gen && CRYPTO_memcmp(s->digest, d, sizeof(d)) == 0)
        claims = json_loads(s->claims, 0, NULL);
    pthread_mutex_unlock(&v->lock);
    return claims;
}

void tg_auth_verified_put(tg_auth_verified_t *v, const char *tok, size_t len, uint64_t gen,
                          const json_t *claims)
{
    char *text = json_dumps(claims, JSON_COMPACT);
    if (!text)
        return;
    unsigned char d[TG_SHA256_LEN];
    tg_sha256(tok, len, d);
    verified_slot_t *s = verified_slot(v, d);
    pthread_mutex_lock(&v->lock);
    free(s->claims);
    memcpy(s->digest, d, sizeof(d));
    s->gen = gen;
    s->claims = text;
    pthread_mutex_unlock(&v->lock);
}
