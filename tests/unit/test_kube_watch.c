/* Unit tests: watch decoding and streams, the informer loop, pod logs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/log.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/logs.h"
#include "kube/watch.h"
#include "test_kube_server.h"

static ts_pki_t pki;

static struct {
    atomic_int count;
    int lists; /* fresh lists (not continue pages) served */
} g;

static int setup(void **state)
{
    (void)state;
    tg_log_set_level(TG_LOG_ERROR);
    ts_pki_make(&pki);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ts_pki_free(&pki);
    return 0;
}

static void reset(void)
{
    atomic_store(&g.count, 0);
    g.lists = 0;
}

static tg_kube_client_t *mk_client(const char *url, size_t max_event)
{
    tg_kube_config_t cfg = {.api_url = url,
                            .token = "watch-token",
                            .retry_base_ms = 5,
                            .retry_max_ms = 20,
                            .max_event_bytes = max_event};
    tg_kube_client_t *c = NULL;
    char err[256];
    assert_int_equal(tg_kube_client_new(&cfg, &c, err, sizeof(err)), TG_OK);
    return c;
}

static const tg_kube_ref_t jobs_ns = {&tg_kube_gvr_jobs, "ns", NULL, NULL};

/* ---- event recording ------------------------------------------------------------------ */

typedef struct {
    char log[4096]; /* "ADDED a 5|MODIFIED a 6|..." */
    int n;
    int stop_after;      /* stop when n reaches this (0: never) */
    const char *stop_on; /* or on this "TYPE name" */
    atomic_int seen;     /* events received, for other threads */
} rec_t;

static const char *type_name(tg_kube_event_type_e t)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "SYNC"};
    return names[t];
}

static int rec_event(const tg_kube_event_t *ev, void *arg)
{
    rec_t *r = arg;
    char one[256];
    const char *name =
        ev->object
            ? json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name"))
            : NULL;
    snprintf(one, sizeof(one), "%s%s%s%s%s%s", r->n ? "|" : "", type_name(ev->type),
             name ? " " : "", name ? name : "", ev->resource_version ? " " : "",
             ev->resource_version ? ev->resource_version : "");
    if (ev->synthetic)
        strncat(one, " (synthetic)", sizeof(one) - strlen(one) - 1);
    strncat(r->log, one, sizeof(r->log) - strlen(r->log) - 1);
    r->n++;
    atomic_fetch_add(&r->seen, 1);
    if (r->stop_after && r->n >= r->stop_after)
        return 1;
    if (r->stop_on && name) {
        char key[128];
        snprintf(key, sizeof(key), "%s %s", type_name(ev->type), name);
        if (strcmp(key, r->stop_on) == 0)
            return 1;
    }
    return 0;
}

/* ---- the decoder alone -------------------------------------------------------------------- */

/* With an object mask (NULL: whole objects) the same stream reads the same:
 * the masked fields are there, and an ERROR event's Status is read whole. */
static void decoder_splits_bookmarks_and_errors(const char *mask_text)
{
    static const char stream[] =
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"}}}"
        "\n"
        "\r\n"
        "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"6\"}"
        "}}"
        "\r\n"
        "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Job\",\"metadata\":{\"resourceVersion\":"
        "\"9\"}}}\n"
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
        "\"Failure\",\"reason\":\"Expired\",\"code\":410,\"message\":\"too old resource version: "
        "5 (120)\"}}\n"
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"never\"}}}\n";
    rec_t r = {0};
    char rv[TG_KUBE_RV_MAX] = "1";
    tg_kube_watch_decoder_t d;
    tg_kube_watch_decoder_init(&d, 4096, rec_event, &r, rv);
    json_t *mask = mask_text ? json_loads(mask_text, 0, NULL) : NULL;
    tg_kube_watch_decoder_set_object_mask(&d, mask);
    json_decref(mask); /* the decoder keeps its own */
    /* one byte at a time: every split point is exercised */
    int done = 0;
    for (size_t i = 0; i < strlen(stream) && !done; i++)
        done = tg_kube_watch_decoder_feed(&d, stream + i, 1);
    assert_true(done);
    assert_int_equal(d.outcome, TG_KUBE_WATCH_EXPIRED);
    assert_int_equal(d.err.reason, TG_KUBE_R_EXPIRED);
    assert_int_equal(d.err.http_code, 410);
    assert_string_equal(d.err.message, "too old resource version: 5 (120)");
    assert_string_equal(r.log, "ADDED a 5|MODIFIED a 6|BOOKMARK 9");
    assert_string_equal(rv, "9");
    assert_int_equal(d.events, 3);
    assert_int_equal(tg_kube_watch_decoder_feed(&d, "x", 1), 1); /* stays done */
    tg_kube_watch_decoder_clean(&d);
}

static void test_decoder_splits_bookmarks_and_errors(void **state)
{
    (void)state;
    decoder_splits_bookmarks_and_errors(NULL);
    decoder_splits_bookmarks_and_errors("{\"metadata\":{\"name\":true,\"resourceVersion\":true}}");
    rec_t r = {0};
    char rv[TG_KUBE_RV_MAX] = "1";
    tg_kube_watch_decoder_t d;

    /* a line over the limit is an error, not growth */
    memset(&r, 0, sizeof(r));
    tg_kube_watch_decoder_init(&d, 64, rec_event, &r, rv);
    char big[200];
    memset(big, 'x', sizeof(big));
    assert_int_equal(tg_kube_watch_decoder_feed(&d, big, sizeof(big)), 1);
    assert_int_equal(d.outcome, TG_KUBE_WATCH_ERROR);
    assert_int_equal(d.err.reason, TG_KUBE_R_TOO_LARGE);
    assert_true(d.line.cap <= 256);
    tg_kube_watch_decoder_clean(&d);

    /* garbage */
    tg_kube_watch_decoder_init(&d, 4096, rec_event, &r, rv);
    assert_int_equal(tg_kube_watch_decoder_feed(&d, "{\"type\":\"ADDED\"}\n", 17), 1);
    assert_int_equal(d.err.reason, TG_KUBE_R_DECODE);
    tg_kube_watch_decoder_clean(&d);

    /* a last line without a newline is decoded at the end */
    memset(&r, 0, sizeof(r));
    tg_kube_watch_decoder_init(&d, 4096, rec_event, &r, rv);
    static const char tail[] = "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"z\","
                               "\"resourceVersion\":\"77\"}}}";
    assert_int_equal(tg_kube_watch_decoder_feed(&d, tail, strlen(tail)), 0);
    assert_int_equal(r.n, 0);
    assert_int_equal(tg_kube_watch_decoder_finish(&d), 0);
    assert_string_equal(r.log, "DELETED z 77");
    tg_kube_watch_decoder_clean(&d);
}

static int rec_object(const tg_kube_event_t *ev, void *arg)
{
    json_t **last = arg;
    json_decref(*last);
    *last = json_incref(ev->object);
    return 0;
}

static void test_decoder_masked_objects_and_malformed_lines(void **state)
{
    (void)state;
    json_t *last = NULL;
    char rv[TG_KUBE_RV_MAX] = "";
    tg_kube_watch_decoder_t d;
    tg_kube_watch_decoder_init(&d, 4096, rec_object, &last, rv);
    json_t *mask =
        json_loads("{\"metadata\":{\"name\":true},\"status\":{\"phase\":true}}", 0, NULL);
    tg_kube_watch_decoder_set_object_mask(&d, mask);
    json_decref(mask);
    static const char ev[] =
        "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\",\"managedFields\":"
        "[{\"fieldsV1\":{\"f:x\":{}}}]},\"spec\":{\"big\":[1,2.5e3,true,null]},"
        "\"status\":{\"phase\":\"Running\",\"x\":\"\\u00e9\"}}}\n";
    assert_int_equal(tg_kube_watch_decoder_feed(&d, ev, strlen(ev)), 0);
    char *got = json_dumps(last, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(got, "{\"metadata\":{\"name\":\"p\"},\"status\":{\"phase\":\"Running\"}}");
    free(got);
    /* a fault in a skipped field still fails the watch, as a whole decode does */
    static const char bad[] =
        "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"q\"},\"spec\":[1,]}}\n";
    assert_int_equal(tg_kube_watch_decoder_feed(&d, bad, strlen(bad)), 1);
    assert_int_equal(d.outcome, TG_KUBE_WATCH_ERROR);
    assert_int_equal(d.err.reason, TG_KUBE_R_DECODE);
    assert_int_equal(d.events, 1);
    tg_kube_watch_decoder_clean(&d);
    json_decref(last);
}

/* ---- watch requests --------------------------------------------------------------------- */

#define EV(type, name, rv)                                                                         \
    "{\"type\":\"" type "\",\"object\":{\"kind\":\"Job\",\"metadata\":{\"name\":\"" name           \
    "\",\"namespace\":\"ns\",\"uid\":\"u-" name "\",\"resourceVersion\":\"" rv "\"}}}\n"
#define BOOKMARK(rv)                                                                               \
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\","             \
    "\"metadata\":{\"resourceVersion\":\"" rv "\"}}}\n"
#define EXPIRED_EV                                                                                 \
    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"        \
    "\"Failure\",\"reason\":\"Expired\",\"code\":410,\"message\":\"too old resource version\"}}\n"

static void hold_open(ts_conn_t *c)
{
    while (!atomic_load(&c->srv->stop))
        ts_sleep_ms(20);
}

/* mode by path: /.../jobs with watch: a stream; see each test */
static int watch_mode;

static void h_watch(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)r, (void)arg;
    atomic_fetch_add(&g.count, 1);
    switch (watch_mode) {
    case 0: /* events split across chunks, then the server closes */
        ts_chunked_start(c, 200, "application/json");
        ts_chunk_str(c, EV("ADDED", "x", "2") "{\"type\":\"MODI");
        ts_sleep_ms(20);
        ts_chunk_str(
            c, "FIED\",\"object\":{\"metadata\":{\"name\":\"x\",\"resourceVersion\":\"3\"}}}");
        ts_chunk_str(c, "\n" BOOKMARK("4"));
        ts_chunked_end(c);
        break;
    case 1: /* a plain 410 on the first request */
        ts_status(c, 410, "Expired", "too old resource version: 1 (50)", NULL);
        break;
    case 2: /* an ERROR event that is not 410 */
        ts_chunked_start(c, 200, "application/json");
        ts_chunk_str(c,
                     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
                     "\"reason\":\"InternalError\",\"code\":500,\"message\":\"boom\"}}\n");
        ts_chunked_end(c);
        break;
    case 3: { /* a small event, then one over the client's limit */
        ts_chunked_start(c, 200, "application/json");
        ts_chunk_str(c, EV("ADDED", "small", "2"));
        char big[4096];
        memset(big, 'x', sizeof(big));
        ts_chunk_str(c, "{\"type\":\"ADDED\",\"object\":{\"pad\":\"");
        ts_chunk(c, big, sizeof(big));
        ts_chunk_str(c, "\"}}\n");
        ts_chunked_end(c);
        break;
    }
    case 4: /* one event, then silence until the server stops */
        ts_chunked_start(c, 200, "application/json");
        ts_chunk_str(c, EV("ADDED", "x", "2"));
        hold_open(c);
        break;
    }
}

static void test_watch_stream_events_and_bookmark(void **state)
{
    (void)state;
    reset();
    watch_mode = 0;
    ts_server_t *s = ts_start(&pki, 0, h_watch, NULL);
    tg_kube_client_t *c = mk_client(s->url, 0);
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    rec_t r = {0};
    tg_kube_watch_opts_t wo = {.label_selector = "app=x", .timeout_seconds = 30};
    snprintf(wo.resource_version, sizeof(wo.resource_version), "1");
    assert_int_equal(tg_kube_watch(c, &jobs_ns, &wo, rec_event, &r, &res), TG_KUBE_WATCH_CLOSED);
    assert_int_equal(res.rc, TG_OK);
    assert_string_equal(r.log, "ADDED x 2|MODIFIED x 3|BOOKMARK 4");
    assert_string_equal(wo.resource_version, "4"); /* resume point */
    assert_int_equal(wo.events, 3);
    assert_string_equal(s->log[0].path, "/apis/batch/v1/namespaces/ns/jobs");
    assert_string_equal(s->log[0].query, "watch=true&resourceVersion=1&allowWatchBookmarks=true&"
                                         "timeoutSeconds=30&labelSelector=app%3Dx");
    assert_string_equal(s->log[0].authorization, "Bearer watch-token");

    watch_mode = 1;
    assert_int_equal(tg_kube_watch(c, &jobs_ns, &wo, rec_event, &r, &res), TG_KUBE_WATCH_EXPIRED);
    assert_int_equal(res.reason, TG_KUBE_R_EXPIRED);
    assert_int_equal(res.attempts, 1);

    watch_mode = 2;
    assert_int_equal(tg_kube_watch(c, &jobs_ns, &wo, rec_event, &r, &res), TG_KUBE_WATCH_ERROR);
    assert_int_equal(res.reason, TG_KUBE_R_INTERNAL_ERROR);
    assert_string_equal(res.message, "boom");

    /* a watch needs a collection */
    tg_kube_ref_t named = {&tg_kube_gvr_jobs, "ns", "x", NULL};
    assert_int_equal(tg_kube_watch(c, &named, &wo, rec_event, &r, &res), TG_KUBE_WATCH_ERROR);
    assert_int_equal(res.reason, TG_KUBE_R_CONFIG);
    tg_kube_result_clean(&res);
    tg_kube_client_free(c);
    ts_stop(s);
}

static void test_watch_oversized_event_is_an_error(void **state)
{
    (void)state;
    reset();
    watch_mode = 3;
    ts_server_t *s = ts_start(&pki, 0, h_watch, NULL);
    tg_kube_client_t *c = mk_client(s->url, 1024);
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    rec_t r = {0};
    tg_kube_watch_opts_t wo = {0};
    assert_int_equal(tg_kube_watch(c, &jobs_ns, &wo, rec_event, &r, &res), TG_KUBE_WATCH_ERROR);
    assert_int_equal(res.reason, TG_KUBE_R_TOO_LARGE);
    assert_int_equal(res.rc, TG_ETOOLARGE);
    assert_string_equal(r.log, "ADDED small 2");
    assert_string_equal(wo.resource_version, "2");
    assert_null(strstr(s->log[0].query, "resourceVersion=")); /* started from "now" */
    tg_kube_result_clean(&res);
    tg_kube_client_free(c);
    ts_stop(s);
}

/* A stop that is never noticed would hang the test (the server holds the
 * stream open until it is stopped): fail at this deadline instead. */
#define STOP_DEADLINE_S 30

typedef struct {
    atomic_int *flag;
    atomic_int *seen; /* stop once this is non-zero */
} stopper_t;

static void *stopper(void *arg)
{
    stopper_t *st = arg;
    while (!atomic_load(st->seen))
        ts_sleep_ms(5);
    atomic_store(st->flag, 1);
    return NULL;
}

static void test_watch_cancelled_from_another_thread(void **state)
{
    (void)state;
    reset();
    watch_mode = 4;
    ts_server_t *s = ts_start(&pki, 0, h_watch, NULL);
    tg_kube_client_t *c = mk_client(s->url, 0);
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    rec_t r = {0};
    atomic_int stop = 0;
    tg_kube_watch_opts_t wo = {.stop = &stop};
    /* stopped once the event is in, while the stream is silent: only the
     * progress callback can notice it */
    stopper_t st = {&stop, &r.seen};
    pthread_t th;
    pthread_create(&th, NULL, stopper, &st);
    alarm(STOP_DEADLINE_S);
    assert_int_equal(tg_kube_watch(c, &jobs_ns, &wo, rec_event, &r, &res), TG_KUBE_WATCH_STOPPED);
    alarm(0);
    pthread_join(th, NULL);
    assert_int_equal(res.rc, TG_OK);
    assert_string_equal(r.log, "ADDED x 2");
    tg_kube_result_clean(&res);
    tg_kube_client_free(c);
    ts_stop(s);
}

/* ---- the informer --------------------------------------------------------------------- */

static const char *query_value(const char *query, const char *key, char *out, size_t outlen)
{
    size_t kl = strlen(key);
    out[0] = '\0';
    for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
            const char *v = p + kl + 1;
            size_t n = strcspn(v, "&");
            if (n >= outlen)
                n = outlen - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return out;
        }
    }
    return NULL;
}

#define ITEM(name, rv)                                                                             \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"uid\":\"u-" name                  \
    "\",\"resourceVersion\":\"" rv "\"}}"

static void h_informer(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)arg;
    char rv[64];
    atomic_fetch_add(&g.count, 1);
    if (!strstr(r->query, "watch=true")) {
        if (strstr(r->query, "continue=p2")) {
            ts_respond(c, 200, NULL, NULL,
                       "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                       "\"items\":[" ITEM("b", "6") "]}");
        } else if (g.lists++ == 0) {
            ts_respond(c, 200, NULL, NULL,
                       "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":\"10\","
                       "\"continue\":\"p2\"},\"items\":[" ITEM("a", "5") "]}");
        } else { /* b went away while we were not watching */
            ts_respond(c, 200, NULL, NULL,
                       "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":\"20\"},"
                       "\"items\":[" ITEM("a", "5") "," ITEM("c", "11") "]}");
        }
        return;
    }
    query_value(r->query, "resourceVersion", rv, sizeof(rv));
    ts_chunked_start(c, 200, "application/json");
    if (strcmp(rv, "10") == 0) {
        ts_chunk_str(c, EV("ADDED", "c", "11") BOOKMARK("12"));
        ts_chunked_end(c); /* timeoutSeconds reached */
    } else if (strcmp(rv, "12") == 0) {
        ts_chunk_str(c, EXPIRED_EV);
        ts_chunked_end(c);
    } else if (strcmp(rv, "20") == 0) {
        ts_chunk_str(c, EV("MODIFIED", "a", "21"));
        hold_open(c);
    } else {
        ts_chunked_end(c);
    }
}

static void test_informer_lists_watches_resumes_and_relists(void **state)
{
    (void)state;
    reset();
    ts_server_t *s = ts_start(&pki, 0, h_informer, NULL);
    tg_kube_client_t *c = mk_client(s->url, 0);
    rec_t r = {.stop_on = "MODIFIED a"};
    tg_kube_informer_opts_t o = {.gvr = &tg_kube_gvr_jobs,
                                 .ns = "ns",
                                 .label_selector = "taugate.io/managed=true",
                                 .page_size = 1,
                                 .watch_timeout_min_s = 5,
                                 .watch_timeout_max_s = 9,
                                 .backoff_base_ms = 10,
                                 .backoff_max_ms = 50,
                                 .cb = rec_event,
                                 .arg = &r};
    tg_kube_informer_t *inf = tg_kube_informer_new(c, &o);
    assert_int_equal(tg_kube_informer_run(inf), TG_OK);
    assert_string_equal(r.log, "ADDED a 5|ADDED b 6|SYNC|"   /* list, two pages */
                               "ADDED c 11|"                 /* watch from 10 */
                               "ADDED a 5|ADDED c 11|"       /* 410 from 12: relist */
                               "DELETED b (synthetic)|SYNC|" /* b vanished in the gap */
                               "MODIFIED a 21");             /* watch from 20 */
    tg_kube_informer_stats_t st;
    tg_kube_informer_stats(inf, &st);
    assert_int_equal(st.lists, 2);
    assert_int_equal(st.watches, 3);
    assert_string_equal(st.resource_version, "21");

    assert_int_equal(ts_nlog(s), 6);
    ts_req_t *l = s->log;
    assert_string_equal(l[0].query, "labelSelector=taugate.io%2Fmanaged%3Dtrue&limit=1");
    assert_string_equal(l[1].query,
                        "labelSelector=taugate.io%2Fmanaged%3Dtrue&limit=1&continue=p2");
    char v[64];
    assert_string_equal(query_value(l[2].query, "resourceVersion", v, sizeof(v)), "10");
    assert_string_equal(query_value(l[2].query, "allowWatchBookmarks", v, sizeof(v)), "true");
    long to = atol(query_value(l[2].query, "timeoutSeconds", v, sizeof(v)));
    assert_true(to >= 5 && to <= 9);
    assert_string_equal(query_value(l[3].query, "resourceVersion", v, sizeof(v)), "12");
    assert_null(strstr(l[4].query, "watch=true"));
    assert_string_equal(query_value(l[5].query, "resourceVersion", v, sizeof(v)), "20");
    tg_kube_informer_free(inf);
    tg_kube_client_free(c);
    ts_stop(s);
}

static void h_informer_hold(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)arg;
    atomic_fetch_add(&g.count, 1);
    if (!strstr(r->query, "watch=true")) {
        ts_respond(c, 200, NULL, NULL,
                   "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":\"3\"},\"items\":[]}");
        return;
    }
    ts_chunked_start(c, 200, "application/json");
    hold_open(c);
}

static void *run_informer(void *arg)
{
    tg_kube_informer_run(arg);
    return NULL;
}

static void test_informer_stop_from_another_thread(void **state)
{
    (void)state;
    reset();
    ts_server_t *s = ts_start(&pki, 0, h_informer_hold, NULL);
    tg_kube_client_t *c = mk_client(s->url, 0);
    rec_t r = {0};
    tg_kube_informer_opts_t o = {.gvr = &tg_kube_gvr_pods, .cb = rec_event, .arg = &r};
    tg_kube_informer_t *inf = tg_kube_informer_new(c, &o);
    pthread_t th;
    pthread_create(&th, NULL, run_informer, inf);
    while (ts_nlog(s) < 2) /* listed, now watching */
        ts_sleep_ms(10);
    alarm(STOP_DEADLINE_S); /* the server holds the watch open: only the stop ends it */
    tg_kube_informer_stop(inf);
    pthread_join(th, NULL);
    alarm(0);
    assert_string_equal(r.log, "SYNC");
    assert_string_equal(s->log[0].path, "/api/v1/pods"); /* all namespaces */
    tg_kube_informer_free(inf);
    tg_kube_client_free(c);
    ts_stop(s);
}

/* ---- logs ------------------------------------------------------------------------------- */

typedef struct {
    char log[1024];
    int n;
    int stop_after;
} lines_t;

static int rec_line(const char *data, size_t len, int flags, void *arg)
{
    lines_t *l = arg;
    char one[256];
    snprintf(one, sizeof(one), "%s[%.*s]%s%s", l->n ? "," : "", (int)len, data,
             flags & TG_KUBE_LOG_PARTIAL ? "+" : "", flags & TG_KUBE_LOG_NO_EOL ? "$" : "");
    strncat(l->log, one, sizeof(l->log) - strlen(l->log) - 1);
    l->n++;
    return l->stop_after && l->n >= l->stop_after;
}

static void h_logs(ts_conn_t *c, const ts_req_t *r, void *arg)
{
    (void)arg;
    atomic_fetch_add(&g.count, 1);
    if (strstr(r->path, "/pods/waiting/")) {
        ts_status(c, 400, "BadRequest",
                  "container \\\"main\\\" in pod \\\"waiting\\\" is waiting to start: "
                  "ContainerCreating",
                  NULL);
        return;
    }
    ts_chunked_start(c, 200, "text/plain");
    ts_chunk_str(c, "line1\nli");
    ts_sleep_ms(10);
    ts_chunk_str(c, "ne2\r\n");
    ts_chunk_str(c, "a-very-long-line-here\n");
    ts_chunk_str(c, "last");
    ts_chunked_end(c);
}

static void test_logs_stream_lines_bounded(void **state)
{
    (void)state;
    reset();
    ts_server_t *s = ts_start(&pki, 0, h_logs, NULL);
    tg_kube_client_t *c = mk_client(s->url, 0);
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    lines_t l = {0};
    tg_kube_logs_opts_t o = {
        .container = "main", .follow = 1, .timestamps = 1, .tail_lines = 10, .max_line_bytes = 8};
    assert_int_equal(tg_kube_logs(c, "ns", "p-0", &o, rec_line, &l, &res), TG_OK);
    assert_string_equal(l.log, "[line1],[line2],[a-very-l]+,[ong-line]+,[-here],[last]$");
    assert_string_equal(s->log[0].path, "/api/v1/namespaces/ns/pods/p-0/log");
    assert_string_equal(s->log[0].query, "container=main&follow=true&timestamps=true&tailLines=10");

    /* the consumer may stop early: not an error */
    lines_t l2 = {.stop_after = 2};
    tg_kube_logs_opts_t o2 = {.since_seconds = 60, .previous = 1, .limit_bytes = 4096};
    assert_int_equal(tg_kube_logs(c, "ns", "p-0", &o2, rec_line, &l2, &res), TG_OK);
    assert_string_equal(l2.log, "[line1],[line2]");
    assert_string_equal(s->log[1].query, "previous=true&sinceSeconds=60&limitBytes=4096");

    /* raw chunks */
    lines_t l3 = {0};
    tg_kube_logs_opts_t o3 = {.raw = 1, .tail_lines = TG_KUBE_LOGS_TAIL_NONE};
    assert_int_equal(tg_kube_logs(c, "ns", "p-0", &o3, rec_line, &l3, &res), TG_OK);
    assert_non_null(strstr(l3.log, "[line1\nli]"));
    assert_string_equal(s->log[2].query, "tailLines=0");

    /* a Status before the stream */
    lines_t l4 = {0};
    assert_int_equal(tg_kube_logs(c, "ns", "waiting", NULL, rec_line, &l4, &res), TG_EINVAL);
    assert_int_equal(res.reason, TG_KUBE_R_BAD_REQUEST);
    assert_non_null(strstr(res.message, "waiting to start"));
    assert_int_equal(l4.n, 0);
    tg_kube_result_clean(&res);
    tg_kube_client_free(c);
    ts_stop(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decoder_splits_bookmarks_and_errors),
        cmocka_unit_test(test_decoder_masked_objects_and_malformed_lines),
        cmocka_unit_test(test_watch_stream_events_and_bookmark),
        cmocka_unit_test(test_watch_oversized_event_is_an_error),
        cmocka_unit_test(test_watch_cancelled_from_another_thread),
        cmocka_unit_test(test_informer_lists_watches_resumes_and_relists),
        cmocka_unit_test(test_informer_stop_from_another_thread),
        cmocka_unit_test(test_logs_stream_lines_bounded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
