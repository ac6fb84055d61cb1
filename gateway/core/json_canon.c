/* Canonical JSON text. */
#include "core/json_canon.h"

#include "core/keyorder.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tg_buf_append with the common case (room left) inlined. */
static inline tg_rc_e canon_put(tg_buf_t *b, const char *s, size_t n)
{
    if (b->len + n < b->cap && b->len + n <= b->max) {
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
        return TG_OK;
    }
    return tg_buf_append(b, s, n);
}
#define tg_buf_append canon_put

/* The escape of a byte that is not plain into esc; returns its length:
 * the short forms JSON has, \u00XX for the other control bytes. */
static size_t canon_escape(unsigned char c, char *esc)
{
    static const char hex[] = "0123456789abcdef";
    static const char shortform[0x60] = {['"'] = '"',  ['\\'] = '\\', ['\n'] = 'n', ['\t'] = 't',
                                         ['\r'] = 'r', ['\b'] = 'b',  ['\f'] = 'f'};
    esc[0] = '\\';
    if (c < sizeof(shortform) && shortform[c]) {
        esc[1] = shortform[c];
        return 2;
    }
    esc[1] = 'u';
    esc[2] = '0';
    esc[3] = '0';
    esc[4] = hex[c >> 4];
    esc[5] = hex[c & 15];
    return 6;
}

size_t tg_json_escape(unsigned char c, char *esc, int q)
{
    if (!q)
        return canon_escape(c, esc);
    /* text that is itself the contents of a JSON string: the escape's
     * backslash, and a quote or backslash after it, are escaped once more
     * (\" becomes \\\", \n becomes \\n) */
    esc[0] = '\\';
    size_t n = canon_escape(c, esc + 1);
    if (esc[2] != '"' && esc[2] != '\\')
        return n + 1;
    esc[3] = esc[2];
    esc[2] = '\\';
    return 4;
}

/* A string's opening or closing quote: \" inside a JSON string (q set). */
static const char *const canon_quote[2] = {"\"", "\\\""};

static tg_rc_e canon_string(const char *s, size_t n, int q, tg_buf_t *out)
{
    /* When even the worst case (every byte as \u00XX, or \\u00XX when
     * quoted, and the tail word's slack) fits without growing or passing the
     * ceiling, write straight into the buffer. */
    size_t room = out->cap - out->len, worst = 7 * n + 4 + TG_JSON_TAIL_SLACK;
    if (out->data && n < ((size_t)1 << 28) && worst < room && worst <= out->max - out->len) {
        char *o = out->data + out->len;
        memcpy(o, canon_quote[q], 2);
        o += 1 + q;
        o = tg_json_escape_into(o, s, n, tg_json_escape, q);
        memcpy(o, canon_quote[q], 2);
        o += 1 + q;
        *o = '\0';
        out->len = (size_t)(o - out->data);
        return TG_OK;
    }
    tg_rc_e rc = tg_buf_append(out, canon_quote[q], 1 + (size_t)q);
    size_t run = 0;
    for (size_t i = 0; i < n && rc == TG_OK; i++) {
        unsigned char c = (unsigned char)s[i];
        if (tg_json_plain(c))
            continue;
        rc = tg_buf_append(out, s + run, i - run);
        run = i + 1;
        char esc[7];
        size_t el = tg_json_escape(c, esc, q);
        if (rc == TG_OK)
            rc = tg_buf_append(out, esc, el);
    }
    if (rc == TG_OK)
        rc = tg_buf_append(out, s + run, n - run);
    if (rc == TG_OK)
        rc = tg_buf_append(out, canon_quote[q], 1 + (size_t)q);
    return rc;
}

size_t tg_json_int_text(char out[24], json_int_t v)
{
    char tmp[24];
    size_t i = sizeof(tmp);
    /* through unsigned, so the most negative value negates without overflow */
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--i] = '-';
    memcpy(out, tmp + i, sizeof(tmp) - i);
    out[sizeof(tmp) - i] = '\0';
    return sizeof(tmp) - i;
}

tg_rc_e tg_json_canon_int(json_int_t v, tg_buf_t *out)
{
    char buf[24];
    size_t n = tg_json_int_text(buf, v);
    return tg_buf_append(out, buf, n);
}

static tg_rc_e canon_real(double d, int precision, tg_buf_t *out)
{
    char buf[40];
    int n = snprintf(buf, sizeof(buf), "%.*g", precision, d);
    if (n < 0 || (size_t)n >= sizeof(buf) - 2)
        return TG_EINVAL;
    /* Keep reals recognisable as reals, as jansson does. */
    if (!strpbrk(buf, ".eEn")) {
        buf[n++] = '.';
        buf[n++] = '0';
    }
    return tg_buf_append(out, buf, (size_t)n);
}

typedef struct canon_kv_s {
    uint64_t pre; /* tg_key_prefix: orders most pairs */
    const char *k;
    size_t n;
    json_t *v;
} canon_kv_t;

static int canon_before(const canon_kv_t *a, const canon_kv_t *b)
{
    return tg_key_cmp(a->pre, a->k, a->n, b->pre, b->k, b->n) < 0;
}

static tg_rc_e canon_value(const json_t *v, int precision, tg_buf_t *out);

static tg_rc_e canon_object(const json_t *o, int precision, tg_buf_t *out)
{
    size_t n = json_object_size(o);
    canon_kv_t stack[48];
    canon_kv_t *kv = n <= 48 ? stack : tg_xmalloc(n * sizeof(*kv));
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        /* Insertion sort: objects are small and often already in order. */
        canon_kv_t e = {.k = k, .v = v};
        e.n = json_object_iter_key_len(json_object_key_to_iter(k));
        e.pre = tg_key_prefix(k, e.n);
        size_t j = i++;
        while (j > 0 && canon_before(&e, &kv[j - 1])) {
            kv[j] = kv[j - 1];
            j--;
        }
        kv[j] = e;
    }
    tg_rc_e rc = tg_buf_append(out, "{", 1);
    for (i = 0; i < n && rc == TG_OK; i++) {
        if (i)
            rc = tg_buf_append(out, ",", 1);
        if (rc == TG_OK)
            rc = canon_string(kv[i].k, kv[i].n, 0, out);
        if (rc == TG_OK)
            rc = tg_buf_append(out, ":", 1);
        if (rc == TG_OK)
            rc = canon_value(kv[i].v, precision, out);
    }
    if (rc == TG_OK)
        rc = tg_buf_append(out, "}", 1);
    if (kv != stack)
        free(kv);
    return rc;
}

static tg_rc_e canon_value(const json_t *v, int precision, tg_buf_t *out)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return canon_object(v, precision, out);
    case JSON_ARRAY: {
        tg_rc_e rc = tg_buf_append(out, "[", 1);
        for (size_t i = 0; i < json_array_size(v) && rc == TG_OK; i++) {
            if (i)
                rc = tg_buf_append(out, ",", 1);
            if (rc == TG_OK)
                rc = canon_value(json_array_get(v, i), precision, out);
        }
        return rc == TG_OK ? tg_buf_append(out, "]", 1) : rc;
    }
    case JSON_STRING:
        return canon_string(json_string_value(v), json_string_length(v), 0, out);
    case JSON_INTEGER:
        return tg_json_canon_int(json_integer_value(v), out);
    case JSON_REAL:
        return canon_real(json_real_value(v), precision, out);
    case JSON_TRUE:
        return tg_buf_append(out, "true", 4);
    case JSON_FALSE:
        return tg_buf_append(out, "false", 5);
    default:
        return tg_buf_append(out, "null", 4);
    }
}

tg_rc_e tg_json_canon(const json_t *v, int precision, tg_buf_t *out)
{
    return canon_value(v, precision, out);
}

tg_rc_e tg_json_canon_string(const char *s, size_t n, tg_buf_t *out)
{
    return canon_string(s, n, 0, out);
}

/* Every byte as \\u00XX is 7; each member adds \"\":\"\" and a comma. */
#define CANON_PAIR_WORST(bytes, n) (7 * (bytes) + 11 * (n) + 2 + TG_JSON_TAIL_SLACK)

tg_rc_e tg_json_canon_quoted_pairs(size_t n, tg_json_pair_fn pair, const void *arg, size_t bytes,
                                   tg_buf_t *out)
{
    const char *k, *v;
    size_t kn, vn;
    if (bytes < ((size_t)1 << 28) && n < ((size_t)1 << 24) &&
        tg_buf_reserve(out, CANON_PAIR_WORST(bytes, n)) == TG_OK) {
        char *o = out->data + out->len;
        *o++ = '{';
        for (size_t i = 0; i < n; i++) {
            pair(arg, i, &k, &kn, &v, &vn);
            if (i)
                *o++ = ',';
            memcpy(o, "\\\"", 2);
            o = tg_json_escape_into(o + 2, k, kn, tg_json_escape, 1);
            memcpy(o, "\\\":\\\"", 5);
            o = tg_json_escape_into(o + 5, v, vn, tg_json_escape, 1);
            memcpy(o, "\\\"", 2);
            o += 2;
        }
        *o++ = '}';
        *o = '\0';
        out->len = (size_t)(o - out->data);
        return TG_OK;
    }
    /* Near the buffer's ceiling: piece by piece, stopping where it is hit. */
    tg_rc_e rc = tg_buf_append(out, "{", 1);
    for (size_t i = 0; i < n && rc == TG_OK; i++) {
        pair(arg, i, &k, &kn, &v, &vn);
        if (i)
            rc = tg_buf_append(out, ",", 1);
        if (rc == TG_OK)
            rc = canon_string(k, kn, 1, out);
        if (rc == TG_OK)
            rc = tg_buf_append(out, ":", 1);
        if (rc == TG_OK)
            rc = canon_string(v, vn, 1, out);
    }
    return rc == TG_OK ? tg_buf_append(out, "}", 1) : rc;
}

char *tg_json_canon_text(const json_t *v)
{
    tg_buf_t b;
    tg_buf_init(&b, 8u << 20);
    if (tg_json_canon(v, 15, &b) != TG_OK) {
        tg_buf_clean(&b);
        return tg_xstrdup("null");
    }
    size_t n;
    char *s = tg_buf_steal(&b, &n);
    return s ? s : tg_xstrdup("");
}
