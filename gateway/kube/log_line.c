/* Kubelet log lines: the RFC 3339 timestamp prefix (see log_line.h). */
#include "kube/log_line.h"

#include <stdio.h>
#include <time.h>

static int ts_digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t ts_days(int y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

size_t tg_logs_ts_parse(const char *s, size_t len, int64_t *ns)
{
    int y, mo, d, h, mi, se;
    if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
        s[16] != ':')
        return 0;
    if (!ts_digits(s, 4, &y) || !ts_digits(s + 5, 2, &mo) || !ts_digits(s + 8, 2, &d) ||
        !ts_digits(s + 11, 2, &h) || !ts_digits(s + 14, 2, &mi) || !ts_digits(s + 17, 2, &se))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return 0;
    size_t i = 19;
    int64_t frac = 0;
    if (i < len && s[i] == '.') {
        i++;
        size_t start = i;
        int64_t scale = 100000000;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            frac += (s[i] - '0') * scale;
            scale /= 10;
            i++;
        }
        if (i == start)
            return 0;
    }
    int64_t off_s = 0;
    if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i + 6 <= len && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        int oh, om;
        if (!ts_digits(s + i + 1, 2, &oh) || !ts_digits(s + i + 4, 2, &om))
            return 0;
        off_s = (s[i] == '+' ? 1 : -1) * (int64_t)(oh * 3600 + om * 60);
        i += 6;
    } else {
        return 0;
    }
    int64_t secs = ts_days(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off_s;
    /* int64 nanoseconds end in 2262; later (or much earlier) times saturate */
    if (secs >= INT64_MAX / 1000000000 - 1)
        *ns = INT64_MAX;
    else if (secs <= INT64_MIN / 1000000000 + 1)
        *ns = INT64_MIN;
    else
        *ns = secs * 1000000000 + frac;
    return i;
}

int tg_logs_line_split(const char *line, size_t len, int64_t *ns, const char **text, size_t *tlen)
{
    size_t n = tg_logs_ts_parse(line, len, ns);
    if (n && n < len && line[n] == ' ') {
        *text = line + n + 1;
        *tlen = len - n - 1;
        return 1;
    }
    if (n && n == len) { /* a timestamp and an empty line */
        *text = line + n;
        *tlen = 0;
        return 1;
    }
    *text = line;
    *tlen = len;
    return 0;
}

static void ts_split(int64_t ns, time_t *s, long *frac)
{
    int64_t sec = ns / 1000000000;
    int64_t rem = ns % 1000000000;
    if (rem < 0) {
        rem += 1000000000;
        sec--;
    }
    *s = (time_t)sec;
    *frac = (long)rem;
}

void tg_logs_ts_format_s(int64_t ns, char *out, size_t outlen)
{
    time_t s;
    long frac;
    struct tm tm;
    ts_split(ns, &s, &frac);
    gmtime_r(&s, &tm);
    strftime(out, outlen, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void tg_logs_ts_format_ns(int64_t ns, char *out, size_t outlen)
{
    time_t s;
    long frac;
    struct tm tm;
    char base[32];
    ts_split(ns, &s, &frac);
    gmtime_r(&s, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, outlen, "%s.%09ldZ", base, frac);
}
