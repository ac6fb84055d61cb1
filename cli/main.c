/* tau: the taugate command-line client (a thin REST client).
 *
 *   tau version      print the client's version and, with TAU_GATEWAY set,
 *                    the server's
 *   tau --help       list commands
 *
 * Exit codes: 0 ok, 2 usage, 3 server rejected, 4 auth, 5 network. */
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/version.h"

enum { TAU_OK = 0, TAU_USAGE = 2, TAU_REJECTED = 3, TAU_AUTH = 4, TAU_NETWORK = 5 };

static size_t tau_collect(char *p, size_t size, size_t n, void *arg)
{
    tg_buf_t *b = arg;
    return tg_buf_append(b, p, size * n) == TG_OK ? size * n : 0;
}

/* GET base+path; the body lands in out. Returns the HTTP status or -1. */
static long tau_get(const char *base, const char *path, tg_buf_t *out)
{
    char url[2048];
    snprintf(url, sizeof(url), "%s%s", base, path);
    CURL *c = curl_easy_init();
    if (!c)
        return -1;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, tau_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "tau-cli");
    long status = -1;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    return status;
}

static int tau_version(void)
{
    printf("tau %s\n", tg_version());
    const char *gw = getenv("TAU_GATEWAY");
    if (!gw || !*gw)
        return TAU_OK;
    tg_buf_t body;
    tg_buf_init(&body, 1 << 20);
    long status = tau_get(gw, "/v1/version", &body);
    int rc = TAU_OK;
    if (status < 0) {
        fprintf(stderr, "tau: cannot reach %s\n", gw);
        rc = TAU_NETWORK;
    } else if (status != 200) {
        fprintf(stderr, "tau: %s answered %ld\n", gw, status);
        rc = status == 401 || status == 403 ? TAU_AUTH : TAU_REJECTED;
    } else {
        json_t *j = json_loadb(body.data, body.len, 0, NULL);
        printf("server %s %s\n", gw, j ? json_string_value(json_object_get(j, "version")) : "?");
        json_decref(j);
    }
    tg_buf_clean(&body);
    return rc;
}

static void tau_usage(FILE *out)
{
    fprintf(out, "usage: tau <command> [options]\n\n"
                 "commands:\n"
                 "  version   print the client version (and the server's, with TAU_GATEWAY)\n\n"
                 "environment:\n"
                 "  TAU_GATEWAY   the gateway URL, e.g. http://127.0.0.1:8080\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        tau_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? TAU_USAGE : TAU_OK;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc;
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version"))
        rc = tau_version();
    else {
        fprintf(stderr, "tau: unknown command '%s' (see tau --help)\n", argv[1]);
        rc = TAU_USAGE;
    }
    curl_global_cleanup();
    return rc;
}
