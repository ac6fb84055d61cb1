/* tau.yaml text -> jansson tree + position table (libyaml event parser).
 *
 * Bounded: document size, nesting depth, node count and key length come from
 * tg_tauyaml_limits_t. Rejected outright: invalid UTF-8, aliases (no alias
 * bombs), duplicate keys, non-scalar keys, unknown tags, more than one
 * document, an empty document, a top level that is not a mapping. The full
 * resolution table is docs/taugrid-compat.md ("YAML scalars").
 *
 * Scalars follow the YAML 1.2 core schema as Go's yaml.v3 resolves them:
 * null (~, null, Null, NULL, empty), bool (true/True/TRUE, false/...), int
 * (decimal, 0x, 0o, 0b, legacy 0777 octal, '_' separators), float
 * (1.5, .5, 1e3; .inf/.nan are rejected because JSON cannot hold them), and
 * everything else, every quoted scalar and block scalar, a string. `on`,
 * `yes`, `off` and `no` are strings. Explicit !!str/!!int/!!float/!!bool/
 * !!null tags are honoured. */
#ifndef TG_TAUYAML_YAML_TREE_H
#define TG_TAUYAML_YAML_TREE_H

#include <jansson.h>
#include <stddef.h>

#include "core/status.h"
#include "tauyaml/diag.h"
#include "tauyaml/limits.h"
#include "tauyaml/pos.h"

typedef struct tg_tauyaml_doc_s {
    json_t *root;          /* owned; a JSON object once parsing succeeded */
    tg_tauyaml_pos_t *pos; /* owned; positions of every node (also after errors) */
} tg_tauyaml_doc_t;

void tg_tauyaml_doc_init(tg_tauyaml_doc_t *doc);
/* Release root and pos (NULL-safe). */
void tg_tauyaml_doc_clean(tg_tauyaml_doc_t *doc);

/* Parse `len` bytes of YAML into `doc` (which must be freshly initialised).
 * Diagnostics go to `diag` with explicit positions; the caller should point
 * diag->pos at doc->pos afterwards. A leading UTF-8 byte-order mark is
 * skipped (positions count from after it). Returns TG_OK (doc->root is an
 * object), TG_ETOOLARGE (document over limits->max_doc_bytes; nothing
 * parsed), TG_EINVAL (not YAML: invalid UTF-8 or a syntax error, which is
 * then the only error reported; a tab in indentation is named as such) or
 * TG_EUNPROCESSABLE (well-formed YAML this parser refuses: aliases,
 * duplicate keys, tags, NUL, non-finite numbers, limits, several or no
 * documents, a top level that is not a mapping); doc->root is NULL unless
 * TG_OK. */
tg_rc_e tg_tauyaml_yaml_parse(const char *text, size_t len, const tg_tauyaml_limits_t *limits,
                              tg_tauyaml_doc_t *doc, tg_tauyaml_diag_t *diag) TG_MUSTCHECK;

/* Resolve one plain (unquoted, untagged) scalar as yaml.v3 does. Returns a new
 * reference; sets *nonfinite when the text is .inf/.nan (result is NULL).
 * `s` must be valid UTF-8 (as every scalar of a document tg_tauyaml_yaml_parse
 * accepted is): a string result is not checked again. */
json_t *tg_tauyaml_yaml_resolve_plain(const char *s, size_t n, int *nonfinite);

/* Index of the first byte that is not valid UTF-8, or len when all is valid. */
size_t tg_tauyaml_utf8_check(const char *s, size_t len);

#endif
