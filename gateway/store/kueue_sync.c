/* Desired Kueue state, drift rows and the reconciler's last step. */
#include "store/kueue_sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/json_rows.h"

static tg_stmt_t stmt_desired = TG_STMT(
    "SELECT jsonb_build_object("
    " 'flavors', COALESCE((SELECT jsonb_agg(to_jsonb(f) ORDER BY f.name) FROM"
    "   (SELECT name, node_labels, node_taints, tolerations FROM resource_flavors) f), '[]'),"
    " 'cluster_queues', COALESCE((SELECT jsonb_agg(to_jsonb(c) ORDER BY c.name) FROM"
    "   (SELECT name, cohort, queueing_strategy, preemption, resource_groups"
    "    FROM cluster_queues) c), '[]'),"
    " 'priority_classes', COALESCE((SELECT jsonb_agg(to_jsonb(p) ORDER BY p.name) FROM"
    "   (SELECT name, value, description FROM priority_classes) p), '[]'),"
    " 'local_queues', COALESCE((SELECT jsonb_agg(to_jsonb(l) ORDER BY l.namespace, l.name) FROM"
    "   (SELECT q.workspace, q.name, q.cluster_queue, w.namespace"
    "    FROM local_queues q JOIN workspaces w ON w.name = q.workspace) l), '[]'),"
    " 'workspaces', COALESCE((SELECT jsonb_agg(to_jsonb(w) ORDER BY w.name) FROM"
    "   (SELECT name, namespace FROM workspaces) w), '[]'))");

static tg_stmt_t stmt_drift_open =
    TG_STMT("INSERT INTO kueue_drift (kind, namespace, name, problem, summary, live, desired)"
            " VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb)"
            " ON CONFLICT (kind, namespace, name, problem) WHERE resolved_at IS NULL DO UPDATE SET"
            " last_seen_at = now(), seen_count = kueue_drift.seen_count + 1,"
            " summary = EXCLUDED.summary, live = EXCLUDED.live, desired = EXCLUDED.desired"
            " RETURNING (xmax = 0)::int");

static tg_stmt_t stmt_drift_resolve =
    TG_STMT("UPDATE kueue_drift SET resolved_at = now(), resolution = $5"
            " WHERE resolved_at IS NULL AND kind = $1 AND namespace = $2 AND name = $3"
            " AND ($4::text IS NULL OR problem = $4)");

static tg_stmt_t stmt_drift_sweep = TG_STMT(
    "UPDATE kueue_drift d SET resolved_at = now(), resolution = 'gone'"
    " WHERE resolved_at IS NULL AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements($1::jsonb) k"
    " WHERE k->>0 = d.kind AND k->>1 = d.namespace AND k->>2 = d.name)");

static tg_stmt_t stmt_drift_list = TG_STMT(
    "SELECT to_jsonb(t) FROM (SELECT id, kind, NULLIF(namespace, '') AS namespace, name, problem,"
    " summary, live, desired, detected_at, last_seen_at, seen_count, resolved_at, resolution"
    " FROM kueue_drift"
    " WHERE ($1::text IS NULL OR $1 = 'all' OR ($1 = 'open' AND resolved_at IS NULL)"
    "        OR ($1 = 'resolved' AND resolved_at IS NOT NULL))"
    " AND ($2::text IS NULL OR kind = $2) AND ($3::text IS NULL OR name = $3)"
    " AND ($4::bigint = 0 OR id < $4::bigint)"
    " ORDER BY id DESC LIMIT $5::int) t");

static tg_stmt_t stmt_sync_record =
    TG_STMT("INSERT INTO kueue_sync (id, holder, step_at, report) VALUES (1, $1, now(), $2::jsonb)"
            " ON CONFLICT (id) DO UPDATE SET holder = EXCLUDED.holder, step_at = now(),"
            " report = EXCLUDED.report");

static tg_stmt_t stmt_sync_get = TG_STMT(
    "SELECT to_jsonb(s) FROM (SELECT holder, step_at, report FROM kueue_sync WHERE id = 1) s");

tg_rc_e tg_store_kueue_desired(tg_db_conn_t *conn, json_t **out)
{
    return tg_db_json_one(conn, &stmt_desired, 0, NULL, out);
}

tg_rc_e tg_store_drift_open(tg_db_conn_t *conn, const tg_drift_t *d, int *is_new)
{
    char *live = d->live ? json_dumps(d->live, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    char *want = d->desired ? json_dumps(d->desired, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    const char *vals[] = {d->kind, d->ns ? d->ns : "", d->name, d->problem, d->summary, live, want};
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_drift_open, 7, vals, &rc);
    if (r) {
        if (is_new)
            *is_new = PQntuples(r) > 0 && strcmp(PQgetvalue(r, 0, 0), "1") == 0;
        PQclear(r);
    }
    free(live);
    free(want);
    return rc;
}

tg_rc_e tg_store_drift_resolve(tg_db_conn_t *conn, const char *kind, const char *ns,
                               const char *name, const char *problem, const char *resolution)
{
    const char *vals[] = {kind, ns ? ns : "", name, problem, resolution};
    return tg_db_run(conn, &stmt_drift_resolve, 5, vals);
}

tg_rc_e tg_store_drift_sweep(tg_db_conn_t *conn, const json_t *seen)
{
    char *text = json_dumps(seen, JSON_COMPACT);
    const char *vals[] = {text ? text : "[]"};
    tg_rc_e rc = tg_db_run(conn, &stmt_drift_sweep, 1, vals);
    free(text);
    return rc;
}

tg_rc_e tg_store_drift_list(tg_db_conn_t *conn, const tg_drift_query_t *q, json_t **out)
{
    char before[24], lim[16];
    snprintf(before, sizeof(before), "%ld", q->before_id);
    snprintf(lim, sizeof(lim), "%d", q->limit);
    const char *vals[] = {q->state, q->kind, q->name, before, lim};
    return tg_db_json_all(conn, &stmt_drift_list, 5, vals, out);
}

tg_rc_e tg_store_kueue_sync_record(tg_db_conn_t *conn, const char *holder, const json_t *report)
{
    char *text = json_dumps(report, JSON_COMPACT);
    const char *vals[] = {holder, text ? text : "{}"};
    tg_rc_e rc = tg_db_run(conn, &stmt_sync_record, 2, vals);
    free(text);
    return rc;
}

tg_rc_e tg_store_kueue_sync_get(tg_db_conn_t *conn, json_t **out)
{
    return tg_db_json_one(conn, &stmt_sync_get, 0, NULL, out);
}
