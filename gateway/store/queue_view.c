/* Pending runs of a workspace, with their queues. */
#include "store/queue_view.h"

#include <stdio.h>

#include "store/json_rows.h"

static tg_stmt_t stmt_view = TG_STMT(
    "SELECT jsonb_build_object('workspace', w.name, 'namespace', w.namespace,"
    " 'local_queues', COALESCE((SELECT jsonb_agg(jsonb_build_object('name', lq.name,"
    "   'cluster_queue', lq.cluster_queue) ORDER BY lq.name)"
    "   FROM local_queues lq WHERE lq.workspace = w.name), '[]'::jsonb),"
    " 'cluster_queues', COALESCE((SELECT jsonb_object_agg(cq.name, to_jsonb(cq))"
    "   FROM cluster_queues cq WHERE cq.name IN"
    "   (SELECT cluster_queue FROM local_queues WHERE workspace = w.name)), '{}'::jsonb),"
    " 'runs', COALESCE((SELECT jsonb_agg(to_jsonb(x) ORDER BY x.created_at, x.id) FROM ("
    "   SELECT r.id, r.name, r.owner, r.state, r.reason, r.message, r.created_at, r.attempt,"
    "    COALESCE(a.queue_info, '{}'::jsonb) AS queue_info, a.namespace, a.object_name,"
    "    a.object_kind, a.created_at AS attempt_created_at,"
    "    COALESCE(a.queue_info->>'local_queue', r.resolved->'policy'->>'queue') AS local_queue,"
    "    COALESCE(NULLIF(a.queue_info->>'cluster_queue', ''), (SELECT lq.cluster_queue"
    "     FROM local_queues lq WHERE lq.workspace = r.workspace AND lq.name ="
    "     COALESCE(a.queue_info->>'local_queue', r.resolved->'policy'->>'queue')))"
    "     AS cluster_queue,"
    "    (SELECT min(o.not_before) FROM outbox o WHERE o.run_id = r.id"
    "     AND o.action IN ('create', 'retry')) AS submit_after"
    "   FROM runs r LEFT JOIN run_attempts a ON a.run_id = r.id AND a.attempt = r.attempt"
    "   WHERE r.workspace = w.name AND r.state IN ('Accepted', 'Queued', 'Recovering')"
    "   ORDER BY r.created_at, r.id LIMIT $2::int) x), '[]'::jsonb))"
    " FROM workspaces w WHERE w.name = $1");

tg_rc_e tg_store_queue_view(tg_db_conn_t *conn, const char *workspace, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", TG_QUEUE_VIEW_MAX_RUNS);
    const char *vals[] = {workspace, lim};
    return tg_db_json_one(conn, &stmt_view, 2, vals, out);
}
