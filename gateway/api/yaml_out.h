/* Writing a JSON value as block-style YAML (libyaml's emitter), for
 * documents people read: GET /v1/openapi.yaml.
 *
 * Strings stay strings when read back under the YAML 1.2 core schema (as
 * gateway/tauyaml/yaml_tree.c and Go's yaml.v3 resolve plain scalars): one that
 * would read as something else ("true", "1.0", "null", "") is quoted;
 * multi-line ones are literal blocks. Key order is the object's. */
#ifndef TG_API_YAML_OUT_H
#define TG_API_YAML_OUT_H

#include <jansson.h>
#include <stddef.h>

/* The YAML text of v (malloc'd, NUL-terminated; *len its length), or NULL
 * when libyaml refuses (it should not for a JSON value). */
char *tg_yaml_out(const json_t *v, size_t *len);

#endif
