/* Identifiers and clocks. */
#ifndef TG_CORE_IDS_H
#define TG_CORE_IDS_H

#include <stddef.h>
#include <stdint.h>

#define TG_UUID_LEN 36

/* Random (v4) UUID text into out (at least TG_UUID_LEN + 1 bytes). */
void tg_uuid_v4(char out[TG_UUID_LEN + 1]);
/* True when s is a UUID in canonical lower- or upper-case text form. */
int tg_uuid_valid(const char *s);
/* Microseconds on the monotonic clock. */
uint64_t tg_now_mono_us(void);
/* Microseconds since the epoch. */
int64_t tg_now_wall_us(void);
/* RFC 3339 UTC text for a wall time in µs ("2026-12-02T10:33:37.123456Z"). */
void tg_time_rfc3339(int64_t wall_us, char *out, size_t outlen);
/* True when s is a safe request id: 1..128 chars of [A-Za-z0-9._:-]. */
int tg_request_id_valid(const char *s);

#endif
