/* Liveness, readiness, metrics and version. */
#include "api/health.h"

#include <stdlib.h>

#include "api/app.h"
#include "core/metrics.h"
#include "core/version.h"
#include "http/problem.h"

static tg_stmt_t stmt_ping = TG_STMT("SELECT 1");

void tg_api_healthz(tg_req_t *req)
{
    static const char body[] = "{\"status\":\"ok\"}";
    tg_resp_bytes(req, 200, "application/json", body, sizeof(body) - 1);
}

void tg_api_readyz(tg_req_t *req)
{
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    if (tg_db_run(conn, &stmt_ping, 0, NULL) != TG_OK) {
        tg_problem(req, TG_EUNAVAILABLE, NULL, "the database does not answer");
        return;
    }
    tg_resp_json(req, 200, json_pack("{s:s, s:s}", "status", "ready", "database", "ok"));
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
