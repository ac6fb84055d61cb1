/* GET /v1/admin/nodes, /v1/admin/nodes/{name}, /v1/admin/fleet. */
#include "api/fleet.h"

#include <string.h>

#include "api/app.h"
#include "api/paging.h"
#include "http/problem.h"
#include "store/nodes.h"

#define FLEET_HISTORY 50

static void fleet_query_error(tg_req_t *req, const char *param, const char *msg)
{
    json_t *errors = json_array();
    json_array_append_new(errors, tg_problem_error(param, 0, 0, msg));
    tg_problem(req, TG_EINVAL, errors, "invalid query parameter %s", param);
}

void tg_api_admin_nodes(tg_req_t *req)
{
    static const char *const healths[] = {"Healthy", "Unhealthy", "NotReady", "Unknown", NULL};
    tg_page_t page;
    if (tg_page_or_reply(req, &page) != 0)
        return;
    tg_node_query_t q = {.after = page.after,
                         .health = tg_req_query(req, "health"),
                         .gpu_class = tg_req_query(req, "gpu_class"),
                         .limit = page.limit + 1};
    if (q.health) {
        int ok = 0;
        for (const char *const *h = healths; *h; h++)
            ok |= strcmp(*h, q.health) == 0;
        if (!ok) {
            fleet_query_error(req, "health", "must be Healthy, Unhealthy, NotReady or Unknown");
            return;
        }
    }
    const char *gpu = tg_req_query(req, "gpu");
    if (gpu && strcmp(gpu, "true") && strcmp(gpu, "false")) {
        fleet_query_error(req, "gpu", "must be true or false");
        return;
    }
    q.gpu_only = gpu && !strcmp(gpu, "true");
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *items = NULL;
    tg_rc_e rc = tg_store_nodes_list(conn, &q, &items);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the nodes could not be listed");
        return;
    }
    tg_page_reply(req, &page, items, "name");
}

void tg_api_admin_node(tg_req_t *req)
{
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    const char *name = tg_req_param(req, "name");
    json_t *node = NULL;
    tg_rc_e rc = tg_store_node_get(conn, name, FLEET_HISTORY, &node);
    if (rc == TG_ENOTFOUND)
        tg_problem(req, rc, NULL,
                   "node %s is not known (it is not in the cluster, or the "
                   "nodes loop has not seen it yet)",
                   name);
    else if (rc != TG_OK)
        tg_problem(req, rc, NULL, "the node could not be read");
    else
        tg_resp_json(req, 200, node);
}

void tg_api_admin_fleet(tg_req_t *req)
{
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return;
    json_t *fleet = NULL;
    tg_rc_e rc = tg_store_fleet(conn, &fleet);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the fleet could not be read");
        return;
    }
    tg_resp_json(req, 200, fleet);
}
