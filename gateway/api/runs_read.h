/* Reading runs: lists, one run, its events. */
#ifndef TG_API_RUNS_READ_H
#define TG_API_RUNS_READ_H

#include "http/request.h"

void tg_api_runs_list(tg_req_t *req);
void tg_api_run_get(tg_req_t *req);
void tg_api_run_events(tg_req_t *req);

#endif
