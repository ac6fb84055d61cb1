/* The reference for the HTTP benchmark: the smallest libmicrohttpd server that
 * answers GET /healthz, with the same daemon flags and thread count as
 * taugate. Usage: mhd_minimal PORT THREADS */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **con_cls)
{
    static const char body[] = "{\"status\":\"ok\"}";
    (void)cls;
    (void)method;
    (void)version;
    (void)data;
    (void)size;
    if (*con_cls == NULL) { /* first call: headers only, as taugate does */
        *con_cls = (void *)1;
        return MHD_YES;
    }
    unsigned status = strcmp(url, "/healthz") == 0 ? 200 : 404;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mhd_minimal PORT THREADS\n");
        return 2;
    }
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_TURBO, (uint16_t)atoi(argv[1]),
        NULL, NULL, answer, NULL, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)atoi(argv[2]),
        MHD_OPTION_CONNECTION_LIMIT, 1024u, MHD_OPTION_END);
    if (!d)
        return 1;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}
