/* The generic REST verbs over the store: get, list, create, update, patch,
 * delete and deletecollection, for every resource type and subresource
 * status. Watches, logs and tables have their own modules. */
#ifndef KS_API_H
#define KS_API_H

#include <jansson.h>

#include "server.h"

typedef struct ks_target_s {
    int rt;
    char ns[256];
    char name[256];
    char sub[32];
} ks_target_t;

void ks_api_handle(ks_req_t *r, ks_target_t *t);

/* New reference: the request body as JSON, decoded from protobuf
 * (pbdecode.h) or, with yaml_ok (apply patches), YAML; NULL after
 * replying 400. */
json_t *ks_api_parse_body(ks_req_t *r, int yaml_ok);

/* Reply 422 Invalid for kind/name with the causes array (stolen). */
void ks_reply_invalid(ks_req_t *r, int rt, const char *name, json_t *causes);
/* Append a cause {reason, message, field} to causes. */
void ks_cause(json_t *causes, const char *reason, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
