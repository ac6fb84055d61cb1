/* GET /v1/openapi.yaml: the REST contract (openapi.yaml), served as is.
 *
 * The document is read once at start (tg_api_openapi_load, before the
 * server serves) and kept in memory for the life of the process; requests
 * only read it, so the handler needs no lock. The answer is
 * `application/yaml` with an ETag (the document's sha256) and honours
 * If-None-Match (304). Before a successful load the handler answers 503.
 * Public route: clients and the web UI read it before they have a token. */
#ifndef TG_API_OPENAPI_H
#define TG_API_OPENAPI_H

#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"
#include "http/request.h"

/* The largest document accepted. */
#define TG_OPENAPI_MAX_BYTES (16u << 20)

/* Read the document at `path` (config key openapi_file) into memory,
 * replacing one loaded before. Call before the server starts serving.
 * RET: TG_OK; TG_ENOTFOUND when the file cannot be opened, TG_ETOOLARGE
 * above TG_OPENAPI_MAX_BYTES, TG_EINVAL when empty or holding a NUL byte,
 * TG_EINTERNAL on a read error; `err` then says why (naming the path). */
tg_rc_e tg_api_openapi_load(const char *path, char *err, size_t errlen) TG_MUSTCHECK;
/* Free the document; after the server has stopped. Safe without a load. */
void tg_api_openapi_unload(void);

/* The route handler. */
void tg_api_openapi(tg_req_t *req);

#endif
