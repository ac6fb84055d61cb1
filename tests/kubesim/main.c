/* kubesim: a Kubernetes API simulator for taugate's tests.
 *
 * Serves the REST subset taugate and kubectl use (discovery, OpenAPI,
 * CRUD, watch, patch, logs) on loopback, and runs Kueue, KubeRay, the Job
 * controller, a scheduler and a kubelet that starts real processes.
 * See tests/kubesim/README.md for the flags and fault endpoints. */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "btypes.h"
#include "controller.h"
#include "nodes.h"
#include "openapi.h"
#include "persist.h"
#include "pods.h"
#include "rtypes.h"
#include "server.h"
#include "store.h"
#include "tls.h"
#include "util.h"

ks_config_t ks_cfg;

static void usage(FILE *f)
{
    fprintf(f, "usage: kubesim [options]\n"
               "  --addr ADDR            loopback address to bind (127.0.0.1)\n"
               "  --port N               port, 0 = any free port (0)\n"
               "  --port-file FILE       write the bound port here once listening\n"
               "  --state-dir DIR        sandboxes, logs, volumes, certs (./.kubesim)\n"
               "  --schemas DIR          k8s-schemas folder (../shared/k8s-schemas or "
               "$KUBESIM_SCHEMAS)\n"
               "  --nodes FILE           JSON node inventory (default: 3 CPU + 2 GPU nodes)\n"
               "  --state-file FILE      load objects at start, save them at exit\n"
               "  --token TOKEN          require this bearer token (API paths)\n"
               "  --tls                  serve HTTPS with a generated cert (STATE/ca.crt)\n"
               "  --simulated            simulated pods (no processes) by default\n"
               "  --sim-duration SECS    default simulated run time (1)\n"
               "  --backoff SECS         job pod failure back-off base (10)\n"
               "  --bookmark-interval S  watch bookmark interval (5)\n"
               "  --grace-cap SECS       cap on pod termination grace (5)\n"
               "  --watch-window N       watch event window: most events kept (100000)\n"
               "  --watch-window-mib N   ... and most MiB of event text kept (32)\n"
               "  --map-paths LIST       path prefixes mapped per namespace (/data)\n"
               "  --no-events            do not record core/v1 Events\n"
               "  --cool-after SECS      keep objects unused this long deflated (1; 0: never)\n"
               "  -v, --verbose\n");
}

static int parse_args(int argc, char **argv)
{
    static const struct option opts[] = {
        {"addr", required_argument, NULL, 'a'},
        {"port", required_argument, NULL, 'p'},
        {"port-file", required_argument, NULL, 'P'},
        {"state-dir", required_argument, NULL, 'd'},
        {"schemas", required_argument, NULL, 's'},
        {"nodes", required_argument, NULL, 'n'},
        {"state-file", required_argument, NULL, 'f'},
        {"token", required_argument, NULL, 't'},
        {"tls", no_argument, NULL, 'T'},
        {"simulated", no_argument, NULL, 'S'},
        {"sim-duration", required_argument, NULL, 'D'},
        {"backoff", required_argument, NULL, 'b'},
        {"bookmark-interval", required_argument, NULL, 'B'},
        {"grace-cap", required_argument, NULL, 'g'},
        {"watch-window", required_argument, NULL, 'w'},
        {"watch-window-mib", required_argument, NULL, 'W'},
        {"map-paths", required_argument, NULL, 'm'},
        {"no-events", no_argument, NULL, 'E'},
        {"cool-after", required_argument, NULL, 'C'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    ks_strlcpy(ks_cfg.addr, "127.0.0.1", sizeof(ks_cfg.addr));
    ks_strlcpy(ks_cfg.state_dir, ".kubesim", sizeof(ks_cfg.state_dir));
    const char *env_schemas = getenv("KUBESIM_SCHEMAS");
    ks_strlcpy(ks_cfg.schemas_dir, env_schemas ? env_schemas : "../shared/k8s-schemas",
               sizeof(ks_cfg.schemas_dir));
    ks_strlcpy(ks_cfg.map_paths, "/data", sizeof(ks_cfg.map_paths));
    ks_cfg.backoff_base = 10;
    ks_cfg.bookmark_secs = 5;
    ks_cfg.sim_duration = 1;
    ks_cfg.grace_secs = 5;
    ks_cfg.ring_cap = 100000;
    ks_cfg.ring_bytes = (size_t)32 << 20;
    ks_cfg.events = 1;
    ks_cfg.cool_secs = 1;
    int c;
    while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
        switch (c) {
        case 'a':
            ks_strlcpy(ks_cfg.addr, optarg, sizeof(ks_cfg.addr));
            break;
        case 'p':
            ks_cfg.port = atoi(optarg);
            break;
        case 'P':
            ks_strlcpy(ks_cfg.port_file, optarg, sizeof(ks_cfg.port_file));
            break;
        case 'd':
            ks_strlcpy(ks_cfg.state_dir, optarg, sizeof(ks_cfg.state_dir));
            break;
        case 's':
            ks_strlcpy(ks_cfg.schemas_dir, optarg, sizeof(ks_cfg.schemas_dir));
            break;
        case 'n':
            ks_strlcpy(ks_cfg.nodes_file, optarg, sizeof(ks_cfg.nodes_file));
            break;
        case 'f':
            ks_strlcpy(ks_cfg.state_file, optarg, sizeof(ks_cfg.state_file));
            break;
        case 't':
            ks_strlcpy(ks_cfg.token, optarg, sizeof(ks_cfg.token));
            break;
        case 'T':
            ks_cfg.tls = 1;
            break;
        case 'S':
            ks_cfg.simulated = 1;
            break;
        case 'D':
            ks_cfg.sim_duration = strtod(optarg, NULL);
            break;
        case 'b':
            ks_cfg.backoff_base = strtod(optarg, NULL);
            break;
        case 'B':
            ks_cfg.bookmark_secs = strtod(optarg, NULL);
            break;
        case 'g':
            ks_cfg.grace_secs = strtod(optarg, NULL);
            break;
        case 'w':
            ks_cfg.ring_cap = (size_t)strtoul(optarg, NULL, 10);
            break;
        case 'W':
            ks_cfg.ring_bytes = (size_t)strtoul(optarg, NULL, 10) << 20;
            break;
        case 'm':
            ks_strlcpy(ks_cfg.map_paths, optarg, sizeof(ks_cfg.map_paths));
            break;
        case 'E':
            ks_cfg.events = 0;
            break;
        case 'C':
            ks_cfg.cool_secs = strtod(optarg, NULL);
            break;
        case 'v':
            ks_cfg.verbose = 1;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    /* Loopback only: kubesim runs unauthenticated processes on request. */
    if (strncmp(ks_cfg.addr, "127.", 4) != 0) {
        fprintf(stderr, "kubesim: --addr must be a loopback address\n");
        return -1;
    }
    if (ks_cfg.bookmark_secs <= 0)
        ks_cfg.bookmark_secs = 5;
    return 0;
}

static void *preload_schemas(void *arg)
{
    (void)arg;
    /* Parsing the CRDs takes a moment; do it before the first request. */
    for (int i = 0; i < KS_RT_COUNT; i++)
        if (ks_rtype(i)->crd_file)
            (void)ks_openapi_crd_schema(i);
    return NULL;
}

static void create_namespace(const char *name)
{
    if (ks_store_get(KS_RT_NAMESPACES, NULL, name))
        return;
    json_t *ns =
        json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:[s]},s:{s:s}}", "kind", "Namespace", "apiVersion",
                  "v1", "metadata", "name", name, "labels", "kubernetes.io/metadata.name", name,
                  "spec", "finalizers", "kubernetes", "status", "phase", "Active");
    ks_store_create(KS_RT_NAMESPACES, ns, NULL);
}

int main(int argc, char **argv)
{
    int rc = 1;
    char *cert = NULL, *key = NULL;
    pthread_t preload;
    int preloaded = 0;
    if (parse_args(argc, argv) != 0)
        return 2;
    if (ks_mkdirs(ks_cfg.state_dir, 0755) != 0) {
        fprintf(stderr, "kubesim: cannot create state dir %s\n", ks_cfg.state_dir);
        return 1;
    }
    /* Signals go to sigwait in main; every thread inherits the mask. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (ks_bt_init() != 0)
        return 1;
    ks_store_init(ks_cfg.ring_cap, ks_cfg.ring_bytes);
    ks_controller_init();
    ks_pods_init();
    ks_lock();
    int lrc = ks_persist_load(ks_cfg.state_file);
    if (lrc == 0) {
        create_namespace("default");
        create_namespace("kube-system");
        create_namespace("kube-public");
        create_namespace("kube-node-lease");
        lrc = ks_nodes_load(ks_cfg.nodes_file);
    }
    ks_unlock();
    if (lrc != 0)
        goto out;
    if (pthread_create(&preload, NULL, preload_schemas, NULL) == 0)
        preloaded = 1;
    if (ks_cfg.tls && ks_tls_generate(ks_cfg.state_dir, &cert, &key) != 0) {
        fprintf(stderr, "kubesim: TLS certificate generation failed\n");
        goto out;
    }
    if (ks_controller_start() != 0)
        goto out;
    if (ks_server_start(cert, key) != 0) {
        fprintf(stderr, "kubesim: cannot listen on %s:%d\n", ks_cfg.addr, ks_cfg.port);
        goto out;
    }
    if (ks_cfg.port_file[0]) {
        char tmp[1100];
        snprintf(tmp, sizeof(tmp), "%s.tmp", ks_cfg.port_file);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%d\n", ks_server_port()) < 0 || fclose(f) != 0 ||
            rename(tmp, ks_cfg.port_file) != 0) {
            fprintf(stderr, "kubesim: cannot write %s\n", ks_cfg.port_file);
            goto out;
        }
    }
    printf("kubesim: listening on %s://%s:%d\n", cert ? "https" : "http", ks_cfg.addr,
           ks_server_port());
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    rc = 0;
out:
    ks_server_stop();
    ks_controller_stop();
    ks_lock();
    ks_store_kick();
    if (ks_persist_save(ks_cfg.state_file) != 0)
        fprintf(stderr, "kubesim: state file not saved\n");
    ks_unlock();
    ks_pods_shutdown();
    if (preloaded)
        pthread_join(preload, NULL);
    ks_controller_shutdown();
    ks_openapi_free();
    ks_store_shutdown();
    ks_bt_shutdown();
    free(cert);
    free(key);
    return rc;
}
