/* Route matching against precompiled templates. */
#include "http/router.h"

#include <stdio.h>
#include <string.h>

#include "core/mem.h"

typedef struct {
    const char *lit; /* literal text, or the literal suffix of a param segment */
    size_t litlen;
    const char *param; /* parameter name or NULL */
    size_t paramlen;
} router_seg_t;

typedef struct {
    router_seg_t segs[TG_ROUTER_MAX_SEGMENTS];
    int nsegs;
} router_tpl_t;

struct tg_router_s {
    const tg_route_t *routes;
    router_tpl_t *tpls;
    int nroutes;
};

static void router_compile(const char *path, router_tpl_t *t)
{
    t->nsegs = 0;
    const char *p = path;
    while (*p == '/')
        p++;
    while (*p && t->nsegs < TG_ROUTER_MAX_SEGMENTS) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        router_seg_t *s = &t->segs[t->nsegs++];
        memset(s, 0, sizeof(*s));
        if (len > 1 && p[0] == '{') {
            const char *close = memchr(p, '}', len);
            s->param = p + 1;
            s->paramlen = close ? (size_t)(close - p - 1) : len - 1;
            if (close && (size_t)(close - p) + 1 < len) {
                s->lit = close + 1; /* ":cancel" */
                s->litlen = len - (size_t)(close - p) - 1;
            }
        } else {
            s->lit = p;
            s->litlen = len;
        }
        p += len;
        while (*p == '/')
            p++;
    }
}

tg_router_t *tg_router_new(const tg_route_t *routes, int nroutes)
{
    tg_router_t *r = tg_xcalloc(1, sizeof(*r));
    r->routes = routes;
    r->nroutes = nroutes;
    r->tpls = tg_xcalloc((size_t)nroutes, sizeof(*r->tpls));
    for (int i = 0; i < nroutes; i++)
        router_compile(routes[i].path, &r->tpls[i]);
    return r;
}

void tg_router_free(tg_router_t *r)
{
    if (!r)
        return;
    free(r->tpls);
    free(r);
}

int tg_router_count(const tg_router_t *r)
{
    return r->nroutes;
}

const tg_route_t *tg_router_route(const tg_router_t *r, int index)
{
    return index >= 0 && index < r->nroutes ? &r->routes[index] : NULL;
}

typedef struct {
    const char *p;
    size_t len;
} router_span_t;

/* Split the request path; fails on too many segments or empty ones ("//"). */
static int router_split(const char *path, router_span_t *out, int cap)
{
    int n = 0;
    const char *p = path;
    if (*p != '/')
        return -1;
    p++;
    if (!*p)
        return 0;
    for (;;) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (n == cap)
            return -1;
        if (len == 0) {
            if (!end) /* trailing slash: ignore */
                break;
            return -1;
        }
        out[n].p = p;
        out[n].len = len;
        n++;
        if (!end)
            break;
        p = end + 1;
    }
    return n;
}

static int router_match_tpl(const router_tpl_t *t, const router_span_t *segs, int n, tg_req_t *req)
{
    if (t->nsegs != n)
        return 0;
    int np = 0;
    for (int i = 0; i < n; i++) {
        const router_seg_t *s = &t->segs[i];
        const char *p = segs[i].p;
        size_t len = segs[i].len;
        if (!s->param) {
            if (len != s->litlen || memcmp(p, s->lit, len) != 0)
                return 0;
            continue;
        }
        size_t vlen = len;
        if (s->lit) {
            if (len <= s->litlen || memcmp(p + len - s->litlen, s->lit, s->litlen) != 0)
                return 0;
            vlen = len - s->litlen;
        }
        if (memchr(p, ':', vlen))
            return 0;
        if (req && np < TG_MAX_PARAMS) {
            req->param_names[np] = tg_arena_strndup(req->arena, s->param, s->paramlen);
            req->param_values[np] = tg_arena_strndup(req->arena, p, vlen);
            np++;
        }
    }
    if (req)
        req->nparams = np;
    return 1;
}

int tg_router_match(const tg_router_t *r, tg_method_e method, const char *path, tg_req_t *req,
                    unsigned *allowed)
{
    router_span_t segs[TG_ROUTER_MAX_SEGMENTS];
    *allowed = 0;
    int n = router_split(path, segs, TG_ROUTER_MAX_SEGMENTS);
    if (n < 0)
        return -1;
    tg_method_e want = method == TG_M_HEAD ? TG_M_GET : method;
    for (int i = 0; i < r->nroutes; i++) {
        if (!router_match_tpl(&r->tpls[i], segs, n, NULL))
            continue;
        if (r->routes[i].method == want) {
            router_match_tpl(&r->tpls[i], segs, n, req);
            *allowed = 0;
            return i;
        }
        *allowed |= r->routes[i].method;
        if (r->routes[i].method == TG_M_GET)
            *allowed |= TG_M_HEAD;
    }
    return -1;
}

const char *tg_method_name(tg_method_e m)
{
    switch (m) {
    case TG_M_GET:
        return "GET";
    case TG_M_HEAD:
        return "HEAD";
    case TG_M_POST:
        return "POST";
    case TG_M_PUT:
        return "PUT";
    case TG_M_PATCH:
        return "PATCH";
    case TG_M_DELETE:
        return "DELETE";
    case TG_M_OPTIONS:
        return "OPTIONS";
    default:
        return "OTHER";
    }
}

void tg_router_allow_header(unsigned allowed, char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    for (unsigned bit = TG_M_GET; bit <= TG_M_OPTIONS && used < outlen; bit <<= 1) {
        if (!(allowed & bit))
            continue;
        int w = snprintf(out + used, outlen - used, "%s%s", used ? ", " : "",
                         tg_method_name((tg_method_e)bit));
        if (w < 0)
            break;
        used += (size_t)w;
    }
}
