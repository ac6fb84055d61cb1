/* A workspace's runs as lists and numbers: GET /v1/workspaces/{ws}/runs
 * (filters, a stable order chosen with `sort`, updated_since for catching
 * up after a change stream was cut) and GET /v1/workspaces/{ws}/run-counts
 * (the same filters; totals by state, engine and owner). */
#ifndef TG_API_RUNS_LIST_H
#define TG_API_RUNS_LIST_H

#include "http/request.h"

void tg_api_runs_list(tg_req_t *req);
void tg_api_run_counts(tg_req_t *req);

#endif
