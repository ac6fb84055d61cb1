/* GET /ui/...: the taugate console (console/), served from memory.
 *
 * The built folder (config key console_dir, `make console` writes it) is
 * read once at start (tg_console_load, before the server serves) and kept
 * in the application context (tg_app_t.console) until the server has
 * stopped; requests only read it, so no lock. Each file
 * is looked up by exact name in a sorted table, so no request path can reach
 * outside the folder.
 *
 * Answers:
 *  - assets/<name>-<hash>.<ext> (content-hashed by the build): cached for a
 *    year, immutable; a missing asset is a 404 problem;
 *  - index.html, and every other /ui/ path with no file (the console's own
 *    routes: deep links), answer index.html with Cache-Control: no-cache;
 *  - a file's .br or .gz twin built beside it is sent when Accept-Encoding
 *    allows (brotli first), with Vary: Accept-Encoding;
 *  - a strong ETag per representation; If-None-Match answers 304;
 *  - every answer carries a strict Content-Security-Policy (same origin
 *    only, no inline script or style, no framing), nosniff, no referrer.
 * Before a successful load every /ui/ path answers a 503 problem saying how
 * to build the console. Public routes: the sign-in page has no token yet. */
#ifndef TG_API_CONSOLE_H
#define TG_API_CONSOLE_H

#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"
#include "http/request.h"

/* Limits on what a console folder may hold. */
#define TG_CONSOLE_MAX_FILES 512
#define TG_CONSOLE_MAX_BYTES (32u << 20) /* all files and their twins together */
#define TG_CONSOLE_MAX_DEPTH 4

/* The policy every console answer carries. connect-src 'self' lets the
 * console call the API of the gateway that served it, and nothing else. */
#define TG_CONSOLE_CSP                                                                             \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "connect-src 'self'; worker-src 'self'; manifest-src 'self'; font-src 'self'; "                \
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/* The loaded folder. */
typedef struct tg_console_s tg_console_t;

/* Read the folder at `dir` (index.html required) into *out (the caller
 * frees it with tg_console_free). Call before the server starts serving.
 * RET: TG_OK; TG_ENOTFOUND when the folder or its index.html is missing,
 * TG_ETOOLARGE over the limits above, TG_EINVAL for a file name outside
 * [A-Za-z0-9._-/], TG_EINTERNAL on a read error; `err` says which path and
 * *out is NULL. */
tg_rc_e tg_console_load(const char *dir, tg_console_t **out, char *err, size_t errlen) TG_MUSTCHECK;
/* After the server has stopped. NULL is fine. */
void tg_console_free(tg_console_t *c);

/* The route handler for /ui and every path below it. */
void tg_console_serve(tg_req_t *req);
/* GET /: a redirect (302) to /ui/ when the console is loaded, else the 404
 * an unknown path gets, so a browser pointed at the gateway finds it. */
void tg_console_root(tg_req_t *req);

/* The route rows: / (the redirect), /ui and up to six segments below it (deep links such as
 * /ui/w/{ws}/runs or /ui/runs/{id}/logs). The handler reads req->path, not
 * the parameters. Not API operations: openapi.yaml does not list them. */
#define TG_CONSOLE_ROUTES                                                                          \
    {TG_M_GET, "/", tg_console_root, TG_ROUTE_PUBLIC, NULL},                                       \
        {TG_M_GET, "/ui", tg_console_serve, TG_ROUTE_PUBLIC, NULL},                                \
        {TG_M_GET, "/ui/{p1}", tg_console_serve, TG_ROUTE_PUBLIC, NULL},                           \
        {TG_M_GET, "/ui/{p1}/{p2}", tg_console_serve, TG_ROUTE_PUBLIC, NULL},                      \
        {TG_M_GET, "/ui/{p1}/{p2}/{p3}", tg_console_serve, TG_ROUTE_PUBLIC, NULL},                 \
        {TG_M_GET, "/ui/{p1}/{p2}/{p3}/{p4}", tg_console_serve, TG_ROUTE_PUBLIC, NULL},            \
        {TG_M_GET, "/ui/{p1}/{p2}/{p3}/{p4}/{p5}", tg_console_serve, TG_ROUTE_PUBLIC, NULL},       \
    {                                                                                              \
        TG_M_GET, "/ui/{p1}/{p2}/{p3}/{p4}/{p5}/{p6}", tg_console_serve, TG_ROUTE_PUBLIC, NULL     \
    }

#endif
