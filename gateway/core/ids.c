/* Identifiers and clocks. */
#include "core/ids.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

void tg_uuid_v4(char out[TG_UUID_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[16];
    /* the kernel's CSPRNG, without OpenSSL's locking on every call */
    ssize_t got;
    do
        got = getrandom(b, sizeof(b), 0);
    while (got < 0 && errno == EINTR);
    if (got != (ssize_t)sizeof(b)) {
        /* a kernel without getrandom (before 3.17); an id from the clock is
         * still unique within this process */
        uint64_t t = tg_now_mono_us();
        memset(b, 0, sizeof(b));
        memcpy(b, &t, sizeof(t));
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    char *o = out;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *o++ = '-';
        *o++ = hex[b[i] >> 4];
        *o++ = hex[b[i] & 15];
    }
    *o = '\0';
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
