/* Source positions of a parsed tau.yaml, keyed by field path.
 *
 * The YAML tree is a plain jansson value; this table remembers, for every
 * node, where its key and its value start (1-based line and column), and for
 * non-string scalars the exact source text (so "1e3" or "0x10" can be turned
 * back into the string the user wrote when a string is expected). Lookups are
 * only made when a diagnostic is emitted, so the table is built once and read
 * rarely. The path arena is bounded: a document whose paths need more than
 * `max_bytes` is rejected by the parser. */
#ifndef TG_TAUYAML_POS_H
#define TG_TAUYAML_POS_H

#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"

typedef struct tg_tauyaml_pos_s tg_tauyaml_pos_t;

typedef struct tg_tauyaml_mark_s {
    unsigned kline, kcol; /* the mapping key (the item itself for sequence items) */
    unsigned vline, vcol; /* the value */
    const char *raw;      /* source text of a non-string scalar, else NULL */
} tg_tauyaml_mark_t;

/* A new empty table whose path/raw arena may grow to `max_bytes`. */
tg_tauyaml_pos_t *tg_tauyaml_pos_new(size_t max_bytes);
void tg_tauyaml_pos_free(tg_tauyaml_pos_t *pos);

/* Record a node. The first record for a path wins (a duplicate key keeps the
 * first definition's position). TG_ETOOLARGE when the arena cap is reached. */
tg_rc_e tg_tauyaml_pos_add(tg_tauyaml_pos_t *pos, const char *path, size_t pathlen,
                           const tg_tauyaml_mark_t *mark, const char *raw,
                           size_t rawlen) TG_MUSTCHECK;

/* The mark recorded for `path`, or NULL. Borrowed; valid until _free. */
const tg_tauyaml_mark_t *tg_tauyaml_pos_get(const tg_tauyaml_pos_t *pos, const char *path);

/* Where to point a diagnostic about `path`: the key (want_value=0) or value
 * (want_value=1) of the node itself, else of the nearest ancestor that has a
 * record (its key), else line 1 column 1. `pos` may be NULL. */
void tg_tauyaml_pos_locate(const tg_tauyaml_pos_t *pos, const char *path, int want_value,
                           unsigned *line, unsigned *col);

#endif
