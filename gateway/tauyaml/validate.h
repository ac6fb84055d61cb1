/* Schema validation of a parsed tau.yaml tree, driven by tau.schema.json.
 *
 * The walk also normalises the tree in place, the way Go's yaml.v3 decodes
 * into typed fields:
 *   - a plain number or boolean where the schema wants a string becomes the
 *     string the user wrote (`cpu_limit: 1` -> "1", `DEMO_STEPS: 48` -> "48");
 *   - a named field whose value is null (`output:` or `output: ~`) is unset;
 *   - a null map value where the map holds strings becomes "".
 * Everything else that does not fit is reported, each with its path and
 * position, and validation continues so all problems are listed. */
#ifndef TG_TAUYAML_VALIDATE_H
#define TG_TAUYAML_VALIDATE_H

#include <jansson.h>

#include "tauyaml/diag.h"
#include "tauyaml/schema.h"

/* Validate and normalise `root` (borrowed; modified in place) against the
 * schema. Errors and warnings go to `diag`, whose pos table locates them.
 * Returns the number of errors added. */
size_t tg_tauyaml_validate_schema(const tg_tauyaml_schema_t *schema, json_t *root,
                                  tg_tauyaml_diag_t *diag);

/* The same for the named top-level sections of `root` only (NULL-terminated
 * list), leaving keys the schema does not know alone: a managed workflow
 * manifest shares these sections with the direct config but reports its
 * unknown keys as warnings (tauyaml/suggest.h). */
size_t tg_tauyaml_validate_sections(const tg_tauyaml_schema_t *schema, json_t *root,
                                    const char *const *sections, tg_tauyaml_diag_t *diag);

#endif
