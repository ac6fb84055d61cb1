/* Token-bucket rate limits keyed by a string (a principal's subject).
 *
 * Memory is fixed: 64 shards of a fixed number of slots; when a shard is
 * full, the bucket idle the longest in the probe window is reused (a bucket
 * idle long enough is full again anyway, so forgetting it loses nothing). */
#ifndef TG_CORE_RATELIMIT_H
#define TG_CORE_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

typedef struct tg_ratelimit_s tg_ratelimit_t;

/* rate: tokens per second; burst: bucket size; slots: keys remembered. */
tg_ratelimit_t *tg_ratelimit_new(double rate, double burst, size_t slots);
void tg_ratelimit_free(tg_ratelimit_t *rl);
/* Take one token for `key` at `now_us` (monotonic). Returns 1 when allowed;
 * 0 when not, with *retry_after_s set to the whole seconds until a token. */
int tg_ratelimit_take(tg_ratelimit_t *rl, const char *key, uint64_t now_us,
                      unsigned *retry_after_s);

#endif
