/* Unit tests: the Kubernetes client against a scripted HTTP/1.1 + TLS server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include "core/log.h"
#include "core/metrics.h"
#include "kube/client.h"
#include "kube/verbs.h"
#include "test_kube_server.h"

static ts_pki_t pki;
static char *tmpdir, *ca_file, *other_ca_file;

static struct {
    atomic_int count; /* requests seen by the handler */
    int mode;
} g;

static const char job_json[] = "{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\","
                               "\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\"}}";

static int setup(void **state)
{
    (void)state;
    tg_log_set_level(TG_LOG_ERROR); /* retries log warnings by design */
    ts_pki_make(&pki);
    tmpdir = ts_mkdtemp();
    ca_file = ts_path(tmpdir, "ca.crt");
    other_ca_file = ts_path(tmpdir, "other-ca.crt");
    ts_write_file(ca_file, pki.ca_pem);
    ts_write_file(other_ca_file, pki.other_ca_pem);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(ca_file);
    free(other_ca_file);
    ts_rmdir(tmpdir);
    ts_pki_free(&pki);
    return 0;
}

static void reset(int mode)
{
    atomic_store(&g.count, 0);
    g.mode = mode;
}

static tg_kube_client_t *mk_client(tg_kube_config_t *cfg)
{
    if (!cfg->retry_base_ms)
        cfg->retry_base_ms = 5; /* keep the backoff short in tests */
    if (!cfg->retry_max_ms)
        cfg->retry_max_ms = 20;
    tg_kube_client_t *c = NULL;
    char err[256] = "";
    tg_rc_e rc = tg_kube_client_new(cfg, &c, err, sizeof(err));
    if (rc != TG_OK)
        fprintf(stderr, "client_new: %s\n", err);
    assert_int_equal(rc, TG_OK);
    return c;
}

static tg_kube_ref_t job_x = {&tg_kube_gvr_jobs, "ns", "x", NULL};
static tg_kube_ref_t jobs_ns = {&tg_kube_gvr_jobs, "ns", NULL, NULL};

/* ---- handlers ----------------------------------------------------------------------- */

static void h_ok(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)r, (void)arg;
    atomic_fetch_add(&g.count, 1);
    ts_respond(c, 200, NULL, NULL, job_json);
}

/* mode 0: 503 + Retry-After: 1 once, then 200. mode 1: 429 always.
 * mode 2: 429 with Retry-After: 120. mode 3: 404 Status. mode 4: 503 always. */
static void h_script(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)r, (void)arg;
    int n = atomic_fetch_add(&g.count, 1);
    switch (g.mode) {
    case 0:
        if (n == 0)
            ts_status(c, 503, "ServiceUnavailable", "etcd leader changed", "Retry-After: 1\r\n");
        else
            ts_respond(c, 200, NULL, NULL, job_json);
        break;
    case 1:
        ts_status(c, 429, "TooManyRequests", "slow down", NULL);
        break;
    case 2:
        ts_status(c, 429, "TooManyRequests", "slow down a lot", "Retry-After: 120\r\n");
        break;
    case 3:
        ts_status(c, 404, "NotFound", "jobs.batch \\\"x\\\" not found", NULL);
        break;
    case 4:
        ts_status(c, 503, "ServiceUnavailable", "down", NULL);
        break;
    }
}

/* The first create's answer is lost (connection closed); the retry finds
 * the object the first one made. */
static void h_create_lost(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)r, (void)arg;
    int n = atomic_fetch_add(&g.count, 1);
    if (n == 0) {
        c->close = 1; /* no answer at all */
        return;
    }
    ts_status(c, 409, "AlreadyExists", "jobs.batch \\\"x\\\" already exists", NULL);
}

static void h_verbs(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)arg;
    atomic_fetch_add(&g.count, 1);
    if (strcmp(r->method, "DELETE") == 0)
        ts_respond(c, 200, NULL, NULL,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Success\","
                   "\"details\":{\"name\":\"x\",\"group\":\"batch\",\"kind\":\"jobs\"}}");
    else if (strcmp(r->method, "POST") == 0)
        ts_respond(c, 201, NULL, NULL, job_json);
    else
        ts_respond(c, 200, NULL, NULL, job_json);
}

static void h_pages(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)arg;
    atomic_fetch_add(&g.count, 1);
    if (strstr(r->query, "continue=tok1"))
        ts_respond(c, 200, NULL, NULL,
                   "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":\"101\"},"
                   "\"items\":[{\"metadata\":{\"name\":\"c\"}}]}");
    else
        ts_respond(c, 200, NULL, NULL,
                   "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":\"100\","
                   "\"continue\":\"tok1\",\"remainingItemCount\":1},"
                   "\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}}]}");
}

static void h_big(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)r, (void)arg;
    atomic_fetch_add(&g.count, 1);
    size_t n = 64 * 1024;
    char *body = malloc(n + 16);
    memset(body, 'a', n + 16);
    body[0] = '"';
    body[n] = '"';
    body[n + 1] = '\0';
    ts_respond(c, 200, NULL, NULL, body);
    free(body);
}

/* Only the rotated token is accepted. */
static void h_auth(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)arg;
    atomic_fetch_add(&g.count, 1);
    if (strcmp(r->authorization, "Bearer tok-new1") == 0)
        ts_respond(c, 200, NULL, NULL, job_json);
    else
        ts_status(c, 401, "Unauthorized", "Unauthorized", NULL);
}

static void h_slow(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)r, (void)arg;
    atomic_fetch_add(&g.count, 1);
    for (int i = 0; i < 20 && !atomic_load(&c->srv->stop); i++)
        ts_sleep_ms(50);
    ts_respond(c, 200, NULL, NULL, job_json);
}

/* ---- tests ---------------------------------------------------------------------------- */

static void test_tls_bearer_token_and_connection_reuse(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 1, h_ok, NULL);
    tg_kube_config_t cfg = {.api_url = s->url, .ca_file = ca_file, .token = "tok-static"};
    tg_kube_client_t *c = mk_client(&cfg);
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tg_kube_get(c, &job_x, &r), TG_OK);
        assert_int_equal(r.http_code, 200);
        assert_int_equal(r.attempts, 1);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(r.body, "metadata"), "name")), "x");
    }
    assert_int_equal(ts_nlog(s), 3);
    assert_int_equal(ts_nconns(s), 1); /* one keep-alive connection for all three */
    assert_string_equal(s->log[0].method, "GET");
    assert_string_equal(s->log[0].path, "/apis/batch/v1/namespaces/ns/jobs/x");
    assert_string_equal(s->log[0].authorization, "Bearer tok-static");
    assert_string_equal(s->log[0].accept, "application/json");
    assert_non_null(strstr(s->log[0].user_agent, "taugate/"));
    assert_string_equal(tg_kube_client_namespace(c), "default");
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
    ts_stop(s);
}

static void test_wrong_ca_fails_without_retry(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 1, h_ok, NULL);
    tg_kube_config_t cfg = {.api_url = s->url, .ca_file = other_ca_file, .token = "t"};
    tg_kube_client_t *c = mk_client(&cfg);
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    assert_int_not_equal(tg_kube_get(c, &job_x, &r), TG_OK);
    assert_int_equal(r.reason, TG_KUBE_R_NETWORK);
    assert_int_equal(r.attempts, 1); /* a bad certificate is not transient */
    assert_int_equal(r.http_code, 0);
    assert_non_null(r.message);
    assert_int_equal(ts_nlog(s), 0); /* no request, so the token never left */
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
    ts_stop(s);
}

static char *b64(const char *in)
{
    size_t n = strlen(in);
    char *out = malloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)in, (int)n);
    return out;
}

static void test_kubeconfig_client_certificate_data(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 2, h_ok, NULL); /* requires a client certificate */
    char *ca = b64(pki.ca_pem), *cert = b64(pki.client_cert_pem), *key = b64(pki.client_key_pem);
    size_t n = strlen(ca) + strlen(cert) + strlen(key) + 1024;
    char *y = malloc(n);
    snprintf(y, n,
             "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
             "clusters:\n- name: c\n  cluster:\n    server: %s\n"
             "    certificate-authority-data: %s\n"
             "contexts:\n- name: t\n  context: {cluster: c, user: u, namespace: tenant}\n"
             "users:\n- name: u\n  user:\n    client-certificate-data: %s\n"
             "    client-key-data: %s\n",
             s->url, ca, cert, key);
    char *kc = ts_path(tmpdir, "kubeconfig");
    ts_write_file(kc, y);
    tg_kube_config_t cfg = {.kubeconfig = kc};
    tg_kube_client_t *c = mk_client(&cfg);
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_OK);
    assert_int_equal(ts_nlog(s), 1);
    assert_string_equal(s->log[0].client_cn, "test-admin");
    assert_string_equal(s->log[0].authorization, "");
    assert_string_equal(tg_kube_client_namespace(c), "tenant");
    tg_kube_client_free(c);

    /* the same server without a client certificate: refused in the handshake */
    tg_kube_config_t cfg2 = {.api_url = s->url, .ca_file = ca_file, .max_retries = -1};
    c = mk_client(&cfg2);
    assert_int_not_equal(tg_kube_get(c, &job_x, &r), TG_OK);
    assert_int_equal(r.reason, TG_KUBE_R_NETWORK);
    tg_kube_client_free(c);
    tg_kube_result_clean(&r);
    unlink(kc);
    free(kc);
    free(y);
    free(ca);
    free(cert);
    free(key);
    ts_stop(s);
}

static void test_in_cluster_token_rotation(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 1, h_ok, NULL);
    char *sa = ts_mkdtemp();
    char *tok = ts_path(sa, "token"), *tmp = ts_path(sa, "token.new"), *ca = ts_path(sa, "ca.crt");
    ts_write_file(tok, "tok-A\n");
    ts_write_file(ca, pki.ca_pem);
    char port[16];
    snprintf(port, sizeof(port), "%d", s->port);
    setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", port, 1);
    tg_kube_config_t cfg = {.sa_dir = sa};
    tg_kube_client_t *c = mk_client(&cfg);
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_OK);
    /* the kubelet's way: a new file swapped in */
    ts_write_file(tmp, "tok-B-rotated\n");
    assert_int_equal(rename(tmp, tok), 0);
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_OK);
    /* rewritten in place with the same length: the mtime tells */
    ts_sleep_ms(5);
    ts_write_file(tok, "tok-C-rotated\n");
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_OK);
    /* a missing file keeps the last good token */
    unlink(tok);
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_OK);
    assert_int_equal(ts_nlog(s), 4);
    assert_string_equal(s->log[0].authorization, "Bearer tok-A");
    assert_string_equal(s->log[1].authorization, "Bearer tok-B-rotated");
    assert_string_equal(s->log[2].authorization, "Bearer tok-C-rotated");
    assert_string_equal(s->log[3].authorization, "Bearer tok-C-rotated");
    assert_string_equal(tg_kube_client_namespace(c), "default"); /* no namespace file */
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    free(tok);
    free(tmp);
    free(ca);
    ts_rmdir(sa);
    ts_stop(s);
}

/* A token file rewritten in a way stat cannot see (same inode, size and
 * mtime): the 401 makes the client read it again and retry once. */
static void test_401_forces_token_reread(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 1, h_auth, NULL);
    char *tok = ts_path(tmpdir, "token401");
    ts_write_file(tok, "tok-old1");
    struct stat st;
    assert_int_equal(stat(tok, &st), 0);
    tg_kube_config_t cfg = {.api_url = s->url, .ca_file = ca_file, .token_file = tok};
    tg_kube_client_t *c = mk_client(&cfg);
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_EUPSTREAM);
    assert_int_equal(r.reason, TG_KUBE_R_UNAUTHORIZED);
    assert_int_equal(r.attempts, 1); /* the token did not change: no retry */

    ts_write_file(tok, "tok-new1");
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    assert_int_equal(utimensat(AT_FDCWD, tok, times, 0), 0);
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_OK);
    assert_int_equal(r.attempts, 2);
    assert_true(r.retried);
    assert_int_equal(ts_nlog(s), 3);
    assert_string_equal(s->log[1].authorization, "Bearer tok-old1");
    assert_string_equal(s->log[2].authorization, "Bearer tok-new1");
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
    unlink(tok);
    free(tok);
    ts_stop(s);
}

static void test_503_then_200_honours_retry_after(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 0, h_script, NULL);
    tg_kube_config_t cfg = {.api_url = s->url, .token = "t"};
    tg_kube_client_t *c = mk_client(&cfg);
    uint64_t before503 = tg_kube_metrics_requests(TG_KUBE_VERB_GET, 503);
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    double t0 = ts_now_s();
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_OK);
    double dt = ts_now_s() - t0;
    assert_int_equal(r.attempts, 2);
    assert_true(r.retried);
    assert_true(dt >= 0.95); /* Retry-After: 1, not the 5 ms backoff */
    assert_true(dt < 3.0);
    assert_int_equal(tg_kube_metrics_requests(TG_KUBE_VERB_GET, 503), before503 + 1);

    /* the collector is registered while a client lives */
    tg_buf_t m;
    tg_buf_init(&m, 1 << 20);
    assert_int_equal(tg_metrics_render(&m), TG_OK);
    assert_non_null(strstr(m.data, "# TYPE taugate_kube_requests_total counter"));
    assert_non_null(strstr(m.data, "taugate_kube_requests_total{verb=\"get\",code=\"503\"}"));
    assert_non_null(strstr(m.data, "taugate_kube_request_duration_seconds_count{verb=\"get\"}"));
    assert_non_null(strstr(m.data, "taugate_kube_retries_total{verb=\"get\"}"));
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
    tg_buf_reset(&m);
    assert_int_equal(tg_metrics_render(&m), TG_OK);
    assert_null(strstr(m.data, "taugate_kube_")); /* unregistered with the last client */
    tg_buf_clean(&m);
    ts_stop(s);
}

static void test_429_and_5xx_bounded_retries(void **state)
{
    (void)state;
    ts_server_t *s = ts_start(&pki, 0, h_script, NULL);
    tg_kube_config_t cfg = {.api_url = s->url, .max_retries = 2};
    tg_kube_client_t *c = mk_client(&cfg);
    tg_kube_result_t r;
    tg_kube_result_init(&r);

    reset(1); /* 429 forever */
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_EUNAVAILABLE);
    assert_int_equal(r.reason, TG_KUBE_R_TOO_MANY_REQUESTS);
    assert_int_equal(r.attempts, 3);
    assert_int_equal(atomic_load(&g.count), 3);

    reset(2); /* Retry-After beyond our limit: give up at once, report it */
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_EUNAVAILABLE);
    assert_int_equal(r.attempts, 1);
    assert_int_equal(r.retry_after_s, 120);

    reset(4); /* a create with only generateName is never sent twice after a 503 */
    json_t *gen = json_pack("{s:s, s:{s:s}}", "kind", "Job", "metadata", "generateName", "x-");
    assert_int_equal(tg_kube_create(c, &jobs_ns, gen, NULL, &r), TG_EUNAVAILABLE);
    assert_int_equal(r.attempts, 1);
    /* ... while a named one is */
    json_t *named = json_pack("{s:s, s:{s:s}}", "kind", "Job", "metadata", "name", "x");
    reset(4);
    assert_int_equal(tg_kube_create(c, &jobs_ns, named, NULL, &r), TG_EUNAVAILABLE);
    assert_int_equal(r.attempts, 3);

    reset(3); /* 404 is an answer, not a failure to retry */
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_ENOTFOUND);
    assert_int_equal(r.reason, TG_KUBE_R_NOT_FOUND);
    assert_int_equal(r.http_code, 404);
    assert_int_equal(r.attempts, 1);
    assert_string_equal(r.message, "jobs.batch \"x\" not found");
    assert_non_null(r.status);

    json_decref(gen);
    json_decref(named);
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
    ts_stop(s);
}

static void test_retried_create_reports_already_exists(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 0, h_create_lost, NULL);
    tg_kube_config_t cfg = {.api_url = s->url};
    tg_kube_client_t *c = mk_client(&cfg);
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    json_t *job = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "batch/v1", "kind", "Job",
                            "metadata", "name", "x", "labels", "taugate.io/run-id", "r1");
    assert_int_equal(tg_kube_create(c, &jobs_ns, job, NULL, &r), TG_ECONFLICT);
    assert_int_equal(r.reason, TG_KUBE_R_ALREADY_EXISTS);
    assert_true(r.retried); /* so the caller checks whether the object is its own */
    assert_int_equal(r.attempts, 2);
    assert_int_equal(ts_nlog(s), 2);
    assert_string_equal(s->log[1].method, "POST");
    assert_string_equal(s->log[1].content_type, "application/json");
    json_t *sent = json_loads(s->log[1].body, 0, NULL);
    assert_true(json_equal(sent, job));
    json_decref(sent);
    json_decref(job);
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
    ts_stop(s);
}

static void test_verbs_on_the_wire(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 0, h_verbs, NULL);
    tg_kube_config_t cfg = {.api_url = s->url, .token = "t"};
    tg_kube_client_t *c = mk_client(&cfg);
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    json_t *job = json_pack("{s:{s:s, s:s}}", "metadata", "name", "x", "resourceVersion", "7");
    json_t *patch = json_pack("{s:{s:{s:n}}}", "metadata", "labels", "gone");

    tg_kube_write_opts_t wo = {.field_manager = "tg", .dry_run = 1};
    assert_int_equal(tg_kube_create(c, &jobs_ns, job, &wo, &r), TG_OK);
    assert_int_equal(r.http_code, 201);
    assert_int_equal(tg_kube_update(c, &job_x, job, NULL, &r), TG_OK);
    assert_int_equal(tg_kube_update_status(c, &job_x, job, NULL, &r), TG_OK);
    assert_int_equal(tg_kube_merge_patch(c, &job_x, patch, NULL, &r), TG_OK);
    assert_int_equal(tg_kube_delete(c, &job_x, TG_KUBE_PROPAGATION_BACKGROUND, 0, NULL, &r), TG_OK);
    assert_string_equal(json_string_value(json_object_get(r.body, "status")), "Success");
    tg_kube_list_opts_t lo = {.label_selector = "taugate.io/run-id=r1",
                              .field_selector = "status.successful=1",
                              .limit = 50,
                              .resource_version = "0"};
    assert_int_equal(tg_kube_list(c, &jobs_ns, &lo, &r), TG_OK);
    /* wrong shapes are refused before anything is sent */
    assert_int_equal(tg_kube_get(c, &jobs_ns, &r), TG_EINVAL);
    assert_int_equal(r.reason, TG_KUBE_R_CONFIG);
    assert_int_equal(tg_kube_create(c, &job_x, job, NULL, &r), TG_EINVAL);

    assert_int_equal(ts_nlog(s), 6);
    ts_req_t *l = s->log;
    assert_string_equal(l[0].method, "POST");
    assert_string_equal(l[0].path, "/apis/batch/v1/namespaces/ns/jobs");
    assert_string_equal(l[0].query, "fieldManager=tg&dryRun=All");
    assert_string_equal(l[1].method, "PUT");
    assert_string_equal(l[1].path, "/apis/batch/v1/namespaces/ns/jobs/x");
    assert_string_equal(l[1].content_type, "application/json");
    assert_string_equal(l[2].method, "PUT");
    assert_string_equal(l[2].path, "/apis/batch/v1/namespaces/ns/jobs/x/status");
    assert_string_equal(l[3].method, "PATCH");
    assert_string_equal(l[3].content_type, "application/merge-patch+json");
    assert_string_equal(l[3].body, "{\"metadata\":{\"labels\":{\"gone\":null}}}");
    assert_string_equal(l[4].method, "DELETE");
    json_t *dopts = json_loads(l[4].body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(dopts, "propagationPolicy")),
                        "Background");
    assert_int_equal(json_integer_value(json_object_get(dopts, "gracePeriodSeconds")), 0);
    json_decref(dopts);
    assert_string_equal(l[5].method, "GET");
    assert_string_equal(l[5].query, "labelSelector=taugate.io%2Frun-id%3Dr1&fieldSelector=status."
                                    "successful%3D1&limit=50&resourceVersion=0");
    for (int i = 0; i < 6; i++)
        assert_string_equal(l[i].authorization, "Bearer t"); /* loopback http: sent */

    json_decref(job);
    json_decref(patch);
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
    ts_stop(s);
}

static int count_items(json_t *item, void *arg)
{
    (void)item;
    (*(int *)arg)++;
    return 0;
}

static void test_list_all_pages(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 0, h_pages, NULL);
    tg_kube_config_t cfg = {.api_url = s->url};
    tg_kube_client_t *c = mk_client(&cfg);
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    int n = 0;
    char rv[64];
    tg_kube_list_opts_t lo = {.limit = 2};
    assert_int_equal(tg_kube_list_all(c, &jobs_ns, &lo, count_items, &n, rv, sizeof(rv), &r),
                     TG_OK);
    assert_int_equal(n, 3);
    assert_string_equal(rv, "101");
    assert_null(r.body);
    assert_int_equal(ts_nlog(s), 2);
    assert_string_equal(s->log[0].query, "limit=2");
    assert_string_equal(s->log[1].query, "limit=2&continue=tok1");
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
    ts_stop(s);
}

static void test_limits_timeouts_and_network_errors(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 0, h_big, NULL);
    tg_kube_config_t cfg = {.api_url = s->url, .max_response_bytes = 4096};
    tg_kube_client_t *c = mk_client(&cfg);
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_ETOOLARGE);
    assert_int_equal(r.reason, TG_KUBE_R_TOO_LARGE);
    assert_int_equal(r.attempts, 1);
    tg_kube_client_free(c);
    ts_stop(s);

    s = ts_start(&pki, 0, h_slow, NULL);
    tg_kube_config_t cfg2 = {.api_url = s->url, .timeout_ms = 150, .max_retries = -1};
    c = mk_client(&cfg2);
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_ETIMEOUT);
    assert_int_equal(r.reason, TG_KUBE_R_CLIENT_TIMEOUT);
    tg_kube_client_free(c);
    ts_stop(s);

    /* nobody listens on this port any more: refused, retried, reported */
    tg_kube_config_t cfg3 = {.api_url = "http://127.0.0.1:1", .max_retries = 2};
    c = mk_client(&cfg3);
    assert_int_equal(tg_kube_get(c, &job_x, &r), TG_EUNAVAILABLE);
    assert_int_equal(r.reason, TG_KUBE_R_NETWORK);
    assert_int_equal(r.attempts, 3);
    /* a generateName create may be retried too: it never reached a server */
    json_t *gen = json_pack("{s:{s:s}}", "metadata", "generateName", "x-");
    assert_int_equal(tg_kube_create(c, &jobs_ns, gen, NULL, &r), TG_EUNAVAILABLE);
    assert_int_equal(r.attempts, 3);
    json_decref(gen);
    tg_kube_result_clean(&r);
    tg_kube_client_free(c);
}

typedef struct {
    tg_kube_client_t *c;
    int ok;
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;
    tg_kube_result_t r;
    tg_kube_result_init(&r);
    for (int i = 0; i < 10; i++)
        if (tg_kube_get(w->c, &job_x, &r) == TG_OK)
            w->ok++;
    tg_kube_result_clean(&r);
    return NULL;
}

static void test_many_threads_share_a_client(void **state)
{
    (void)state;
    reset(0);
    ts_server_t *s = ts_start(&pki, 1, h_ok, NULL);
    tg_kube_config_t cfg = {.api_url = s->url, .ca_file = ca_file, .token = "t", .pool_size = 4};
    tg_kube_client_t *c = mk_client(&cfg);
    pthread_t th[4];
    worker_t w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker_t){c, 0};
        pthread_create(&th[i], NULL, worker, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].ok, 10);
    }
    assert_int_equal(ts_nlog(s), 40);
    assert_true(ts_nconns(s) <= 8); /* connections are reused, not one per request */
    tg_kube_client_free(c);
    ts_stop(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls_bearer_token_and_connection_reuse),
        cmocka_unit_test(test_wrong_ca_fails_without_retry),
        cmocka_unit_test(test_kubeconfig_client_certificate_data),
        cmocka_unit_test(test_in_cluster_token_rotation),
        cmocka_unit_test(test_401_forces_token_reread),
        cmocka_unit_test(test_503_then_200_honours_retry_after),
        cmocka_unit_test(test_429_and_5xx_bounded_retries),
        cmocka_unit_test(test_retried_create_reports_already_exists),
        cmocka_unit_test(test_verbs_on_the_wire),
        cmocka_unit_test(test_list_all_pages),
        cmocka_unit_test(test_limits_timeouts_and_network_errors),
        cmocka_unit_test(test_many_threads_share_a_client),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
