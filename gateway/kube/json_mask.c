/* A one-pass JSON scanner that validates everything and builds jansson
 * values only under the paths a mask names (see json_mask.h). */
#include "kube/json_mask.h"

#include <stdio.h>
#include <string.h>

#define JM_MAX_DEPTH JSON_PARSER_MAX_DEPTH /* as deep as jansson itself nests */
#define JM_KEY_MAX   256                   /* longer masked keys are looked up on the heap */

typedef struct jm_scan_s {
    const char *start, *p, *end;
    int depth;
    json_error_t *err;
    int failed;
} jm_scan_t;

static int jm_fail(jm_scan_t *s, const char *what)
{
    if (!s->failed) {
        s->failed = 1;
        memset(s->err, 0, sizeof(*s->err));
        s->err->line = -1;
        s->err->column = -1;
        s->err->position = (int)(s->p - s->start);
        snprintf(s->err->text, sizeof(s->err->text), "%s at byte %d", what, s->err->position);
    }
    return -1;
}

static void jm_ws(jm_scan_t *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int jm_expect(jm_scan_t *s, char c)
{
    jm_ws(s);
    if (s->p >= s->end || *s->p != c) {
        char what[32];
        snprintf(what, sizeof(what), "'%c' expected", c);
        return jm_fail(s, what);
    }
    s->p++;
    return 0;
}

static int jm_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A string at s->p (its opening quote). OUT: its body (between the quotes,
 * still escaped) and whether it holds any escape. */
static int jm_string(jm_scan_t *s, const char **body, size_t *len, int *escaped)
{
    if (s->p >= s->end || *s->p != '"')
        return jm_fail(s, "string expected");
    const char *b = ++s->p;
    *escaped = 0;
    while (s->p < s->end) {
        unsigned char c = (unsigned char)*s->p;
        if (c == '"') {
            *body = b;
            *len = (size_t)(s->p - b);
            s->p++;
            return 0;
        }
        if (c < 0x20)
            return jm_fail(s, "control character in a string");
        if (c == '\\') {
            *escaped = 1;
            if (s->end - s->p < 2)
                break;
            char e = s->p[1];
            if (e == 'u') {
                if (s->end - s->p < 6 || !jm_hex(s->p[2]) || !jm_hex(s->p[3]) || !jm_hex(s->p[4]) ||
                    !jm_hex(s->p[5]))
                    return jm_fail(s, "invalid \\u escape");
                s->p += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || !e)
                return jm_fail(s, "invalid escape");
            s->p += 2;
            continue;
        }
        s->p++;
    }
    return jm_fail(s, "unterminated string");
}

static int jm_digits(jm_scan_t *s)
{
    const char *d = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    return s->p > d ? 0 : jm_fail(s, "digit expected");
}

static int jm_number(jm_scan_t *s)
{
    if (s->p < s->end && *s->p == '-')
        s->p++;
    if (s->p < s->end && *s->p == '0')
        s->p++;
    else if (jm_digits(s))
        return -1;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (jm_digits(s))
            return -1;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (jm_digits(s))
            return -1;
    }
    return 0;
}

static int jm_literal(jm_scan_t *s, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return jm_fail(s, "invalid literal");
    s->p += n;
    return 0;
}

static int jm_skip(jm_scan_t *s);

/* Object members or array elements up to the closing bracket, each
 * handed to fn (s->p at the member's key, or the element). */
typedef int (*jm_each_fn)(jm_scan_t *s, void *arg);

static int jm_container(jm_scan_t *s, char close, jm_each_fn fn, void *arg)
{
    if (++s->depth > JM_MAX_DEPTH)
        return jm_fail(s, "nested too deeply");
    s->p++; /* the opening bracket */
    jm_ws(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        s->depth--;
        return 0;
    }
    for (;;) {
        jm_ws(s);
        if (fn(s, arg))
            return -1;
        jm_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == close) {
            s->p++;
            s->depth--;
            return 0;
        }
        return jm_fail(s, close == '}' ? "',' or '}' expected" : "',' or ']' expected");
    }
}

static int jm_skip_member(jm_scan_t *s, void *arg)
{
    (void)arg;
    const char *k;
    size_t n;
    int esc;
    if (jm_string(s, &k, &n, &esc) || jm_expect(s, ':'))
        return -1;
    return jm_skip(s);
}

static int jm_skip_element(jm_scan_t *s, void *arg)
{
    (void)arg;
    return jm_skip(s);
}

/* Check one value and step over it. */
static int jm_skip(jm_scan_t *s)
{
    jm_ws(s);
    if (s->p >= s->end)
        return jm_fail(s, "value expected");
    const char *b;
    size_t n;
    int esc;
    switch (*s->p) {
    case '{':
        return jm_container(s, '}', jm_skip_member, NULL);
    case '[':
        return jm_container(s, ']', jm_skip_element, NULL);
    case '"':
        return jm_string(s, &b, &n, &esc);
    case 't':
        return jm_literal(s, "true");
    case 'f':
        return jm_literal(s, "false");
    case 'n':
        return jm_literal(s, "null");
    default:
        if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
            return jm_number(s);
        return jm_fail(s, "value expected");
    }
}

static int jm_masked(jm_scan_t *s, const json_t *mask, json_t **out);

typedef struct jm_obj_s {
    const json_t *mask;
    json_t *out;
} jm_obj_t;

/* The mask's member for a key as it stands in the text (escaped or not). */
static const json_t *jm_mask_member(jm_scan_t *s, const json_t *mask, const char *k, size_t n,
                                    int escaped)
{
    if (!escaped)
        return json_object_getn(mask, k, n);
    /* rare: let jansson unescape the key (quotes included) */
    json_t *key = json_loadb(k - 1, n + 2, JSON_DECODE_ANY, s->err);
    if (!key) {
        jm_fail(s, "invalid key");
        return NULL;
    }
    const json_t *m = json_object_getn(mask, json_string_value(key), json_string_length(key));
    json_decref(key);
    return m;
}

static int jm_masked_member(jm_scan_t *s, void *arg)
{
    jm_obj_t *o = arg;
    const char *k;
    size_t n;
    int esc;
    if (jm_string(s, &k, &n, &esc) || jm_expect(s, ':'))
        return -1;
    const json_t *m = jm_mask_member(s, o->mask, k, n, esc);
    if (s->failed)
        return -1;
    if (!m)
        return jm_skip(s);
    json_t *v = NULL;
    if (jm_masked(s, m, &v))
        return -1;
    if (!v)
        return 0;
    /* a kept key: unescape it once more for storing (escaped keys are rare) */
    json_t *key = esc ? json_loadb(k - 1, n + 2, JSON_DECODE_ANY, s->err) : NULL;
    const char *kp = key ? json_string_value(key) : k;
    size_t kn = key ? json_string_length(key) : n;
    int r = 0;
    if (json_object_getn(o->out, kp, kn))
        r = jm_fail(s, "duplicate object key");
    else if (json_object_setn_new(o->out, kp, kn, v) != 0)
        r = jm_fail(s, "invalid object key");
    else
        v = NULL;
    json_decref(v);
    json_decref(key);
    return r;
}

static int jm_masked_element(jm_scan_t *s, void *arg)
{
    jm_obj_t *a = arg;
    json_t *v = NULL;
    if (jm_masked(s, a->mask, &v))
        return -1;
    if (v)
        json_array_append_new(a->out, v);
    return 0;
}

/* One value under a mask. OUT: *out the kept part (NEW), or NULL when the
 * mask keeps nothing of it. */
static int jm_masked(jm_scan_t *s, const json_t *mask, json_t **out)
{
    *out = NULL;
    jm_ws(s);
    if (s->p >= s->end)
        return jm_fail(s, "value expected");
    if (json_is_true(mask)) {
        const char *b = s->p;
        if (jm_skip(s))
            return -1;
        *out = json_loadb(b, (size_t)(s->p - b), JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, s->err);
        if (!*out) {
            s->failed = 1; /* jansson said why (invalid UTF-8, a duplicate key) */
            return -1;
        }
        return 0;
    }
    int is_obj = json_is_object(mask) && *s->p == '{';
    int is_arr = json_is_array(mask) && *s->p == '[';
    if (!is_obj && !is_arr)
        return jm_skip(s);
    jm_obj_t o = {.mask = is_obj ? mask : json_array_get(mask, 0),
                  .out = is_obj ? json_object() : json_array()};
    if (jm_container(s, is_obj ? '}' : ']', is_obj ? jm_masked_member : jm_masked_element, &o)) {
        json_decref(o.out);
        return -1;
    }
    *out = o.out;
    return 0;
}

json_t *tg_kube_json_load_masked(const char *text, size_t len, const json_t *mask,
                                 json_error_t *err)
{
    json_error_t local;
    jm_scan_t s = {.start = text, .p = text, .end = text + len, .err = err ? err : &local};
    memset(s.err, 0, sizeof(*s.err));
    json_t *out = NULL;
    if (jm_masked(&s, mask, &out))
        return NULL;
    jm_ws(&s);
    if (s.p != s.end) {
        json_decref(out);
        jm_fail(&s, "end of text expected");
        return NULL;
    }
    return out;
}

json_t *tg_kube_mask_union(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return json_incref((json_t *)(a ? a : b));
    if (json_is_true(a) || json_is_true(b))
        return json_true();
    if (json_is_array(a) && json_is_array(b)) {
        json_t *each = tg_kube_mask_union(json_array_get(a, 0), json_array_get(b, 0));
        return each ? json_pack("[o]", each) : json_array();
    }
    if (json_is_object(a) && json_is_object(b)) {
        json_t *out = json_deep_copy(a);
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)b, k, m) {
            json_t *u = tg_kube_mask_union(json_object_get(a, k), m);
            if (u)
                json_object_set_new(out, k, u);
        }
        return out;
    }
    return json_true(); /* an object and an array: keep the field whole */
}
