/* Source positions of a parsed tau.yaml, keyed by field path. */
#include "tauyaml/pos.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "tauyaml/path.h"

typedef struct pos_entry_s {
    size_t path_off, path_len;
    size_t raw_off; /* SIZE_MAX when none */
    uint32_t hash;
    tg_tauyaml_mark_t mark;
} pos_entry_t;

struct tg_tauyaml_pos_s {
    pos_entry_t *ents;
    size_t n, cap;
    uint32_t *slots; /* entry index + 1; 0 = empty */
    size_t nslots;
    char *arena; /* paths and raw texts, NUL-terminated each */
    size_t alen, acap, amax;
};

static uint32_t pos_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

tg_tauyaml_pos_t *tg_tauyaml_pos_new(size_t max_bytes)
{
    tg_tauyaml_pos_t *pos = tg_xcalloc(1, sizeof(*pos));
    pos->amax = max_bytes ? max_bytes : (size_t)8 << 20;
    /* Sized for a tau.yaml of a few dozen fields at once: growing the slots
     * and the entries by doubling from small cost a rehash and several
     * copies on every request. */
    pos->nslots = 256;
    pos->slots = tg_xcalloc(pos->nslots, sizeof(uint32_t));
    pos->cap = 128;
    pos->ents = tg_xmalloc(pos->cap * sizeof(*pos->ents));
    pos->acap = pos->amax < 4096 ? pos->amax : 4096;
    pos->arena = tg_xmalloc(pos->acap);
    return pos;
}

void tg_tauyaml_pos_free(tg_tauyaml_pos_t *pos)
{
    if (!pos)
        return;
    free(pos->ents);
    free(pos->slots);
    free(pos->arena);
    free(pos);
}

static int pos_arena_put(tg_tauyaml_pos_t *pos, const char *s, size_t n, size_t *off)
{
    if (n + 1 > pos->amax - pos->alen)
        return -1;
    if (pos->alen + n + 1 > pos->acap) {
        size_t cap = pos->acap ? pos->acap : 1024;
        while (cap < pos->alen + n + 1)
            cap *= 2;
        pos->arena = tg_xrealloc(pos->arena, cap);
        pos->acap = cap;
    }
    memcpy(pos->arena + pos->alen, s, n);
    pos->arena[pos->alen + n] = '\0';
    *off = pos->alen;
    pos->alen += n + 1;
    return 0;
}

static pos_entry_t *pos_find(const tg_tauyaml_pos_t *pos, const char *path, size_t len, uint32_t h)
{
    size_t mask = pos->nslots - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t s = pos->slots[i];
        if (!s)
            return NULL;
        pos_entry_t *e = &pos->ents[s - 1];
        if (e->hash == h && e->path_len == len && memcmp(pos->arena + e->path_off, path, len) == 0)
            return e;
    }
}

static void pos_rehash(tg_tauyaml_pos_t *pos)
{
    size_t ns = pos->nslots * 2;
    uint32_t *slots = tg_xcalloc(ns, sizeof(uint32_t));
    for (size_t k = 0; k < pos->n; k++) {
        size_t i = pos->ents[k].hash & (ns - 1);
        while (slots[i])
            i = (i + 1) & (ns - 1);
        slots[i] = (uint32_t)(k + 1);
    }
    free(pos->slots);
    pos->slots = slots;
    pos->nslots = ns;
}

tg_rc_e tg_tauyaml_pos_add(tg_tauyaml_pos_t *pos, const char *path, size_t pathlen,
                           const tg_tauyaml_mark_t *mark, const char *raw, size_t rawlen)
{
    uint32_t h = pos_hash(path, pathlen);
    if (pos_find(pos, path, pathlen, h))
        return TG_OK;
    if ((pos->n + 1) * 2 > pos->nslots)
        pos_rehash(pos);
    if (pos->n == pos->cap) {
        pos->cap = pos->cap ? pos->cap * 2 : 64;
        pos->ents = tg_xrealloc(pos->ents, pos->cap * sizeof(*pos->ents));
    }
    pos_entry_t e = {0};
    e.hash = h;
    e.path_len = pathlen;
    e.raw_off = SIZE_MAX;
    e.mark = *mark;
    e.mark.raw = NULL;
    if (pos_arena_put(pos, path, pathlen, &e.path_off) != 0)
        return TG_ETOOLARGE;
    if (raw && pos_arena_put(pos, raw, rawlen, &e.raw_off) != 0)
        return TG_ETOOLARGE;
    pos->ents[pos->n] = e;
    size_t mask = pos->nslots - 1;
    size_t i = h & mask;
    while (pos->slots[i])
        i = (i + 1) & mask;
    pos->slots[i] = (uint32_t)(pos->n + 1);
    pos->n++;
    return TG_OK;
}

const tg_tauyaml_mark_t *tg_tauyaml_pos_get(const tg_tauyaml_pos_t *pos, const char *path)
{
    if (!pos)
        return NULL;
    size_t len = strlen(path);
    pos_entry_t *e = pos_find(pos, path, len, pos_hash(path, len));
    if (!e)
        return NULL;
    /* The arena may have moved since the entry was added; resolve raw now. */
    e->mark.raw = e->raw_off == SIZE_MAX ? NULL : pos->arena + e->raw_off;
    return &e->mark;
}

void tg_tauyaml_pos_locate(const tg_tauyaml_pos_t *pos, const char *path, int want_value,
                           unsigned *line, unsigned *col)
{
    *line = 1;
    *col = 1;
    if (!pos)
        return;
    size_t len = strlen(path);
    int self = 1;
    for (;;) {
        pos_entry_t *e = pos_find(pos, path, len, pos_hash(path, len));
        if (e) {
            if (self && want_value) {
                *line = e->mark.vline;
                *col = e->mark.vcol;
            } else {
                *line = e->mark.kline;
                *col = e->mark.kcol;
            }
            return;
        }
        if (len == 0)
            return;
        len = tg_tauyaml_path_parent(path, len);
        self = 0;
    }
}
