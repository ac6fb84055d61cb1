/* Shared handler helpers. */
#include "api/app.h"

#include "api/audit.h"
#include "api/authn.h"
#include "api/health.h"
#include "http/problem.h"
#include "http/server.h"
#include "store/tenancy_cache.h"

typedef struct {
    tg_db_pool_t *pool;
    tg_db_conn_t *conn;
} app_lease_t;

static void app_release(void *arg)
{
    app_lease_t *l = arg;
    tg_db_release(l->pool, l->conn); /* NULL when given back early */
    l->conn = NULL;
}

void tg_app_db_release(tg_req_t *req)
{
    app_lease_t *l = req->db;
    if (!l)
        return;
    app_release(l); /* the arena's cleanup then finds nothing left to do */
    req->db = NULL;
}

tg_db_conn_t *tg_app_db_or_reply(tg_req_t *req)
{
    if (req->db)
        return ((app_lease_t *)req->db)->conn;
    tg_app_t *app = tg_req_app(req);
    tg_db_conn_t *conn = NULL;
    char why[600];
    if (!tg_health_is_started(app->health, why, sizeof(why))) { /* not migrated, or no policy yet */
        tg_problem(req, TG_EUNAVAILABLE, NULL, "the gateway is starting (%s); retry shortly", why);
        tg_resp_header(req, "Retry-After", "1");
        return NULL;
    }
    if (tg_db_checkout(app->pool, &conn) != TG_OK) {
        tg_problem(req, TG_EUNAVAILABLE, NULL, "the database is unavailable; retry shortly");
        tg_resp_header(req, "Retry-After", "1");
        return NULL;
    }
    app_lease_t *l = tg_arena_alloc(req->arena, sizeof(*l));
    l->pool = app->pool;
    l->conn = conn;
    tg_arena_on_free(req->arena, app_release, l);
    req->db = l;
    return conn;
}

/* After every request: its audit row; and a platform admin's change (to
 * workspaces, members, profiles, queues...) voids this replica's tenancy
 * cache at once, before the next request can read it. */
static void app_after(tg_req_t *req, void *arg)
{
    tg_audit_after(req, arg);
    if (req->route && (req->route->flags & TG_ROUTE_ADMIN) && req->method != TG_M_GET &&
        req->status < 400)
        tg_tenancy_cache_invalidate(((tg_app_t *)arg)->tenancy);
}

const tg_server_hooks_t tg_app_hooks = {
    .before = tg_authn_before,
    .after = app_after,
};
