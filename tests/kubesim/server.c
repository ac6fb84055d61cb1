/* HTTP layer on libmicrohttpd. */
#include "server.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "faults.h"
#include "logs.h"
#include "rtypes.h"
#include "util.h"

volatile int ks_stopping;
static struct MHD_Daemon *g_daemon;
static int g_port;

const char *ks_req_query(ks_req_t *r, const char *key)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

int ks_req_flag(ks_req_t *r, const char *key)
{
    const char *v = NULL;
    if (MHD_lookup_connection_value_n(r->conn, MHD_GET_ARGUMENT_KIND, key, strlen(key), &v, NULL) !=
        MHD_YES)
        return 0;
    return !v || (strcmp(v, "0") && strcasecmp(v, "false"));
}

const char *ks_req_header(ks_req_t *r, const char *key)
{
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, key);
}

int ks_req_wants_table(ks_req_t *r)
{
    const char *a = ks_req_header(r, "Accept");
    return a && strstr(a, "as=Table") != NULL;
}

static void finish(ks_req_t *r, unsigned code, struct MHD_Response *resp, const char *ctype)
{
    if (r->resp)
        MHD_destroy_response(r->resp);
    r->resp = resp;
    r->code = code;
    if (ctype)
        MHD_add_response_header(resp, "Content-Type", ctype);
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    if (r->warning[0])
        MHD_add_response_header(resp, "Warning", r->warning);
}

void ks_reply_raw(ks_req_t *r, unsigned code, const char *ctype, const char *data, size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
    finish(r, code, resp, ctype);
}

void ks_reply_json(ks_req_t *r, unsigned code, json_t *body)
{
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!s) {
        ks_reply_raw(r, 500, "text/plain", "encode failed\n", 14);
        return;
    }
    size_t len = strlen(s);
    /* The buffer is handed to MHD, which frees it with free(). */
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, s, MHD_RESPMEM_MUST_FREE);
    finish(r, code, resp, "application/json");
}

void ks_reply_status(ks_req_t *r, unsigned code, const char *reason, const char *msg,
                     json_t *details)
{
    json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", "Failure", "message", msg ? msg : "", "reason",
                           reason ? reason : "", "code", (int)code);
    if (details)
        json_object_set_new(st, "details", details);
    ks_reply_json(r, code, st);
}

void ks_reply_notfound(ks_req_t *r, int rt, const char *name)
{
    char q[128], msg[700];
    const ks_rtype_t *t = ks_rtype(rt);
    ks_rtype_qualified(t, q, sizeof(q));
    snprintf(msg, sizeof(msg), "%s \"%s\" not found", q, name);
    json_t *d = json_pack("{s:s,s:s,s:s}", "name", name, "group", t->group, "kind", t->resource);
    ks_reply_status(r, 404, "NotFound", msg, d);
}

void ks_reply_badrequest(ks_req_t *r, const char *msg)
{
    ks_reply_status(r, 400, "BadRequest", msg, NULL);
}

void ks_reply_stream(ks_req_t *r, const char *ctype, MHD_ContentReaderCallback cb, void *cls,
                     MHD_ContentReaderFreeCallback fcb)
{
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, cb, cls, fcb);
    finish(r, 200, resp, ctype);
    MHD_add_response_header(resp, "Transfer-Encoding", "chunked");
}

/* Authorization: with a token configured, every API path needs it; health
 * and the /kubesim/ control paths stay open so tests can drive faults. */
static int authorized(ks_req_t *r)
{
    if (!ks_cfg.token[0])
        return 1;
    if (!strncmp(r->path, "/kubesim/", 9) || !strcmp(r->path, "/healthz") ||
        !strcmp(r->path, "/readyz") || !strcmp(r->path, "/livez"))
        return 1;
    const char *h = ks_req_header(r, "Authorization");
    if (!h || strncmp(h, "Bearer ", 7) != 0)
        return 0;
    return strcmp(h + 7, ks_cfg.token) == 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)version;
    ks_req_t *r = *con_cls;
    if (!r) {
        r = tg_xcalloc(1, sizeof(*r));
        r->conn = conn;
        ks_strlcpy(r->method, method, sizeof(r->method));
        ks_strlcpy(r->path, url, sizeof(r->path));
        tg_buf_init(&r->body, KS_MAX_BODY);
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_size) {
        if (tg_buf_append(&r->body, upload_data, *upload_size) != TG_OK)
            r->body_too_large = 1;
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->body_too_large) {
        ks_reply_status(r, 413, "RequestEntityTooLarge", "the request entity is too large", NULL);
    } else if (!authorized(r)) {
        ks_reply_status(r, 401, "Unauthorized", "Unauthorized", NULL);
    } else if (!ks_fault_request(r)) {
        ks_route(r);
    }
    if (r->drop || !r->resp)
        return MHD_NO; /* closes the connection: a "dropped" request */
    enum MHD_Result ret = MHD_queue_response(conn, r->code, r->resp);
    MHD_destroy_response(r->resp);
    r->resp = NULL;
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    ks_req_t *r = *con_cls;
    if (!r)
        return;
    if (r->resp)
        MHD_destroy_response(r->resp);
    tg_buf_clean(&r->body);
    free(r);
    *con_cls = NULL;
}

int ks_server_start(const char *tls_cert, const char *tls_key)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)ks_cfg.port);
    if (inet_pton(AF_INET, ks_cfg.addr, &sa.sin_addr) != 1)
        return -1;
    unsigned flags =
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (tls_cert)
        flags |= MHD_USE_TLS;
    if (tls_cert)
        g_daemon = MHD_start_daemon(
            flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, &sa,
            MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)0, MHD_OPTION_CONNECTION_LIMIT, (unsigned)2000, MHD_OPTION_HTTPS_MEM_KEY,
            tls_key, MHD_OPTION_HTTPS_MEM_CERT, tls_cert, MHD_OPTION_END);
    else
        g_daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR,
                                    &sa, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                                    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)0,
                                    MHD_OPTION_CONNECTION_LIMIT, (unsigned)2000, MHD_OPTION_END);
    if (!g_daemon)
        return -1;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(g_daemon, MHD_DAEMON_INFO_BIND_PORT);
    g_port = info ? info->port : ks_cfg.port;
    return 0;
}

int ks_server_port(void)
{
    return g_port;
}

void ks_server_stop(void)
{
    ks_stopping = 1;
    ks_logs_stop(); /* followers waiting for output end their streams */
    if (g_daemon) {
        MHD_stop_daemon(g_daemon);
        g_daemon = NULL;
    }
}
