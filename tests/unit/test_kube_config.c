/* Unit tests: kubeconfig and in-cluster configuration, paths, Status mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include "core/log.h"
#include "kube/config.h"
#include "kube/kubeconfig.h"
#include "kube/path.h"
#include "kube/result.h"
#include "test_kube_server.h"

static const char fake_ca[] =
    "-----BEGIN CERTIFICATE-----\nMIIBfakeCA\n-----END CERTIFICATE-----\n";
static const char fake_cert[] =
    "-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n";
static const char fake_key[] = "-----BEGIN PRIVATE KEY-----\nMIIBkey\n-----END PRIVATE KEY-----\n";

static char *b64(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
    return out;
}

/* Two contexts: "dev" (current; token + CA data) and "ops" (client cert data). */
static char *make_kubeconfig(void)
{
    char *ca = b64(fake_ca), *cert = b64(fake_cert), *key = b64(fake_key);
    size_t n = 8192;
    char *y = malloc(n);
    snprintf(y, n,
             "apiVersion: v1\n"
             "kind: Config\n"
             "current-context: dev\n"
             "clusters:\n"
             "- name: c-dev\n"
             "  cluster:\n"
             "    server: https://10.1.2.3:6443/\n"
             "    certificate-authority-data: %s\n"
             "- name: c-ops\n"
             "  cluster:\n"
             "    server: \"https://ops.example:443\"\n"
             "    insecure-skip-tls-verify: true\n"
             "contexts:\n"
             "- name: dev\n"
             "  context: {cluster: c-dev, user: u-dev, namespace: team-a}\n"
             "- name: ops\n"
             "  context:\n"
             "    cluster: c-ops\n"
             "    user: u-ops\n"
             "- name: broken\n"
             "  context:\n"
             "    cluster: nowhere\n"
             "    user: u-dev\n"
             "users:\n"
             "- name: u-dev\n"
             "  user:\n"
             "    token: s3cr3t-dev-token\n"
             "- name: u-ops\n"
             "  user:\n"
             "    client-certificate-data: %s\n"
             "    client-key-data: %s\n",
             ca, cert, key);
    free(ca);
    free(cert);
    free(key);
    return y;
}

static void test_kubeconfig_current_context_token_and_ca_data(void **state)
{
    (void)state;
    char *y = make_kubeconfig();
    tg_kube_conn_t c = {0};
    char err[256];
    assert_int_equal(
        tg_kube_kubeconfig_parse(y, strlen(y), "/etc/kube", NULL, &c, err, sizeof(err)), TG_OK);
    assert_int_equal(tg_kube_conn_finish(&c, err, sizeof(err)), TG_OK);
    assert_string_equal(c.server, "https://10.1.2.3:6443"); /* trailing '/' dropped */
    assert_string_equal(c.context, "dev");
    assert_string_equal(c.namespace_, "team-a");
    assert_string_equal(c.token, "s3cr3t-dev-token");
    assert_null(c.token_file);
    assert_non_null(c.ca_pem);
    assert_int_equal(c.ca_pem_len, strlen(fake_ca));
    assert_memory_equal(c.ca_pem, fake_ca, strlen(fake_ca));
    assert_false(c.insecure);
    assert_true(c.send_credentials);
    tg_kube_conn_clean(&c);
    tg_kube_conn_clean(&c); /* idempotent */
    free(y);
}

static void test_kubeconfig_named_context_client_cert_data(void **state)
{
    (void)state;
    char *y = make_kubeconfig();
    tg_kube_conn_t c = {0};
    char err[256];
    assert_int_equal(tg_kube_kubeconfig_parse(y, strlen(y), NULL, "ops", &c, err, sizeof(err)),
                     TG_OK);
    assert_int_equal(tg_kube_conn_finish(&c, err, sizeof(err)), TG_OK);
    assert_string_equal(c.server, "https://ops.example:443");
    assert_string_equal(c.namespace_, "default"); /* context without namespace */
    assert_true(c.insecure);
    assert_null(c.token);
    assert_int_equal(c.cert_pem_len, strlen(fake_cert));
    assert_memory_equal(c.cert_pem, fake_cert, strlen(fake_cert));
    assert_int_equal(c.key_pem_len, strlen(fake_key));
    assert_memory_equal(c.key_pem, fake_key, strlen(fake_key));
    tg_kube_conn_clean(&c);
    free(y);
}

static void test_kubeconfig_missing_context_or_cluster(void **state)
{
    (void)state;
    char *y = make_kubeconfig();
    tg_kube_conn_t c = {0};
    char err[256];
    assert_int_equal(tg_kube_kubeconfig_parse(y, strlen(y), NULL, "prod", &c, err, sizeof(err)),
                     TG_ENOTFOUND);
    assert_non_null(strstr(err, "\"prod\" not found"));
    tg_kube_conn_clean(&c);
    assert_int_equal(tg_kube_kubeconfig_parse(y, strlen(y), NULL, "broken", &c, err, sizeof(err)),
                     TG_ENOTFOUND);
    assert_non_null(strstr(err, "nowhere"));
    assert_null(strstr(err, "s3cr3t")); /* secrets never in messages */
    tg_kube_conn_clean(&c);
    static const char nocur[] = "apiVersion: v1\nclusters: []\ncontexts: []\n";
    assert_int_equal(
        tg_kube_kubeconfig_parse(nocur, strlen(nocur), NULL, NULL, &c, err, sizeof(err)),
        TG_ENOTFOUND);
    assert_non_null(strstr(err, "current-context"));
    tg_kube_conn_clean(&c);
    free(y);
}

static void test_kubeconfig_refuses_what_it_cannot_do(void **state)
{
    (void)state;
    tg_kube_conn_t c = {0};
    char err[256];
    static const char exec_user[] = "current-context: x\n"
                                    "clusters: [{name: c, cluster: {server: 'https://k:6443'}}]\n"
                                    "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                                    "users: [{name: u, user: {exec: {command: aws, apiVersion: "
                                    "client.authentication.k8s.io/v1}}}]\n";
    assert_int_equal(
        tg_kube_kubeconfig_parse(exec_user, strlen(exec_user), NULL, NULL, &c, err, sizeof(err)),
        TG_EINVAL);
    assert_non_null(strstr(err, "exec"));
    tg_kube_conn_clean(&c);

    static const char alias[] = "current-context: x\n"
                                "clusters: [&cl {name: c, cluster: {server: 'https://k'}}]\n"
                                "contexts: [{name: x, context: {cluster: c}}]\n"
                                "more: [*cl, *cl]\n";
    assert_int_equal(
        tg_kube_kubeconfig_parse(alias, strlen(alias), NULL, NULL, &c, err, sizeof(err)),
        TG_EINVAL);
    assert_non_null(strstr(err, "alias"));
    tg_kube_conn_clean(&c);

    static const char bad_b64[] =
        "current-context: x\n"
        "clusters: [{name: c, cluster: {server: 'https://k', certificate-authority-data: '@@@'}}]\n"
        "contexts: [{name: x, context: {cluster: c}}]\n";
    assert_int_equal(
        tg_kube_kubeconfig_parse(bad_b64, strlen(bad_b64), NULL, NULL, &c, err, sizeof(err)),
        TG_EINVAL);
    assert_non_null(strstr(err, "base64"));
    tg_kube_conn_clean(&c);

    static const char not_yaml[] = "current-context: [unclosed\n";
    assert_int_equal(
        tg_kube_kubeconfig_parse(not_yaml, strlen(not_yaml), NULL, NULL, &c, err, sizeof(err)),
        TG_EINVAL);
    tg_kube_conn_clean(&c);
}

static void test_kubeconfig_file_relative_paths(void **state)
{
    (void)state;
    char *dir = ts_mkdtemp();
    char *kc = ts_path(dir, "config");
    ts_write_file(kc, "current-context: x\n"
                      "clusters:\n"
                      "- name: c\n"
                      "  cluster:\n"
                      "    server: https://127.0.0.1:6443\n"
                      "    certificate-authority: pki/ca.crt\n"
                      "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                      "users:\n"
                      "- name: u\n"
                      "  user:\n"
                      "    tokenFile: token\n"
                      "    client-certificate: /abs/client.crt\n"
                      "    client-key: client.key\n");
    tg_kube_config_t cfg = {.kubeconfig = kc, .namespace_ = "override-ns"};
    tg_kube_conn_t c;
    char err[256];
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_OK);
    assert_int_equal(c.source, TG_KUBE_SRC_KUBECONFIG);
    char *want = ts_path(dir, "pki/ca.crt");
    assert_string_equal(c.ca_file, want);
    free(want);
    want = ts_path(dir, "token");
    assert_string_equal(c.token_file, want);
    free(want);
    assert_string_equal(c.cert_file, "/abs/client.crt");
    want = ts_path(dir, "client.key");
    assert_string_equal(c.key_file, want);
    free(want);
    assert_string_equal(c.namespace_, "override-ns");
    tg_kube_conn_clean(&c);

    cfg.kubeconfig = "/nonexistent/kubeconfig";
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_ENOTFOUND);
    assert_null(c.server);
    free(kc);
    ts_rmdir(dir);
}

static void test_in_cluster_from_temp_dir(void **state)
{
    (void)state;
    char *dir = ts_mkdtemp();
    char *tok = ts_path(dir, "token"), *ca = ts_path(dir, "ca.crt"),
         *ns = ts_path(dir, "namespace");
    ts_write_file(tok, "sa-token-1\n");
    ts_write_file(ca, fake_ca);
    ts_write_file(ns, "gateway-ns\n");
    tg_kube_config_t cfg = {.sa_dir = dir};
    tg_kube_conn_t c;
    char err[256];

    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_ENOTFOUND);
    assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST"));

    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_OK);
    assert_int_equal(c.source, TG_KUBE_SRC_IN_CLUSTER);
    assert_string_equal(c.server, "https://10.96.0.1:443");
    assert_string_equal(c.token_file, tok);
    assert_null(c.token); /* read per request, never cached in the conn */
    assert_string_equal(c.ca_file, ca);
    assert_string_equal(c.namespace_, "gateway-ns");
    tg_kube_conn_clean(&c);

    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    cfg.in_cluster = 1;
    cfg.api_url = "http://ignored"; /* in_cluster wins */
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_OK);
    assert_string_equal(c.server, "https://[fd00::1]:443");
    tg_kube_conn_clean(&c);

    unlink(tok);
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_EINVAL);
    assert_non_null(strstr(err, "token"));
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    free(tok);
    free(ca);
    free(ns);
    ts_rmdir(dir);
}

static void test_explicit_url_and_plain_http(void **state)
{
    (void)state;
    tg_kube_conn_t c;
    char err[256];
    tg_kube_config_t cfg = {.api_url = "http://127.0.0.1:8080", .token = "t"};
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_OK);
    assert_int_equal(c.source, TG_KUBE_SRC_URL);
    assert_true(c.send_credentials); /* loopback: a local kubesim */
    tg_kube_conn_clean(&c);

    tg_log_set_level(TG_LOG_OFF); /* the warning is expected */
    cfg.api_url = "http://k8s.example.com";
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_OK);
    assert_false(c.send_credentials); /* never a token in clear over a network */
    tg_kube_conn_clean(&c);
    tg_log_set_level(TG_LOG_INFO);

    cfg.api_url = "ftp://x";
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_EINVAL);
    cfg.api_url = "https://x/?q=1";
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_EINVAL);
    cfg.api_url = "https://x";
    cfg.client_cert_file = "/c.crt"; /* without a key */
    assert_int_equal(tg_kube_conn_load(&cfg, &c, err, sizeof(err)), TG_EINVAL);
}

static void test_base64(void **state)
{
    (void)state;
    char *out;
    size_t n;
    assert_int_equal(tg_kube_base64_decode("aGVsbG8=", 8, &out, &n), TG_OK);
    assert_int_equal(n, 5);
    assert_string_equal(out, "hello");
    free(out);
    assert_int_equal(tg_kube_base64_decode("aGVs\nbG8", 8, &out, &n), TG_OK); /* no pad, wrap */
    assert_string_equal(out, "hello");
    free(out);
    assert_int_equal(tg_kube_base64_decode("aGVsbG8=x", 9, &out, &n), TG_EINVAL);
    assert_int_equal(tg_kube_base64_decode("a", 1, &out, &n), TG_EINVAL);
    assert_int_equal(tg_kube_base64_decode("a-_b", 4, &out, &n), TG_EINVAL); /* url alphabet */
}

static void expect_path(const tg_kube_ref_t *ref, const char *want)
{
    char *p = tg_kube_path(ref);
    if (!want) {
        assert_null(p);
        return;
    }
    assert_non_null(p);
    assert_string_equal(p, want);
    free(p);
}

static void test_paths(void **state)
{
    (void)state;
    expect_path(&(tg_kube_ref_t){&tg_kube_gvr_pods, "team-a", "p-0", "log"},
                "/api/v1/namespaces/team-a/pods/p-0/log");
    expect_path(&(tg_kube_ref_t){&tg_kube_gvr_jobs, "team-a", "train-1", "status"},
                "/apis/batch/v1/namespaces/team-a/jobs/train-1/status");
    expect_path(&(tg_kube_ref_t){&tg_kube_gvr_jobs, NULL, NULL, NULL}, "/apis/batch/v1/jobs");
    expect_path(&(tg_kube_ref_t){&tg_kube_gvr_rayjobs, "ns", NULL, NULL},
                "/apis/ray.io/v1/namespaces/ns/rayjobs");
    expect_path(&(tg_kube_ref_t){&tg_kube_gvr_clusterqueues, NULL, "cq", NULL},
                "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq");
    expect_path(
        &(tg_kube_ref_t){&tg_kube_gvr_visibility_localqueues, "ns", "lq", "pendingworkloads"},
        "/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/ns/localqueues/lq/"
        "pendingworkloads");
    /* a name cannot escape its segment */
    expect_path(&(tg_kube_ref_t){&tg_kube_gvr_pods, "ns", "a/../b?c#d", NULL},
                "/api/v1/namespaces/ns/pods/a%2F..%2Fb%3Fc%23d");
    expect_path(&(tg_kube_ref_t){&tg_kube_gvr_pods, "ns", "..", NULL}, NULL);
    expect_path(&(tg_kube_ref_t){&tg_kube_gvr_pods, "", "x", NULL}, NULL);
    expect_path(&(tg_kube_ref_t){&tg_kube_gvr_clusterqueues, "ns", "cq", NULL}, NULL);
    expect_path(&(tg_kube_ref_t){&tg_kube_gvr_jobs, "ns", NULL, "status"}, NULL);

    tg_buf_t q;
    tg_buf_init(&q, 1024);
    assert_int_equal(tg_kube_query_add(&q, "labelSelector", "app=x,tier in (a,b)"), TG_OK);
    assert_int_equal(tg_kube_query_add(&q, "skipped", NULL), TG_OK);
    assert_int_equal(tg_kube_query_add_long(&q, "limit", 500), TG_OK);
    assert_string_equal(q.data, "labelSelector=app%3Dx%2Ctier%20in%20%28a%2Cb%29&limit=500");
    tg_buf_clean(&q);
}

static void test_status_mapping(void **state)
{
    (void)state;
    tg_kube_result_t r;
    tg_kube_result_init(&r);

    json_t *b = json_loads("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                           "\"message\":\"jobs.batch \\\"x\\\" not found\",\"reason\":\"NotFound\","
                           "\"details\":{\"name\":\"x\",\"group\":\"batch\",\"kind\":\"jobs\"},"
                           "\"code\":404}",
                           0, NULL);
    tg_kube_result_from_http(&r, 404, b, NULL, 0);
    assert_int_equal(r.reason, TG_KUBE_R_NOT_FOUND);
    assert_int_equal(r.rc, TG_ENOTFOUND);
    assert_string_equal(r.message, "jobs.batch \"x\" not found");
    assert_ptr_equal(r.status, r.body);

    /* 409 is AlreadyExists or Conflict depending on the body */
    b = json_loads("{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"AlreadyExists\","
                   "\"message\":\"exists\",\"code\":409}",
                   0, NULL);
    tg_kube_result_from_http(&r, 409, b, NULL, 0);
    assert_int_equal(r.reason, TG_KUBE_R_ALREADY_EXISTS);
    assert_int_equal(r.rc, TG_ECONFLICT);
    tg_kube_result_from_http(&r, 409, NULL, NULL, 0);
    assert_int_equal(r.reason, TG_KUBE_R_CONFLICT);
    assert_string_equal(r.message, "HTTP 409");

    b = json_loads("{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Invalid\","
                   "\"message\":\"Job.batch \\\"x\\\" is invalid\",\"code\":422,\"details\":"
                   "{\"causes\":[{\"reason\":\"FieldValueRequired\",\"message\":\"Required "
                   "value\",\"field\":\"spec.template.spec.containers\"}]}}",
                   0, NULL);
    tg_kube_result_from_http(&r, 422, b, NULL, 0);
    assert_int_equal(r.reason, TG_KUBE_R_INVALID);
    assert_int_equal(r.rc, TG_EUNPROCESSABLE);
    assert_int_equal(json_array_size(r.causes), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(r.causes, 0), "field")),
                        "spec.template.spec.containers");

    b = json_loads("{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Expired\","
                   "\"message\":\"too old resource version: 5 (120)\",\"code\":410}",
                   0, NULL);
    tg_kube_result_from_http(&r, 410, b, NULL, 0);
    assert_int_equal(r.reason, TG_KUBE_R_EXPIRED);

    /* plain-text answers keep their text as the message */
    tg_kube_result_from_http(&r, 404, NULL, "404 page not found\n", 19);
    assert_int_equal(r.reason, TG_KUBE_R_NOT_FOUND);
    assert_string_equal(r.message, "404 page not found");
    assert_null(r.body);

    /* success, including a delete's Success Status */
    b = json_loads("{\"kind\":\"Status\",\"status\":\"Success\",\"details\":{\"name\":\"x\"}}", 0,
                   NULL);
    tg_kube_result_from_http(&r, 200, b, NULL, 0);
    assert_int_equal(r.rc, TG_OK);
    assert_int_equal(r.reason, TG_KUBE_R_NONE);
    assert_null(r.message);
    json_t *taken = tg_kube_result_take_body(&r);
    assert_non_null(taken);
    assert_null(r.body);
    json_decref(taken);

    /* auth problems are the gateway's, not the caller's */
    tg_kube_result_from_http(&r, 403, NULL, NULL, 0);
    assert_int_equal(r.reason, TG_KUBE_R_FORBIDDEN);
    assert_int_equal(r.rc, TG_EUPSTREAM);
    tg_kube_result_from_http(&r, 429, NULL, NULL, 0);
    assert_int_equal(r.rc, TG_EUNAVAILABLE);
    assert_true(tg_kube_reason_transient(r.reason));
    tg_kube_result_from_http(&r, 502, NULL, NULL, 0);
    assert_true(tg_kube_reason_transient(r.reason));
    tg_kube_result_from_http(&r, 504, NULL, NULL, 0);
    assert_int_equal(r.rc, TG_ETIMEOUT);
    assert_false(tg_kube_reason_transient(TG_KUBE_R_NOT_FOUND));
    assert_false(tg_kube_reason_transient(TG_KUBE_R_BAD_REQUEST));
    assert_int_equal(tg_kube_reason_parse("TooManyRequests"), TG_KUBE_R_TOO_MANY_REQUESTS);
    assert_int_equal(tg_kube_reason_parse("Network"), TG_KUBE_R_UNKNOWN); /* ours, not wire */
    assert_string_equal(tg_kube_reason_name(TG_KUBE_R_ALREADY_EXISTS), "AlreadyExists");

    tg_kube_result_clean(&r);
    tg_kube_result_clean(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig_current_context_token_and_ca_data),
        cmocka_unit_test(test_kubeconfig_named_context_client_cert_data),
        cmocka_unit_test(test_kubeconfig_missing_context_or_cluster),
        cmocka_unit_test(test_kubeconfig_refuses_what_it_cannot_do),
        cmocka_unit_test(test_kubeconfig_file_relative_paths),
        cmocka_unit_test(test_in_cluster_from_temp_dir),
        cmocka_unit_test(test_explicit_url_and_plain_http),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_status_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
