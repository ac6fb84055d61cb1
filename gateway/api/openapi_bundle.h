/* Making an OpenAPI document self-contained: every $ref to another file
 * (the JSON Schemas next to openapi.yaml, `./schema/tau.schema.json#/$defs/x`)
 * is replaced by a local one, the file's schema being copied into
 * components.schemas.
 *
 * Names: a file `tau.schema.json` becomes `TauSchema` (its root, when a
 * reference names it) and each of its `$defs` `TauSchema_<def>`; references
 * inside the file are rewritten to those names, and its `$id` and `$schema`
 * are dropped (an embedded `$id` would change how the rewritten references
 * resolve). A file referenced from several places is copied once. A name
 * that is taken already, a reference that is not a relative file path, or a
 * file that is not a JSON object is an error.
 *
 * jansson: `doc` is modified in place; nothing is kept. */
#ifndef TG_API_OPENAPI_BUNDLE_H
#define TG_API_OPENAPI_BUNDLE_H

#include <jansson.h>
#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"

/* Bundle `doc` whose relative references are relative to `base_dir`.
 * RET: TG_OK, or TG_EINVAL / TG_ENOTFOUND with a message in err. */
tg_rc_e tg_openapi_bundle(json_t *doc, const char *base_dir, char *err, size_t errlen) TG_MUSTCHECK;

#endif
