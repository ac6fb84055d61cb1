/* GET /v1/workspaces/{ws}/run-changes: a workspace's run changes as
 * Server-Sent Events, resumable with Last-Event-ID on any replica.
 *
 * Events (openapi.yaml, watchRunChanges): `ready` (the position the stream
 * starts from), one `run` per change from the change log read in id order
 * up to the horizon (store/run_changes.h: no change is skipped or sent
 * twice across a cut), `reset` when a resume point was pruned, and `end`
 * (shutdown, revoked, overflow, or complete with follow=false). Streams run
 * on an SSE hub (api/sse_hub.h): no thread per client, access re-checked
 * every 5 s, at most 64 KiB buffered per client.
 *
 * Lifecycle (main.c): start after the pool and the tenancy cache; stop
 * before the HTTP server drains; free after it is freed. */
#ifndef TG_API_RUN_CHANGES_H
#define TG_API_RUN_CHANGES_H

#include "http/request.h"
#include "store/pool.h"

struct tg_tenancy_cache_s;

/* RET: 0, or -1 when the notifier cannot start (the route then answers 503). */
int tg_run_changes_start(tg_db_pool_t *pool, struct tg_tenancy_cache_s *tenancy);
void tg_run_changes_stop(void);
void tg_run_changes_free(void);

void tg_api_run_changes(tg_req_t *req);

#endif
