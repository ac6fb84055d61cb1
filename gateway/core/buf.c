/* Bounded growable byte buffer. */
#include "core/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tg_buf_init(tg_buf_t *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max ? max : SIZE_MAX / 2;
    b->overflowed = 0;
}

void tg_buf_clean(tg_buf_t *b)
{
    TG_FREE_NULL(b->data);
    b->len = b->cap = 0;
}

void tg_buf_reset(tg_buf_t *b)
{
    b->len = 0;
    b->overflowed = 0;
    if (b->data)
        b->data[0] = '\0';
}

static tg_rc_e buf_reserve(tg_buf_t *b, size_t extra)
{
    if (extra > b->max - b->len) {
        b->overflowed = 1;
        return TG_ETOOLARGE;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return TG_OK;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    b->data = tg_xrealloc(b->data, cap);
    b->cap = cap;
    return TG_OK;
}

tg_rc_e tg_buf_reserve(tg_buf_t *b, size_t extra)
{
    tg_rc_e rc = buf_reserve(b, extra);
    if (rc == TG_OK)
        b->data[b->len] = '\0';
    return rc;
}

tg_rc_e tg_buf_append(tg_buf_t *b, const void *p, size_t n)
{
    tg_rc_e rc = buf_reserve(b, n);
    if (rc != TG_OK)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return TG_OK;
}

tg_rc_e tg_buf_puts(tg_buf_t *b, const char *s)
{
    return tg_buf_append(b, s, strlen(s));
}

tg_rc_e tg_buf_vprintf(tg_buf_t *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        return TG_EINVAL;
    tg_rc_e rc = buf_reserve(b, (size_t)n);
    if (rc != TG_OK)
        return rc;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return TG_OK;
}

tg_rc_e tg_buf_printf(tg_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tg_rc_e rc = tg_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void tg_buf_printf_cut(tg_buf_t *b, const char *fmt, ...)
{
    va_list ap, cp;
    va_start(ap, fmt);
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    size_t room = b->max - b->len, want = n > 0 ? (size_t)n : 0;
    size_t take = want < room ? want : room;
    if (buf_reserve(b, take) == TG_OK) { /* take <= room: cannot fail */
        vsnprintf(b->data + b->len, take + 1, fmt, ap);
        b->len += take;
    }
    va_end(ap);
}

char *tg_buf_steal(tg_buf_t *b, size_t *len)
{
    if (buf_reserve(b, 0) != TG_OK) /* ensure data is allocated */
        return NULL;
    char *p = b->data;
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}
