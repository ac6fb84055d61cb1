/* Reading runs: one run, its events (lists: api/runs_list.h). */
#ifndef TG_API_RUNS_READ_H
#define TG_API_RUNS_READ_H

#include <jansson.h>

#include "api/authz.h"
#include "http/request.h"
#include "store/pool.h"

/* The run named by the {id} path parameter when the caller holds at least
 * `need` in its workspace (new reference; *role gets the caller's role when
 * not NULL). Otherwise answers 404 (absent, or another tenant's), 403 or 503
 * and returns NULL. */
json_t *tg_api_run_load_or_reply(tg_req_t *req, tg_role_e need, tg_role_e *role);
/* For reading what belongs to the {id} run (its events, metrics, ...): the
 * database connection once the caller may view the run; otherwise answers
 * as tg_api_run_load_or_reply does and returns NULL. */
tg_db_conn_t *tg_api_run_readable_or_reply(tg_req_t *req);

void tg_api_run_get(tg_req_t *req);
void tg_api_run_events(tg_req_t *req);

#endif
