/* The gateway's listening socket, accepted by a thread of its own that hands
 * each connection to the least busy of the HTTP event loops
 * (MHD_add_connection).
 *
 * Why: handlers block on PostgreSQL, so the connections one event loop
 * carries wait for each other. libmicrohttpd's thread pool lets every
 * worker poll one listening socket, and the worker that wakes first accepts
 * up to ten connections in a row: 16 connections opened at once landed on 6
 * of 16 workers, which did all the work while 10 idled. Here each loop is a
 * libmicrohttpd daemon of its own, without a listening socket, and a new
 * connection goes to the one with the fewest open connections. */
#ifndef TG_HTTP_ACCEPTOR_H
#define TG_HTTP_ACCEPTOR_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/socket.h>

#include "http/conn_table.h"

typedef struct tg_acceptor_s tg_acceptor_t;

/* What an acceptor serves. All are borrowed until tg_acceptor_stop. */
typedef struct tg_acceptor_opts_s {
    /* daemons[0..n), started with MHD_USE_NO_LISTEN_SOCKET; open[i] is the
     * number of connections daemons[i] holds, kept by its
     * connection-notification callback. */
    struct MHD_Daemon *const *daemons;
    _Atomic int *open;
    unsigned n;
    /* Admits each connection (limits; refused ones are answered and closed);
     * the accept thread sweeps it for deadlines. */
    tg_conn_table_t *conns;
    const struct sockaddr *addr; /* where to bind and listen */
    socklen_t addrlen;
} tg_acceptor_opts_t;

/* Bind and listen on opts->addr, then accept into opts->daemons. NULL with
 * err on failure. */
tg_acceptor_t *tg_acceptor_start(const tg_acceptor_opts_t *opts, char *err, size_t errlen);
unsigned tg_acceptor_port(const tg_acceptor_t *a);
/* Stop accepting and close the listening socket: new connections are
 * refused from here; those already accepted stay with their daemons. */
void tg_acceptor_stop(tg_acceptor_t *a);

#endif
