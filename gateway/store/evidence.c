/* Evidence records: build, canonical text, sealed rows, the sealing queue. */
#include "store/evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/json_rows.h"

/* RFC 3339 UTC with microseconds, the form run_events hashes use. */
#define EV_TS(x) "to_char((" x ") AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
/* Whole milliseconds from b to a (never negative; NULL when either is). */
#define EV_MS(a, b) "(greatest(0, extract(epoch FROM (" a ") - (" b ")) * 1000))::bigint"
/* A jsonb number as numeric, NULL for anything else (never an error). */
#define EV_NUM(j) "(CASE WHEN jsonb_typeof(" j ") = 'number' THEN (" j ")::numeric END)"
/* A finite double precision (false for NULL, NaN and infinities). */
#define EV_FIN(v) "coalesce(abs(" v ") < 'Infinity'::float8, false)"

/* The whole record in one statement (one snapshot). Times of attempts:
 *   queued_at   the Accepted event (attempt 1) or the attempt's creation
 *   admitted_at the first Admitted event within the attempt
 *   started_at  the attempt's Running time, else its first pod's start, else admission
 *   finished_at the attempt's end, else its last pod's end, else the next
 *               attempt's creation, else the run's end
 * GPU count: run_attempts.gpu_count when the engine recorded one, else the
 * resolved config's (compute.gpu_count x execution.nodes for a Job,
 * x compute.workers for a RayJob). */
/* clang-format off */
static tg_stmt_t stmt_build = TG_STMT(
    "WITH r AS (SELECT * FROM runs WHERE id = $1::uuid),"
    " ev AS (SELECT * FROM run_events WHERE run_id = $1::uuid),"
    " pods AS (SELECT * FROM run_pods WHERE run_id = $1::uuid),"
    " a1 AS (SELECT a.attempt, a.state, a.reason, a.namespace, a.object_name, a.object_kind,"
    "  a.queue_info, a.node_names, a.exit_code, a.gpu_count, a.created_at, a.started_at,"
    "  a.finished_at, lead(a.created_at) OVER (ORDER BY a.attempt) AS x_next"
    "  FROM run_attempts a WHERE a.run_id = $1::uuid),"
    " a2 AS (SELECT a1.*,"
    "  (SELECT min(e.at) FROM ev e WHERE e.state = 'Admitted'"
    "    AND (a1.attempt = 1 OR e.at >= a1.created_at)"
    "    AND (a1.x_next IS NULL OR e.at < a1.x_next)) AS x_admitted,"
    "  CASE WHEN a1.attempt = 1"
    "   THEN coalesce((SELECT min(e.at) FROM ev e WHERE e.state = 'Accepted'), a1.created_at)"
    "   ELSE a1.created_at END AS x_queued,"
    "  (SELECT min(p.started_at) FROM pods p WHERE p.attempt = a1.attempt) AS x_pod_start,"
    "  (SELECT max(p.finished_at) FROM pods p WHERE p.attempt = a1.attempt) AS x_pod_end"
    "  FROM a1),"
    " gpu AS (SELECT (coalesce(" EV_NUM("r.resolved #> '{compute,gpu_count}'") ", 0) *"
    "  CASE WHEN r.engine = 'rayjob'"
    "   THEN coalesce(" EV_NUM("r.resolved #> '{compute,workers}'") ", 1)"
    "   ELSE coalesce(" EV_NUM("r.resolved #> '{execution,nodes}'") ", 1) END)::int AS n"
    "  FROM r),"
    " a3 AS (SELECT a2.*,"
    "  coalesce(a2.started_at, a2.x_pod_start, a2.x_admitted) AS x_start,"
    "  coalesce(a2.finished_at, a2.x_pod_end, a2.x_next, (SELECT finished_at FROM r)) AS x_end,"
    "  CASE WHEN a2.gpu_count > 0 THEN a2.gpu_count ELSE (SELECT n FROM gpu) END AS x_gpus,"
    "  CASE WHEN a2.gpu_count > 0 THEN 'attempt' ELSE 'resolved' END AS x_gpus_from"
    "  FROM a2),"
    " att AS (SELECT a3.*,"
    "  coalesce((a3.x_gpus * extract(epoch FROM greatest(a3.x_end - a3.x_start, interval '0'))"
    "   / 3600)::float8, 0::float8) AS x_gpu_hours"
    "  FROM a3)"
    " SELECT jsonb_build_object("
    " 'schema', '" TG_EVIDENCE_SCHEMA "',"
    " 'run', jsonb_build_object('id', r.id, 'name', r.name, 'workspace', r.workspace,"
    "  'owner', r.owner, 'engine', r.engine, 'state', r.state, 'reason', r.reason,"
    "  'message', r.message, 'attempts', r.attempt, 'config_hash', r.config_hash,"
    "  'created_at', " EV_TS("r.created_at") ","
    "  'started_at', " EV_TS("r.started_at") ","
    "  'finished_at', " EV_TS("r.finished_at") ","
    "  'duration_ms', " EV_MS("r.finished_at", "r.created_at") "),"
    " 'workspace', (SELECT jsonb_build_object('name', w.name, 'namespace', w.namespace)"
    "  FROM workspaces w WHERE w.name = r.workspace),"
    " 'spec', jsonb_build_object('text', r.spec_text,"
    "  'sha256', encode(sha256(convert_to(r.spec_text, 'UTF8')), 'hex'),"
    "  'bytes', octet_length(convert_to(r.spec_text, 'UTF8')),"
    "  'files', (SELECT coalesce(jsonb_agg(jsonb_build_object('name', f.name,"
    "   'sha256', f.sha256, 'bytes', octet_length(f.content))"
    "   ORDER BY f.name COLLATE \"C\"), '[]'::jsonb)"
    "   FROM run_files f WHERE f.run_id = r.id)),"
    " 'config', jsonb_build_object('resolved', r.resolved, 'config_hash', r.config_hash,"
    /* the provenance travels in the Job's or RayJob's annotation (runs has
     * no column of its own for it: to_jsonb(r) -> 'provenance' serialised
     * the whole row, manifests and all, to find nothing) */
    "  'provenance', (SELECT (m #>> '{metadata,annotations,taugate.io/provenance}')::jsonb"
    "    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(r.manifests) = 'array'"
    "     THEN r.manifests ELSE '[]'::jsonb END) m"
    "    WHERE m ->> 'kind' IN ('Job', 'RayJob') LIMIT 1)),"
    " 'manifests', r.manifests,"
    " 'queue', (SELECT jsonb_build_object("
    "  'local_queue', coalesce(q.queue_info ->> 'local_queue', r.resolved #>> '{policy,queue}'),"
    "  'cluster_queue', coalesce(nullif(q.queue_info ->> 'cluster_queue', ''),"
    "   (SELECT lq.cluster_queue FROM local_queues lq WHERE lq.workspace = r.workspace"
    "    AND lq.name = coalesce(q.queue_info ->> 'local_queue',"
    "     r.resolved #>> '{policy,queue}'))),"
    "  'flavors', coalesce(q.queue_info -> 'flavors', '{}'::jsonb),"
    "  'workload', q.queue_info -> 'workload',"
    "  'priority_class', r.resolved #> '{policy,workload_priority_class}',"
    "  'priority', r.resolved #> '{policy,workload_priority_value}',"
    "  'queued_at', " EV_TS("q.x_queued") ","
    "  'admitted_at', " EV_TS("q.x_admitted") ","
    "  'wait_ms', " EV_MS("q.x_admitted", "q.x_queued") ")"
    /* why facts are missing, only when the sealer had to say so */
    "  || CASE WHEN q.queue_info ? 'note'"
    "   THEN jsonb_build_object('note', q.queue_info -> 'note') ELSE '{}'::jsonb END"
    "  FROM att q WHERE q.attempt = 1),"
    " 'history', (SELECT coalesce(jsonb_agg(jsonb_build_object('seq', e.seq,"
    "  'at', " EV_TS("e.at") ", 'state', e.state, 'reason', e.reason,"
    "  'message', e.message, 'source', e.source, 'data', e.data,"
    "  'prev_hash', e.prev_hash, 'hash', e.hash)"
    "  ORDER BY e.seq), '[]'::jsonb) FROM ev e),"
    " 'chain', (SELECT jsonb_build_object('events', count(*),"
    "  'head', (SELECT e2.hash FROM ev e2 ORDER BY e2.seq DESC LIMIT 1)) FROM ev),"
    " 'attempts', (SELECT coalesce(jsonb_agg(jsonb_build_object('attempt', a.attempt,"
    "  'state', a.state, 'reason', a.reason, 'exit_code', a.exit_code,"
    "  'node_names', to_jsonb(a.node_names), 'gpu_count', a.x_gpus,"
    "  'gpu_count_from', a.x_gpus_from, 'gpu_hours', a.x_gpu_hours,"
    "  'created_at', " EV_TS("a.created_at") ","
    "  'queued_at', " EV_TS("a.x_queued") ","
    "  'admitted_at', " EV_TS("a.x_admitted") ","
    "  'started_at', " EV_TS("a.x_start") ","
    "  'finished_at', " EV_TS("a.x_end") ","
    "  'queue_wait_ms', " EV_MS("a.x_admitted", "a.x_queued") ","
    "  'runtime_ms', " EV_MS("a.x_end", "a.x_start") ","
    "  'object', jsonb_build_object('kind', a.object_kind, 'namespace', a.namespace,"
    "   'name', a.object_name),"
    "  'queue', a.queue_info,"
    "  'pods', (SELECT coalesce(jsonb_agg(jsonb_build_object('pod', p.pod, 'uid', p.uid,"
    "   'namespace', p.namespace, 'role', p.role, 'node', p.node, 'phase', p.phase,"
    "   'containers', to_jsonb(p.containers), 'exit_code', p.exit_code, 'reason', p.reason,"
    "   'started_at', " EV_TS("p.started_at") ","
    "   'finished_at', " EV_TS("p.finished_at") ","
    "   'log_bytes', p.log_bytes, 'log_complete', p.log_done)"
    "   ORDER BY p.pod COLLATE \"C\", p.uid COLLATE \"C\"), '[]'::jsonb)"
    "   FROM pods p WHERE p.attempt = a.attempt))"
    "  ORDER BY a.attempt), '[]'::jsonb) FROM att a),"
    " 'logs', (SELECT coalesce(jsonb_agg(s.o ORDER BY s.attempt, s.pod COLLATE \"C\","
    "  s.container COLLATE \"C\"), '[]'::jsonb)"
    "  FROM (SELECT c.attempt, c.pod, c.container,"
    "   jsonb_build_object('attempt', c.attempt, 'pod', c.pod, 'container', c.container,"
    "   'chunks', count(*), 'bytes', sum(octet_length(c.content)), 'lines', sum(c.lines),"
    "   'first_seq', min(c.seq), 'last_seq', max(c.seq),"
    "   'first_at', " EV_TS("min(c.first_at)") ","
    "   'last_at', " EV_TS("max(c.last_at)") ","
    "   'sha256', encode(sha256(convert_to("
    "    string_agg(c.sha256 || E'\\n', '' ORDER BY c.seq), 'UTF8')), 'hex')) AS o"
    "   FROM log_chunks c WHERE c.run_id = $1::uuid"
    "   GROUP BY c.attempt, c.pod, c.container) s),"
    " 'metrics', (SELECT coalesce(jsonb_agg(s.o ORDER BY s.name COLLATE \"C\"), '[]'::jsonb)"
    "  FROM (SELECT m.name, jsonb_build_object('name', m.name, 'count', count(*),"
    "   'finite_count', count(*) FILTER (WHERE " EV_FIN("m.value") "),"
    "   'non_finite_count', count(*) FILTER (WHERE NOT " EV_FIN("m.value") "),"
    "   'min', min(m.value) FILTER (WHERE " EV_FIN("m.value") "),"
    "   'max', max(m.value) FILTER (WHERE " EV_FIN("m.value") "),"
    "   'min_step', min(m.step), 'max_step', max(m.step),"
    "   'first_at', " EV_TS("min(m.at)") ","
    "   'last_at', " EV_TS("max(m.at)") ","
    "   'latest', (SELECT jsonb_build_object("
    "     'value', CASE WHEN " EV_FIN("l.value") " THEN to_jsonb(l.value) END,"
    "     'raw', l.raw, 'step', l.step, 'at', " EV_TS("l.at") ", 'attempt', l.attempt)"
    "    FROM run_metrics l WHERE l.run_id = $1::uuid AND l.name = m.name"
    "    ORDER BY l.at DESC, l.id DESC LIMIT 1)) AS o"
    "   FROM run_metrics m WHERE m.run_id = $1::uuid GROUP BY m.name) s),"
    " 'checkpoints', (SELECT coalesce(jsonb_agg(jsonb_build_object('attempt', k.attempt,"
    "  'path', k.path, 'step', k.step, 'at', " EV_TS("k.at") ")"
    "  ORDER BY k.at, k.attempt, k.path COLLATE \"C\"), '[]'::jsonb)"
    "  FROM run_checkpoints k WHERE k.run_id = $1::uuid),"
    " 'policy', jsonb_build_object('decisions', r.policy_decisions),"
    " 'totals', (SELECT jsonb_build_object('attempts', count(*),"
    "  'gpu_hours', coalesce(sum(a.x_gpu_hours), 0)::float8,"
    "  'runtime_ms', coalesce(sum(" EV_MS("a.x_end", "a.x_start") "), 0)::bigint)"
    "  FROM att a))"
    " FROM r");
/* clang-format on */

#define EV_ROW_COLS EV_TS("sealed_at") ", sha256, signature, key_id, algorithm, canonical"
static tg_stmt_t stmt_get = TG_STMT("SELECT " EV_ROW_COLS " FROM evidence WHERE run_id = $1::uuid");

static tg_stmt_t stmt_matches =
    TG_STMT("SELECT record = canonical::jsonb FROM evidence WHERE run_id = $1::uuid");

static tg_stmt_t stmt_insert = TG_STMT(
    "INSERT INTO evidence (run_id, sealed_at, record, sha256, signature, key_id, algorithm,"
    " canonical) VALUES ($1::uuid, $2::timestamptz, $3::text::jsonb, $4, $5, $6, $7, $3::text)"
    " ON CONFLICT (run_id) DO NOTHING RETURNING 1");

/* The next due run, the seconds left of its log grace (0 once over) and
 * whether a pod that ran has its log uncollected. The queue is read in
 * not_before order over its index; a run put back to wait for its logs
 * (tg_evidence_wait) is not looked at again before it is due, or before a
 * pod's log_done brings it forward (migration 0013's trigger). */
static tg_stmt_t stmt_claim =
    TG_STMT("SELECT q.run_id,"
            " greatest(0, ceil(extract(epoch FROM"
            "  coalesce(r.finished_at, now()) + make_interval(secs => $1::int) - now())))::bigint,"
            /* a per-run probe (LIMIT 1: never a hash of every pod) */
            " (SELECT true FROM run_pods p WHERE p.run_id = q.run_id"
            "  AND NOT p.log_done AND p.phase <> 'Pending' LIMIT 1) IS NOT NULL"
            " FROM evidence_queue q JOIN runs r ON r.id = q.run_id"
            " WHERE q.not_before <= now()"
            " ORDER BY q.not_before, q.run_id LIMIT 1 FOR UPDATE OF q SKIP LOCKED");

/* With $3 (waiting for logs) the pending logs are looked for again in this
 * statement's own snapshot: a log completed since the claim's snapshot
 * leaves the run due (its trigger found nothing to bring forward). */
static tg_stmt_t stmt_wait =
    TG_STMT("UPDATE evidence_queue SET not_before = now() + make_interval(secs => $2::int)"
            " WHERE run_id = $1::uuid AND (NOT $3::boolean OR EXISTS (SELECT 1 FROM run_pods p"
            "  WHERE p.run_id = $1::uuid AND NOT p.log_done AND p.phase <> 'Pending'))");

/* Attempts that got past the queue (they ran, or succeeded) yet whose queue
 * facts hold no flavors nor a note saying why: the Workload watch lagged
 * behind the Job's. within_grace: the run ended less than $2 s ago. */
static tg_stmt_t stmt_lacking_queue = TG_STMT(
    "SELECT jsonb_build_object('attempt', a.attempt, 'namespace', a.namespace,"
    " 'object_name', a.object_name, 'within_grace',"
    " coalesce(r.finished_at > now() - make_interval(secs => $2::int), true))"
    " FROM run_attempts a JOIN runs r ON r.id = a.run_id"
    " WHERE a.run_id = $1::uuid AND a.namespace IS NOT NULL AND a.object_name IS NOT NULL"
    "  AND NOT (a.queue_info ? 'flavors') AND NOT (a.queue_info ? 'note')"
    "  AND (a.started_at IS NOT NULL OR a.state = 'Succeeded' OR EXISTS (SELECT 1 FROM run_pods p"
    "   WHERE p.run_id = a.run_id AND p.attempt = a.attempt))"
    " ORDER BY a.attempt");

static tg_stmt_t stmt_merge_queue =
    TG_STMT("UPDATE run_attempts SET queue_info = queue_info || $3::jsonb"
            " WHERE run_id = $1::uuid AND attempt = $2::int");

static tg_stmt_t stmt_dequeue = TG_STMT("DELETE FROM evidence_queue WHERE run_id = $1::uuid");

static tg_stmt_t stmt_defer =
    TG_STMT("UPDATE evidence_queue SET tries = tries + 1, last_error = $3,"
            " not_before = now() + make_interval(secs => $2::int) WHERE run_id = $1::uuid");

/* jsonb prints a whole double without a fraction (0, 2), which jansson reads
 * as an integer: keep GPU-hours reals whatever their value. */
static void evidence_real(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        json_object_set_new(o, key, json_real((double)json_integer_value(v)));
}

static void evidence_reals(json_t *rec)
{
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(rec, "attempts"), i, a)
        evidence_real(a, "gpu_hours");
    evidence_real(json_object_get(rec, "totals"), "gpu_hours");
}

tg_rc_e tg_evidence_build(tg_db_conn_t *conn, const char *run_id, json_t **record)
{
    tg_rc_e rc;
    *record = NULL;
    const char *vals[] = {run_id};
    PGresult *r = tg_db_exec(conn, &stmt_build, 1, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 0 || PQgetisnull(r, 0, 0)) {
        rc = TG_ENOTFOUND;
        goto out;
    }
    json_error_t e;
    *record = json_loads(PQgetvalue(r, 0, 0), 0, &e);
    if (!*record) {
        /* e.g. an integer beyond 64 bits in the run's config */
        tg_log_error("evidence", "run %s: the record cannot be read: %s", run_id, e.text);
        rc = TG_EUNPROCESSABLE;
        goto out;
    }
    evidence_reals(*record);
    rc = TG_OK;
out:
    PQclear(r);
    return rc;
}

char *tg_evidence_canonical(const json_t *record, size_t *len)
{
    char *s = json_dumps(record, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    if (len)
        *len = s ? strlen(s) : 0;
    return s;
}

void tg_evidence_logsum_init(tg_evidence_logsum_t *s)
{
    tg_sha256_init(&s->sha);
}

void tg_evidence_logsum_add(tg_evidence_logsum_t *s, const char *chunk_sha256_hex)
{
    tg_sha256_update(&s->sha, chunk_sha256_hex, strlen(chunk_sha256_hex));
    tg_sha256_update(&s->sha, "\n", 1);
}

void tg_evidence_logsum_final(tg_evidence_logsum_t *s, char out[65])
{
    tg_sha256_final_hex(&s->sha, out);
}

void tg_evidence_row_clean(tg_evidence_row_t *row)
{
    if (!row)
        return;
    TG_FREE_NULL(row->signature);
    TG_FREE_NULL(row->canonical);
    row->canonical_len = 0;
}

tg_rc_e tg_evidence_get(tg_db_conn_t *conn, const char *run_id, tg_evidence_row_t *row)
{
    memset(row, 0, sizeof(*row));
    tg_rc_e rc;
    const char *vals[] = {run_id};
    PGresult *r = tg_db_exec(conn, &stmt_get, 1, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return TG_ENOTFOUND;
    }
    snprintf(row->run_id, sizeof(row->run_id), "%s", run_id);
    snprintf(row->sealed_at, sizeof(row->sealed_at), "%s", PQgetvalue(r, 0, 0));
    snprintf(row->sha256, sizeof(row->sha256), "%s", PQgetvalue(r, 0, 1));
    row->signature = tg_xstrdup(PQgetvalue(r, 0, 2));
    snprintf(row->key_id, sizeof(row->key_id), "%s", PQgetvalue(r, 0, 3));
    snprintf(row->algorithm, sizeof(row->algorithm), "%s", PQgetvalue(r, 0, 4));
    row->canonical_len = (size_t)PQgetlength(r, 0, 5);
    row->canonical = tg_xstrndup(PQgetvalue(r, 0, 5), row->canonical_len);
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_evidence_record_matches(tg_db_conn_t *conn, const char *run_id, int *matches)
{
    tg_rc_e rc;
    const char *vals[] = {run_id};
    *matches = 0;
    PGresult *r = tg_db_exec(conn, &stmt_matches, 1, vals, &rc);
    if (!r)
        return rc == TG_EINVAL ? TG_OK : rc; /* the text is not JSON: no match */
    rc = PQntuples(r) > 0 ? TG_OK : TG_ENOTFOUND;
    *matches = rc == TG_OK && !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    return rc;
}

tg_rc_e tg_evidence_insert(tg_db_conn_t *conn, const tg_evidence_row_t *row, int *inserted)
{
    tg_rc_e rc;
    *inserted = 0;
    const char *vals[] = {row->run_id,    row->sealed_at, row->canonical, row->sha256,
                          row->signature, row->key_id,    row->algorithm};
    PGresult *r = tg_db_exec(conn, &stmt_insert, 7, vals, &rc);
    if (!r)
        return rc;
    *inserted = PQntuples(r) > 0;
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_evidence_claim(tg_db_conn_t *conn, long log_grace_s, char run_id[37], long *grace_s,
                          int *logs_pending)
{
    tg_rc_e rc;
    char grace[24];
    snprintf(grace, sizeof(grace), "%ld", log_grace_s < 0 ? 0 : log_grace_s);
    const char *vals[] = {grace};
    *grace_s = 0;
    *logs_pending = 0;
    PGresult *r = tg_db_exec(conn, &stmt_claim, 1, vals, &rc);
    if (!r)
        return rc;
    rc = PQntuples(r) > 0 ? TG_OK : TG_ENOTFOUND;
    if (rc == TG_OK) {
        snprintf(run_id, 37, "%s", PQgetvalue(r, 0, 0));
        *grace_s = atol(PQgetvalue(r, 0, 1));
        *logs_pending = PQgetvalue(r, 0, 2)[0] == 't';
    }
    PQclear(r);
    return rc;
}

tg_rc_e tg_evidence_wait(tg_db_conn_t *conn, const char *run_id, long wait_s, int for_logs)
{
    char w[24];
    snprintf(w, sizeof(w), "%ld", wait_s);
    const char *vals[] = {run_id, w, for_logs ? "true" : "false"};
    return tg_db_run(conn, &stmt_wait, 3, vals);
}

tg_rc_e tg_evidence_dequeue(tg_db_conn_t *conn, const char *run_id)
{
    const char *vals[] = {run_id};
    return tg_db_run(conn, &stmt_dequeue, 1, vals);
}

tg_rc_e tg_evidence_defer(tg_db_conn_t *conn, const char *run_id, long delay_s, const char *error)
{
    char delay[24];
    snprintf(delay, sizeof(delay), "%ld", delay_s);
    const char *vals[] = {run_id, delay, error};
    return tg_db_run(conn, &stmt_defer, 3, vals);
}

tg_rc_e tg_evidence_lacking_queue(tg_db_conn_t *conn, const char *run_id, long grace_s,
                                  json_t **out)
{
    char grace[24];
    snprintf(grace, sizeof(grace), "%ld", grace_s < 0 ? 0 : grace_s);
    const char *vals[] = {run_id, grace};
    return tg_db_json_all(conn, &stmt_lacking_queue, 2, vals, out);
}

tg_rc_e tg_evidence_merge_queue(tg_db_conn_t *conn, const char *run_id, int attempt,
                                const json_t *facts)
{
    char at[16];
    snprintf(at, sizeof(at), "%d", attempt);
    char *text = json_dumps(facts, JSON_COMPACT);
    if (!text)
        return TG_EINTERNAL;
    const char *vals[] = {run_id, at, text};
    tg_rc_e rc = tg_db_run(conn, &stmt_merge_queue, 3, vals);
    free(text);
    return rc;
}
