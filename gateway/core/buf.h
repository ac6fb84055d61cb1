/* Bounded growable byte buffer.
 *
 * Every buffer that grows from outside input has a ceiling set at init; an
 * append past it fails with TG_ETOOLARGE and leaves the buffer unchanged. The
 * contents are always NUL-terminated so text can be used in place. */
#ifndef TG_CORE_BUF_H
#define TG_CORE_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"

typedef struct tg_buf_s {
    char *data;
    size_t len;
    size_t cap;
    size_t max; /* ceiling on len; 0 means SIZE_MAX/2 */
    /* an append failed for want of room since init or reset: a writer whose
     * interface cannot return the failure (a metrics collector) stops at its
     * first failed append, and whoever owns the buffer looks here */
    int overflowed;
} tg_buf_t;

void tg_buf_init(tg_buf_t *b, size_t max);
void tg_buf_clean(tg_buf_t *b);
void tg_buf_reset(tg_buf_t *b);
/* Make room for `extra` more bytes at once (one allocation instead of a
 * series of doublings when the size is known roughly); TG_ETOOLARGE past the
 * ceiling, leaving the buffer unchanged. */
tg_rc_e tg_buf_reserve(tg_buf_t *b, size_t extra) TG_MUSTCHECK;
tg_rc_e tg_buf_append(tg_buf_t *b, const void *p, size_t n) TG_MUSTCHECK;
tg_rc_e tg_buf_puts(tg_buf_t *b, const char *s) TG_MUSTCHECK;
tg_rc_e tg_buf_printf(tg_buf_t *b, const char *fmt, ...) TG_PRINTF(2, 3) TG_MUSTCHECK;
tg_rc_e tg_buf_vprintf(tg_buf_t *b, const char *fmt, va_list ap) TG_MUSTCHECK;
/* Append as much of the text as fits under the ceiling, for text where a
 * cut answer is still an answer (an explanation shown to a person); never
 * fails, and does not mark the buffer overflowed. */
void tg_buf_printf_cut(tg_buf_t *b, const char *fmt, ...) TG_PRINTF(2, 3);
/* Hand the contents to the caller (free with free()); the buffer is left empty. */
char *tg_buf_steal(tg_buf_t *b, size_t *len);

#endif
