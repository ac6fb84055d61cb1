/* Every connection the gateway holds, kept outside libmicrohttpd: the
 * connection limits (total and per address) and the deadlines of a request's
 * head and body.
 *
 * Why outside: libmicrohttpd 0.9.75 refuses a connection added at a daemon's
 * connection limit while holding its cleanup mutex and never unlocks it
 * (daemon.c, new_connection_process_), which wedged an event loop for good
 * under a flood. Here the acceptor admits a socket only below the limits,
 * each daemon's own limit is set out of reach, and a refused client gets a
 * problem+json answer (503 or 429) instead of a reset. libmicrohttpd has no
 * deadline for a whole head or a minimum body rate, only an idle timeout; the
 * acceptor's sweep answers 408 and shuts such a connection down. */
#ifndef TG_HTTP_CONN_TABLE_H
#define TG_HTTP_CONN_TABLE_H

#include <stddef.h>
#include <sys/socket.h>

#include "core/config.h"

typedef struct tg_conn_table_s tg_conn_table_t;

typedef enum {
    TG_CONN_ADMITTED = 0,
    TG_CONN_FULL,         /* max_connections: 503 */
    TG_CONN_ADDRESS_FULL, /* max_connections_per_ip: 429 */
    TG_CONN_UNTRACKABLE,  /* descriptor beyond the table: 503 */
} tg_conn_admit_e;

/* cfg is borrowed for the table's life. */
tg_conn_table_t *tg_conn_table_new(const tg_config_t *cfg);
void tg_conn_table_free(tg_conn_table_t *t);

/* Admit an accepted socket; its head's clock starts now. */
tg_conn_admit_e tg_conn_table_admit(tg_conn_table_t *t, int fd, const struct sockaddr *addr,
                                    socklen_t addrlen);
/* Answer a socket that was not admitted (problem+json, Connection: close)
 * and close it. */
void tg_conn_table_refuse(const tg_conn_table_t *t, int fd, tg_conn_admit_e why);
/* The connection is being closed by libmicrohttpd (its descriptor is still
 * open): its slot and its share of the limits come back. */
void tg_conn_table_release(tg_conn_table_t *t, int fd);

/* A request's head arrived whole: the body's clock starts. */
void tg_conn_table_head_done(tg_conn_table_t *t, int fd);
/* n more body bytes arrived. */
void tg_conn_table_body_bytes(tg_conn_table_t *t, int fd, size_t n);
/* The request is read whole, or answered early: no deadline until the next
 * one (a handler may take its time). */
void tg_conn_table_request_read(tg_conn_table_t *t, int fd);
/* The request completed: the next head's clock starts. */
void tg_conn_table_request_done(tg_conn_table_t *t, int fd);

/* Answer 408 to every connection past its head or body deadline and shut it
 * down (libmicrohttpd then closes it). */
void tg_conn_table_sweep(tg_conn_table_t *t);

#endif
