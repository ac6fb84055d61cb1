/* Cross-origin resource sharing for browser clients (a web console on
 * another origin).
 *
 * Origins are allowed by the operator (cors_allowed_origins: a
 * comma-separated list of exact origins such as https://console.example,
 * or * for any; none by default). For an allowed Origin:
 *   preflight (OPTIONS with Access-Control-Request-Method), unauthenticated:
 *     204 with Access-Control-Allow-Origin (the origin itself),
 *     -Allow-Methods (those the path's routes accept), -Allow-Headers
 *     (Authorization, Content-Type, Idempotency-Key, If-None-Match,
 *     Last-Event-ID, X-Request-Id), -Max-Age, and Vary;
 *   every other answer: Access-Control-Allow-Origin, Vary: Origin, and
 *     Access-Control-Expose-Headers (X-Request-Id, Retry-After, Location).
 * Once any origin is allowed, an answer to another Origin carries Vary:
 * Origin alone, so that no cache serves it to an allowed one. A preflight
 * from an origin not allowed answers 403. Bearer tokens are not
 * cookies: no Access-Control-Allow-Credentials. */
#ifndef TG_HTTP_CORS_H
#define TG_HTTP_CORS_H

#include "http/request.h"

typedef struct tg_cors_s tg_cors_t;

/* From the configured list (copied). NULL-safe list: nothing allowed. */
tg_cors_t *tg_cors_new(const char *allowed_origins);
void tg_cors_free(tg_cors_t *c);

/* Answer req, a preflight for a path whose routes accept `methods` (a
 * tg_method_e mask). */
void tg_cors_preflight(const tg_cors_t *c, tg_req_t *req, unsigned methods);
/* Add the headers of an actual answer (none without an allowed Origin). */
void tg_cors_decorate(const tg_cors_t *c, tg_req_t *req);

#endif
