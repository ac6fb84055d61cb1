/* The request context: everything one HTTP request owns, freed when it completes.
 *
 * Handlers read the request through these helpers and produce exactly one
 * response with tg_resp_* (the last call wins). Memory from req->arena lives
 * until the request completes. */
#ifndef TG_HTTP_REQUEST_H
#define TG_HTTP_REQUEST_H

#include <jansson.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/ids.h"
#include "core/status.h"

struct MHD_Connection;
struct MHD_Response;
struct tg_route_s;
struct tg_server_s;

#define TG_REQ_MAGIC  0x7a9e1c01u
#define TG_MAX_PARAMS 8

typedef enum {
    TG_M_GET = 1 << 0,
    TG_M_HEAD = 1 << 1,
    TG_M_POST = 1 << 2,
    TG_M_PUT = 1 << 3,
    TG_M_PATCH = 1 << 4,
    TG_M_DELETE = 1 << 5,
    TG_M_OPTIONS = 1 << 6,
    TG_M_OTHER = 1 << 7,
} tg_method_e;

typedef struct tg_req_s {
    uint32_t magic;
    tg_arena_t *arena;
    struct tg_server_s *server;
    struct MHD_Connection *conn;
    tg_method_e method;
    const char *method_name;
    const char *path;       /* decoded (by MHD), valid for the request */
    const char *raw_target; /* as sent, before percent-decoding */
    int fd;                 /* the connection's socket (http/conn_table.h) */
    int close_after;        /* answer with Connection: close */
    char request_id[130];
    uint64_t start_us;
    tg_buf_t body;
    int body_too_large;
    const struct tg_route_s *route;
    int route_index; /* -1 when no route matched */
    const char *param_names[TG_MAX_PARAMS];
    const char *param_values[TG_MAX_PARAMS];
    int nparams;
    const char *principal; /* subject once authenticated; for the access log */
    void *auth;            /* the authenticated principal (api/authz.h), or NULL */
    void *db;              /* the request's database lease (api/app.c), or NULL */
    int audited;           /* its audit row went in with its change (api/audit.h) */
    /* response */
    struct MHD_Response *response;
    unsigned status;
    size_t response_bytes;
} tg_req_t;

/* Path parameter by name ("ws" for /v1/workspaces/{ws}); NULL when absent. */
const char *tg_req_param(const tg_req_t *req, const char *name);
/* Query argument by name; NULL when absent. */
const char *tg_req_query(const tg_req_t *req, const char *name);
/* The query arguments in the order sent: at most `max` into names[] and
 * values[] (borrowed, valid for the request; a bare `?flag` has a NULL
 * value). Returns how many the request has, which may exceed `max`. */
size_t tg_req_query_args(const tg_req_t *req, const char **names, const char **values, size_t max);
/* Request header by name (case-insensitive); NULL when absent. */
const char *tg_req_header(const tg_req_t *req, const char *name);
/* Parse the body as a JSON object or array. On failure answers 400 naming the
 * line, column and position, and returns NULL. Returns a new reference. */
json_t *tg_req_json_body_or_reply(tg_req_t *req);
/* The Idempotency-Key header of a creating POST into *key (NULL when
 * absent). On one that is empty or over 255 characters answers 400 and
 * returns -1. */
int tg_req_idempotency_key_or_reply(tg_req_t *req, const char **key);

/* Answer with JSON (serialised compactly). Steals `body`. */
void tg_resp_json(tg_req_t *req, unsigned status, json_t *body);
/* Answer with bytes that the response copies. */
void tg_resp_bytes(tg_req_t *req, unsigned status, const char *content_type, const void *data,
                   size_t len);
/* Add a header to the response already set. */
void tg_resp_header(tg_req_t *req, const char *name, const char *value);

#endif
