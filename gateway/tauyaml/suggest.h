/* Unknown keys of a TauGrid managed workflow manifest, found and explained
 * as TauGrid's core/runconfig/unknown.go does: a key neither the direct run
 * config nor the manifest schema knows is reported (not refused), with the
 * nearest known field when there is an unambiguous candidate. */
#ifndef TG_TAUYAML_SUGGEST_H
#define TG_TAUYAML_SUGGEST_H

#include <jansson.h>

#include "tauyaml/diag.h"
#include "tauyaml/schema.h"

/* Add one warning per unknown key of `root` (borrowed) to `diag`:
 * `unknown config key "<path>" in tau.yaml (ignored); did you mean "<field>"?`
 * located at the key. Keys are reported once (a typo repeated in every list
 * element is one mistake), in path order. */
void tg_tauyaml_suggest_unknown_keys(const tg_tauyaml_schema_t *schema, const json_t *root,
                                     tg_tauyaml_diag_t *diag);

/* The nearest known field path to `path`, or NULL when none is close enough
 * (borrowed from `fields`, an array of dotted paths). */
const char *tg_tauyaml_suggest_field(const json_t *fields, const char *path);

#endif
