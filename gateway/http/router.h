/* Routes: method + path template with {params}, matched segment by segment.
 *
 * A template segment is a literal ("runs"), a parameter ("{ws}"), or a
 * parameter with a literal suffix after a colon ("{id}:cancel", Google AIP
 * custom methods). A plain parameter never matches a segment holding ':', so
 * "/v1/runs/{id}" and "/v1/runs/{id}:cancel" do not shadow each other. */
#ifndef TG_HTTP_ROUTER_H
#define TG_HTTP_ROUTER_H

#include "http/request.h"

typedef void (*tg_handler_fn)(tg_req_t *req);

enum {
    TG_ROUTE_PUBLIC = 1 << 0, /* no authentication */
    TG_ROUTE_ADMIN = 1 << 1,  /* platform admins only */
    TG_ROUTE_SUBMIT = 1 << 2, /* charged to the stricter submission rate limit */
};

typedef struct tg_route_s {
    tg_method_e method;
    const char *path;
    tg_handler_fn handler;
    unsigned flags;
    const void *arg; /* handler data: generic handlers read it as req->route->arg */
} tg_route_t;

#define TG_ROUTER_MAX_SEGMENTS 16

typedef struct tg_router_s tg_router_t;

/* Compile a table (kept by reference; must outlive the router). */
tg_router_t *tg_router_new(const tg_route_t *routes, int nroutes);
void tg_router_free(tg_router_t *r);
int tg_router_count(const tg_router_t *r);
const tg_route_t *tg_router_route(const tg_router_t *r, int index);

/* Match a path. Returns the route index and fills req's params, or -1. When
 * the path matches but not the method, *allowed gets the methods that do
 * match (a bitmask of tg_method_e); otherwise it is 0. */
int tg_router_match(const tg_router_t *r, tg_method_e method, const char *path, tg_req_t *req,
                    unsigned *allowed);
/* "GET, HEAD, POST" for an Allow header. */
void tg_router_allow_header(unsigned allowed, char *out, size_t outlen);
const char *tg_method_name(tg_method_e m);

#endif
