/* Memory: one out-of-memory policy for the whole daemon.
 *
 * taugate is a stateless process behind a supervisor, so allocation failure is
 * fatal: tg_xmalloc and friends log file:line and abort instead of returning
 * NULL. Callers never check their result. */
#ifndef TG_CORE_MEM_H
#define TG_CORE_MEM_H

#include <stddef.h>

void *tg_xmalloc_at(size_t n, const char *file, int line);
void *tg_xcalloc_at(size_t nmemb, size_t size, const char *file, int line);
void *tg_xrealloc_at(void *p, size_t n, const char *file, int line);
char *tg_xstrdup_at(const char *s, const char *file, int line);
char *tg_xstrndup_at(const char *s, size_t n, const char *file, int line);

#define tg_xmalloc(n)     tg_xmalloc_at((n), __FILE__, __LINE__)
#define tg_xcalloc(m, n)  tg_xcalloc_at((m), (n), __FILE__, __LINE__)
#define tg_xrealloc(p, n) tg_xrealloc_at((p), (n), __FILE__, __LINE__)
#define tg_xstrdup(s)     tg_xstrdup_at((s), __FILE__, __LINE__)
#define tg_xstrndup(s, n) tg_xstrndup_at((s), (n), __FILE__, __LINE__)

/* Free and clear a pointer in one step, so a stale pointer is never reused. */
#define TG_FREE_NULL(p)                                                                            \
    do {                                                                                           \
        free(p);                                                                                   \
        (p) = NULL;                                                                                \
    } while (0)

#define TG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define TG_MUSTCHECK    __attribute__((warn_unused_result))
#define TG_PRINTF(f, a) __attribute__((format(printf, f, a)))

#endif
