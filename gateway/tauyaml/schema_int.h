/* Compiled schema nodes; private to schema.c and validate.c. */
#ifndef TG_TAUYAML_SCHEMA_INT_H
#define TG_TAUYAML_SCHEMA_INT_H

#include <jansson.h>
#include <regex.h>
#include <stdint.h>
#include <string.h>

#include "core/keyorder.h"

#include "tauyaml/pattern.h"
#include "tauyaml/schema.h"

enum {
    TG_ST_NULL = 1,
    TG_ST_BOOL = 2,
    TG_ST_INT = 4,
    TG_ST_NUM = 8, /* integer or real */
    TG_ST_STR = 16,
    TG_ST_OBJ = 32,
    TG_ST_ARR = 64,
    TG_ST_ANY = 127,
};

enum { TG_ADDL_ANY = 0, TG_ADDL_NONE, TG_ADDL_SCHEMA };

typedef struct tg_snode_s tg_snode_t;

typedef struct tg_sprop_s {
    uint64_t pre;     /* tg_key_prefix of the name: most look-up steps compare only this */
    const char *name; /* borrowed from the schema document */
    size_t len;
    tg_snode_t *node;
} tg_sprop_t;

struct tg_snode_s {
    int never;       /* the boolean schema `false` */
    unsigned types;  /* TG_ST_* mask; TG_ST_ANY when no `type` */
    tg_snode_t *ref; /* $ref target, checked before this node's own keywords */
    /* object */
    tg_sprop_t *props; /* sorted by name */
    size_t nprops;
    const char **required;
    size_t nrequired;
    int addl_mode;
    tg_snode_t *addl;
    tg_snode_t *prop_names;
    long min_props, max_props; /* -1 when absent */
    /* array */
    tg_snode_t *items;
    long min_items, max_items;
    int unique;
    /* string */
    long min_len, max_len;
    int has_re;
    regex_t re;
    tg_tauyaml_pattern_t *pat; /* the same pattern as an automaton; NULL: use re */
    const char *pattern;
    /* number */
    int has_min, has_max, has_xmin, has_xmax;
    double min, max, xmin, xmax;
    /* enum / const (borrowed) */
    const json_t *enumv;
    const json_t *constv;
    /* custom keywords (borrowed) */
    const char *unsupported; /* a TauGrid field taugate does not offer: why */
    const char *refused;     /* a field refused in this place, TauGrid's words */
    const char *warning;
    const json_t *messages;
    const json_t *defaultv;
};

struct tg_tauyaml_schema_s {
    json_t *doc; /* owned; nodes borrow strings from it */
    tg_snode_t *root;
    tg_snode_t **all; /* every node, for freeing */
    size_t n, cap;
    const json_t **srcs; /* schema object of all[i], for $ref memoisation */
};

/* The property schema `name` (len bytes) declared on n itself, not on its
 * $ref chain, or NULL. */
const tg_snode_t *tg_snode_own_prop(const tg_snode_t *n, const char *name, size_t len);
/* The same on n or, failing that, its $ref chain. */
const tg_snode_t *tg_snode_prop_n(const tg_snode_t *n, const char *name, size_t len);
static inline const tg_snode_t *tg_snode_prop(const tg_snode_t *n, const char *name)
{
    return tg_snode_prop_n(n, name, strlen(name));
}
/* The message template for `keyword` on n (or its $ref chain), or NULL. */
const char *tg_snode_message(const tg_snode_t *n, const char *keyword);

#endif
