/* Dotted field paths for diagnostics: "compute.gpus", "runtime.pip[2]",
 * "policy.node_selector[\"tau.azure.com/gpu-class\"]".
 *
 * A key made only of [A-Za-z0-9_-] is appended as ".key"; any other key is
 * appended as ["key"] with JSON escaping, so every path names exactly one node
 * and can be split back into segments (tg_tauyaml_path_parent). */
#ifndef TG_TAUYAML_PATH_H
#define TG_TAUYAML_PATH_H

#include <stddef.h>

typedef struct tg_tauyaml_path_s {
    char *s;
    size_t len;
    size_t cap;
} tg_tauyaml_path_t;

void tg_tauyaml_path_init(tg_tauyaml_path_t *p);
void tg_tauyaml_path_clean(tg_tauyaml_path_t *p);
/* Append a key segment; returns the length before the push, for _pop. */
size_t tg_tauyaml_path_push_key(tg_tauyaml_path_t *p, const char *key, size_t keylen);
/* Append "[i]"; returns the length before the push. */
size_t tg_tauyaml_path_push_index(tg_tauyaml_path_t *p, size_t i);
/* Truncate back to a length returned by a push. */
void tg_tauyaml_path_pop(tg_tauyaml_path_t *p, size_t oldlen);
/* The path text; "" for the document root. Borrowed; valid until the next push. */
const char *tg_tauyaml_path_str(const tg_tauyaml_path_t *p);
/* Length of the parent path of `path` (first `len` bytes), or 0 for a top-level
 * segment. Understands quoted segments. */
size_t tg_tauyaml_path_parent(const char *path, size_t len);
/* a + b + c into buf[n], cut to fit (like snprintf "%s%s%s", without its
 * cost on the hot path: field names such as "head_" "cpu" "_request").
 * Returns buf. */
const char *tg_tauyaml_path_cat(char *buf, size_t n, const char *a, const char *b, const char *c);
/* The dotted field "sect.key" ("key" when sect is NULL) into buf[n], as
 * resolved configs, their provenance and schema defaults name fields.
 * Returns its length, or 0 (buf "") when it does not fit. */
size_t tg_tauyaml_path_field(char *buf, size_t n, const char *sect, const char *key);
/* Write the path of `key` below `parent` into `out` (a fresh buffer owned by
 * the caller, free()). Convenience for code that has no tg_tauyaml_path_t. */
char *tg_tauyaml_path_join(const char *parent, const char *key);

#endif
