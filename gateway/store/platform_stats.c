/* Platform aggregates for /metrics. */
#include "store/platform_stats.h"

#include "store/json_rows.h"

static tg_stmt_t stmt_stats = TG_STMT(
    "WITH a AS (SELECT COALESCE(NULLIF(a.queue_info->>'cluster_queue', ''), lq.cluster_queue, '')"
    "   AS cq, a.admitted_at, a.created_at, a.reason"
    "  FROM run_attempts a JOIN runs r ON r.id = a.run_id"
    "  LEFT JOIN local_queues lq ON lq.workspace = r.workspace"
    "   AND lq.name = COALESCE(a.queue_info->>'local_queue', r.resolved->'policy'->>'queue'))"
    " SELECT jsonb_build_object("
    "  'workspaces', (SELECT jsonb_agg(name ORDER BY name) FROM workspaces),"
    "  'cluster_queues', (SELECT jsonb_agg(name ORDER BY name) FROM cluster_queues),"
    "  'runs', (SELECT jsonb_agg(jsonb_build_array(x.workspace, x.state, x.n)) FROM"
    "   (SELECT workspace, state, count(*) AS n FROM runs GROUP BY 1, 2) x),"
    "  'outbox', (SELECT jsonb_agg(jsonb_build_array(x.action, x.n, x.due, x.failing, x.age))"
    "   FROM (SELECT k.action, count(o.id) AS n,"
    "    count(o.id) FILTER (WHERE o.not_before <= now()) AS due,"
    "    count(o.id) FILTER (WHERE o.tries > 0) AS failing,"
    "    COALESCE(extract(epoch FROM now() - min(o.not_before)"
    "     FILTER (WHERE o.not_before <= now())), 0)::float8 AS age"
    "    FROM unnest(ARRAY['create', 'retry', 'delete']) k(action)"
    "    LEFT JOIN outbox o ON o.action = k.action GROUP BY k.action) x),"
    "  'waits', (SELECT jsonb_agg(jsonb_build_array(x.cq, x.b, x.n, x.s)) FROM"
    "   (SELECT cq, width_bucket(extract(epoch FROM admitted_at - created_at)::float8,"
    "     $1::float8[]) AS b, count(*) AS n,"
    "     sum(greatest(extract(epoch FROM admitted_at - created_at), 0))::float8 AS s"
    "    FROM a WHERE admitted_at IS NOT NULL AND cq <> '' GROUP BY 1, 2) x),"
    "  'preemptions', (SELECT jsonb_agg(jsonb_build_array(x.cq, x.n)) FROM"
    "   (SELECT cq, count(*) AS n FROM a WHERE reason = 'Preempted' AND cq <> ''"
    "    GROUP BY cq) x),"
    "  'retries', (SELECT jsonb_agg(jsonb_build_array(x.reason, x.n)) FROM"
    "   (SELECT COALESCE(retry_reason, 'unknown') AS reason, count(*) AS n FROM run_attempts"
    "    WHERE attempt > 1 GROUP BY 1) x),"
    "  'nodes', (SELECT jsonb_agg(jsonb_build_array(x.gpu_class, x.health, x.unschedulable, x.n,"
    "   x.cap, x.alloc, x.used)) FROM (SELECT gpu_class, health, unschedulable, count(*) AS n,"
    "   sum(gpus_capacity) AS cap, sum(gpus_allocatable) AS alloc, sum(gpus_allocated) AS used"
    "   FROM nodes GROUP BY 1, 2, 3) x),"
    "  'node_events', (SELECT jsonb_agg(jsonb_build_array(x.kind, x.ok, x.health, x.n)) FROM"
    "   (SELECT kind, ok, COALESCE(health, '') AS health, count(*) AS n FROM node_events"
    "    GROUP BY 1, 2, 3) x),"
    "  'node_fault_runs', (SELECT count(*) FROM node_fault_runs),"
    /* runs ended and not sealed yet: the sealer's queue (a row per run,
     * removed in the transaction that seals it) */
    "  'evidence', (SELECT jsonb_build_array(count(*),"
    "   COALESCE(extract(epoch FROM now() - min(queued_at)), 0)::float8) FROM evidence_queue))");

tg_rc_e tg_store_platform_stats(tg_db_conn_t *conn, const char *bounds, json_t **out)
{
    const char *vals[] = {bounds};
    return tg_db_json_one(conn, &stmt_stats, 1, vals, out);
}
