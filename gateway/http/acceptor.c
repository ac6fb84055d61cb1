/* The listening socket and its accept loop. */
#include "http/acceptor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/mem.h"

struct tg_acceptor_s {
    struct MHD_Daemon *const *daemons;
    tg_conn_table_t *conns;
    _Atomic int *open;
    unsigned n, next; /* next: where the search for the least busy starts */
    int fd;           /* listening */
    int stop;         /* eventfd: readable once stopping */
    unsigned port;
    pthread_t thread;
    int running;
};

/* The daemon with the fewest open connections; ties go round the ring. */
static unsigned acceptor_pick(tg_acceptor_t *a)
{
    unsigned best = a->next % a->n;
    for (unsigned k = 1; k < a->n; k++) {
        unsigned i = (a->next + k) % a->n;
        if (atomic_load(&a->open[i]) < atomic_load(&a->open[best]))
            best = i;
    }
    a->next = best + 1;
    return best;
}

/* How often connections are checked against their deadlines. */
#define ACCEPTOR_SWEEP_MS 100

static void *acceptor_main(void *arg)
{
    tg_acceptor_t *a = arg;
    struct pollfd p[2] = {{.fd = a->fd, .events = POLLIN}, {.fd = a->stop, .events = POLLIN}};
    for (;;) {
        tg_conn_table_sweep(a->conns);
        int ready = poll(p, 2, ACCEPTOR_SWEEP_MS);
        if (ready == 0)
            continue;
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            tg_log_error("http", "accept loop: poll failed: %s", strerror(errno));
            break;
        }
        if (p[1].revents)
            break;
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        int c = accept4(a->fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                tg_log_warn("http", "cannot accept a connection: %s", strerror(errno));
                usleep(10000); /* out of descriptors: let some close */
            }
            continue;
        }
        tg_conn_admit_e admit = tg_conn_table_admit(a->conns, c, (struct sockaddr *)&ss, len);
        if (admit != TG_CONN_ADMITTED) {
            tg_conn_table_refuse(a->conns, c, admit);
            continue;
        }
        /* libmicrohttpd owns (and closes) the socket from here. Its own
         * limits are out of reach (http/conn_table.h says why). */
        unsigned i = acceptor_pick(a);
        atomic_fetch_add(&a->open[i], 1); /* before its notification, so a burst spreads */
        if (MHD_add_connection(a->daemons[i], c, (struct sockaddr *)&ss, len) != MHD_YES) {
            atomic_fetch_sub(&a->open[i], 1);
            tg_conn_table_release(a->conns, c);
        }
    }
    return NULL;
}

tg_acceptor_t *tg_acceptor_start(const tg_acceptor_opts_t *opts, char *err, size_t errlen)
{
    tg_acceptor_t *a = tg_xcalloc(1, sizeof(*a));
    const struct sockaddr *addr = opts->addr;
    a->daemons = opts->daemons;
    a->conns = opts->conns;
    a->open = opts->open;
    a->n = opts->n;
    a->stop = eventfd(0, EFD_CLOEXEC);
    a->fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    /* As libmicrohttpd's own socket was: a restarted gateway binds at once
     * (SO_REUSEADDR), and a new one can start beside the old one during a
     * rolling restart (SO_REUSEPORT). */
    if (a->stop < 0 || a->fd < 0 ||
        setsockopt(a->fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        setsockopt(a->fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0 ||
        bind(a->fd, addr, opts->addrlen) != 0 || listen(a->fd, SOMAXCONN) != 0 ||
        getsockname(a->fd, (struct sockaddr *)&bound, &blen) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        tg_acceptor_stop(a);
        return NULL;
    }
    a->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((struct sockaddr_in *)&bound)->sin_port);
    if (pthread_create(&a->thread, NULL, acceptor_main, a) != 0) {
        snprintf(err, errlen, "cannot start the accept thread");
        tg_acceptor_stop(a);
        return NULL;
    }
    a->running = 1;
    return a;
}

unsigned tg_acceptor_port(const tg_acceptor_t *a)
{
    return a->port;
}

void tg_acceptor_stop(tg_acceptor_t *a)
{
    if (!a)
        return;
    if (a->running) {
        uint64_t one = 1;
        if (write(a->stop, &one, sizeof(one)) != (ssize_t)sizeof(one))
            tg_log_error("http", "cannot signal the accept thread: %s", strerror(errno));
        pthread_join(a->thread, NULL);
    }
    if (a->fd >= 0)
        close(a->fd);
    if (a->stop >= 0)
        close(a->stop);
    free(a);
}
