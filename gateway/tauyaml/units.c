/* Syntax helpers: Go durations, paths, names, labels. */
#include "tauyaml/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tg_tauyaml_duration_parse(const char *s, int64_t *ns)
{
    if (strcmp(s, "0") == 0) {
        *ns = 0;
        return 0;
    }
    if (!*s)
        return -1;
    double total = 0;
    const char *p = s;
    while (*p) {
        const char *start = p;
        while ((*p >= '0' && *p <= '9') || *p == '.')
            p++;
        if (p == start)
            return -1;
        char buf[40];
        if ((size_t)(p - start) >= sizeof(buf))
            return -1;
        memcpy(buf, start, (size_t)(p - start));
        buf[p - start] = '\0';
        if (buf[0] == '.' || strchr(buf, '.') != strrchr(buf, '.'))
            return -1;
        double v = strtod(buf, NULL);
        double unit;
        if (strncmp(p, "ns", 2) == 0) {
            unit = 1;
            p += 2;
        } else if (strncmp(p, "us", 2) == 0) {
            unit = 1e3;
            p += 2;
        } else if (strncmp(p, "\xc2\xb5s", 3) == 0) {
            unit = 1e3;
            p += 3;
        } else if (strncmp(p, "ms", 2) == 0) {
            unit = 1e6;
            p += 2;
        } else if (*p == 's') {
            unit = 1e9;
            p++;
        } else if (*p == 'm') {
            unit = 60e9;
            p++;
        } else if (*p == 'h') {
            unit = 3600e9;
            p++;
        } else {
            return -1;
        }
        total += v * unit;
        if (total > 9.2e18)
            return -1;
    }
    *ns = (int64_t)total;
    return 0;
}

static int units_bad_char(char c)
{
    return (unsigned char)c < 0x21 || c == 0x7f;
}

/* "a/b/c": '/'-separated segments, none empty, "." or "..", no blanks or
 * control characters. */
static int units_segments_clean(const char *p)
{
    const char *seg = p;
    for (const char *q = p;; q++) {
        if (*q == '/' || *q == '\0') {
            size_t n = (size_t)(q - seg);
            if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
                return 0;
            if (*q == '\0')
                return 1;
            seg = q + 1;
        } else if (units_bad_char(*q)) {
            return 0;
        }
    }
}

int tg_tauyaml_path_clean_abs(const char *p)
{
    if (p[0] != '/')
        return 0;
    return p[1] == '\0' || units_segments_clean(p + 1);
}

int tg_tauyaml_path_clean_rel(const char *p)
{
    if (strcmp(p, ".") == 0)
        return 1;
    if (p[0] == '/' || p[0] == '\0')
        return 0;
    return units_segments_clean(p);
}

int tg_tauyaml_path_within(const char *p, const char *dir)
{
    if (strcmp(dir, "/") == 0)
        return 1;
    size_t n = strlen(dir);
    return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

int tg_tauyaml_path_overlap(const char *a, const char *b)
{
    return tg_tauyaml_path_within(a, b) || tg_tauyaml_path_within(b, a);
}

int tg_tauyaml_path_rel_stays_inside(const char *p)
{
    if (p[0] == '/' || p[0] == '\0')
        return 0;
    long depth = 0;
    const char *seg = p;
    for (const char *q = p;; q++) {
        if (*q == '/' || *q == '\0') {
            size_t n = (size_t)(q - seg);
            if (n == 2 && seg[0] == '.' && seg[1] == '.') {
                if (--depth < 0)
                    return 0;
            } else if (n > 0 && !(n == 1 && seg[0] == '.')) {
                depth++;
            }
            if (*q == '\0')
                return 1;
            seg = q + 1;
        }
    }
}

int tg_tauyaml_dns_label(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !(c == '-' && i > 0 && i + 1 < n))
            return 0;
    }
    return 1;
}

static int units_label_name(const char *s, size_t n)
{
    if (n == 0 || n > 63)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && !((c == '-' || c == '_' || c == '.') && i > 0 && i + 1 < n))
            return 0;
    }
    return 1;
}

int tg_tauyaml_label_key(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash)
        return units_label_name(s, strlen(s));
    size_t plen = (size_t)(slash - s);
    if (plen == 0 || plen > 253)
        return 0;
    for (size_t i = 0; i < plen; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !((c == '-' || c == '.') && i > 0 && i + 1 < plen))
            return 0;
    }
    return units_label_name(slash + 1, strlen(slash + 1));
}

int tg_tauyaml_label_value(const char *s)
{
    size_t n = strlen(s);
    return n == 0 || units_label_name(s, n);
}

const char *tg_tauyaml_ext(const char *s)
{
    const char *slash = strrchr(s, '/');
    const char *base = slash ? slash + 1 : s;
    const char *dot = strrchr(base, '.');
    return dot ? dot : "";
}
