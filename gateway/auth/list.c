/* Comma-separated configuration lists. */
#include "auth/list.h"

#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

void tg_auth_list_push(tg_auth_list_t *l, const char *s, size_t n)
{
    l->v = tg_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
    l->v[l->n++] = tg_xstrndup(s, n);
}

void tg_auth_list_parse(tg_auth_list_t *l, const char *csv)
{
    l->v = NULL;
    l->n = 0;
    if (!csv)
        return;
    const char *p = csv;
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *a = p;
        while (a < end && (*a == ' ' || *a == '\t'))
            a++;
        const char *b = end;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if (b > a)
            tg_auth_list_push(l, a, (size_t)(b - a));
        if (!comma)
            break;
        p = comma + 1;
    }
}

int tg_auth_list_has(const tg_auth_list_t *l, const char *s)
{
    for (size_t i = 0; s && i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 1;
    return 0;
}

void tg_auth_list_clean(tg_auth_list_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}
