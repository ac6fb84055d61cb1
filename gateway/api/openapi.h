/* GET /v1/openapi.yaml and /v1/openapi.json: the REST contract, one
 * self-contained document.
 *
 * The repository's openapi.yaml stays the source: it is read once at start
 * (tg_api_openapi_load, before the server serves), its references to other
 * files (the JSON Schemas next to it) are bundled into components.schemas
 * (api/openapi_bundle.h), and the result is kept in memory as YAML and as
 * JSON in the application context (tg_app_t.openapi) until the server has
 * stopped; requests only read it, so the handlers need no lock. Each form has its own ETag (sha256
 * of its bytes) and honours If-None-Match (304). Before a successful load the handlers answer 503.
 * Public routes: clients and the web UI read it before they have a token. */
#ifndef TG_API_OPENAPI_H
#define TG_API_OPENAPI_H

#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"
#include "http/request.h"

/* The largest document accepted. */
#define TG_OPENAPI_MAX_BYTES (16u << 20)

/* The bundled document in its two forms. */
typedef struct tg_api_openapi_s tg_api_openapi_t;

/* Read and bundle the document at `path` (config key openapi_file) into
 * *out (the caller frees it with tg_api_openapi_free). Call before the
 * server starts serving. RET: TG_OK; TG_ENOTFOUND when the file (or a file
 * it refers to) cannot be read, TG_ETOOLARGE above TG_OPENAPI_MAX_BYTES,
 * TG_EINVAL when it is not a YAML mapping or cannot be bundled; `err` then
 * says why (naming the path) and *out is NULL. */
tg_rc_e tg_api_openapi_load(const char *path, tg_api_openapi_t **out, char *err,
                            size_t errlen) TG_MUSTCHECK;
/* After the server has stopped. NULL is fine. */
void tg_api_openapi_free(tg_api_openapi_t *doc);

/* The route handlers: YAML and JSON. */
void tg_api_openapi(tg_req_t *req);
void tg_api_openapi_json(tg_req_t *req);

#endif
