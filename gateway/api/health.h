/* Liveness, readiness, metrics and version. */
#ifndef TG_API_HEALTH_H
#define TG_API_HEALTH_H

#include "http/request.h"

void tg_api_healthz(tg_req_t *req);
void tg_api_readyz(tg_req_t *req);
void tg_api_metrics(tg_req_t *req);
void tg_api_version(tg_req_t *req);

#endif
