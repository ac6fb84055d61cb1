/* Unit tests: the Kubernetes client against kubesim over TLS with a token.
 *
 * Runs build/kubesim (or $KUBESIM_BIN) on a free loopback port with --tls and
 * --token, and talks to it through a kubeconfig carrying the CA and token.
 * Skipped when the binary has not been built (`make build/kubesim`). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <sys/wait.h>

#include "core/log.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/logs.h"
#include "kube/verbs.h"
#include "test_kube_server.h"

#define KS_TOKEN "kubesim-test-token"

static struct {
    pid_t pid;
    char *dir;
    char *kubeconfig;
    char url[64];
    int skip;
} ks;

static const char *ks_binary(void)
{
    const char *b = getenv("KUBESIM_BIN");
    return b && *b ? b : "build/kubesim";
}

static char *b64_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    char *out = malloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)out, (unsigned char *)buf, (int)n);
    return out;
}

static void ks_kill(void)
{
    if (ks.pid <= 0)
        return;
    kill(-ks.pid, SIGTERM); /* its process group: kubesim and its pods */
    for (int i = 0; i < 100; i++) {
        if (waitpid(ks.pid, NULL, WNOHANG) == ks.pid) {
            ks.pid = 0;
            return;
        }
        ts_sleep_ms(50);
    }
    kill(-ks.pid, SIGKILL);
    waitpid(ks.pid, NULL, 0);
    ks.pid = 0;
}

static int setup(void **state)
{
    (void)state;
    tg_log_set_level(TG_LOG_ERROR);
    if (access(ks_binary(), X_OK) != 0) {
        ks.skip = 1;
        return 0;
    }
    ks.dir = ts_mkdtemp();
    char *port_file = ts_path(ks.dir, "port"), *state_dir = ts_path(ks.dir, "state");
    char *log = ts_path(ks.dir, "kubesim.log"), *ca = ts_path(state_dir, "ca.crt");
    ks.pid = fork();
    if (ks.pid == 0) {
        setsid();
        FILE *lf = freopen(log, "w", stdout);
        (void)lf;
        dup2(STDOUT_FILENO, STDERR_FILENO);
        setenv("KUBESIM_INSTANCE", "tg-kube-unit", 1);
        execl(ks_binary(), "kubesim", "--port", "0", "--port-file", port_file, "--state-dir",
              state_dir, "--tls", "--token", KS_TOKEN, "--grace-cap", "1", "--backoff", "1",
              "--bookmark-interval", "1", (char *)NULL);
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 200 && !port; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            if (fscanf(f, "%d", &port) != 1)
                port = 0;
            fclose(f);
        }
        if (!port)
            ts_sleep_ms(50);
    }
    char *ca_b64 = port ? b64_file(ca) : NULL;
    if (!ca_b64) {
        fprintf(stderr, "kubesim did not start; see %s\n", log);
        ks_kill();
        free(port_file);
        free(state_dir);
        free(log);
        free(ca);
        return -1;
    }
    snprintf(ks.url, sizeof(ks.url), "https://127.0.0.1:%d", port);
    size_t n = strlen(ca_b64) + 1024;
    char *y = malloc(n);
    snprintf(y, n,
             "apiVersion: v1\nkind: Config\ncurrent-context: sim\n"
             "clusters:\n- name: sim\n  cluster:\n    server: %s\n"
             "    certificate-authority-data: %s\n"
             "contexts:\n- name: sim\n  context: {cluster: sim, user: gw, namespace: default}\n"
             "users:\n- name: gw\n  user:\n    token: %s\n",
             ks.url, ca_b64, KS_TOKEN);
    ks.kubeconfig = ts_path(ks.dir, "kubeconfig");
    ts_write_file(ks.kubeconfig, y);
    free(y);
    free(ca_b64);
    free(port_file);
    free(state_dir);
    free(log);
    free(ca);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ks_kill();
    free(ks.kubeconfig);
    if (ks.dir)
        ts_rmdir(ks.dir);
    return 0;
}

static tg_kube_client_t *ks_client(void)
{
    tg_kube_config_t cfg = {.kubeconfig = ks.kubeconfig, .retry_base_ms = 20, .retry_max_ms = 200};
    tg_kube_client_t *c = NULL;
    char err[256];
    tg_rc_e rc = tg_kube_client_new(&cfg, &c, err, sizeof(err));
    if (rc != TG_OK)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, TG_OK);
    return c;
}

static const tg_kube_gvr_t gvr_configmaps = {"", "v1", "configmaps", 1};

static void test_kubesim_crud_and_status_errors(void **state)
{
    (void)state;
    if (ks.skip)
        skip();
    tg_kube_client_t *c = ks_client();
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    tg_kube_ref_t coll = {&gvr_configmaps, "default", NULL, NULL};
    tg_kube_ref_t one = {&gvr_configmaps, "default", "tg-cm", NULL};
    json_t *cm =
        json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                  "metadata", "name", "tg-cm", "labels", "app", "tg", "data", "k", "v1");
    assert_int_equal(tg_kube_create(c, &coll, cm, NULL, &r), TG_OK);
    assert_int_equal(r.http_code, 201);
    json_t *created = tg_kube_result_take_body(&r);
    assert_non_null(json_string_value(
        json_object_get(json_object_get(created, "metadata"), "resourceVersion")));

    assert_int_equal(tg_kube_create(c, &coll, cm, NULL, &r), TG_ECONFLICT);
    assert_int_equal(r.reason, TG_KUBE_R_ALREADY_EXISTS);
    assert_false(r.retried);

    json_t *patch = json_pack("{s:{s:s}}", "data", "k", "v2");
    assert_int_equal(tg_kube_merge_patch(c, &one, patch, NULL, &r), TG_OK);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r.body, "data"), "k")),
                        "v2");
    /* a PUT with the stale resourceVersion from the create */
    assert_int_equal(tg_kube_update(c, &one, created, NULL, &r), TG_ECONFLICT);
    assert_int_equal(r.reason, TG_KUBE_R_CONFLICT);

    tg_kube_list_opts_t lo = {.label_selector = "app=tg", .limit = 10};
    assert_int_equal(tg_kube_list(c, &coll, &lo, &r), TG_OK);
    assert_int_equal(json_array_size(json_object_get(r.body, "items")), 1);

    assert_int_equal(tg_kube_delete(c, &one, TG_KUBE_PROPAGATION_BACKGROUND, -1, NULL, &r), TG_OK);
    assert_int_equal(tg_kube_get(c, &one, &r), TG_ENOTFOUND);
    assert_int_equal(r.reason, TG_KUBE_R_NOT_FOUND);
    assert_non_null(strstr(r.message, "not found"));

    /* a group resource: a suspended Job, deleted with Background propagation */
    tg_kube_ref_t jobs = {&tg_kube_gvr_jobs, "default", NULL, NULL};
    tg_kube_ref_t job1 = {&tg_kube_gvr_jobs, "default", "tg-job", NULL};
    json_t *job = json_loads(
        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"tg-job\"},"
        "\"spec\":{\"suspend\":true,\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
        "\"containers\":[{\"name\":\"main\",\"image\":\"busybox\",\"command\":[\"true\"]}]}}}}",
        0, NULL);
    assert_int_equal(tg_kube_create(c, &jobs, job, NULL, &r), TG_OK);
    assert_int_equal(tg_kube_get(c, &job1, &r), TG_OK);
    assert_non_null(json_object_get(json_object_get(r.body, "spec"), "selector")); /* defaulted */
    assert_int_equal(tg_kube_delete(c, &job1, TG_KUBE_PROPAGATION_BACKGROUND, -1, NULL, &r), TG_OK);

    /* the wrong token: 401, mapped to an upstream problem, not retried */
    tg_kube_config_t bad = {.api_url = ks.url, .token = "wrong", .insecure_skip_tls_verify = 1};
    tg_kube_client_t *c2 = NULL;
    char err[256];
    assert_int_equal(tg_kube_client_new(&bad, &c2, err, sizeof(err)), TG_OK);
    assert_int_equal(tg_kube_get(c2, &one, &r), TG_EUPSTREAM);
    assert_int_equal(r.reason, TG_KUBE_R_UNAUTHORIZED);
    assert_int_equal(r.attempts, 1);
    tg_kube_client_free(c2);

    json_decref(job);
    json_decref(patch);
    json_decref(created);
    json_decref(cm);
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
}

typedef struct {
    pthread_mutex_t lock;
    char log[2048];
    int deleted;
} seen_t;

static int inf_cb(const tg_kube_event_t *ev, void *arg)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "SYNC"};
    seen_t *s = arg;
    const char *name =
        ev->object
            ? json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name"))
            : "";
    pthread_mutex_lock(&s->lock);
    size_t n = strlen(s->log);
    snprintf(s->log + n, sizeof(s->log) - n, "%s%s%s%s", n ? "|" : "", names[ev->type],
             name && *name ? " " : "", name ? name : "");
    if (ev->type == TG_KUBE_EV_DELETED)
        s->deleted = 1;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static void *inf_thread(void *arg)
{
    tg_kube_informer_run(arg);
    return NULL;
}

static int seen_deleted(seen_t *s)
{
    pthread_mutex_lock(&s->lock);
    int d = s->deleted;
    pthread_mutex_unlock(&s->lock);
    return d;
}

static void test_kubesim_informer_follows_changes(void **state)
{
    (void)state;
    if (ks.skip)
        skip();
    tg_kube_client_t *c = ks_client();
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    seen_t seen = {.lock = PTHREAD_MUTEX_INITIALIZER};
    tg_kube_informer_opts_t o = {.gvr = &gvr_configmaps,
                                 .ns = "default",
                                 .label_selector = "app=inf",
                                 .watch_timeout_min_s = 30,
                                 .watch_timeout_max_s = 30,
                                 .cb = inf_cb,
                                 .arg = &seen};
    tg_kube_informer_t *inf = tg_kube_informer_new(c, &o);
    pthread_t th;
    pthread_create(&th, NULL, inf_thread, inf);
    tg_kube_informer_stats_t st = {0};
    for (int i = 0; i < 100 && !st.watches; i++) {
        ts_sleep_ms(20);
        tg_kube_informer_stats(inf, &st);
    }
    ts_sleep_ms(100); /* the watch request is on its way */
    tg_kube_ref_t coll = {&gvr_configmaps, "default", NULL, NULL};
    tg_kube_ref_t one = {&gvr_configmaps, "default", "inf-a", NULL};
    json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "ConfigMap",
                           "metadata", "name", "inf-a", "labels", "app", "inf");
    json_t *patch = json_pack("{s:{s:s}}", "data", "x", "1");
    assert_int_equal(tg_kube_create(c, &coll, cm, NULL, &r), TG_OK);
    assert_int_equal(tg_kube_merge_patch(c, &one, patch, NULL, &r), TG_OK);
    assert_int_equal(tg_kube_delete(c, &one, TG_KUBE_PROPAGATION_BACKGROUND, -1, NULL, &r), TG_OK);
    for (int i = 0; i < 200 && !seen_deleted(&seen); i++)
        ts_sleep_ms(20);
    tg_kube_informer_stop(inf);
    pthread_join(th, NULL);
    assert_string_equal(seen.log, "SYNC|ADDED inf-a|MODIFIED inf-a|DELETED inf-a");
    tg_kube_informer_free(inf);
    json_decref(cm);
    json_decref(patch);
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
}

typedef struct {
    char text[1024];
    int lines;
} text_t;

static int log_cb(const char *data, size_t len, int flags, void *arg)
{
    (void)flags;
    text_t *t = arg;
    size_t n = strlen(t->text);
    snprintf(t->text + n, sizeof(t->text) - n, "%s%.*s", n ? "," : "", (int)len, data);
    t->lines++;
    return 0;
}

static void test_kubesim_pod_logs_follow(void **state)
{
    (void)state;
    if (ks.skip)
        skip();
    tg_kube_client_t *c = ks_client();
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    tg_kube_ref_t pods = {&tg_kube_gvr_pods, "default", NULL, NULL};
    tg_kube_ref_t pod = {&tg_kube_gvr_pods, "default", "tg-logs", NULL};
    json_t *p = json_loads(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"tg-logs\"},"
        "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"main\",\"image\":"
        "\"busybox\",\"command\":[\"sh\",\"-c\",\"for i in 1 2 3; do echo line$i; sleep 0.2; "
        "done\"]}]}}",
        0, NULL);
    assert_int_equal(tg_kube_create(c, &pods, p, NULL, &r), TG_OK);
    /* wait until it runs (logs of a pending pod are a 400) */
    const char *phase = NULL;
    for (int i = 0; i < 100; i++) {
        assert_int_equal(tg_kube_get(c, &pod, &r), TG_OK);
        phase = json_string_value(json_object_get(json_object_get(r.body, "status"), "phase"));
        if (phase && strcmp(phase, "Pending") != 0)
            break;
        ts_sleep_ms(20);
    }
    text_t t = {0};
    tg_kube_logs_opts_t o = {.follow = 1, .container = "main"};
    assert_int_equal(tg_kube_logs(c, "default", "tg-logs", &o, log_cb, &t, &r), TG_OK);
    assert_string_equal(t.text, "line1,line2,line3");

    text_t t2 = {0};
    tg_kube_logs_opts_t o2 = {.tail_lines = 1};
    assert_int_equal(tg_kube_logs(c, "default", "tg-logs", &o2, log_cb, &t2, &r), TG_OK);
    assert_string_equal(t2.text, "line3");

    assert_int_equal(tg_kube_logs(c, "default", "no-such-pod", NULL, log_cb, &t2, &r),
                     TG_ENOTFOUND);
    assert_int_equal(tg_kube_delete(c, &pod, TG_KUBE_PROPAGATION_DEFAULT, 0, NULL, &r), TG_OK);
    json_decref(p);
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubesim_crud_and_status_errors),
        cmocka_unit_test(test_kubesim_informer_follows_changes),
        cmocka_unit_test(test_kubesim_pod_logs_follow),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
