/* Connection limits and request deadlines, outside libmicrohttpd. */
#include "http/conn_table.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/ids.h"
#include "core/log.h"
#include "core/mem.h"
#include "http/problem.h"

enum { CONN_FREE = 0, CONN_HEAD, CONN_BODY, CONN_READ };

typedef struct {
    unsigned char addr[16]; /* IPv4 or IPv6 bytes */
    unsigned addrlen;
    unsigned count;
} conn_address_t;

typedef struct {
    int state;
    int address;       /* index into addresses */
    uint64_t since_us; /* head: when it was due to start; body: when it started */
    size_t body_bytes;
} conn_slot_t;

struct tg_conn_table_s {
    const tg_config_t *cfg;
    pthread_mutex_t mu;
    conn_slot_t *slots; /* indexed by descriptor */
    size_t nslots;
    size_t hi;                 /* above every descriptor admitted so far: where a sweep stops */
    conn_address_t *addresses; /* one per distinct address, count 0: free */
    size_t naddresses;
    long open;
};

tg_conn_table_t *tg_conn_table_new(const tg_config_t *cfg)
{
    tg_conn_table_t *t = tg_xcalloc(1, sizeof(*t));
    t->cfg = cfg;
    pthread_mutex_init(&t->mu, NULL);
    struct rlimit rl;
    rlim_t n = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 65536;
    t->nslots = n > (1u << 20) || n == RLIM_INFINITY ? (1u << 20) : (size_t)n;
    t->slots = tg_xcalloc(t->nslots, sizeof(*t->slots));
    t->naddresses = (size_t)cfg->max_connections;
    t->addresses = tg_xcalloc(t->naddresses, sizeof(*t->addresses));
    return t;
}

void tg_conn_table_free(tg_conn_table_t *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->mu);
    free(t->slots);
    free(t->addresses);
    free(t);
}

static unsigned conn_address_bytes(const struct sockaddr *sa, unsigned char out[16])
{
    if (sa->sa_family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return 4;
    }
    if (sa->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

/* The address's entry (a free one when it holds nothing yet); -1 never
 * happens while open connections <= naddresses. Caller holds mu. */
static int conn_address_find(tg_conn_table_t *t, const unsigned char *a, unsigned len)
{
    int free_at = -1;
    for (size_t i = 0; i < t->naddresses; i++) {
        conn_address_t *e = &t->addresses[i];
        if (e->count == 0) {
            if (free_at < 0)
                free_at = (int)i;
        } else if (e->addrlen == len && memcmp(e->addr, a, len) == 0) {
            return (int)i;
        }
    }
    if (free_at >= 0) {
        memcpy(t->addresses[free_at].addr, a, len);
        t->addresses[free_at].addrlen = len;
    }
    return free_at;
}

tg_conn_admit_e tg_conn_table_admit(tg_conn_table_t *t, int fd, const struct sockaddr *addr,
                                    socklen_t addrlen)
{
    (void)addrlen;
    unsigned char a[16] = {0};
    unsigned len = conn_address_bytes(addr, a);
    tg_conn_admit_e rc = TG_CONN_ADMITTED;
    pthread_mutex_lock(&t->mu);
    int ai = t->open < t->cfg->max_connections ? conn_address_find(t, a, len) : -1;
    if (fd < 0 || (size_t)fd >= t->nslots)
        rc = TG_CONN_UNTRACKABLE;
    else if (ai < 0)
        rc = TG_CONN_FULL;
    else if (t->cfg->max_connections_per_ip > 0 &&
             t->addresses[ai].count >= (unsigned)t->cfg->max_connections_per_ip)
        rc = TG_CONN_ADDRESS_FULL;
    if (rc == TG_CONN_ADMITTED) {
        t->addresses[ai].count++;
        t->open++;
        if ((size_t)fd >= t->hi)
            t->hi = (size_t)fd + 1;
        t->slots[fd] =
            (conn_slot_t){.state = CONN_HEAD, .address = ai, .since_us = tg_now_mono_us()};
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* Write a problem+json answer that closes the connection; best effort (the
 * socket is non-blocking and the answer fits its send buffer). */
static void conn_answer(int fd, unsigned status, const char *reason, const char *slug,
                        const char *retry_after, const char *detail)
{
    char body[512], msg[1024];
    int blen = snprintf(body, sizeof(body),
                        "{\"type\":\"" TG_PROBLEM_TYPE_BASE "%s\",\"title\":\"%s\","
                        "\"status\":%u,\"detail\":\"%s\"}",
                        slug, reason, status, detail);
    if (blen < 0 || (size_t)blen >= sizeof(body))
        return;
    int n = snprintf(msg, sizeof(msg),
                     "HTTP/1.1 %u %s\r\nContent-Type: application/problem+json\r\n"
                     "Content-Length: %d\r\nConnection: close\r\n%s%s%s\r\n%s",
                     status, reason, blen, retry_after ? "Retry-After: " : "",
                     retry_after ? retry_after : "", retry_after ? "\r\n" : "", body);
    if (n > 0 && (size_t)n < sizeof(msg) && send(fd, msg, (size_t)n, MSG_NOSIGNAL) < 0)
        tg_log_debug("http", "cannot answer a refused connection: %s", strerror(errno));
}

void tg_conn_table_refuse(const tg_conn_table_t *t, int fd, tg_conn_admit_e why)
{
    char detail[160];
    if (why == TG_CONN_ADDRESS_FULL) {
        snprintf(detail, sizeof(detail),
                 "this address holds max_connections_per_ip (%ld) connections already",
                 t->cfg->max_connections_per_ip);
        conn_answer(fd, 429, "Too Many Requests", "rate-limited", "1", detail);
    } else {
        snprintf(detail, sizeof(detail), "the server holds max_connections (%ld) connections",
                 t->cfg->max_connections);
        conn_answer(fd, 503, "Service Unavailable", "unavailable", "1", detail);
    }
    shutdown(fd, SHUT_WR);
    close(fd);
}

void tg_conn_table_release(tg_conn_table_t *t, int fd)
{
    if (fd < 0 || (size_t)fd >= t->nslots)
        return;
    pthread_mutex_lock(&t->mu);
    conn_slot_t *s = &t->slots[fd];
    if (s->state != CONN_FREE) {
        t->addresses[s->address].count--;
        t->open--;
        s->state = CONN_FREE;
    }
    pthread_mutex_unlock(&t->mu);
}

static void conn_set(tg_conn_table_t *t, int fd, int state, uint64_t since_us)
{
    if (fd < 0 || (size_t)fd >= t->nslots)
        return;
    pthread_mutex_lock(&t->mu);
    conn_slot_t *s = &t->slots[fd];
    if (s->state != CONN_FREE) {
        s->state = state;
        s->since_us = since_us;
        s->body_bytes = 0;
    }
    pthread_mutex_unlock(&t->mu);
}

void tg_conn_table_head_done(tg_conn_table_t *t, int fd)
{
    conn_set(t, fd, CONN_BODY, tg_now_mono_us());
}

void tg_conn_table_body_bytes(tg_conn_table_t *t, int fd, size_t n)
{
    if (fd < 0 || (size_t)fd >= t->nslots)
        return;
    pthread_mutex_lock(&t->mu);
    t->slots[fd].body_bytes += n;
    pthread_mutex_unlock(&t->mu);
}

void tg_conn_table_request_read(tg_conn_table_t *t, int fd)
{
    conn_set(t, fd, CONN_READ, 0);
}

void tg_conn_table_request_done(tg_conn_table_t *t, int fd)
{
    /* A kept-alive connection may idle for connection_timeout_s (then
     * libmicrohttpd closes it); its next head gets its own allowance. */
    conn_set(t, fd, CONN_HEAD,
             tg_now_mono_us() + (uint64_t)t->cfg->connection_timeout_s * 1000000u);
}

void tg_conn_table_sweep(tg_conn_table_t *t)
{
    uint64_t now = tg_now_mono_us();
    uint64_t head_us = (uint64_t)t->cfg->request_header_timeout_s * 1000000u;
    uint64_t body_us = (uint64_t)t->cfg->request_body_timeout_s * 1000000u;
    uint64_t rate = (uint64_t)t->cfg->request_body_min_rate_bps;
    pthread_mutex_lock(&t->mu);
    for (size_t fd = 0; t->open > 0 && fd < t->hi; fd++) {
        conn_slot_t *s = &t->slots[fd];
        char detail[200];
        if (s->state == CONN_HEAD && now > s->since_us && now - s->since_us > head_us) {
            snprintf(detail, sizeof(detail),
                     "the request head did not arrive within request_header_timeout_s (%lds)",
                     t->cfg->request_header_timeout_s);
        } else if (s->state == CONN_BODY &&
                   now - s->since_us > body_us + s->body_bytes * 1000000u / rate) {
            snprintf(detail, sizeof(detail),
                     "the request body came slower than request_body_min_rate_bps (%ld) after "
                     "request_body_timeout_s (%lds)",
                     t->cfg->request_body_min_rate_bps, t->cfg->request_body_timeout_s);
        } else {
            continue;
        }
        /* libmicrohttpd writes nothing in these states; it sees the end of
         * the stream and closes the connection (release comes then). */
        conn_answer((int)fd, 408, "Request Timeout", "request-timeout", NULL, detail);
        shutdown((int)fd, SHUT_RDWR);
        s->state = CONN_READ;
    }
    pthread_mutex_unlock(&t->mu);
}
