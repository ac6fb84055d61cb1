/* Provenance table of a resolved run config. */
#include "tauyaml/prov.h"

#include <string.h>

#include "core/keyorder.h"
#include "core/mem.h"
#include "tauyaml/path.h"

/* A table is rebuilt for every request: one allocation each for the
 * entries and the text of a typical resolution (about forty fields). */
#define PROV_FIRST_ENTRIES 64
#define PROV_FIRST_TEXT    2048

void tg_tauyaml_prov_init(tg_tauyaml_prov_t *p)
{
    memset(p, 0, sizeof(*p));
}

void tg_tauyaml_prov_clean(tg_tauyaml_prov_t *p)
{
    free(p->v);
    free(p->text);
    tg_tauyaml_prov_init(p);
}

static int prov_cmp(const tg_tauyaml_prov_t *p, const tg_tauyaml_prov_entry_t *e, uint64_t pre,
                    const char *s, size_t n)
{
    return tg_key_cmp(e->pre, p->text + e->path, e->len, pre, s, n);
}

/* The index of the path, or where it would go (*found 0). */
static size_t prov_find(const tg_tauyaml_prov_t *p, uint64_t pre, const char *s, size_t n,
                        int *found)
{
    size_t lo = 0, hi = p->n;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = prov_cmp(p, &p->v[mid], pre, s, n);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Room for `extra` more text bytes; the offset where they go. */
static uint32_t prov_text_room(tg_tauyaml_prov_t *p, size_t extra)
{
    if (p->tlen + extra > p->tcap) {
        size_t cap = p->tcap ? p->tcap : PROV_FIRST_TEXT;
        while (cap < p->tlen + extra)
            cap *= 2;
        /* Offsets are 32-bit; a tau.yaml (1 MiB at most) never comes near. */
        if (cap > UINT32_MAX)
            abort();
        p->text = tg_xrealloc(p->text, cap);
        p->tcap = cap;
    }
    return (uint32_t)p->tlen;
}

static uint32_t prov_text_put(tg_tauyaml_prov_t *p, const char *s, size_t n)
{
    uint32_t at = prov_text_room(p, n + 1);
    memcpy(p->text + at, s, n);
    p->text[at + n] = '\0';
    p->tlen += n + 1;
    return at;
}

void tg_tauyaml_prov_set_path(tg_tauyaml_prov_t *p, const char *path, size_t len, const char *src)
{
    uint64_t pre = tg_key_prefix(path, len);
    int found;
    size_t i = prov_find(p, pre, path, len, &found);
    size_t sl = strlen(src);
    uint32_t s = prov_text_put(p, src, sl);
    if (found) {
        p->v[i].src = s;
        p->v[i].src_len = (uint32_t)sl;
        return;
    }
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : PROV_FIRST_ENTRIES;
        p->v = tg_xrealloc(p->v, p->cap * sizeof(*p->v));
    }
    memmove(&p->v[i + 1], &p->v[i], (p->n - i) * sizeof(*p->v));
    p->n++;
    p->v[i] = (tg_tauyaml_prov_entry_t){.pre = pre,
                                        .path = prov_text_put(p, path, len),
                                        .len = (uint32_t)len,
                                        .src = s,
                                        .src_len = (uint32_t)sl};
}

void tg_tauyaml_prov_set(tg_tauyaml_prov_t *p, const char *sect, const char *key, const char *src)
{
    char buf[256];
    size_t n = tg_tauyaml_path_field(buf, sizeof(buf), sect, key);
    if (n) /* no field of the schema is near 256 bytes */
        tg_tauyaml_prov_set_path(p, buf, n, src);
}

const char *tg_tauyaml_prov_get(const tg_tauyaml_prov_t *p, const char *path)
{
    size_t n = strlen(path);
    int found;
    size_t i = prov_find(p, tg_key_prefix(path, n), path, n, &found);
    return found ? p->text + p->v[i].src : NULL;
}

void tg_tauyaml_prov_copy(tg_tauyaml_prov_t *dst, const tg_tauyaml_prov_t *src)
{
    if (dst->cap < src->n) {
        dst->cap = src->cap;
        dst->v = tg_xrealloc(dst->v, dst->cap * sizeof(*dst->v));
    }
    if (dst->tcap < src->tlen) {
        dst->tcap = src->tcap;
        dst->text = tg_xrealloc(dst->text, dst->tcap);
    }
    if (src->n)
        memcpy(dst->v, src->v, src->n * sizeof(*src->v));
    if (src->tlen)
        memcpy(dst->text, src->text, src->tlen);
    dst->n = src->n;
    dst->tlen = src->tlen;
}

json_t *tg_tauyaml_prov_json(const tg_tauyaml_prov_t *p)
{
    json_t *o = json_object();
    for (size_t i = 0; i < p->n; i++)
        json_object_setn_new_nocheck(o, p->text + p->v[i].path, p->v[i].len,
                                     json_stringn(p->text + p->v[i].src, p->v[i].src_len));
    return o;
}

void tg_tauyaml_prov_add_json(tg_tauyaml_prov_t *p, const json_t *obj)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        if (json_is_string(v))
            tg_tauyaml_prov_set_path(p, k, strlen(k), json_string_value(v));
    }
}
