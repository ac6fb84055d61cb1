/* libmicrohttpd server: request lifecycle, limits, access log, drain. */
#include "http/server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/log.h"
#include "core/mem.h"
#include "core/metrics.h"
#include "http/acceptor.h"
#include "http/conn_table.h"
#include "http/cors.h"
#include "http/head_check.h"
#include "http/problem.h"

/* What a daemon's connection notifications need. */
typedef struct {
    struct tg_server_s *server;
    _Atomic int *open; /* connections the daemon holds */
} server_loop_t;

struct tg_server_s {
    struct MHD_Daemon **daemons; /* one event loop (thread) each */
    _Atomic int *open;           /* connections each daemon holds */
    server_loop_t *loops;
    unsigned ndaemons;
    tg_conn_table_t *conns;
    tg_cors_t *cors;
    tg_acceptor_t *acceptor;
    tg_router_t *router;
    const tg_config_t *cfg;
    void *app;
    tg_server_hooks_t hooks;
    _Atomic int inflight;
    _Atomic int draining;
    unsigned port;
    const char **metric_methods;
    const char **metric_paths;
};

enum { REQ_STATE_NEW = 0, REQ_STATE_BODY, REQ_STATE_DONE };

void *tg_req_app(const tg_req_t *req)
{
    return req->server->app;
}

static tg_method_e server_method(const char *m)
{
    static const struct {
        const char *name;
        tg_method_e m;
    } map[] = {{"GET", TG_M_GET},        {"HEAD", TG_M_HEAD},   {"POST", TG_M_POST},
               {"PUT", TG_M_PUT},        {"PATCH", TG_M_PATCH}, {"DELETE", TG_M_DELETE},
               {"OPTIONS", TG_M_OPTIONS}};
    for (size_t i = 0; i < TG_ARRAY_LEN(map); i++)
        if (strcmp(m, map[i].name) == 0)
            return map[i].m;
    return TG_M_OTHER;
}

/* Called by MHD as soon as the request line is read: the context starts here,
 * so durations include header parsing and body upload. */
static void *server_uri_log(void *cls, const char *uri, struct MHD_Connection *conn)
{
    tg_server_t *s = cls;
    tg_arena_t *arena = tg_arena_new(8192);
    tg_req_t *req = tg_arena_alloc(arena, sizeof(*req));
    req->magic = TG_REQ_MAGIC;
    req->arena = arena;
    req->server = s;
    req->conn = conn;
    req->raw_target = tg_arena_strdup(arena, uri ? uri : "");
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    req->fd = ci ? ci->connect_fd : -1;
    req->start_us = tg_now_mono_us();
    req->route_index = -1;
    tg_buf_init(&req->body, (size_t)s->cfg->max_body_bytes);
    atomic_fetch_add(&s->inflight, 1);
    return req;
}

static void server_access_log(tg_server_t *s, tg_req_t *req, uint64_t dur_us)
{
    if (!s->cfg->access_log || !tg_log_enabled(TG_LOG_INFO))
        return;
    char ts[40];
    tg_time_rfc3339(tg_now_wall_us(), ts, sizeof(ts));
    const tg_route_t *route = req->route;
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s?, s:i, s:I, s:I, s:s, s:s?}", "time", ts, "level", "info",
        "component", "access", "method", req->method_name ? req->method_name : "?", "route",
        route ? route->path : "unmatched", "path", req->path, "status", (int)req->status, "bytes",
        (json_int_t)req->response_bytes, "duration_us", (json_int_t)dur_us, "request_id",
        req->request_id, "principal", req->principal);
    if (!o)
        return;
    char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (line) {
        tg_log_json_line(line, strlen(line));
        free(line);
    }
    json_decref(o);
}

static void server_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                             enum MHD_RequestTerminationCode toe)
{
    tg_server_t *s = cls;
    tg_req_t *req = *con_cls;
    (void)conn;
    if (!req)
        return;
    uint64_t dur = tg_now_mono_us() - req->start_us;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && req->status == 0)
        req->status = 499; /* client went away or timed out before an answer */
    tg_metrics_http_observe(req->route_index, req->status, dur);
    server_access_log(s, req, dur);
    tg_conn_table_request_done(s->conns, req->fd);
    if (req->response)
        MHD_destroy_response(req->response);
    tg_buf_clean(&req->body);
    req->magic = ~TG_REQ_MAGIC;
    tg_arena_free(req->arena);
    *con_cls = NULL;
    atomic_fetch_sub(&s->inflight, 1);
}

static enum MHD_Result server_queue(tg_server_t *s, tg_req_t *req)
{
    if (!req->response)
        tg_problem(req, TG_EINTERNAL, NULL, "the handler produced no answer");
    MHD_add_response_header(req->response, "X-Request-Id", req->request_id);
    tg_conn_table_request_read(s->conns, req->fd);
    tg_cors_decorate(s->cors, req);
    if (req->close_after || atomic_load(&s->draining))
        MHD_add_response_header(req->response, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result r = MHD_queue_response(req->conn, req->status, req->response);
    return r;
}

static void server_dispatch(tg_server_t *s, tg_req_t *req)
{
    unsigned allowed = 0;
    int idx = tg_router_match(s->router, req->method, req->path, req, &allowed);
    if (idx < 0 && allowed && req->method == TG_M_OPTIONS) {
        /* OPTIONS is the server's own on every routed path: a CORS
         * preflight, or the methods the path accepts */
        if (tg_req_header(req, "Origin") && tg_req_header(req, "Access-Control-Request-Method")) {
            tg_cors_preflight(s->cors, req, allowed);
        } else {
            char allow[128];
            tg_router_allow_header(allowed | TG_M_OPTIONS, allow, sizeof(allow));
            tg_resp_bytes(req, 204, NULL, "", 0);
            tg_resp_header(req, MHD_HTTP_HEADER_ALLOW, allow);
        }
        return;
    }
    if (idx < 0) {
        if (allowed) {
            char allow[128];
            tg_router_allow_header(allowed, allow, sizeof(allow));
            tg_problem(req, TG_EMETHOD, NULL, "%s is not allowed on %s; allowed: %s",
                       req->method_name, req->path, allow);
            tg_resp_header(req, MHD_HTTP_HEADER_ALLOW, allow);
        } else {
            tg_problem(req, TG_ENOTFOUND, NULL, "no resource at %s", req->path);
        }
        return;
    }
    req->route_index = idx;
    req->route = tg_router_route(s->router, idx);
    if (req->body_too_large) {
        tg_problem(req, TG_ETOOLARGE, NULL, "the request body exceeds the limit of %ld bytes",
                   s->cfg->max_body_bytes);
        return;
    }
    if (!(req->route->flags & TG_ROUTE_PUBLIC) && s->hooks.before &&
        s->hooks.before(req, s->app) != 0) {
        if (s->hooks.after)
            s->hooks.after(req, s->app);
        return;
    }
    req->route->handler(req);
    if (s->hooks.after)
        s->hooks.after(req, s->app);
}

static void server_set_request_id(tg_req_t *req)
{
    const char *rid = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "X-Request-Id");
    if (rid && tg_request_id_valid(rid)) {
        size_t n = strlen(rid);
        memcpy(req->request_id, rid, n + 1);
    } else {
        tg_uuid_v4(req->request_id);
    }
}

static enum MHD_Result server_access(void *cls, struct MHD_Connection *conn, const char *url,
                                     const char *method, const char *version,
                                     const char *upload_data, size_t *upload_data_size,
                                     void **con_cls)
{
    tg_server_t *s = cls;
    tg_req_t *req = *con_cls;
    if (!req) /* MHD always calls the URI logger first; be defensive anyway */
        return MHD_NO;

    if (req->status == 0 && req->method_name == NULL) {
        req->method_name = tg_arena_strdup(req->arena, method);
        req->method = server_method(method);
        req->path = tg_arena_strdup(req->arena, url);
        server_set_request_id(req);
        tg_head_fault_t fault;
        if (tg_head_check(conn, req->raw_target, version, s->cfg, &fault) != 0) {
            /* Answered before the body is read: the connection closes. */
            req->path = req->raw_target; /* logged as sent, not as decoded */
            req->close_after = 1;
            tg_problem_http(req, fault.status, fault.slug, fault.title, "%s", fault.detail);
            if (fault.www_authenticate)
                tg_resp_header(req, "WWW-Authenticate", fault.www_authenticate);
            return server_queue(s, req);
        }
        tg_conn_table_head_done(s->conns, req->fd);
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > (unsigned long long)s->cfg->max_body_bytes) {
            /* Refuse before reading a byte of the body; MHD closes the
             * connection afterwards since the body is left unread. */
            req->body_too_large = 1;
            server_dispatch(s, req);
            return server_queue(s, req);
        }
        return MHD_YES;
    }

    if (*upload_data_size) {
        tg_conn_table_body_bytes(s->conns, req->fd, *upload_data_size);
        if (!req->body_too_large &&
            tg_buf_append(&req->body, upload_data, *upload_data_size) != TG_OK) {
            req->body_too_large = 1;
            tg_buf_clean(&req->body);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }

    if (req->response) /* already answered (a streaming handler resumed us) */
        return MHD_YES;
    tg_conn_table_request_read(s->conns, req->fd);
    server_dispatch(s, req);
    return server_queue(s, req);
}

/* Counts a daemon's connections down and gives the connection's share of
 * the limits back (the acceptor counted them up). */
static void server_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                               enum MHD_ConnectionNotificationCode code)
{
    server_loop_t *loop = cls;
    (void)socket_context;
    if (code != MHD_CONNECTION_NOTIFY_CLOSED)
        return;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci)
        tg_conn_table_release(loop->server->conns, ci->connect_fd);
    atomic_fetch_sub(loop->open, 1);
}

/* Each daemon's own connection limit: out of reach, since the acceptor
 * admits connections only below max_connections (http/conn_table.h says
 * why libmicrohttpd's limit must never be met). */
#define SERVER_MHD_CONNECTION_LIMIT (1u << 24)

static void server_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    tg_log_debug("mhd", "%s", msg);
}

tg_server_t *tg_server_new(const tg_config_t *cfg, const tg_route_t *routes, int nroutes, void *app,
                           const tg_server_hooks_t *hooks, char *err, size_t errlen)
{
    tg_server_t *s = tg_xcalloc(1, sizeof(*s));
    s->cfg = cfg;
    s->app = app;
    if (hooks)
        s->hooks = *hooks;
    s->router = tg_router_new(routes, nroutes);
    s->metric_methods = tg_xcalloc((size_t)nroutes + 1, sizeof(char *));
    s->metric_paths = tg_xcalloc((size_t)nroutes + 1, sizeof(char *));
    for (int i = 0; i < nroutes; i++) {
        s->metric_methods[i] = tg_method_name(routes[i].method);
        s->metric_paths[i] = routes[i].path;
    }
    tg_metrics_init(nroutes, s->metric_methods, s->metric_paths);

    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    /* No listening socket of their own: http/acceptor.c accepts and gives
     * each connection to the least busy daemon. */
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG | MHD_USE_TURBO | MHD_USE_NO_LISTEN_SOCKET;
    socklen_t sslen = sizeof(struct sockaddr_in);
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, cfg->listen_address, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t)cfg->port);
    } else if (inet_pton(AF_INET6, cfg->listen_address, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t)cfg->port);
        sslen = sizeof(struct sockaddr_in6);
    } else {
        snprintf(err, errlen, "invalid value for listen_address: '%s' is not an IP address",
                 cfg->listen_address);
        tg_server_free(s);
        return NULL;
    }

    s->ndaemons = cfg->threads > 0 ? (unsigned)cfg->threads : 1;
    s->daemons = tg_xcalloc(s->ndaemons, sizeof(*s->daemons));
    s->open = tg_xcalloc(s->ndaemons, sizeof(*s->open));
    s->loops = tg_xcalloc(s->ndaemons, sizeof(*s->loops));
    s->conns = tg_conn_table_new(cfg);
    s->cors = tg_cors_new(cfg->cors_allowed_origins);
    /* Room for twice max_header_bytes plus the read buffer, so a head over
     * it reaches http/head_check.c and gets a problem+json 431 (past this
     * memory the library answers by itself). */
    size_t memory = (size_t)cfg->max_header_bytes * 2 + 16384;
    int started = 1;
    for (unsigned i = 0; i < s->ndaemons && started; i++) {
        s->loops[i] = (server_loop_t){.server = s, .open = &s->open[i]};
        s->daemons[i] = MHD_start_daemon(
            flags, 0, NULL, NULL, server_access, s, MHD_OPTION_CONNECTION_LIMIT,
            SERVER_MHD_CONNECTION_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)cfg->connection_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory,
            MHD_OPTION_URI_LOG_CALLBACK, server_uri_log, s, MHD_OPTION_NOTIFY_COMPLETED,
            server_completed, s, MHD_OPTION_NOTIFY_CONNECTION, server_conn_notify, &s->loops[i],
            MHD_OPTION_EXTERNAL_LOGGER, server_mhd_log, NULL, MHD_OPTION_END);
        started = s->daemons[i] != NULL;
    }
    char why[128] = "";
    tg_acceptor_opts_t accept_opts = {.daemons = s->daemons,
                                      .open = s->open,
                                      .n = s->ndaemons,
                                      .conns = s->conns,
                                      .addr = (struct sockaddr *)&ss,
                                      .addrlen = sslen};
    if (started)
        s->acceptor = tg_acceptor_start(&accept_opts, why, sizeof(why));
    if (!s->acceptor) {
        snprintf(err, errlen, "cannot listen on %s:%ld (%s)", cfg->listen_address, cfg->port,
                 started ? why : "the HTTP server did not start");
        tg_server_free(s);
        return NULL;
    }
    s->port = tg_acceptor_port(s->acceptor);
    return s;
}

unsigned tg_server_port(const tg_server_t *s)
{
    return s->port;
}

/* Stop every daemon; a request still running is cut off. */
static void server_stop_daemons(tg_server_t *s)
{
    for (unsigned i = 0; s->daemons && i < s->ndaemons; i++)
        if (s->daemons[i])
            MHD_stop_daemon(s->daemons[i]);
    free(s->daemons);
    free(s->open);
    free(s->loops);
    s->daemons = NULL;
    s->open = NULL;
    s->loops = NULL;
}

void tg_server_drain_and_stop(tg_server_t *s, long grace_s)
{
    if (!s || !s->daemons)
        return;
    atomic_store(&s->draining, 1);
    tg_acceptor_stop(s->acceptor); /* new connections are refused from here */
    s->acceptor = NULL;
    uint64_t deadline = tg_now_mono_us() + (uint64_t)grace_s * 1000000u;
    while (atomic_load(&s->inflight) > 0 && tg_now_mono_us() < deadline)
        usleep(10000);
    if (atomic_load(&s->inflight) > 0)
        tg_log_warn("http", "shutdown grace of %lds elapsed with %d requests in flight", grace_s,
                    atomic_load(&s->inflight));
    server_stop_daemons(s);
}

void tg_server_free(tg_server_t *s)
{
    if (!s)
        return;
    tg_acceptor_stop(s->acceptor);
    server_stop_daemons(s);
    tg_conn_table_free(s->conns);
    tg_cors_free(s->cors);
    tg_metrics_shutdown();
    tg_router_free(s->router);
    free(s->metric_methods);
    free(s->metric_paths);
    free(s);
}
