/* YAML to JSON (libyaml), for CRD files and apply-patch+yaml bodies. */
#ifndef KS_YAMLJSON_H
#define KS_YAMLJSON_H

#include <jansson.h>
#include <stddef.h>

/* Parse the first YAML document in buf; returns a new reference or NULL
 * with a message in err. Plain scalars are typed as YAML 1.2 core schema. */
json_t *ks_yaml_to_json(const char *buf, size_t len, char *err, size_t errn);

#endif
