/* Submitting runs: the dry run, one run, a batch. */
#ifndef TG_API_RUNS_SUBMIT_H
#define TG_API_RUNS_SUBMIT_H

#include "http/request.h"

/* POST /v1/workspaces/{ws}/runs:validate */
void tg_api_runs_validate(tg_req_t *req);
/* POST /v1/workspaces/{ws}/runs */
void tg_api_runs_submit(tg_req_t *req);
/* POST /v1/workspaces/{ws}/runs:batch */
void tg_api_runs_batch(tg_req_t *req);

#endif
