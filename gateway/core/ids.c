/* Identifiers and clocks. */
#include "core/ids.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void tg_uuid_v4(char out[TG_UUID_LEN + 1])
{
    unsigned char b[16];
    if (RAND_bytes(b, sizeof(b)) != 1) {
        /* RAND_bytes only fails when the OS entropy source is broken; an id
         * from the clock is still unique enough for a request id. */
        uint64_t t = tg_now_mono_us();
        memset(b, 0, sizeof(b));
        memcpy(b, &t, sizeof(t));
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, TG_UUID_LEN + 1,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
             b[15]);
}

int tg_uuid_valid(const char *s)
{
    for (int i = 0; i < TG_UUID_LEN; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-')
                return 0;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
            return 0;
        }
    }
    return s[TG_UUID_LEN] == '\0';
}

uint64_t tg_now_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int64_t tg_now_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void tg_time_rfc3339(int64_t wall_us, char *out, size_t outlen)
{
    time_t sec = (time_t)(wall_us / 1000000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)(wall_us % 1000000));
}

int tg_request_id_valid(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == ':' || c == '-';
        if (!ok || n >= 128)
            return 0;
    }
    return n > 0;
}
