/* Memory helpers: abort on exhaustion, with the call site in the message. */
#include "core/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mem_die(size_t n, const char *file, int line)
{
    fprintf(stderr,
            "{\"level\":\"fatal\",\"msg\":\"out of memory\",\"bytes\":%zu,\"at\":\"%s:%d\"}\n", n,
            file, line);
    abort();
}

void *tg_xmalloc_at(size_t n, const char *file, int line)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        mem_die(n, file, line);
    return p;
}

void *tg_xcalloc_at(size_t nmemb, size_t size, const char *file, int line)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (!p)
        mem_die(nmemb * size, file, line);
    return p;
}

void *tg_xrealloc_at(void *p, size_t n, const char *file, int line)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        mem_die(n, file, line);
    return q;
}

char *tg_xstrdup_at(const char *s, const char *file, int line)
{
    return tg_xstrndup_at(s, strlen(s), file, line);
}

char *tg_xstrndup_at(const char *s, size_t n, const char *file, int line)
{
    size_t len = strnlen(s, n);
    char *p = tg_xmalloc_at(len + 1, file, line);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}
