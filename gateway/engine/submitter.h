/* The submitter: carries outbox rows to the Kubernetes API.
 *
 * "create" makes a run attempt's objects (Job or RayJob, and a headless
 * Service for multi-node torchrun). Names derive from the run id and
 * attempt, so an object that already exists and carries our run-id label is
 * success: a crash between create and commit never duplicates a run.
 * "delete" removes them with background propagation. Transient failures
 * (429, 5xx, network) are retried with backoff through the row's not_before;
 * a rejection by the API server fails the run with the server's message. */
#ifndef TG_ENGINE_SUBMITTER_H
#define TG_ENGINE_SUBMITTER_H

#include "kube/client.h"
#include "store/pool.h"

/* Process at most one due outbox row. Returns 1 when one was processed,
 * 0 when none was due, -1 when the database could not be reached. */
int tg_submitter_step(tg_db_pool_t *pool, tg_kube_client_t *kube);

#endif
