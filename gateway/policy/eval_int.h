/* Evaluation internals shared by eval.c (the frame: scope, locations,
 * patching, decisions) and eval_kinds.c (one check per rule kind). Private
 * to gateway/policy. */
#ifndef TG_POLICY_EVAL_INT_H
#define TG_POLICY_EVAL_INT_H

#include <jansson.h>

#include "core/mem.h"
#include "policy/eval.h"

/* The section of the config read last, and its name: the checks read
 * "compute" or "policy" field after field. Reached through a pointer so the
 * read-only getters can keep it; forgotten whenever the config changes. */
typedef struct tg_policy_ev_sect_s {
    const char *name;
    const json_t *obj;
} tg_policy_ev_sect_t;

typedef struct tg_policy_ev_s {
    const tg_policy_input_t *in;
    tg_policy_result_t *out;
    json_t *res;             /* the config being checked: the input's (borrowed) or out->resolved */
    tg_tauyaml_prov_t *prov; /* its provenance: the input's or out->prov_copy; never NULL */
    int own;                 /* 1: res/prov are patched copies held by out; 2: patched in place */
    const char *copied[16];  /* sections of res already copied for patching */
    size_t ncopied;
    struct tg_policy_ev_sect_s *last; /* the section read last (eval.c) */
    const char *ws, *team, *lane, *engine;
    int is_ray;
} tg_policy_ev_t;

/* Where a decision points. */
typedef struct tg_policy_at_s {
    const char *path; /* a candidate, the resolved path, or buf */
    unsigned line, column;
    char buf[256];
} tg_policy_at_t;

/* Resolved values (borrowed; NULL when absent or JSON null); _ref: a new
 * reference to the same node (no copy). */
const json_t *tg_policy_ev_get(const tg_policy_ev_t *e, const char *sect, const char *key);
const char *tg_policy_ev_str(const tg_policy_ev_t *e, const char *sect, const char *key);
json_t *tg_policy_ev_ref(const tg_policy_ev_t *e, const char *sect, const char *key);
json_int_t tg_policy_ev_int(const tg_policy_ev_t *e, const char *sect, const char *key,
                            json_int_t def);
/* The provenance word of a dotted field, or NULL. */
const char *tg_policy_ev_prov(const tg_policy_ev_t *e, const char *dotted);
/* A `default` rule may fill sect.key: it is unset, null, or a built-in default. */
int tg_policy_ev_fillable(const tg_policy_ev_t *e, const char *sect, const char *key);
/* Fill sect.key with `val` (stolen) on a patched copy; provenance "policy:<id>". */
void tg_policy_ev_set(tg_policy_ev_t *e, const char *sect, const char *key, json_t *val,
                      const tg_policy_rule_t *r);

/* Locate a value: the first of `cands` (NULL-terminated spec paths; may be
 * NULL) the spec wrote; else the value is named cands[0] (or `rpath`, its
 * resolved path and provenance key, when there are no candidates) and
 * located at what brought it in: policy.profile for a profile value, else
 * the nearest section the spec wrote, else 1:1. */
void tg_policy_ev_locate(const tg_policy_ev_t *e, const char *rpath, const char *const *cands,
                         int want_value, tg_policy_at_t *at);

/* Record decisions. `actual` is stolen (may be NULL for JSON null); the
 * expected value is the rule's own. `fmt` is the built-in description of a
 * violation, used when the rule has no message. */
void tg_policy_ev_allow(tg_policy_ev_t *e, const tg_policy_rule_t *r, const tg_policy_at_t *at,
                        json_t *actual);
void tg_policy_ev_allow_int(tg_policy_ev_t *e, const tg_policy_rule_t *r, const tg_policy_at_t *at,
                            json_int_t actual);
void tg_policy_ev_violation(tg_policy_ev_t *e, const tg_policy_rule_t *r, const tg_policy_at_t *at,
                            json_t *actual, const char *fmt, ...) TG_PRINTF(5, 6);
/* A default rule filled sect.key (already set with tg_policy_ev_set). */
void tg_policy_ev_filled(tg_policy_ev_t *e, const tg_policy_rule_t *r, const tg_policy_at_t *at,
                         const char *sect, const char *key);

/* One function per kind (eval_kinds.c); NULL where a kind has no fill. */
typedef void (*tg_policy_kind_fn)(tg_policy_ev_t *e, const tg_policy_rule_t *r);
extern const tg_policy_kind_fn tg_policy_kind_check[TG_PK_COUNT];
extern const tg_policy_kind_fn tg_policy_kind_fill[TG_PK_COUNT];

#endif
