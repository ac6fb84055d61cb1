/* Diagnostics: the errors and warnings of one submission. */
#include "tauyaml/diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

void tg_tauyaml_diag_init(tg_tauyaml_diag_t *d, const tg_tauyaml_pos_t *pos, size_t max_errors)
{
    d->errors = json_array();
    d->warnings = json_array();
    d->pos = pos;
    d->max_errors = max_errors ? max_errors : 200;
    d->truncated = 0;
}

void tg_tauyaml_diag_clean(tg_tauyaml_diag_t *d)
{
    json_decref(d->errors);
    json_decref(d->warnings);
    d->errors = d->warnings = NULL;
}

static json_t *diag_entry(const char *path, unsigned line, unsigned col, const char *fmt,
                          va_list ap)
{
    tg_buf_t b;
    tg_buf_init(&b, 4096);
    /* A message longer than the cap is cut; the prefix says what is wrong. */
    if (tg_buf_vprintf(&b, fmt, ap) != TG_OK) {
        tg_buf_reset(&b);
        if (tg_buf_puts(&b, "(message too long)") != TG_OK)
            b.len = 0;
    }
    json_t *e = json_object();
    json_object_set_new(e, "path", json_string(path ? path : ""));
    json_object_set_new(e, "line", json_integer(line));
    json_object_set_new(e, "column", json_integer(col));
    json_t *m = json_stringn(b.data ? b.data : "", b.len);
    json_object_set_new(e, "message", m ? m : json_string("(message not valid UTF-8)"));
    tg_buf_clean(&b);
    return e;
}

static int diag_room(tg_tauyaml_diag_t *d)
{
    if (json_array_size(d->errors) < d->max_errors)
        return 1;
    if (!d->truncated) {
        d->truncated = 1;
        json_t *e = json_object();
        json_object_set_new(e, "path", json_string(""));
        json_object_set_new(e, "line", json_integer(1));
        json_object_set_new(e, "column", json_integer(1));
        json_object_set_new(e, "message", json_string("too many errors; fix these and resubmit"));
        json_array_append_new(d->errors, e);
    }
    return 0;
}

void tg_tauyaml_diag_error(tg_tauyaml_diag_t *d, const char *path, tg_tauyaml_at_e at,
                           const char *fmt, ...)
{
    if (!diag_room(d))
        return;
    unsigned line, col;
    tg_tauyaml_pos_locate(d->pos, path ? path : "", at == TG_AT_VALUE, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    json_array_append_new(d->errors, diag_entry(path, line, col, fmt, ap));
    va_end(ap);
}

void tg_tauyaml_diag_error_at(tg_tauyaml_diag_t *d, const char *path, unsigned line, unsigned col,
                              const char *fmt, ...)
{
    if (!diag_room(d))
        return;
    va_list ap;
    va_start(ap, fmt);
    json_array_append_new(d->errors, diag_entry(path, line, col, fmt, ap));
    va_end(ap);
}

void tg_tauyaml_diag_warn(tg_tauyaml_diag_t *d, const char *path, tg_tauyaml_at_e at,
                          const char *fmt, ...)
{
    if (json_array_size(d->warnings) >= d->max_errors)
        return;
    unsigned line, col;
    tg_tauyaml_pos_locate(d->pos, path ? path : "", at == TG_AT_VALUE, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    json_array_append_new(d->warnings, diag_entry(path, line, col, fmt, ap));
    va_end(ap);
}

void tg_tauyaml_diag_warn_at(tg_tauyaml_diag_t *d, const char *path, unsigned line, unsigned col,
                             const char *fmt, ...)
{
    if (json_array_size(d->warnings) >= d->max_errors)
        return;
    va_list ap;
    va_start(ap, fmt);
    json_array_append_new(d->warnings, diag_entry(path, line, col, fmt, ap));
    va_end(ap);
}

size_t tg_tauyaml_diag_nerrors(const tg_tauyaml_diag_t *d)
{
    return json_array_size(d->errors);
}

typedef struct diag_sortent_s {
    json_int_t line, col;
    size_t idx;
    json_t *v;
} diag_sortent_t;

static int diag_cmp(const void *a, const void *b)
{
    const diag_sortent_t *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->col != y->col)
        return x->col < y->col ? -1 : 1;
    return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

static void diag_sort_array(json_t *arr)
{
    size_t n = json_array_size(arr);
    if (n < 2)
        return;
    diag_sortent_t *v = tg_xmalloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        v[i].line = json_integer_value(json_object_get(e, "line"));
        v[i].col = json_integer_value(json_object_get(e, "column"));
        v[i].idx = i;
        v[i].v = json_incref(e);
    }
    qsort(v, n, sizeof(*v), diag_cmp);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i].v);
    free(v);
}

void tg_tauyaml_diag_sort(tg_tauyaml_diag_t *d)
{
    diag_sort_array(d->errors);
    diag_sort_array(d->warnings);
}

const char *tg_tauyaml_qv(tg_tauyaml_qv_t *q, const char *value)
{
    size_t n = value ? strlen(value) : 0;
    if (n <= 64) {
        memcpy(q->s, value ? value : "", n + 1);
        return q->s;
    }
    size_t cut = 64;
    /* Back up to the start of a UTF-8 sequence so the message stays valid. */
    while (cut > 0 && ((unsigned char)value[cut] & 0xC0) == 0x80)
        cut--;
    memcpy(q->s, value, cut);
    memcpy(q->s + cut, "...", 4);
    return q->s;
}
