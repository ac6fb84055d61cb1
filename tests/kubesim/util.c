/* Small helpers shared by every kubesim module. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

double ks_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void ks_fmt_time(double t, char *out, size_t n)
{
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void ks_fmt_time_nano(double t, char *out, size_t n)
{
    time_t s = (time_t)t;
    long ns = (long)((t - (double)s) * 1e9);
    if (ns < 0)
        ns = 0;
    if (ns > 999999999)
        ns = 999999999;
    struct tm tm;
    char base[32];
    gmtime_r(&s, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, n, "%s.%09ldZ", base, ns);
}

double ks_parse_time(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    if (!s)
        return -1;
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        return -1;
    double frac = 0;
    if (*p == '.') {
        char *end = NULL;
        frac = strtod(p, &end);
        p = end;
    }
    if (*p != 'Z' && *p != '\0')
        return -1;
    return (double)timegm(&tm) + frac;
}

json_t *ks_json_now(void)
{
    char b[40];
    ks_fmt_time(ks_now(), b, sizeof(b));
    return json_string(b);
}

void ks_fmt_age(double secs, char *out, size_t n)
{
    /* Mirrors apimachinery duration.HumanDuration closely enough for tables. */
    long long s = secs < 0 ? 0 : (long long)secs;
    if (s < 120)
        snprintf(out, n, "%llds", s);
    else if (s < 600)
        snprintf(out, n, "%lldm%llds", s / 60, s % 60);
    else if (s < 3 * 3600)
        snprintf(out, n, "%lldm", s / 60);
    else if (s < 8 * 3600)
        snprintf(out, n, "%lldh%lldm", s / 3600, (s % 3600) / 60);
    else if (s < 48 * 3600)
        snprintf(out, n, "%lldh", s / 3600);
    else
        snprintf(out, n, "%lldd", s / 86400);
}

void ks_rand_suffix(char *out, size_t n)
{
    /* Kubernetes' utilrand alphabet: no vowels, no confusable digits. */
    static const char alpha[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char r[8];
    if (RAND_bytes(r, sizeof(r)) != 1)
        memset(r, 7, sizeof(r));
    size_t i;
    for (i = 0; i < 5 && i + 1 < n; i++)
        out[i] = alpha[r[i] % (sizeof(alpha) - 1)];
    out[i] = '\0';
}

void ks_uuid(char *out, size_t n)
{
    unsigned char r[16];
    if (RAND_bytes(r, sizeof(r)) != 1)
        memset(r, 3, sizeof(r));
    r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
    r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
    snprintf(out, n,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", r[0],
             r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
             r[14], r[15]);
}

void ks_sha1_hex(const void *data, size_t len, char *out, size_t n)
{
    unsigned char md[SHA_DIGEST_LENGTH];
    SHA1(data, len, md);
    size_t o = 0;
    for (size_t i = 0; i < SHA_DIGEST_LENGTH && o + 3 <= n; i++, o += 2)
        snprintf(out + o, 3, "%02x", md[i]);
    if (n)
        out[o < n ? o : n - 1] = '\0';
}

/* Walk a dotted path; when `create` is set, missing parents become objects. */
static json_t *jwalk(json_t *o, const char *path, int create, char *last, size_t lastn)
{
    const char *p = path;
    while (o) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        char key[128];
        if (len >= sizeof(key))
            return NULL;
        memcpy(key, p, len);
        key[len] = '\0';
        if (!dot) {
            if (last)
                ks_strlcpy(last, key, lastn);
            return o;
        }
        json_t *next = json_is_object(o) ? json_object_get(o, key) : NULL;
        if (!next && create && json_is_object(o)) {
            next = json_object();
            json_object_set_new(o, key, next);
        }
        if (!json_is_object(next))
            return NULL;
        o = next;
        p = dot + 1;
    }
    return NULL;
}

json_t *ks_jget(json_t *o, const char *path)
{
    char key[128];
    json_t *parent = jwalk(o, path, 0, key, sizeof(key));
    return json_is_object(parent) ? json_object_get(parent, key) : NULL;
}

const char *ks_jstr(json_t *o, const char *path)
{
    return json_string_value(ks_jget(o, path));
}

long long ks_jint(json_t *o, const char *path, long long dflt)
{
    json_t *v = ks_jget(o, path);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v))
        return (long long)json_real_value(v);
    return dflt;
}

int ks_jbool(json_t *o, const char *path, int dflt)
{
    json_t *v = ks_jget(o, path);
    if (json_is_boolean(v))
        return json_is_true(v);
    return dflt;
}

json_t *ks_jobj(json_t *o, const char *path)
{
    char key[128];
    json_t *parent = jwalk(o, path, 1, key, sizeof(key));
    if (!json_is_object(parent))
        return NULL;
    json_t *v = json_object_get(parent, key);
    if (!json_is_object(v)) {
        v = json_object();
        json_object_set_new(parent, key, v);
    }
    return v;
}

void ks_jset(json_t *o, const char *path, json_t *val)
{
    char key[128];
    json_t *parent = jwalk(o, path, 1, key, sizeof(key));
    if (!json_is_object(parent)) {
        json_decref(val);
        return;
    }
    json_object_set_new(parent, key, val);
}

void ks_jdel(json_t *o, const char *path)
{
    char key[128];
    json_t *parent = jwalk(o, path, 0, key, sizeof(key));
    if (json_is_object(parent))
        json_object_del(parent, key);
}

const char *ks_meta_name(json_t *o)
{
    return ks_jstr(o, "metadata.name");
}

const char *ks_meta_ns(json_t *o)
{
    return ks_jstr(o, "metadata.namespace");
}

const char *ks_meta_uid(json_t *o)
{
    return ks_jstr(o, "metadata.uid");
}

const char *ks_label(json_t *o, const char *key)
{
    json_t *l = ks_jget(o, "metadata.labels");
    return json_is_object(l) ? json_string_value(json_object_get(l, key)) : NULL;
}

const char *ks_annotation(json_t *o, const char *key)
{
    json_t *l = ks_jget(o, "metadata.annotations");
    return json_is_object(l) ? json_string_value(json_object_get(l, key)) : NULL;
}

json_t *ks_cond_get(json_t *status, const char *type)
{
    json_t *conds = json_object_get(status, "conditions");
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        if (ks_streq(json_string_value(json_object_get(c, "type")), type))
            return c;
    }
    return NULL;
}

int ks_cond_true(json_t *status, const char *type)
{
    json_t *c = ks_cond_get(status, type);
    return c && ks_streq(json_string_value(json_object_get(c, "status")), "True");
}

int ks_cond_set(json_t *status, const char *type, const char *st, const char *reason,
                const char *msg, int job_style)
{
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    json_t *c = ks_cond_get(status, type);
    if (c && ks_streq(json_string_value(json_object_get(c, "status")), st) &&
        ks_streq(json_string_value(json_object_get(c, "reason")), reason) &&
        ks_streq(json_string_value(json_object_get(c, "message")), msg ? msg : ""))
        return 0;
    int moved = !c || !ks_streq(json_string_value(json_object_get(c, "status")), st);
    if (!c) {
        c = json_object();
        json_object_set_new(c, "type", json_string(type));
        json_array_append_new(conds, c);
    }
    json_object_set_new(c, "status", json_string(st));
    json_object_set_new(c, "reason", json_string(reason ? reason : ""));
    json_object_set_new(c, "message", json_string(msg ? msg : ""));
    if (moved || !json_object_get(c, "lastTransitionTime"))
        json_object_set_new(c, "lastTransitionTime", ks_json_now());
    if (job_style)
        json_object_set_new(c, "lastProbeTime", ks_json_now());
    return 1;
}

int ks_strlcpy(char *dst, const char *src, size_t n)
{
    if (!n)
        return -1;
    size_t l = src ? strlen(src) : 0;
    size_t c = l < n ? l : n - 1;
    if (c)
        memcpy(dst, src, c);
    dst[c] = '\0';
    return l < n ? 0 : -1;
}

void ks_lower(char *dst, const char *src, size_t n)
{
    size_t i;
    for (i = 0; src && src[i] && i + 1 < n; i++)
        dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] + 32 : src[i]);
    if (n)
        dst[i] = '\0';
}

int ks_streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

int ks_mkdirs(const char *path, int mode)
{
    char tmp[4096];
    if (ks_strlcpy(tmp, path, sizeof(tmp)) != 0)
        return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, (mode_t)mode) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, (mode_t)mode) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

char *ks_read_file(const char *path, size_t *len)
{
    char *data = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0)
        goto out;
    long sz = ftell(f);
    if (sz < 0 || fseek(f, 0, SEEK_SET) != 0)
        goto out;
    data = tg_xmalloc((size_t)sz + 1);
    if (fread(data, 1, (size_t)sz, f) != (size_t)sz) {
        TG_FREE_NULL(data);
        goto out;
    }
    data[sz] = '\0';
    if (len)
        *len = (size_t)sz;
out:
    fclose(f);
    return data;
}

int ks_fmt(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out, n, fmt, ap);
    va_end(ap);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}
