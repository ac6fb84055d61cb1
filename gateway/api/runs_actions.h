/* Acting on a run: cancel, resume. */
#ifndef TG_API_RUNS_ACTIONS_H
#define TG_API_RUNS_ACTIONS_H

#include "http/request.h"

/* POST /v1/runs/{id}:cancel and DELETE /v1/runs/{id} */
void tg_api_run_cancel(tg_req_t *req);

/* POST /v1/runs/{id}:resume — a new attempt of a Failed run, by hand;
 * {"force": true} after an OOMKilled attempt. */
void tg_api_run_resume(tg_req_t *req);

#endif
