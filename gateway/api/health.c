/* Liveness, readiness, metrics and version (see health.h). */
#include "api/health.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "core/metrics.h"
#include "core/version.h"
#include "http/problem.h"
#include "kube/client.h"

static tg_stmt_t stmt_ping = TG_STMT("SELECT 1");

struct tg_health_s {
    pthread_mutex_t lock;
    atomic_int started;
    char component[32]; /* what start-up waits for */
    char why[512];
};

tg_health_t *tg_health_new(void)
{
    tg_health_t *h = tg_xcalloc(1, sizeof(*h));
    pthread_mutex_init(&h->lock, NULL);
    snprintf(h->component, sizeof(h->component), "migrations");
    snprintf(h->why, sizeof(h->why), "the database has not been reached yet");
    return h;
}

void tg_health_free(tg_health_t *h)
{
    if (!h)
        return;
    pthread_mutex_destroy(&h->lock);
    free(h);
}

void tg_health_starting(tg_health_t *h, const char *component, const char *why)
{
    pthread_mutex_lock(&h->lock);
    snprintf(h->component, sizeof(h->component), "%s", component);
    snprintf(h->why, sizeof(h->why), "%s", why);
    pthread_mutex_unlock(&h->lock);
}

void tg_health_started(tg_health_t *h)
{
    atomic_store(&h->started, 1);
}

int tg_health_is_started(tg_health_t *h, char *why, size_t whylen)
{
    if (atomic_load(&h->started))
        return 1;
    pthread_mutex_lock(&h->lock);
    snprintf(why, whylen, "%s: %s", h->component, h->why);
    pthread_mutex_unlock(&h->lock);
    return 0;
}

void tg_api_healthz(tg_req_t *req)
{
    static const char body[] = "{\"status\":\"ok\"}";
    tg_resp_bytes(req, 200, "application/json", body, sizeof(body) - 1);
}

static const char *health_cluster(tg_app_t *app)
{
    if (!app->kube)
        return "not configured";
    switch (tg_kube_client_reachable(app->kube, NULL, 0)) {
    case 1:
        return "reachable";
    case 0:
        return "unreachable";
    default:
        return "unknown";
    }
}

void tg_api_readyz(tg_req_t *req)
{
    tg_app_t *app = tg_req_app(req);
    json_t *errors = json_array();
    /* the database: asked directly, so the answer is now, not start-up's */
    tg_db_conn_t *conn = NULL;
    int db_ok =
        tg_db_checkout(app->pool, &conn) == TG_OK && tg_db_run(conn, &stmt_ping, 0, NULL) == TG_OK;
    tg_db_release(app->pool, conn);
    if (!db_ok)
        json_array_append_new(errors,
                              tg_problem_error("database", 0, 0, "the database does not answer"));
    char why[600];
    tg_health_t *health = app->health;
    int started = tg_health_is_started(health, why, sizeof(why));
    const char *migrations = "current", *policy = "loaded";
    if (!started) {
        pthread_mutex_lock(&health->lock);
        int at_policy = !strcmp(health->component, "policy");
        json_array_append_new(errors, tg_problem_error(health->component, 0, 0, health->why));
        pthread_mutex_unlock(&health->lock);
        migrations = at_policy ? "current" : "pending";
        policy = "not loaded";
    }
    char cluster_why[256] = "";
    const char *cluster = health_cluster(app);
    if (app->kube && !strcmp(cluster, "unreachable"))
        tg_kube_client_reachable(app->kube, cluster_why, sizeof(cluster_why));
    if (json_array_size(errors) == 0) {
        json_decref(errors);
        json_t *ok = json_pack("{s:s, s:s, s:s, s:s, s:s}", "status", "ready", "database", "ok",
                               "migrations", migrations, "policy", policy, "cluster", cluster);
        if (*cluster_why)
            json_object_set_new(ok, "cluster_error", json_string(cluster_why));
        tg_resp_json(req, 200, ok);
        return;
    }
    tg_problem_typed(req, TG_EUNAVAILABLE, "not-ready", errors,
                     "not ready: database %s, migrations %s, policy %s; cluster %s%s%s",
                     db_ok ? "ok" : "unreachable", migrations, policy, cluster,
                     *cluster_why ? ": " : "", cluster_why);
    tg_resp_header(req, "Retry-After", "1");
}

void tg_api_metrics(tg_req_t *req)
{
    tg_buf_t out;
    tg_buf_init(&out, 16 * 1024 * 1024);
    if (tg_metrics_render(&out) != TG_OK) {
        tg_buf_clean(&out);
        tg_problem(req, TG_EINTERNAL, NULL, "metrics exceed 16 MiB");
        return;
    }
    tg_resp_bytes(req, 200, "text/plain; version=0.0.4; charset=utf-8", out.data, out.len);
    tg_buf_clean(&out);
}

void tg_api_version(tg_req_t *req)
{
    tg_resp_json(
        req, 200,
        json_pack("{s:s, s:s, s:s}", "name", "taugate", "version", tg_version(), "api", "v1"));
}
