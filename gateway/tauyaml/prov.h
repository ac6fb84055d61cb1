/* Provenance of a resolved run config: for each dotted field
 * ("compute.workers", "policy.node_selector.zone"), where its value came
 * from: "spec", "profile", "workspace", "default" or "policy:<rule id>".
 *
 * A flat table kept in path order, not a JSON object: a resolution records
 * some forty fields, the policy hook reads and fills a few, and every
 * submission writes them all, sorted, into its workload's provenance
 * annotation. As a jansson object each field cost a hash insert, a key
 * allocation, a place in the canonical sort and a free: a tenth of the
 * tau.yaml pipeline. Here a field is a binary search and a copy of its path
 * into one text block. Paths compare bytewise, so the table's order is the
 * canonical JSON order of the same keys. */
#ifndef TG_TAUYAML_PROV_H
#define TG_TAUYAML_PROV_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tg_tauyaml_prov_entry_s {
    uint64_t pre;  /* tg_key_prefix of the path: orders most pairs */
    uint32_t path; /* offset of the path (NUL-terminated) in text */
    uint32_t len;  /* the path's length */
    uint32_t src;  /* offset of the source (NUL-terminated) in text */
    uint32_t src_len;
} tg_tauyaml_prov_entry_t;

typedef struct tg_tauyaml_prov_s {
    tg_tauyaml_prov_entry_t *v; /* n entries in path order, no path twice */
    size_t n, cap;
    char *text; /* paths and sources; an overwritten entry's old text stays */
    size_t tlen, tcap;
} tg_tauyaml_prov_t;

void tg_tauyaml_prov_init(tg_tauyaml_prov_t *p);
void tg_tauyaml_prov_clean(tg_tauyaml_prov_t *p);

/* Record that field sect.key (key alone when sect is NULL) came from `src`,
 * replacing what an earlier call said of the same field. */
void tg_tauyaml_prov_set(tg_tauyaml_prov_t *p, const char *sect, const char *key, const char *src);
/* The same for a dotted path of `len` bytes (tauyaml/path.h spelling). */
void tg_tauyaml_prov_set_path(tg_tauyaml_prov_t *p, const char *path, size_t len, const char *src);

/* The source recorded for a dotted path, or NULL. Valid until the next set. */
const char *tg_tauyaml_prov_get(const tg_tauyaml_prov_t *p, const char *path);

/* Entry i (0 <= i < p->n, in path order). */
static inline const char *tg_tauyaml_prov_path(const tg_tauyaml_prov_t *p, size_t i, size_t *len)
{
    *len = p->v[i].len;
    return p->text + p->v[i].path;
}

static inline const char *tg_tauyaml_prov_source(const tg_tauyaml_prov_t *p, size_t i, size_t *len)
{
    *len = p->v[i].src_len;
    return p->text + p->v[i].src;
}

/* dst (initialised, its entries dropped) becomes a copy of src. */
void tg_tauyaml_prov_copy(tg_tauyaml_prov_t *dst, const tg_tauyaml_prov_t *src);

/* As a JSON object {"dotted.field": "source", ...} in path order: what a
 * dry run answers. A new reference. */
json_t *tg_tauyaml_prov_json(const tg_tauyaml_prov_t *p);

/* Add the string members of a JSON object (what tg_tauyaml_prov_json gave,
 * or a stored copy); other members are skipped. */
void tg_tauyaml_prov_add_json(tg_tauyaml_prov_t *p, const json_t *obj);

#endif
