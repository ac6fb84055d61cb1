/* The HTTP server: libmicrohttpd with its internal thread pool on epoll.
 *
 * The server owns the request lifecycle: it creates the request context,
 * enforces the body limit, matches the route, calls the handler, queues the
 * response, writes the access log line and records metrics. */
#ifndef TG_HTTP_SERVER_H
#define TG_HTTP_SERVER_H

#include "core/config.h"
#include "http/router.h"

typedef struct tg_server_s tg_server_t;

/* Hooks around a matched route's handler. `before` (authentication, rate
 * limits) returns 0 to go on, or answers the request itself and returns -1;
 * it is skipped for TG_ROUTE_PUBLIC routes. `after` (the audit trail) runs
 * once the answer is decided, also when `before` refused. */
typedef struct {
    int (*before)(tg_req_t *req, void *app);
    void (*after)(tg_req_t *req, void *app);
} tg_server_hooks_t;

tg_server_t *tg_server_new(const tg_config_t *cfg, const tg_route_t *routes, int nroutes, void *app,
                           const tg_server_hooks_t *hooks, char *err, size_t errlen);
/* The port actually bound (useful with port 0). */
unsigned tg_server_port(const tg_server_t *s);
/* Stop accepting, let in-flight requests finish up to grace_s, then stop. */
void tg_server_drain_and_stop(tg_server_t *s, long grace_s);
void tg_server_free(tg_server_t *s);
/* The application context handed to tg_server_new. */
void *tg_req_app(const tg_req_t *req);

#endif
