/* GET /v1/workspaces/{ws}/run-changes: a workspace's run changes as
 * Server-Sent Events, resumable with Last-Event-ID on any replica.
 *
 * Events (openapi.yaml, watchRunChanges): `ready` (the position the stream
 * starts from), one `run` per change from the change log read in id order
 * up to the horizon (store/run_changes.h: no change is skipped or sent
 * twice across a cut), `reset` when a resume point was pruned, and `end`
 * (shutdown, revoked, overflow, or complete with follow=false). Streams run
 * on the process's stream hub (api/sse_hub.h, source "run_changes"): no
 * thread per client, access re-checked every 5 s, at most 64 KiB buffered
 * per client; its notifier also prunes changes older than 7 days.
 *
 * Lifecycle (main.c): start once the hub runs (tg_app_t.changes); free after
 * tg_sse_hub_free. */
#ifndef TG_API_RUN_CHANGES_H
#define TG_API_RUN_CHANGES_H

#include "api/sse_hub.h"
#include "http/request.h"

typedef struct tg_run_changes_s tg_run_changes_t;

/* Add the change streams to `hub`. NULL when hub is NULL or full (the
 * route then answers 503). */
tg_run_changes_t *tg_run_changes_start(tg_sse_hub_t *hub);
/* NULL-safe; after tg_sse_hub_free. */
void tg_run_changes_free(tg_run_changes_t *c);

void tg_api_run_changes(tg_req_t *req);

#endif
