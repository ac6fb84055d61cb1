/* Marker lines: TAU_METRIC / TAU_CHECKPOINT payloads (see markers.h). */
#include "engine/markers.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/mem.h"

#define MARKER_PREFIX_MAX 256            /* longest Ray-style "(...) " origin prefix */
#define MARKER_MAX_UNIX_S 253402300799.0 /* 9999-12-31T23:59:59Z */

typedef struct {
    const char *word;
    tg_marker_kind_e kind;
} marker_word_t;

static const marker_word_t marker_words[] = {
    {"TAU_METRIC", TG_MARKER_METRIC},
    {"##tau-metric", TG_MARKER_METRIC},
    {"TAU_CHECKPOINT", TG_MARKER_CHECKPOINT},
    {"##tau-checkpoint", TG_MARKER_CHECKPOINT},
};

int tg_marker_nonfinite(const char *s, size_t len, double *v)
{
    static const struct {
        const char *text;
        int sign; /* 0: NaN */
    } spellings[] = {{"nan", 0},   {"+nan", 0},     {"-nan", 0},      {"inf", 1},       {"+inf", 1},
                     {"-inf", -1}, {"infinity", 1}, {"+infinity", 1}, {"-infinity", -1}};
    for (size_t i = 0; i < TG_ARRAY_LEN(spellings); i++) {
        if (strlen(spellings[i].text) == len && strncasecmp(s, spellings[i].text, len) == 0) {
            if (v)
                *v = spellings[i].sign == 0 ? NAN : spellings[i].sign * INFINITY;
            return 1;
        }
    }
    return 0;
}

static int marker_is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Where a marker word may begin: after blanks and one "(...) " prefix. */
static size_t marker_start(const char *t, size_t len)
{
    size_t i = 0;
    while (i < len && marker_is_space(t[i]))
        i++;
    if (i < len && t[i] == '(') {
        size_t j = i + 1;
        while (j < len && j - i < MARKER_PREFIX_MAX && t[j] != ')' && t[j] != '(')
            j++;
        if (j < len && t[j] == ')' && j + 1 < len && marker_is_space(t[j + 1])) {
            i = j + 1;
            while (i < len && marker_is_space(t[i]))
                i++;
        }
    }
    return i;
}

/* Text without control characters (a tab is a control character too). */
static int marker_clean_text(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return 0;
    }
    return 1;
}

/* A JSON integer >= 0 (jansson gives reals for 5.0 and 1e3: refused). */
static int marker_step(const json_t *v, int64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return 0;
    *out = (int64_t)json_integer_value(v);
    return 1;
}

static int marker_invalid(tg_marker_t *m, const char *why)
{
    tg_marker_clean(m);
    m->kind = TG_MARKER_INVALID;
    m->error = why;
    return TG_MARKER_INVALID;
}

static void marker_add_field(tg_marker_t *m, const char *name, int finite, double value,
                             const char *raw)
{
    tg_marker_field_t *f = &m->fields[m->nfields++];
    f->name = tg_xstrdup(name);
    f->finite = finite;
    f->value = value;
    f->raw = raw ? tg_xstrdup(raw) : NULL;
}

static tg_marker_kind_e marker_metric(json_t *o, int64_t line_at_us, tg_marker_t *m)
{
    json_t *step = json_object_get(o, "_step");
    if (step && !marker_step(step, &m->step))
        return marker_invalid(m, "_step must be an integer >= 0");
    m->has_step = step != NULL;
    m->at_us = line_at_us;
    json_t *ts = json_object_get(o, "_timestamp");
    if (ts) {
        if (!json_is_number(ts))
            return marker_invalid(m, "_timestamp must be a number of Unix seconds");
        double s = json_number_value(ts);
        if (!isfinite(s) || s <= 0 || s > MARKER_MAX_UNIX_S)
            return marker_invalid(m, "_timestamp must be a finite positive number of seconds");
        m->at_us = (int64_t)llround(s * 1e6);
    }
    size_t n = json_object_size(o);
    m->fields = tg_xcalloc(n ? n : 1, sizeof(*m->fields));
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        if (key[0] == '_')
            continue; /* reserved */
        size_t klen = strlen(key);
        if (m->nfields >= TG_MARKER_FIELDS_MAX || klen == 0 || klen > TG_MARKER_NAME_MAX ||
            !marker_clean_text(key, klen)) {
            m->skipped++;
            continue;
        }
        double d;
        if (json_is_number(v)) {
            marker_add_field(m, key, 1, json_number_value(v), NULL);
        } else if (json_is_string(v) &&
                   tg_marker_nonfinite(json_string_value(v), json_string_length(v), &d)) {
            marker_add_field(m, key, 0, d, json_string_value(v));
        } else {
            m->skipped++;
        }
    }
    if (m->nfields == 0)
        return marker_invalid(m, "no numeric metric fields");
    m->kind = TG_MARKER_METRIC;
    return m->kind;
}

static tg_marker_kind_e marker_checkpoint(json_t *o, int64_t line_at_us, tg_marker_t *m)
{
    json_t *path = json_object_get(o, "path");
    if (!json_is_string(path))
        return marker_invalid(m, "path must be a string");
    size_t plen = json_string_length(path);
    if (plen == 0 || plen > TG_MARKER_PATH_MAX || !marker_clean_text(json_string_value(path), plen))
        return marker_invalid(m, "path must be 1..4096 bytes without control characters");
    json_t *step = json_object_get(o, "step");
    if (step && !json_is_null(step) && !marker_step(step, &m->step))
        return marker_invalid(m, "step must be an integer >= 0");
    m->has_step = step && !json_is_null(step);
    m->at_us = line_at_us;
    m->path = tg_xstrdup(json_string_value(path));
    m->kind = TG_MARKER_CHECKPOINT;
    return m->kind;
}

/* Python's json.dumps writes non-finite floats as the bare tokens NaN,
 * Infinity and -Infinity, which are not JSON. Quote them (outside strings)
 * so they read as the accepted non-finite strings. Returns a new string, or
 * NULL when there was nothing to quote. */
static char *marker_quote_bare(const char *p, size_t n)
{
    static const char *const bare[] = {"-Infinity", "Infinity", "NaN"};
    char *out = NULL;
    size_t o = 0;
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        const char *hit = NULL;
        if (in_str) {
            if (p[i] == '\\' && i + 1 < n) {
                if (out) {
                    out[o++] = p[i];
                    out[o++] = p[i + 1];
                }
                i++;
                continue;
            }
            if (p[i] == '"')
                in_str = 0;
        } else if (p[i] == '"') {
            in_str = 1;
        } else if (i == 0 || strchr(":,[ \t", p[i - 1])) {
            for (size_t k = 0; k < TG_ARRAY_LEN(bare) && !hit; k++) {
                size_t bl = strlen(bare[k]);
                if (n - i >= bl && memcmp(p + i, bare[k], bl) == 0 &&
                    (i + bl == n || strchr(",]} \t", p[i + bl])))
                    hit = bare[k];
            }
        }
        if (hit) {
            if (!out) {
                out = tg_xmalloc(n * 3 + 1); /* each token grows by 2 quotes at most */
                memcpy(out, p, i);
                o = i;
            }
            size_t bl = strlen(hit);
            out[o++] = '"';
            memcpy(out + o, hit, bl);
            o += bl;
            out[o++] = '"';
            i += bl - 1;
            continue;
        }
        if (out)
            out[o++] = p[i];
    }
    if (out)
        out[o] = '\0';
    return out;
}

tg_marker_kind_e tg_marker_parse(const char *text, size_t len, int64_t line_at_us, tg_marker_t *m)
{
    memset(m, 0, sizeof(*m));
    if (!text)
        return TG_MARKER_NONE;
    size_t i = marker_start(text, len);
    const marker_word_t *w = NULL;
    for (size_t k = 0; k < TG_ARRAY_LEN(marker_words); k++) {
        size_t wl = strlen(marker_words[k].word);
        if (len - i > wl && memcmp(text + i, marker_words[k].word, wl) == 0 &&
            marker_is_space(text[i + wl])) {
            w = &marker_words[k];
            i += wl;
            break;
        }
    }
    if (!w)
        return TG_MARKER_NONE;
    while (i < len && marker_is_space(text[i]))
        i++;
    json_error_t jerr;
    char *quoted = marker_quote_bare(text + i, len - i);
    json_t *o = quoted ? json_loads(quoted, JSON_REJECT_DUPLICATES, &jerr)
                       : json_loadb(text + i, len - i, JSON_REJECT_DUPLICATES, &jerr);
    free(quoted);
    if (!o)
        return marker_invalid(m, "the payload is not valid JSON");
    tg_marker_kind_e kind;
    if (!json_is_object(o))
        kind = marker_invalid(m, "the payload must be a JSON object");
    else if (w->kind == TG_MARKER_METRIC)
        kind = marker_metric(o, line_at_us, m);
    else
        kind = marker_checkpoint(o, line_at_us, m);
    json_decref(o);
    return kind;
}

void tg_marker_clean(tg_marker_t *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nfields; i++) {
        free(m->fields[i].name);
        free(m->fields[i].raw);
    }
    free(m->fields);
    free(m->path);
    memset(m, 0, sizeof(*m));
}
