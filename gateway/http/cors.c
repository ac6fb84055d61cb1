/* CORS (see cors.h). */
#include "http/cors.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "http/problem.h"
#include "http/router.h"

#define CORS_ALLOW_HEADERS                                                                         \
    "Authorization, Content-Type, Idempotency-Key, If-None-Match, Last-Event-ID, X-Request-Id"
#define CORS_EXPOSE  "X-Request-Id, Retry-After, Location"
#define CORS_MAX_AGE "600"

struct tg_cors_s {
    char **origins;
    size_t n;
    int any;
};

tg_cors_t *tg_cors_new(const char *list)
{
    tg_cors_t *c = tg_xcalloc(1, sizeof(*c));
    const char *p = list ? list : "";
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *s = p;
        while (*p && *p != ',')
            p++;
        const char *e = p;
        while (e > s && e[-1] == ' ')
            e--;
        while (e > s && e[-1] == '/') /* "https://a.example/" names the origin too */
            e--;
        if (e == s)
            continue;
        if (e - s == 1 && *s == '*') {
            c->any = 1;
            continue;
        }
        c->origins = tg_xrealloc(c->origins, (c->n + 1) * sizeof(*c->origins));
        c->origins[c->n++] = tg_xstrndup(s, (size_t)(e - s));
    }
    return c;
}

void tg_cors_free(tg_cors_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->origins[i]);
    free(c->origins);
    free(c);
}

/* The request's Origin when it is allowed, else NULL. */
static const char *cors_origin(const tg_cors_t *c, const tg_req_t *req)
{
    const char *o = tg_req_header(req, "Origin");
    if (!c || !o || !*o)
        return NULL;
    if (c->any)
        return o;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->origins[i], o) == 0)
            return o;
    return NULL;
}

void tg_cors_preflight(const tg_cors_t *c, tg_req_t *req, unsigned methods)
{
    const char *origin = cors_origin(c, req);
    if (!origin) {
        const char *o = tg_req_header(req, "Origin");
        tg_problem(req, TG_EFORBIDDEN, NULL,
                   "origin %.200s may not call this API from a browser (cors_allowed_origins)",
                   o ? o : "(none)");
        return;
    }
    char allow[128];
    tg_router_allow_header(methods | TG_M_OPTIONS, allow, sizeof(allow));
    tg_resp_bytes(req, 204, NULL, "", 0);
    tg_resp_header(req, "Access-Control-Allow-Origin", origin);
    tg_resp_header(req, "Access-Control-Allow-Methods", allow);
    tg_resp_header(req, "Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
    tg_resp_header(req, "Access-Control-Max-Age", CORS_MAX_AGE);
    tg_resp_header(req, "Vary",
                   "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
}

void tg_cors_decorate(const tg_cors_t *c, tg_req_t *req)
{
    if (!c || (!c->any && c->n == 0) || !req->response || !tg_req_header(req, "Origin") ||
        MHD_get_response_header(req->response, "Access-Control-Allow-Origin"))
        return;
    const char *origin = cors_origin(c, req);
    if (!origin) {
        /* refused here, perhaps allowed for another origin: a shared cache
         * must not hand this answer to an allowed one */
        tg_resp_header(req, "Vary", "Origin");
        return;
    }
    tg_resp_header(req, "Access-Control-Allow-Origin", origin);
    tg_resp_header(req, "Access-Control-Expose-Headers", CORS_EXPOSE);
    tg_resp_header(req, "Vary", "Origin");
}
