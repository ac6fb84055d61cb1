/* A run submission's payload: tau.yaml plus the files it names.
 *
 * Accepted forms (Content-Type):
 *   application/yaml (also application/x-yaml, text/yaml): the spec alone;
 *   application/json: {"spec": "<yaml text>", "files": {"<name>": "<base64>"}};
 *   multipart/form-data: a part named "spec" holding the YAML, and one part
 *   per file, named by its filename.
 * Limits: at most TG_PAYLOAD_MAX_FILES files; the body limit bounds sizes. */
#ifndef TG_API_PAYLOAD_H
#define TG_API_PAYLOAD_H

#include <stddef.h>

#include <jansson.h>

#include "http/request.h"

#define TG_PAYLOAD_MAX_FILES 64

typedef struct {
    const char *name;
    const unsigned char *data;
    size_t len;
} tg_payload_file_t;

typedef struct {
    const char *spec; /* NUL-terminated YAML text (arena memory) */
    size_t spec_len;
    tg_payload_file_t files[TG_PAYLOAD_MAX_FILES];
    size_t nfiles;
} tg_payload_t;

/* Parse the request body into `out` (arena memory). On a bad payload answers
 * 400/415/422 naming the problem and returns -1. */
int tg_payload_parse_or_reply(tg_req_t *req, tg_payload_t *out);
/* Read one {spec, files} object (borrowed) into `out` (arena memory). On a
 * problem returns -1 with *errors a new array of {path, message}. */
int tg_payload_from_json(tg_req_t *req, const json_t *obj, tg_payload_t *out, json_t **errors);
#endif
