/* What GET /v1/workspaces/{ws}/queue reads from PostgreSQL (api/queue_view.c).
 *
 * jansson: *out is a new reference. Thread-safety: as the connection. */
#ifndef TG_STORE_QUEUE_VIEW_H
#define TG_STORE_QUEUE_VIEW_H

#include <jansson.h>

#include "store/pool.h"

#define TG_QUEUE_VIEW_MAX_RUNS 500

/* The workspace's pending runs and queues:
 *   {workspace, namespace,
 *    local_queues: [{name, cluster_queue}],
 *    cluster_queues: {name: the to_jsonb of its cluster_queues row},
 *    runs: [{id, name, owner, state, reason, message, created_at, attempt,
 *            queue_info, namespace, object_name, object_kind,
 *            attempt_created_at, local_queue, cluster_queue, submit_after}]}
 * Pending means Accepted, Queued or Recovering; oldest first, at most
 * TG_QUEUE_VIEW_MAX_RUNS. TG_ENOTFOUND when the workspace does not exist. */
tg_rc_e tg_store_queue_view(tg_db_conn_t *conn, const char *workspace, json_t **out) TG_MUSTCHECK;

#endif
