/* A streaming JSON text writer over a bounded tg_buf_t. */
#include "core/json_writer.h"

#include <string.h>

#include "core/json_canon.h"

void tg_jw_init(tg_jw_t *w, tg_buf_t *b)
{
    memset(w, 0, sizeof(*w));
    w->b = b;
    w->first[0] = 1;
}

static void jw_put(tg_jw_t *w, const char *s, size_t n)
{
    tg_buf_t *b = w->b;
    /* Most writes are a few bytes into a buffer with room: skip the call. */
    if (b->len + n < b->cap && b->len + n <= b->max) {
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
        return;
    }
    if (w->rc == TG_OK)
        w->rc = tg_buf_append(b, s, n);
}

/* Separator before a value (or before a key, in an object). */
static void jw_sep(tg_jw_t *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (!w->first[w->depth])
        jw_put(w, ",", 1);
    w->first[w->depth] = 0;
}

static void jw_open(tg_jw_t *w, const char *c)
{
    jw_sep(w);
    jw_put(w, c, 1);
    if (w->depth + 1 >= TG_JW_MAX_DEPTH) {
        w->rc = TG_EINVAL;
        return;
    }
    w->first[++w->depth] = 1;
}

static void jw_close(tg_jw_t *w, const char *c)
{
    jw_put(w, c, 1);
    if (w->depth > 0)
        w->depth--;
}

void tg_jw_obj(tg_jw_t *w)
{
    jw_open(w, "{");
}

void tg_jw_arr(tg_jw_t *w)
{
    jw_open(w, "[");
}

void tg_jw_end_obj(tg_jw_t *w)
{
    jw_close(w, "}");
}

void tg_jw_end_arr(tg_jw_t *w)
{
    jw_close(w, "]");
}

/* Room for `need` more bytes (and the NUL) without growing and without
 * passing the ceiling, or NULL. */
static char *jw_room(tg_jw_t *w, size_t need)
{
    tg_buf_t *b = w->b;
    if (w->rc != TG_OK || need >= b->cap - b->len || need > b->max - b->len)
        return NULL;
    return b->data + b->len;
}

/* The escaped text of s[n] with its quotes, at o (room for 6n + 2 bytes and
 * TG_JSON_TAIL_SLACK). */
static char *jw_quote(char *o, const char *s, size_t n)
{
    *o++ = '"';
    o = tg_json_escape_into(o, s, n, tg_json_escape, 0);
    *o++ = '"';
    return o;
}

/* The slow path: through tg_buf_append, which grows the buffer and honours
 * its ceiling byte for byte. */
static void jw_string_grow(tg_jw_t *w, const char *s, size_t n)
{
    jw_put(w, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (tg_json_plain(c))
            continue;
        jw_put(w, s + run, i - run);
        run = i + 1;
        char esc[7];
        jw_put(w, esc, tg_json_escape(c, esc, 0));
    }
    jw_put(w, s + run, n - run);
    jw_put(w, "\"", 1);
}

/* Most strings are short and the buffer was sized for the whole manifest:
 * when the worst case (every byte as \u00XX) fits, write straight into it. */
static void jw_string(tg_jw_t *w, const char *s, size_t n)
{
    if (w->rc != TG_OK)
        return;
    char *o = n < ((size_t)1 << 28) ? jw_room(w, 6 * n + 2 + TG_JSON_TAIL_SLACK) : NULL;
    if (!o) {
        jw_string_grow(w, s, n);
        return;
    }
    o = jw_quote(o, s, n);
    w->b->len = (size_t)(o - w->b->data);
    *o = '\0';
}

void tg_jw_keyn(tg_jw_t *w, const char *k, size_t n)
{
    jw_sep(w);
    jw_string(w, k, n);
    jw_put(w, ":", 1);
    w->after_key = 1;
}

void tg_jw_strn(tg_jw_t *w, const char *s, size_t n)
{
    jw_sep(w);
    jw_string(w, s, n);
}

/* The most common pair in a manifest, in one step when it fits. */
void tg_jw_kstrn(tg_jw_t *w, const char *k, size_t kn, const char *v, size_t vn)
{
    char *o = kn < ((size_t)1 << 26) && vn < ((size_t)1 << 26)
                  ? jw_room(w, 6 * (kn + vn) + 6 + TG_JSON_TAIL_SLACK)
                  : NULL;
    if (!o) {
        tg_jw_keyn(w, k, kn);
        tg_jw_strn(w, v, vn);
        return;
    }
    jw_sep(w); /* at most one comma, which the room includes; never grows */
    o = jw_quote(w->b->data + w->b->len, k, kn);
    *o++ = ':';
    o = jw_quote(o, v, vn);
    w->b->len = (size_t)(o - w->b->data);
    *o = '\0';
}

void tg_jw_int(tg_jw_t *w, json_int_t v)
{
    char buf[24];
    size_t n = tg_json_int_text(buf, v);
    jw_sep(w);
    jw_put(w, buf, n);
}

void tg_jw_bool(tg_jw_t *w, int v)
{
    jw_sep(w);
    jw_put(w, v ? "true" : "false", v ? 4 : 5);
}

void tg_jw_null(tg_jw_t *w)
{
    jw_sep(w);
    jw_put(w, "null", 4);
}

void tg_jw_json(tg_jw_t *w, const json_t *v)
{
    jw_sep(w);
    if (w->rc == TG_OK)
        w->rc = tg_json_canon(v, 15, w->b);
}

void tg_jw_kfill(tg_jw_t *w, const char *k, tg_jw_fill_fn fill, const void *arg)
{
    tg_jw_key(w, k);
    jw_sep(w);
    jw_put(w, "\"", 1);
    if (w->rc == TG_OK)
        w->rc = fill(arg, w->b);
    jw_put(w, "\"", 1);
}
