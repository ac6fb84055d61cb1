/* Per-request arena: bump allocation freed all at once, plus cleanup hooks
 * for non-memory resources (PGresult, json_t...) that share the request's life.
 *
 * Built with -DTG_ARENA_PLAIN_MALLOC (the sanitizer build does this) every
 * allocation is its own malloc block, so ASan and valgrind see overflows. */
#ifndef TG_CORE_ARENA_H
#define TG_CORE_ARENA_H

#include <stdarg.h>
#include <stddef.h>

#include "core/mem.h"

typedef struct tg_arena_s tg_arena_t;
typedef void (*tg_cleanup_fn)(void *arg);

tg_arena_t *tg_arena_new(size_t chunk_size);
void tg_arena_free(tg_arena_t *a);
/* Zeroed, 16-byte aligned memory valid until tg_arena_free. Never NULL. */
void *tg_arena_alloc(tg_arena_t *a, size_t n);
char *tg_arena_strdup(tg_arena_t *a, const char *s);
char *tg_arena_strndup(tg_arena_t *a, const char *s, size_t n);
char *tg_arena_printf(tg_arena_t *a, const char *fmt, ...) TG_PRINTF(2, 3);
/* Run fn(arg) when the arena is freed (last registered runs first). */
void tg_arena_on_free(tg_arena_t *a, tg_cleanup_fn fn, void *arg);

#endif
