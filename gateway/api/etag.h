/* Conditional GETs (RFC 9110 §13): a strong ETag over the exact bytes of
 * an answer, and 304 Not Modified when If-None-Match names it.
 *
 * The tag is "sha256:<hex>" of the body, so it is the same on every replica
 * and changes exactly when the answer does. Used for what cannot change
 * (sealed evidence, the public keys, the contract) and for the run views,
 * which a client polls. */
#ifndef TG_API_ETAG_H
#define TG_API_ETAG_H

#include <jansson.h>
#include <stddef.h>

#include "http/request.h"

#define TG_ETAG_LEN 80 /* "\"sha256:" + 64 hex + "\"" + NUL, rounded up */

/* The strong tag of `len` bytes into out. */
void tg_etag_of(const void *data, size_t len, char out[TG_ETAG_LEN]);
/* 1 when an If-None-Match value ("*", or a list of tags, weak ones compared
 * weakly as RFC 9110 says for GET) names `etag`. */
int tg_etag_matches(const char *if_none_match, const char *etag);

/* Answer 200 with the bytes (copied) and their ETag, or 304 without a body
 * when the request's If-None-Match names it. `etag` NULL: computed from the
 * bytes. cache_control NULL: "no-cache" (use the tag to revalidate). */
void tg_resp_conditional(tg_req_t *req, const char *content_type, const void *data, size_t len,
                         const char *etag, const char *cache_control);
/* The same for a JSON body (stolen), written as tg_resp_json writes it. */
void tg_resp_json_conditional(tg_req_t *req, json_t *body, const char *cache_control);

#endif
