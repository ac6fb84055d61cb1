/* HTTP layer: libmicrohttpd with a thread per connection, so long watches
 * and log follows never hold up other requests. */
#ifndef KS_SERVER_H
#define KS_SERVER_H

#include <jansson.h>
#include <microhttpd.h>

#include "core/buf.h"

#define KS_MAX_BODY (16u * 1024u * 1024u)

typedef struct ks_req_s {
    struct MHD_Connection *conn;
    char method[16];
    char path[2048];
    tg_buf_t body;
    int body_too_large;
    /* filled by handlers */
    unsigned code;
    struct MHD_Response *resp;
    char warning[512];
    int drop; /* close the connection without a reply */
} ks_req_t;

/* Query parameter (borrowed, decoded) or NULL. */
const char *ks_req_query(ks_req_t *r, const char *key);
const char *ks_req_header(ks_req_t *r, const char *key);
/* A boolean query parameter as the API server converts it
 * (runtime.Convert_Slice_string_To_bool): absent is false, "0" and
 * "false" in any case are false, anything else, even an empty value or
 * "f", is true. */
int ks_req_flag(ks_req_t *r, const char *key);
/* Non-zero when the Accept header asks for a meta.k8s.io Table. */
int ks_req_wants_table(ks_req_t *r);

/* Reply with a JSON body (steals body). */
void ks_reply_json(ks_req_t *r, unsigned code, json_t *body);
void ks_reply_raw(ks_req_t *r, unsigned code, const char *ctype, const char *data, size_t len);
/* Reply with a metav1.Status failure; details is stolen (may be NULL). */
void ks_reply_status(ks_req_t *r, unsigned code, const char *reason, const char *msg,
                     json_t *details);
/* Common cases. */
void ks_reply_notfound(ks_req_t *r, int rt, const char *name);
void ks_reply_badrequest(ks_req_t *r, const char *msg);
/* Streaming reply (chunked). */
void ks_reply_stream(ks_req_t *r, const char *ctype, MHD_ContentReaderCallback cb, void *cls,
                     MHD_ContentReaderFreeCallback fcb);

/* Start listening; returns 0 or -1. tls_cert/tls_key are PEM or NULL. */
int ks_server_start(const char *tls_cert, const char *tls_key);
int ks_server_port(void);
void ks_server_stop(void);
/* Set while shutting down: streaming callbacks end their streams. */
extern volatile int ks_stopping;

/* Entry point for every request (router.c). */
void ks_route(ks_req_t *r);

#endif
