/* Fault injection and test control under /kubesim/. */
#include "faults.h"

#include <openssl/rand.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "controller.h"
#include "nodes.h"
#include "persist.h"
#include "pods.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"
#include "watch.h"

static pthread_mutex_t g_flock = PTHREAD_MUTEX_INITIALIZER;
static double g_rate;      /* fraction of API requests that fail */
static int g_code;         /* 500, 503, 429...; 0 drops the connection */
static char g_prefix[256]; /* only paths with this prefix ("" = all API paths) */
static unsigned long g_injected;

static double rnd(void)
{
    unsigned int v = 0;
    if (RAND_bytes((unsigned char *)&v, sizeof(v)) != 1)
        return 1.0;
    return (double)v / 4294967296.0;
}

int ks_fault_request(ks_req_t *r)
{
    if (strncmp(r->path, "/api", 4) != 0)
        return 0;
    pthread_mutex_lock(&g_flock);
    double rate = g_rate;
    int code = g_code;
    int match = !g_prefix[0] || !strncmp(r->path, g_prefix, strlen(g_prefix));
    pthread_mutex_unlock(&g_flock);
    if (rate <= 0 || !match || rnd() >= rate)
        return 0;
    pthread_mutex_lock(&g_flock);
    g_injected++;
    pthread_mutex_unlock(&g_flock);
    if (code == 0) {
        r->drop = 1;
        return 1;
    }
    if (code == 429) {
        ks_reply_status(r, 429, "TooManyRequests", "Too many requests, please try again later.",
                        json_pack("{s:i}", "retryAfterSeconds", 1));
        MHD_add_response_header(r->resp, "Retry-After", "1");
    } else if (code == 503) {
        ks_reply_status(r, 503, "ServiceUnavailable",
                        "the server is currently unable to handle "
                        "the request",
                        NULL);
    } else if (code == 504) {
        ks_reply_status(r, 504, "Timeout",
                        "the server was unable to return a response in the "
                        "time allotted, but may still be processing the "
                        "request",
                        NULL);
    } else {
        ks_reply_status(r, (unsigned)code, "InternalError",
                        "Internal error occurred: kubesim injected fault", NULL);
    }
    return 1;
}

static void ok(ks_req_t *r, json_t *extra)
{
    json_t *o = json_pack("{s:b}", "ok", 1);
    if (extra)
        json_object_update(o, extra);
    json_decref(extra);
    ks_reply_json(r, 200, o);
}

static json_t *body(ks_req_t *r)
{
    if (!r->body.len)
        return json_object();
    json_t *b = json_loadb(r->body.data, r->body.len, 0, NULL);
    return b ? b : json_object();
}

static void stats(ks_req_t *r)
{
    json_t *counts = json_object(), *cold = json_object();
    ks_lock();
    for (int i = 0; i < KS_RT_COUNT; i++) {
        json_object_set_new(counts, ks_rtype(i)->resource,
                            json_integer((json_int_t)ks_store_count(i)));
        json_object_set_new(cold, ks_rtype(i)->resource,
                            json_integer((json_int_t)ks_store_cold_count(i)));
    }
    json_int_t rv = (json_int_t)ks_store_rv();
    int running = ks_pods_running();
    ks_unlock();
    long rss = 0, peak = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f)) {
            if (!strncmp(line, "VmRSS:", 6))
                rss = strtol(line + 6, NULL, 10);
            else if (!strncmp(line, "VmHWM:", 6))
                peak = strtol(line + 6, NULL, 10);
        }
        fclose(f);
    }
    pthread_mutex_lock(&g_flock);
    json_int_t inj = (json_int_t)g_injected;
    pthread_mutex_unlock(&g_flock);
    ks_reply_json(r, 200,
                  json_pack("{s:o,s:o,s:I,s:I,s:i,s:i,s:I,s:I,s:I,s:I}", "objects", counts,
                            "coldObjects", cold, "heapInUseKiB",
                            (json_int_t)(mallinfo2().uordblks >> 10),
                            "resourceVersion", rv, "runningProcesses", running, "watches",
                            ks_watch_count(), "rssKiB", (json_int_t)rss, "peakRssKiB",
                            (json_int_t)peak, "faultsInjected", inj, "controllerPasses",
                            (json_int_t)ks_controller_passes()));
}

void ks_fault_serve(ks_req_t *r)
{
    char a[256] = "", b[256] = "", c[256] = "", d[64] = "";
    const char *p = r->path + 9; /* after "/kubesim/" */
    int post = !strcmp(r->method, "POST") || !strcmp(r->method, "PUT");
    json_t *bd = NULL;
    if (!strcmp(p, "stats")) {
        stats(r);
        return;
    }
    if (!strcmp(p, "faults/api")) {
        if (!strcmp(r->method, "DELETE")) {
            pthread_mutex_lock(&g_flock);
            g_rate = 0;
            pthread_mutex_unlock(&g_flock);
            ok(r, NULL);
            return;
        }
        bd = body(r);
        pthread_mutex_lock(&g_flock);
        g_rate = json_number_value(json_object_get(bd, "rate"));
        json_t *code = json_object_get(bd, "code");
        g_code = ks_streq(json_string_value(code), "drop") ? 0
                 : json_is_integer(code)                   ? (int)json_integer_value(code)
                                                           : 503;
        ks_strlcpy(g_prefix, ks_jstr(bd, "pathPrefix") ? ks_jstr(bd, "pathPrefix") : "",
                   sizeof(g_prefix));
        pthread_mutex_unlock(&g_flock);
        json_decref(bd);
        ok(r, NULL);
        return;
    }
    if (!strcmp(p, "watches/stall") && post) {
        bd = body(r);
        const char *res = ks_jstr(bd, "resource");
        int rt = -1;
        for (int i = 0; res && i < KS_RT_COUNT && rt < 0; i++)
            if (!strcmp(ks_rtype(i)->resource, res))
                rt = i;
        if (res && rt < 0) {
            json_decref(bd);
            ks_reply_status(r, 400, "BadRequest", "no such resource", NULL);
            return;
        }
        ks_watch_stall(json_number_value(json_object_get(bd, "seconds")), rt);
        json_decref(bd);
        ok(r, NULL);
        return;
    }
    if (!strcmp(p, "watches/close") && post) {
        ks_watch_close_all();
        ok(r, NULL);
        return;
    }
    if (!strcmp(p, "save") && post) {
        ks_lock();
        int rc = ks_persist_save(ks_cfg.state_file);
        ks_unlock();
        if (rc)
            ks_reply_status(r, 500, "InternalError", "state file not saved", NULL);
        else
            ok(r, NULL);
        return;
    }
    if (sscanf(p, "pods/%255[^/]/%255[^/]/%63s", a, b, d) == 3 && post) {
        int rc;
        ks_lock();
        if (!strcmp(d, "oomkill"))
            rc = ks_pods_oomkill(a, b, ks_req_query(r, "container"));
        else if (!strcmp(d, "evict"))
            rc = ks_pods_evict(a, b, "Evicted", ks_req_query(r, "message"));
        else
            rc = -2;
        ks_unlock();
        if (rc == -2)
            ks_reply_status(r, 404, "NotFound", "unknown pod fault", NULL);
        else if (rc)
            ks_reply_status(r, 409, "Conflict", "pod is not running", NULL);
        else
            ok(r, NULL);
        return;
    }
    if (sscanf(p, "nodes/%255[^/]/%255s", a, c) == 2 && post) {
        int rc = -2;
        bd = body(r);
        ks_lock();
        if (!strcmp(c, "condition"))
            rc = ks_node_set_condition(a, ks_jstr(bd, "type") ? ks_jstr(bd, "type") : "Ready",
                                       ks_jstr(bd, "status") ? ks_jstr(bd, "status") : "False",
                                       ks_jstr(bd, "reason"), ks_jstr(bd, "message"));
        else if (!strcmp(c, "ready"))
            rc = ks_node_set_condition(
                a, "Ready", ks_jbool(bd, "ready", 0) ? "True" : "False",
                ks_jbool(bd, "ready", 0) ? "KubeletReady" : "NodeStatusUnknown",
                ks_jbool(bd, "ready", 0) ? "kubelet is posting ready status"
                                         : "Kubelet stopped posting node status.");
        else if (!strcmp(c, "cordon"))
            rc = ks_node_set_unschedulable(a, 1);
        else if (!strcmp(c, "uncordon"))
            rc = ks_node_set_unschedulable(a, 0);
        ks_unlock();
        json_decref(bd);
        if (rc == -2)
            ks_reply_status(r, 404, "NotFound", "unknown node fault", NULL);
        else if (rc)
            ks_reply_notfound(r, KS_RT_NODES, a);
        else
            ok(r, NULL);
        return;
    }
    ks_reply_status(r, 404, "NotFound", "unknown kubesim control path", NULL);
}
