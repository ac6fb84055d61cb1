/* The GPU fleet tables. */
#include "store/nodes.h"

#include "core/run_state.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/events.h"
#include "store/json_rows.h"

/* Timestamps in the row are RFC 3339 or null (the caller checks them). */
static tg_stmt_t stmt_upsert = TG_STMT(
    "WITH old AS (SELECT health FROM nodes WHERE name = $1::jsonb->>'name'),"
    " ins AS (INSERT INTO nodes AS n (name, gpu_class, labels, gpus_capacity, gpus_allocatable,"
    "   gpus_allocated, mig, health, health_since, problems, conditions, ready, unschedulable,"
    "   cordoned_by, cordon_reason, cordoned_at, cordon_source, taints, observed_at, updated_at)"
    "  SELECT j->>'name', j->>'gpu_class', COALESCE(j->'labels', '{}'),"
    "   COALESCE((j->'gpus'->>'capacity')::int, 0), COALESCE((j->'gpus'->>'allocatable')::int, 0),"
    "   COALESCE((j->'gpus'->>'allocated')::int, 0), COALESCE(j->'mig', '{}'), j->>'health',"
    "   COALESCE((j->>'health_since')::timestamptz, now()), COALESCE(j->'problems', '[]'),"
    "   COALESCE(j->'conditions', '[]'), (j->>'ready')::boolean,"
    "   COALESCE((j->>'unschedulable')::boolean, false), j->>'cordoned_by',"
    "   j->>'cordon_reason', (j->>'cordoned_at')::timestamptz,"
    "   COALESCE(j->>'cordon_source', 'automation'), COALESCE(j->'taints', '[]'),"
    "   now(), now()"
    "  FROM (SELECT $1::jsonb AS j) s"
    "  ON CONFLICT (name) DO UPDATE SET gpu_class = EXCLUDED.gpu_class, labels = EXCLUDED.labels,"
    "   gpus_capacity = EXCLUDED.gpus_capacity, gpus_allocatable = EXCLUDED.gpus_allocatable,"
    "   gpus_allocated = EXCLUDED.gpus_allocated, mig = EXCLUDED.mig, health = EXCLUDED.health,"
    "   health_since = CASE WHEN n.health IS DISTINCT FROM EXCLUDED.health"
    "     THEN EXCLUDED.health_since ELSE n.health_since END,"
    "   problems = EXCLUDED.problems, conditions = EXCLUDED.conditions, ready = EXCLUDED.ready,"
    "   unschedulable = EXCLUDED.unschedulable, cordoned_by = EXCLUDED.cordoned_by,"
    "   cordon_reason = EXCLUDED.cordon_reason, cordoned_at = EXCLUDED.cordoned_at,"
    "   cordon_source = EXCLUDED.cordon_source,"
    "   taints = EXCLUDED.taints, observed_at = now(), updated_at = now()"
    "  RETURNING 1)"
    " SELECT COALESCE((SELECT health FROM old), ''), (SELECT count(*) FROM ins)");
static tg_stmt_t stmt_delete = TG_STMT("DELETE FROM nodes WHERE name = $1");
static tg_stmt_t stmt_retain = TG_STMT("WITH d AS (DELETE FROM nodes WHERE name NOT IN"
                                       " (SELECT jsonb_array_elements_text($1::jsonb)) RETURNING 1)"
                                       " SELECT count(*) FROM d");
static tg_stmt_t stmt_event =
    TG_STMT("INSERT INTO node_events (node, kind, health, reason, message, ok, actor, data)"
            " VALUES ($1, $2, $3, $4, $5, $6::boolean, $7, $8::jsonb)");
static tg_stmt_t stmt_run_pods = TG_STMT(
    "SELECT jsonb_build_object('run_id', r.id, 'attempt', p.attempt, 'workspace', r.workspace,"
    " 'run_name', r.name, 'state', r.state, 'namespace', p.namespace, 'pod', p.pod,"
    " 'phase', p.phase)"
    " FROM run_pods p JOIN runs r ON r.id = p.run_id AND r.attempt = p.attempt"
    " WHERE p.node = $1 AND p.phase IN ('Pending', 'Running')"
    " AND r.state NOT IN ('Succeeded', 'Failed', 'Cancelled', 'Recovering')"
    " ORDER BY r.id, p.pod");
static tg_stmt_t stmt_claim =
    TG_STMT("INSERT INTO node_fault_runs (run_id, attempt, node, problem)"
            " VALUES ($1::uuid, $2::int, $3, $4) ON CONFLICT DO NOTHING RETURNING 1");
static tg_stmt_t stmt_recovered =
    TG_STMT("UPDATE node_fault_runs SET recovered = true"
            " WHERE run_id = $1::uuid AND attempt = $2::int AND node = $3 AND NOT recovered"
            " RETURNING 1");
static tg_stmt_t stmt_run_note =
    TG_STMT("UPDATE runs SET message = $2, message_is_note = true, updated_at = now()"
            " WHERE id = $1::uuid");
static tg_stmt_t stmt_fault_for = TG_STMT(
    "SELECT jsonb_build_object('node', x.node, 'problem', x.problem) FROM ("
    " SELECT f.node, f.problem, 0 AS o FROM node_fault_runs f"
    "  WHERE f.run_id = $1::uuid AND f.attempt = $2::int"
    " UNION ALL"
    " SELECT n.name, n.health || ': ' || COALESCE((SELECT string_agg(pr->>'type' || '='"
    "   || COALESCE(pr->>'status', '') || COALESCE(' (' || NULLIF(concat_ws(': ',"
    "   NULLIF(pr->>'reason', ''), NULLIF(pr->>'message', '')), '') || ')', ''), '; ')"
    "   FROM jsonb_array_elements(n.problems) pr), ''), 1"
    "  FROM run_pods p JOIN nodes n ON n.name = p.node"
    "  WHERE p.run_id = $1::uuid AND p.attempt = $2::int AND n.health IN ('Unhealthy', 'NotReady')"
    ") x ORDER BY x.o, x.node LIMIT 1");

/* One node's public view (table alias n). */
#define NODE_JSON                                                                                  \
    "jsonb_build_object('name', n.name, 'gpu_class', n.gpu_class,"                                 \
    " 'gpus', jsonb_build_object('total', n.gpus_capacity, 'allocatable', n.gpus_allocatable,"     \
    "   'allocated', n.gpus_allocated, 'free', CASE WHEN n.health = 'Healthy'"                     \
    "   AND NOT n.unschedulable THEN greatest(n.gpus_allocatable - n.gpus_allocated, 0) ELSE 0"    \
    "   END),"                                                                                     \
    " 'mig', n.mig, 'health', n.health, 'health_since', n.health_since,"                           \
    " 'problems', n.problems, 'conditions', n.conditions,"                                         \
    " 'ready', COALESCE(n.ready, false), 'unschedulable', n.unschedulable,"                        \
    " 'cordon', CASE WHEN n.cordoned_by IS NULL THEN NULL ELSE jsonb_build_object("                \
    "   'by', n.cordoned_by, 'reason', COALESCE(n.cordon_reason, ''), 'at', n.cordoned_at,"        \
    "   'source', CASE WHEN n.cordon_source = 'automation' THEN 'automation' ELSE 'admin' END,"    \
    "   'drain', n.cordon_source = 'drain') END,"                                                  \
    " 'taints', n.taints, 'labels', n.labels,"                                                     \
    " 'flavors', COALESCE((SELECT jsonb_agg(f.name ORDER BY f.name) FROM resource_flavors f"       \
    "   WHERE n.labels @> f.node_labels), '[]'::jsonb),"                                           \
    " 'runs', COALESCE((SELECT jsonb_agg(jsonb_build_object('run_id', r.id, 'name', r.name,"       \
    "   'workspace', r.workspace, 'state', r.state, 'attempt', p.attempt, 'pods', p.pods)"         \
    "   ORDER BY r.created_at, r.id)"                                                              \
    "   FROM (SELECT run_id, attempt, jsonb_agg(pod ORDER BY pod) AS pods FROM run_pods"           \
    "         WHERE node = n.name AND phase IN ('Pending', 'Running')"                             \
    "         GROUP BY run_id, attempt) p"                                                         \
    "   JOIN runs r ON r.id = p.run_id AND r.attempt = p.attempt"                                  \
    "   AND r.state NOT IN ('Succeeded', 'Failed', 'Cancelled')), '[]'::jsonb),"                   \
    " 'observed_at', n.observed_at, 'updated_at', n.updated_at)"

static tg_stmt_t stmt_list =
    TG_STMT("SELECT " NODE_JSON " FROM nodes n"
            " WHERE ($1::text IS NULL OR n.name > $1) AND ($2::text IS NULL OR n.health = $2)"
            " AND ($3::text IS NULL OR n.gpu_class = $3)"
            " AND (NOT $4::boolean OR n.gpus_allocatable > 0 OR n.mig <> '{}'::jsonb)"
            " ORDER BY n.name LIMIT $5::int");
static tg_stmt_t stmt_get = TG_STMT(
    "SELECT " NODE_JSON " || jsonb_build_object('history', COALESCE((SELECT jsonb_agg("
    " jsonb_build_object('id', e.id, 'at', e.at, 'kind', e.kind, 'health', e.health,"
    " 'reason', e.reason, 'message', e.message, 'ok', e.ok, 'actor', e.actor, 'data', e.data)"
    " ORDER BY e.id DESC) FROM (SELECT * FROM node_events WHERE node = n.name"
    " ORDER BY id DESC LIMIT $2::int) e), '[]'::jsonb))"
    " FROM nodes n WHERE n.name = $1");

/* Aggregates over a group of rows of `n` (see stmt_fleet). */
#define FLEET_AGG                                                                                  \
    "jsonb_build_object('nodes', count(*),"                                                        \
    " 'healthy_nodes', count(*) FILTER (WHERE n.health = 'Healthy'),"                              \
    " 'unhealthy_nodes', count(*) FILTER (WHERE n.health <> 'Healthy'),"                           \
    " 'cordoned_nodes', count(*) FILTER (WHERE n.unschedulable),"                                  \
    " 'gpus', jsonb_build_object('total', COALESCE(sum(n.cap), 0),"                                \
    "   'allocatable', COALESCE(sum(n.alloc), 0), 'allocated', COALESCE(sum(n.used), 0),"          \
    "   'free', COALESCE(sum(CASE WHEN n.usable THEN greatest(n.alloc - n.used, 0) ELSE 0 END),"   \
    "   0),"                                                                                       \
    "   'healthy', COALESCE(sum(n.alloc) FILTER (WHERE n.health = 'Healthy'), 0),"                 \
    "   'unhealthy', COALESCE(sum(n.alloc) FILTER (WHERE n.health <> 'Healthy'), 0)),"             \
    " 'utilization', CASE WHEN COALESCE(sum(n.alloc), 0) > 0"                                      \
    "   THEN round(sum(n.used)::numeric / sum(n.alloc), 4) ELSE 0 END,"                            \
    " 'running_runs', (SELECT count(DISTINCT p.run_id) FROM run_pods p"                            \
    "   WHERE p.phase = 'Running' AND p.node = ANY (array_agg(n.name))))"

static tg_stmt_t stmt_fleet = TG_STMT(
    "WITH n AS (SELECT name, gpu_class, labels, gpus_capacity AS cap, gpus_allocatable AS alloc,"
    "  gpus_allocated AS used, mig, health, unschedulable, observed_at,"
    "  (health = 'Healthy' AND NOT unschedulable) AS usable FROM nodes)"
    " SELECT jsonb_build_object("
    "  'totals', (SELECT " FLEET_AGG " FROM n),"
    "  'classes', COALESCE((SELECT jsonb_agg(c ORDER BY c->>'class') FROM"
    "   (SELECT jsonb_build_object('class', n.gpu_class) || " FLEET_AGG " AS c"
    "    FROM n WHERE n.gpu_class IS NOT NULL GROUP BY n.gpu_class) x), '[]'::jsonb),"
    "  'flavors', COALESCE((SELECT jsonb_agg(c ORDER BY c->>'flavor') FROM"
    "   (SELECT jsonb_build_object('flavor', f.name, 'node_labels', f.node_labels) || " FLEET_AGG
    "    AS c FROM resource_flavors f JOIN n ON n.labels @> f.node_labels"
    "    GROUP BY f.name, f.node_labels) x), '[]'::jsonb),"
    "  'mig', COALESCE((SELECT jsonb_agg(jsonb_build_object('resource', k, 'capacity', c,"
    "   'allocatable', a, 'allocated', u) ORDER BY k) FROM (SELECT m.key AS k,"
    "   sum(COALESCE((m.value->>'capacity')::int, 0)) AS c,"
    "   sum(COALESCE((m.value->>'allocatable')::int, 0)) AS a,"
    "   sum(COALESCE((m.value->>'allocated')::int, 0)) AS u"
    "   FROM n, jsonb_each(n.mig) m GROUP BY m.key) x), '[]'::jsonb),"
    "  'observed_at', (SELECT max(observed_at) FROM n))");

tg_rc_e tg_store_node_upsert(tg_db_conn_t *conn, const json_t *row, char prev_health[16])
{
    char *text = json_dumps(row, JSON_COMPACT);
    if (!text)
        return TG_EINVAL;
    const char *vals[] = {text};
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_upsert, 1, vals, &rc);
    free(text);
    if (!r)
        return rc;
    if (prev_health)
        snprintf(prev_health, 16, "%s", PQntuples(r) ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_store_node_delete(tg_db_conn_t *conn, const char *name)
{
    const char *vals[] = {name};
    return tg_db_run(conn, &stmt_delete, 1, vals);
}

tg_rc_e tg_store_nodes_retain(tg_db_conn_t *conn, const json_t *names, int *removed)
{
    char *text = json_dumps(names, JSON_COMPACT);
    if (!text)
        return TG_EINVAL;
    const char *vals[] = {text};
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_retain, 1, vals, &rc);
    free(text);
    if (!r)
        return rc;
    if (removed)
        *removed = PQntuples(r) ? atoi(PQgetvalue(r, 0, 0)) : 0;
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_store_node_event(tg_db_conn_t *conn, const tg_node_event_t *e)
{
    char *data = e->data ? json_dumps(e->data, JSON_COMPACT) : NULL;
    const char *vals[] = {e->node,    e->kind,           e->health, e->reason,
                          e->message, e->ok ? "t" : "f", e->actor,  data ? data : "{}"};
    tg_rc_e rc = tg_db_run(conn, &stmt_event, 8, vals);
    free(data);
    return rc;
}

tg_rc_e tg_store_node_run_pods(tg_db_conn_t *conn, const char *node, json_t **out)
{
    const char *vals[] = {node};
    return tg_db_json_all(conn, &stmt_run_pods, 1, vals, out);
}

/* Run a statement with RETURNING 1; *hit tells whether a row came back. */
static tg_rc_e nodes_hit(tg_db_conn_t *conn, tg_stmt_t *stmt, int n, const char *const *vals,
                         int *hit)
{
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, stmt, n, vals, &rc);
    if (!r)
        return rc;
    *hit = PQntuples(r) > 0;
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_store_node_fault_claim(tg_db_conn_t *conn, const char *run_id, int attempt,
                                  const char *node, const char *problem, int *claimed)
{
    char a[16];
    snprintf(a, sizeof(a), "%d", attempt);
    const char *vals[] = {run_id, a, node, problem ? problem : ""};
    return nodes_hit(conn, &stmt_claim, 4, vals, claimed);
}

tg_rc_e tg_store_node_fault_recovered(tg_db_conn_t *conn, const char *run_id, int attempt,
                                      const char *node, int *first)
{
    char a[16];
    snprintf(a, sizeof(a), "%d", attempt);
    const char *vals[] = {run_id, a, node};
    return nodes_hit(conn, &stmt_recovered, 3, vals, first);
}

tg_rc_e tg_store_node_fault_note(tg_db_conn_t *conn, const char *run_id, int attempt,
                                 const char *message, const json_t *data, int set_message,
                                 int *applied)
{
    *applied = 0;
    char state[32];
    int locked_attempt = 0;
    tg_rc_e rc = tg_db_begin(conn);
    if (rc == TG_OK)
        rc = tg_store_run_lock(conn, run_id, state, &locked_attempt);
    if (rc == TG_ENOTFOUND) /* a run deleted meanwhile: nothing to note */
        rc = TG_OK;
    else if (rc == TG_OK && locked_attempt == attempt && !tg_run_state_ended(state)) {
        tg_event_t ev = {.state = NULL,
                         .reason = "NodeFault",
                         .message = message,
                         .source = "node",
                         .data = data};
        rc = tg_store_event_append_locked(conn, run_id, &ev);
        const char *mv[] = {run_id, message};
        if (rc == TG_OK && set_message)
            rc = tg_db_run(conn, &stmt_run_note, 2, mv);
        if (rc == TG_OK)
            *applied = 1;
    }
    if (rc == TG_OK)
        rc = tg_db_commit(conn);
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        *applied = 0;
    }
    return rc;
}

tg_rc_e tg_store_node_fault_for_attempt(tg_db_conn_t *conn, const char *run_id, int attempt,
                                        json_t **out)
{
    char a[16];
    snprintf(a, sizeof(a), "%d", attempt);
    const char *vals[] = {run_id, a};
    *out = NULL;
    tg_rc_e rc = tg_db_json_one(conn, &stmt_fault_for, 2, vals, out);
    return rc == TG_ENOTFOUND ? TG_OK : rc;
}

tg_rc_e tg_store_nodes_list(tg_db_conn_t *conn, const tg_node_query_t *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", q->limit);
    const char *vals[] = {q->after, q->health, q->gpu_class, q->gpu_only ? "t" : "f", lim};
    return tg_db_json_all(conn, &stmt_list, 5, vals, out);
}

tg_rc_e tg_store_node_get(tg_db_conn_t *conn, const char *name, int history, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", history);
    const char *vals[] = {name, lim};
    return tg_db_json_one(conn, &stmt_get, 2, vals, out);
}

tg_rc_e tg_store_fleet(tg_db_conn_t *conn, json_t **out)
{
    return tg_db_json_one(conn, &stmt_fleet, 0, NULL, out);
}
