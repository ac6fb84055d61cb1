/* tau.schema.json, compiled for validation.
 *
 * schema/tau.schema.json (JSON Schema 2020-12) is the single source of truth
 * for the shape of a tau.yaml. The daemon loads it once at start-up (path from
 * its config) and shares the compiled form read-only between threads; tests
 * and fuzzers may embed the text and use tg_tauyaml_schema_load_text.
 *
 * Supported keywords: type, enum, const, pattern (POSIX ERE; write patterns in
 * the subset ECMA-262 shares), minLength/maxLength (code points), minimum/
 * maximum/exclusiveMinimum/exclusiveMaximum, required, properties,
 * additionalProperties (bool or schema), propertyNames, minProperties/
 * maxProperties, items, minItems/maxItems, uniqueItems, $ref (local JSON
 * pointers, e.g. #/$defs/x), $defs; annotations ($schema, $id, $comment,
 * title, description, default, examples, deprecated, x-*). Custom:
 * x-taugate-unsupported, x-taugate-refused, x-taugate-warning, x-taugate-messages (see the
 * schema's description). Any other keyword makes loading fail, so a schema
 * edit cannot silently lose a rule. */
#ifndef TG_TAUYAML_SCHEMA_H
#define TG_TAUYAML_SCHEMA_H

#include <jansson.h>
#include <stddef.h>

typedef struct tg_tauyaml_schema_s tg_tauyaml_schema_t;

/* Load and compile a schema file. Returns NULL and writes a reason into
 * err[errlen] on failure. The result is immutable and thread-safe to share. */
tg_tauyaml_schema_t *tg_tauyaml_schema_load_file(const char *path, char *err, size_t errlen);
/* Same from text in memory (e.g. embedded in a test binary). */
tg_tauyaml_schema_t *tg_tauyaml_schema_load_text(const char *text, size_t len, char *err,
                                                 size_t errlen);
/* Same from a parsed document; takes a new reference to `doc` (caller keeps its own). */
tg_tauyaml_schema_t *tg_tauyaml_schema_load_json(json_t *doc, char *err, size_t errlen);
void tg_tauyaml_schema_free(tg_tauyaml_schema_t *s);

/* The `default` of the field at a dotted path of properties ("compute.workers"),
 * following $ref. Borrowed (lives as long as the schema); NULL when none. */
const json_t *tg_tauyaml_schema_default(const tg_tauyaml_schema_t *s, const char *dotted);

/* Every field path the schema declares ("compute", "compute.gpus",
 * "storage.image_assets.name"), in schema order, with whether it is a
 * structure whose own fields are listed (descend) or a leaf (a scalar, a
 * list of scalars, or a map of user keys). Fields marked x-taugate-refused
 * are not TauGrid's and are left out. */
typedef void (*tg_tauyaml_schema_path_fn)(void *arg, const char *path, int descend);
void tg_tauyaml_schema_paths(const tg_tauyaml_schema_t *s, tg_tauyaml_schema_path_fn fn, void *arg);

#endif
