/* String multimap. */
#include "index.h"

#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "map.h"

typedef struct {
    char **m;
    size_t n, cap;
} ks_set_t;

struct ks_index_s {
    ks_map_t *sets; /* key -> ks_set_t */
};

ks_index_t *ks_index_new(void)
{
    ks_index_t *ix = tg_xcalloc(1, sizeof(*ix));
    ix->sets = ks_map_new();
    return ix;
}

static void set_free(ks_set_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->m[i]);
    free(s->m);
    free(s);
}

static int free_set(const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    set_free(val);
    return 0;
}

void ks_index_free(ks_index_t *ix)
{
    if (!ix)
        return;
    ks_map_each(ix->sets, free_set, NULL);
    ks_map_free(ix->sets);
    free(ix);
}

void ks_index_add(ks_index_t *ix, const char *key, const char *member)
{
    ks_set_t *s = ks_map_get(ix->sets, key);
    if (!s) {
        s = tg_xcalloc(1, sizeof(*s));
        ks_map_put(ix->sets, key, s);
    }
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->m[i], member))
            return;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 2;
        s->m = tg_xrealloc(s->m, s->cap * sizeof(*s->m));
    }
    s->m[s->n++] = tg_xstrdup(member);
}

void ks_index_del(ks_index_t *ix, const char *key, const char *member)
{
    ks_set_t *s = ks_map_get(ix->sets, key);
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->m[i], member))
            continue;
        free(s->m[i]);
        /* Keep insertion order: callers see dependents oldest first. */
        memmove(&s->m[i], &s->m[i + 1], (s->n - i - 1) * sizeof(*s->m));
        s->n--;
        break;
    }
    if (!s->n)
        set_free(ks_map_del(ix->sets, key));
}

size_t ks_index_members(ks_index_t *ix, const char *key, char ***out)
{
    ks_set_t *s = ix && key ? ks_map_get(ix->sets, key) : NULL;
    *out = NULL;
    if (!s)
        return 0;
    *out = tg_xcalloc(s->n, sizeof(**out));
    for (size_t i = 0; i < s->n; i++)
        (*out)[i] = tg_xstrdup(s->m[i]);
    return s->n;
}

void ks_index_release(char **members, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(members[i]);
    free(members);
}
