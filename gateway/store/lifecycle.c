/* State transitions, attempts and pods. */
#include "store/lifecycle.h"

#include "core/run_state.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/json_rows.h"

static tg_stmt_t stmt_by_object =
    TG_STMT("SELECT a.run_id, a.attempt, EXISTS (SELECT 1 FROM run_pods p WHERE p.run_id = a.run_id"
            " AND p.attempt = a.attempt) FROM run_attempts a WHERE a.namespace = $1 AND "
            "a.object_name = $2");
/* A run that said it waited for the cluster and no longer does (a primary
 * key look-up that writes nothing for every other run). */
static tg_stmt_t stmt_waited =
    TG_STMT("UPDATE runs SET reason = $2, message = $3, updated_at = now()"
            " WHERE id = $1::uuid AND state = 'Accepted' AND reason = 'WaitingForCluster'");
/* Accepted runs that no cluster will take: say so (over runs_active). */
static tg_stmt_t stmt_no_cluster =
    TG_STMT("UPDATE runs SET reason = 'WaitingForCluster', message = $1, updated_at = now()"
            " WHERE state = 'Accepted' AND reason IS DISTINCT FROM 'WaitingForCluster'");
/* Keyset pages over the runs_unfinished index (migration 0013). The
 * attempt and the outbox are probed per run (OFFSET 0 and LIMIT 1 keep them
 * sub-selects): joined, the planner hashed all of run_attempts and outbox
 * for each page, a cost that grew with every run ever submitted
 * (tests/integration/test_engine_plans.py). */
static tg_stmt_t stmt_unfinished =
    TG_STMT("SELECT jsonb_build_object('id', r.id, 'attempt', r.attempt, 'state', r.state,"
            " 'namespace', a.namespace, 'object_name', a.object_name, 'object_kind', a.object_kind,"
            " 'pending', (SELECT true FROM outbox o WHERE o.run_id = r.id LIMIT 1) IS NOT NULL)"
            " FROM runs r LEFT JOIN LATERAL (SELECT namespace, object_name, object_kind"
            "  FROM run_attempts WHERE run_id = r.id AND attempt = r.attempt OFFSET 0) a ON true"
            " WHERE r.state NOT IN ('Succeeded', 'Failed', 'Cancelled') AND r.id > $1::uuid"
            " ORDER BY r.id LIMIT $2::int");
/* A note (a node fault's, engine/node_policy.h) stays until the state
 * changes: the words of another look at the same state say nothing new,
 * and the fault is still there (migration 0023). */
static tg_stmt_t stmt_update_words =
    TG_STMT("UPDATE runs SET reason = $3, message = $4, updated_at = now()"
            " WHERE id = $1::uuid AND state = $2 AND message IS DISTINCT FROM $4"
            " AND NOT message_is_note");
/* A transition: the run, its attempt and the event that records it, in one
 * statement ($7.. are the event's seq, at, source, data, prev_hash and hash;
 * its state, reason and message are the run's $3-$5). */
static tg_stmt_t stmt_transition = TG_STMT(
    "WITH run AS (UPDATE runs SET state = $3, reason = $4, message = $5, message_is_note = false,"
    " updated_at = now(),"
    " started_at = CASE WHEN $3 = 'Running' THEN COALESCE(started_at, now()) ELSE started_at END,"
    " finished_at = CASE WHEN $3 IN ('Succeeded', 'Failed', 'Cancelled') THEN now()"
    "                    ELSE finished_at END"
    " WHERE id = $1::uuid RETURNING id),"
    " att AS (UPDATE run_attempts SET state = $3, reason = COALESCE($4, reason),"
    " queue_info = COALESCE($6::jsonb, queue_info),"
    " started_at = CASE WHEN $3 = 'Running' THEN COALESCE(started_at, now()) ELSE started_at END,"
    " finished_at = CASE WHEN $3 IN ('Succeeded', 'Failed', 'Cancelled') THEN now()"
    "                    ELSE finished_at END"
    " WHERE run_id = (SELECT id FROM run) AND attempt = $2::int)"
    " INSERT INTO run_events (run_id, seq, at, state, reason, message, source, data, prev_hash,"
    " hash) SELECT id, $7::int, $8::timestamptz, $3, $4, $5, $9, $10::jsonb, $11, $12 FROM run");
/* A late or repeated observation: only the attempt's queue facts. */
static tg_stmt_t stmt_update_queue_info = TG_STMT("UPDATE run_attempts SET queue_info = $3::jsonb"
                                                  " WHERE run_id = $1::uuid AND attempt = $2::int");
/* The pod's row and its attempt's nodes and exit code in one statement. The
 * attempt's figures read the pod as just written (p) and its other pods as
 * the snapshot shows them: the statement cannot see its own INSERT. */
#define POD_OTHERS                                                                                 \
    " FROM run_pods WHERE run_id = $1::uuid AND attempt = $2::int"                                 \
    " AND NOT (namespace = $3 AND pod = $4 AND uid = $5)"
#define POD_SELF " FROM p WHERE p.run_id = $1::uuid AND p.attempt = $2::int"
static tg_stmt_t stmt_pod_upsert = TG_STMT(
    "WITH p AS (INSERT INTO run_pods (run_id, attempt, namespace, pod, uid, role, node, phase,"
    " containers, exit_code, reason, started_at, finished_at)"
    " VALUES ($1::uuid, $2::int, $3, $4, $5, $6, $7, $8, $9::text[], $10::int, $11,"
    " $12::timestamptz, $13::timestamptz)"
    " ON CONFLICT (namespace, pod, uid) DO UPDATE SET node = COALESCE(EXCLUDED.node, "
    "run_pods.node),"
    " phase = EXCLUDED.phase, containers = EXCLUDED.containers,"
    " exit_code = COALESCE(EXCLUDED.exit_code, run_pods.exit_code),"
    " reason = COALESCE(EXCLUDED.reason, run_pods.reason),"
    " started_at = COALESCE(run_pods.started_at, EXCLUDED.started_at),"
    " finished_at = COALESCE(EXCLUDED.finished_at, run_pods.finished_at)"
    " RETURNING run_id, attempt, node, role, exit_code)"
    " UPDATE run_attempts SET node_names = (SELECT COALESCE(array_agg(DISTINCT n.node"
    " ORDER BY n.node), '{}') FROM (SELECT node" POD_OTHERS " UNION ALL SELECT node" POD_SELF ") n"
    " WHERE n.node IS NOT NULL),"
    " exit_code = COALESCE((SELECT max(x.exit_code) FROM (SELECT exit_code, role" POD_OTHERS
    " UNION ALL SELECT exit_code, role" POD_SELF ") x WHERE x.role IN ('main', 'head')), exit_code)"
    " WHERE run_id = $1::uuid AND attempt = $2::int");

tg_rc_e tg_store_attempt_by_object(tg_db_conn_t *conn, const char *ns, const char *name,
                                   char run_id[37], int *attempt, int *has_pods)
{
    const char *vals[] = {ns, name};
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_by_object, 2, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return TG_ENOTFOUND;
    }
    snprintf(run_id, 37, "%s", PQgetvalue(r, 0, 0));
    *attempt = atoi(PQgetvalue(r, 0, 1));
    if (has_pods)
        *has_pods = !strcmp(PQgetvalue(r, 0, 2), "t");
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_store_run_words(tg_db_conn_t *conn, const char *run_id, const char *state,
                           const char *reason, const char *message)
{
    const char *vals[] = {run_id, state, reason, message};
    return tg_db_run(conn, &stmt_update_words, 4, vals);
}

tg_rc_e tg_store_run_waited(tg_db_conn_t *conn, const char *run_id, const char *reason,
                            const char *message)
{
    const char *vals[] = {run_id, reason, message};
    return tg_db_run(conn, &stmt_waited, 3, vals);
}

tg_rc_e tg_store_runs_without_cluster(tg_db_conn_t *conn, const char *message)
{
    const char *vals[] = {message};
    return tg_db_run(conn, &stmt_no_cluster, 1, vals);
}

tg_rc_e tg_store_unfinished_page(tg_db_conn_t *conn, const char *after, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", limit);
    const char *vals[] = {after && *after ? after : "00000000-0000-0000-0000-000000000000", lim};
    return tg_db_json_all(conn, &stmt_unfinished, 2, vals, out);
}

static int lifecycle_rank(const char *state)
{
    static const char *const order[] = {"Accepted", "Queued", "Admitted", "Running"};
    for (int i = 0; i < 4; i++)
        if (strcmp(state, order[i]) == 0)
            return i;
    if (strcmp(state, "Recovering") == 0)
        return 0; /* a recovering run starts over from the queue */
    return 100;   /* ended */
}

/* The transition (see lifecycle.h); `admission` (may be NULL) is the
 * admission the cluster shows, recorded in place of an implied one. */
static tg_rc_e lifecycle_transition(tg_db_conn_t *conn, const char *run_id, int attempt,
                                    const tg_event_t *ev, const json_t *queue_info,
                                    const tg_event_t *admission, const json_t *admission_info,
                                    int *applied)
{
    *applied = 0;
    char cur[32];
    int cur_attempt;
    tg_rc_e rc = tg_store_run_lock(conn, run_id, cur, &cur_attempt);
    if (rc != TG_OK)
        return rc;
    char at[16];
    snprintf(at, sizeof(at), "%d", attempt);
    if (attempt != cur_attempt || tg_run_state_ended(cur))
        return TG_OK;
    int to_recovering = strcmp(ev->state, "Recovering") == 0;
    if ((!to_recovering && lifecycle_rank(ev->state) <= lifecycle_rank(cur) &&
         strcmp(cur, "Recovering") != 0) ||
        (to_recovering && strcmp(cur, "Recovering") == 0)) {
        /* a late or repeated observation: the state stays, but queue facts
         * and, for the same state, the latest words still count */
        if (queue_info) {
            char *qi = json_dumps(queue_info, JSON_COMPACT);
            const char *av[] = {run_id, at, qi};
            rc = tg_db_run(conn, &stmt_update_queue_info, 3, av);
            free(qi);
        }
        if (rc == TG_OK && !strcmp(cur, ev->state) && ev->message) {
            const char *mv[] = {run_id, ev->state, ev->reason, ev->message};
            rc = tg_db_run(conn, &stmt_update_words, 4, mv);
        }
        return rc;
    }
    /* the chain's end is read once, after the lock (see tg_store_event_chain_end),
     * and every event of the transition is appended after it */
    tg_event_chain_t chain;
    rc = tg_store_event_chain_end(conn, run_id, &chain);
    /* Watches of different kinds race: a pod may be seen running before its
     * Workload is seen admitted. A run that runs or succeeds went through the
     * queue, so the states it skipped are recorded: the admission as the
     * cluster shows it when the caller has it, the others as implied. */
    static const char *const path[] = {"Queued", "Admitted", "Running"};
    int from = !strcmp(cur, "Recovering") ? 0 : lifecycle_rank(cur);
    int to = lifecycle_rank(ev->state);
    int fills = !strcmp(ev->state, "Running") || !strcmp(ev->state, "Succeeded");
    for (int i = 0; fills && i < 3 && rc == TG_OK; i++) {
        int rank = i + 1;
        if (rank <= from || rank >= (to == 100 ? 4 : to))
            continue;
        if (admission && !strcmp(path[i], "Admitted")) {
            rc = tg_store_event_append_chained(conn, run_id, admission, &chain);
            if (!queue_info)
                queue_info = admission_info;
            continue;
        }
        char msg[128];
        snprintf(msg, sizeof(msg), "the run was seen %s before this state was observed", ev->state);
        tg_event_t implied = {
            .state = path[i], .reason = "Implied", .message = msg, .source = ev->source};
        rc = tg_store_event_append_chained(conn, run_id, &implied, &chain);
    }
    if (rc != TG_OK)
        return rc;
    char *qi = queue_info ? json_dumps(queue_info, JSON_COMPACT) : NULL;
    tg_event_row_t row;
    tg_store_event_row(run_id, ev, &chain, &row);
    const char *uv[] = {run_id,      at,          ev->state,   ev->reason,
                        ev->message, qi,          row.vals[1], row.vals[2],
                        row.vals[6], row.vals[7], row.vals[8], row.vals[9]};
    rc = tg_db_run(conn, &stmt_transition, 12, uv);
    free(qi);
    if (rc == TG_OK) {
        tg_store_event_row_written(&row, &chain);
        *applied = 1;
    }
    tg_store_event_row_clean(&row);
    return rc;
}

tg_rc_e tg_store_run_transition_locked(tg_db_conn_t *conn, const char *run_id, int attempt,
                                       const tg_event_t *ev, const json_t *queue_info, int *applied)
{
    return lifecycle_transition(conn, run_id, attempt, ev, queue_info, NULL, NULL, applied);
}

tg_rc_e tg_store_run_transition(tg_db_conn_t *conn, const char *run_id, int attempt,
                                const tg_event_t *ev, const json_t *queue_info,
                                const tg_event_t *admission, const json_t *admission_info,
                                int *applied)
{
    tg_rc_e rc = tg_db_begin(conn);
    if (rc != TG_OK)
        return rc;
    rc = lifecycle_transition(conn, run_id, attempt, ev, queue_info, admission, admission_info,
                              applied);
    if (rc == TG_OK)
        rc = tg_db_commit(conn);
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        *applied = 0;
    }
    return rc;
}

tg_rc_e tg_store_pod_upsert(tg_db_conn_t *conn, const tg_pod_row_t *p)
{
    char at[16], code[16];
    snprintf(at, sizeof(at), "%d", p->attempt);
    snprintf(code, sizeof(code), "%d", p->exit_code);
    const char *vals[] = {p->run_id,
                          at,
                          p->ns,
                          p->pod,
                          p->uid,
                          p->role ? p->role : "main",
                          p->node,
                          p->phase ? p->phase : "Pending",
                          p->containers ? p->containers : "{}",
                          p->has_exit_code ? code : NULL,
                          p->reason,
                          p->started_at,
                          p->finished_at};
    return tg_db_run(conn, &stmt_pod_upsert, 13, vals);
}
