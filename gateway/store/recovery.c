/* Recovery's reads and writes. */
#include "store/recovery.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/json_rows.h"
#include "store/lifecycle.h"
#include "store/outbox.h"

static tg_stmt_t stmt_facts = TG_STMT(
    "SELECT jsonb_build_object('state', r.state, 'attempt', r.attempt,"
    " 'resilience', COALESCE(r.resolved->'resilience', '{}'::jsonb),"
    " 'retries_used', (SELECT count(*) FROM run_attempts a WHERE a.run_id = r.id"
    "   AND a.attempt > 1 AND COALESCE(a.retry_reason, '') NOT IN ('NodeFault', 'Resumed')),"
    " 'namespace', cur.namespace, 'object_kind', cur.object_kind)"
    " FROM runs r LEFT JOIN run_attempts cur ON cur.run_id = r.id AND cur.attempt = r.attempt"
    " WHERE r.id = $1::uuid");
static tg_stmt_t stmt_new_attempt =
    TG_STMT("INSERT INTO run_attempts (run_id, attempt, state, namespace, object_name, object_kind,"
            " retry_reason) VALUES ($1::uuid, $2::int, 'Accepted', $3, $4, $5, $6)");
static tg_stmt_t stmt_set_attempt =
    TG_STMT("UPDATE runs SET attempt = $2::int, updated_at = now() WHERE id = $1::uuid");
static tg_stmt_t stmt_reopen =
    TG_STMT("UPDATE runs SET state = 'Recovering', finished_at = NULL, updated_at = now()"
            " WHERE id = $1::uuid");
static tg_stmt_t stmt_inputs =
    TG_STMT("SELECT jsonb_build_object('resolved', r.resolved, 'config_hash', r.config_hash,"
            " 'retry_reason', a.retry_reason,"
            " 'latest_checkpoint', (SELECT path FROM run_checkpoints c WHERE c.run_id = r.id"
            "   ORDER BY c.at DESC LIMIT 1),"
            " 'files', COALESCE((SELECT jsonb_object_agg(f.name, translate(encode(f.content, "
            "'base64'), E'\\n', ''))"
            "   FROM run_files f WHERE f.run_id = r.id), '{}'::jsonb))"
            " FROM runs r JOIN run_attempts a ON a.run_id = r.id AND a.attempt = $2::int"
            " WHERE r.id = $1::uuid");
static tg_stmt_t stmt_set_manifests =
    TG_STMT("UPDATE runs SET manifests = $2::jsonb WHERE id = $1::uuid");
static tg_stmt_t stmt_pod_reason =
    TG_STMT("SELECT reason FROM run_pods WHERE run_id = $1::uuid AND attempt = $2::int"
            " AND reason IN ('OOMKilled', 'Evicted') ORDER BY reason DESC LIMIT 1");

tg_rc_e tg_store_recovery_facts(tg_db_conn_t *conn, const char *run_id, json_t **out)
{
    const char *vals[] = {run_id};
    tg_rc_e rc = tg_store_run_lock(conn, run_id, NULL, NULL);
    return rc == TG_OK ? tg_db_json_one(conn, &stmt_facts, 1, vals, out) : rc;
}

tg_rc_e tg_store_recovery_next_attempt(tg_db_conn_t *conn, const char *run_id, int attempt,
                                       const char *ns, const char *object_name,
                                       const char *object_kind, const char *reason, long delay_ms)
{
    char a[16];
    snprintf(a, sizeof(a), "%d", attempt);
    const char *nv[] = {run_id, a, ns, object_name, object_kind, reason};
    tg_rc_e rc = tg_db_run(conn, &stmt_new_attempt, 6, nv);
    const char *sv[] = {run_id, a};
    if (rc == TG_OK)
        rc = tg_db_run(conn, &stmt_set_attempt, 2, sv);
    if (rc == TG_OK)
        rc = tg_store_outbox_add_after(conn, run_id, attempt - 1, "delete", 0);
    if (rc == TG_OK)
        rc = tg_store_outbox_add_after(conn, run_id, attempt, "retry", delay_ms);
    return rc;
}

tg_rc_e tg_store_recovery_reopen(tg_db_conn_t *conn, const char *run_id)
{
    const char *vals[] = {run_id};
    return tg_db_run(conn, &stmt_reopen, 1, vals);
}

tg_rc_e tg_store_recovery_render_inputs(tg_db_conn_t *conn, const char *run_id, int attempt,
                                        json_t **out)
{
    char a[16];
    snprintf(a, sizeof(a), "%d", attempt);
    const char *vals[] = {run_id, a};
    return tg_db_json_one(conn, &stmt_inputs, 2, vals, out);
}

tg_rc_e tg_store_recovery_set_manifests(tg_db_conn_t *conn, const char *run_id,
                                        const json_t *manifests)
{
    char *text = json_dumps(manifests, JSON_COMPACT);
    const char *vals[] = {run_id, text};
    tg_rc_e rc = tg_db_run(conn, &stmt_set_manifests, 2, vals);
    free(text);
    return rc;
}

tg_rc_e tg_store_recovery_pod_reason(tg_db_conn_t *conn, const char *run_id, int attempt,
                                     const char **reason)
{
    char a[16];
    snprintf(a, sizeof(a), "%d", attempt);
    const char *vals[] = {run_id, a};
    tg_rc_e rc;
    *reason = NULL;
    PGresult *r = tg_db_exec(conn, &stmt_pod_reason, 2, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) > 0)
        *reason = strcmp(PQgetvalue(r, 0, 0), "OOMKilled") == 0 ? "OOMKilled" : "Evicted";
    PQclear(r);
    return TG_OK;
}
