/* Sharded token buckets with bounded memory. */
#include "core/ratelimit.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

#define RL_SHARDS  64
#define RL_PROBES  16
#define RL_KEY_MAX 128

typedef struct {
    char key[RL_KEY_MAX];
    double tokens;
    uint64_t last_us;
    int used;
} rl_slot_t;

typedef struct {
    pthread_mutex_t lock;
    rl_slot_t *slots;
} rl_shard_t;

struct tg_ratelimit_s {
    double rate, burst;
    size_t per_shard;
    rl_shard_t shards[RL_SHARDS];
};

static uint64_t rl_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

tg_ratelimit_t *tg_ratelimit_new(double rate, double burst, size_t slots)
{
    tg_ratelimit_t *rl = tg_xcalloc(1, sizeof(*rl));
    rl->rate = rate;
    rl->burst = burst;
    rl->per_shard = slots / RL_SHARDS < RL_PROBES ? RL_PROBES : slots / RL_SHARDS;
    for (int i = 0; i < RL_SHARDS; i++) {
        pthread_mutex_init(&rl->shards[i].lock, NULL);
        rl->shards[i].slots = tg_xcalloc(rl->per_shard, sizeof(rl_slot_t));
    }
    return rl;
}

void tg_ratelimit_free(tg_ratelimit_t *rl)
{
    if (!rl)
        return;
    for (int i = 0; i < RL_SHARDS; i++) {
        pthread_mutex_destroy(&rl->shards[i].lock);
        free(rl->shards[i].slots);
    }
    free(rl);
}

/* The slot for key: its own, a free one, or the stalest in the window. */
static rl_slot_t *rl_find(tg_ratelimit_t *rl, rl_shard_t *sh, uint64_t h, const char *key)
{
    rl_slot_t *stalest = NULL;
    for (size_t i = 0; i < RL_PROBES; i++) {
        rl_slot_t *s = &sh->slots[(h + i) % rl->per_shard];
        if (s->used && strcmp(s->key, key) == 0)
            return s;
        if (!s->used)
            return s;
        if (!stalest || s->last_us < stalest->last_us)
            stalest = s;
    }
    stalest->used = 0;
    return stalest;
}

int tg_ratelimit_take(tg_ratelimit_t *rl, const char *key, uint64_t now_us, unsigned *retry_after_s)
{
    char k[RL_KEY_MAX];
    size_t n = strnlen(key, RL_KEY_MAX - 1);
    memcpy(k, key, n);
    k[n] = '\0';
    uint64_t h = rl_hash(k);
    rl_shard_t *sh = &rl->shards[(h >> 32) % RL_SHARDS];
    pthread_mutex_lock(&sh->lock);
    rl_slot_t *s = rl_find(rl, sh, h, k);
    if (!s->used) {
        memcpy(s->key, k, n + 1);
        s->used = 1;
        s->tokens = rl->burst;
        s->last_us = now_us;
    }
    double elapsed = now_us > s->last_us ? (double)(now_us - s->last_us) / 1e6 : 0;
    s->tokens = fmin(rl->burst, s->tokens + elapsed * rl->rate);
    s->last_us = now_us;
    int ok = s->tokens >= 1.0;
    if (ok)
        s->tokens -= 1.0;
    else
        *retry_after_s = (unsigned)ceil((1.0 - s->tokens) / rl->rate);
    pthread_mutex_unlock(&sh->lock);
    return ok;
}
