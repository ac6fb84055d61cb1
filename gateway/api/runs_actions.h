/* Acting on a run: cancel. */
#ifndef TG_API_RUNS_ACTIONS_H
#define TG_API_RUNS_ACTIONS_H

#include "http/request.h"

/* POST /v1/runs/{id}:cancel and DELETE /v1/runs/{id} */
void tg_api_run_cancel(tg_req_t *req);

#endif
