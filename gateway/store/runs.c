/* Runs: submission and reads. */
#include "store/runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/digest.h"
#include "core/ids.h"
#include "store/events.h"
#include "store/json_rows.h"

#define RUN_COLS                                                                                   \
    "id, workspace, name, owner, engine, state, reason, message, attempt, config_hash,"            \
    " created_at, updated_at, started_at, finished_at"

static tg_stmt_t stmt_by_key =
    TG_STMT("SELECT request_hash, id FROM runs"
            " WHERE workspace = $1 AND owner = $2 AND idempotency_key = $3");
/* A whole submission in one statement (one round trip, one commit): the
 * run, its files, its first attempt, its first event, its outbox row and the
 * request's audit row. Nothing comes back: the caller knows every value of
 * the new run (runs_view), so PostgreSQL builds no JSON for it. */
static tg_stmt_t stmt_insert = TG_STMT(
    "WITH r AS (INSERT INTO runs (id, workspace, name, owner, engine, spec_text, resolved,"
    "   manifests, config_hash, idempotency_key, request_hash, policy_decisions, policy_digest,"
    "   created_at, updated_at)"
    "  VALUES ($1::uuid, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11,"
    "   COALESCE($12::jsonb, '[]'), $13, $18::timestamptz, $18::timestamptz) RETURNING id),"
    " f AS (INSERT INTO run_files (run_id, name, content, sha256)"
    "  SELECT r.id, x.name, decode(x.hex, 'hex'), x.sha256"
    "  FROM r, jsonb_to_recordset($14::jsonb) AS x(name text, hex text, sha256 text)),"
    " a AS (INSERT INTO run_attempts (run_id, attempt, state, namespace, object_name,"
    "   object_kind, created_at) SELECT r.id, 1, 'Accepted', $15, $16, $17, $18::timestamptz"
    "   FROM r),"
    " e AS (INSERT INTO run_events (run_id, seq, at, state, reason, message, source, data, hash)"
    "  SELECT r.id, 1, $18::timestamptz, $19, $20, $21, $22, '{}', $23 FROM r),"
    " au AS (INSERT INTO audit_log (subject, method, route, target, workspace, status,"
    "   request_id) SELECT $24, $25, $26, $27, $28, $29::int, $30 FROM r"
    "   WHERE $30::text IS NOT NULL)"
    " INSERT INTO outbox (run_id, attempt, action) SELECT r.id, 1, 'create' FROM r");
/* One run with its current queue facts and every attempt. */
#define RUN_VIEW                                                                                   \
    "to_jsonb(v) || jsonb_build_object("                                                           \
    " 'queue', (SELECT a.queue_info FROM run_attempts a WHERE a.run_id = v.id"                     \
    "           AND a.attempt = v.attempt),"                                                       \
    " 'attempts', (SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt, 'state', a.state,"    \
    "   'reason', a.reason, 'retry_reason', a.retry_reason, 'object', a.object_name,"              \
    "   'node_names', a.node_names, 'exit_code', a.exit_code, 'created_at', a.created_at,"         \
    "   'started_at', a.started_at, 'finished_at', a.finished_at) ORDER BY a.attempt)"             \
    "   FROM run_attempts a WHERE a.run_id = v.id))"
#define RUN_VIEW_FROM " FROM (SELECT " RUN_COLS " FROM runs WHERE id = $1::uuid) v"
static tg_stmt_t stmt_get = TG_STMT("SELECT " RUN_VIEW RUN_VIEW_FROM);
static tg_stmt_t stmt_get_text = TG_STMT("SELECT v.workspace, (" RUN_VIEW ")::text" RUN_VIEW_FROM);
/* The files as [{name, hex, sha256}] for the insert statement. */
static char *runs_files_json(const tg_run_new_t *in)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < in->nfiles; i++) {
        const unsigned char *p = in->files[i].data;
        size_t n = in->files[i].len;
        char *h = tg_xmalloc(2 * n + 1);
        tg_hex_encode(p, n, h);
        char sum[65];
        tg_sha256_hex(p, n, sum);
        json_array_append_new(arr, json_pack("{s:s, s:s%, s:s}", "name", in->files[i].name, "hex",
                                             h, 2 * n, "sha256", sum));
        free(h);
    }
    char *out = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    return out;
}

/* Look the key up. TG_OK with *out when found and the request matches,
 * TG_ENOTFOUND when unused, TG_ECONFLICT when used for another request. */
static tg_rc_e runs_find_by_key(tg_db_conn_t *conn, const tg_run_new_t *in, json_t **out)
{
    const char *vals[] = {in->workspace, in->owner, in->idempotency_key};
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_by_key, 3, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return TG_ENOTFOUND;
    }
    if (strcmp(PQgetvalue(r, 0, 0), in->request_hash) != 0) {
        PQclear(r);
        return TG_ECONFLICT;
    }
    char id[TG_UUID_LEN + 1];
    snprintf(id, sizeof(id), "%s", PQgetvalue(r, 0, 1));
    PQclear(r);
    return tg_store_run_get(conn, id, out);
}

/* A time as PostgreSQL writes a timestamptz in JSON in a UTC session
 * (store/pool.c): microseconds without trailing zeros, "+00:00". */
static void runs_pg_time(int64_t wall_us, char out[40])
{
    time_t sec = (time_t)(wall_us / 1000000);
    long us = (long)(wall_us % 1000000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    int n = snprintf(out, 40, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (us) {
        int digits = 6;
        for (; us % 10 == 0; us /= 10)
            digits--;
        n += snprintf(out + n, (size_t)(40 - n), ".%0*ld", digits, us);
    }
    snprintf(out + n, (size_t)(40 - n), "+00:00");
}

/* The view tg_store_run_get() answers, of a run just stored at `at`: the
 * same keys in the same order (jsonb's: shorter first, then bytewise). */
static json_t *runs_view(const tg_run_new_t *in, const char *at)
{
    json_t *a = json_object();
    json_object_set_new_nocheck(a, "state", json_string("Accepted"));
    json_object_set_new_nocheck(a, "object", json_string(in->object_name));
    json_object_set_new_nocheck(a, "reason", json_null());
    json_object_set_new_nocheck(a, "attempt", json_integer(1));
    json_object_set_new_nocheck(a, "exit_code", json_null());
    json_object_set_new_nocheck(a, "created_at", json_string(at));
    json_object_set_new_nocheck(a, "node_names", json_array());
    json_object_set_new_nocheck(a, "started_at", json_null());
    json_object_set_new_nocheck(a, "finished_at", json_null());
    json_object_set_new_nocheck(a, "retry_reason", json_null());
    json_t *v = json_object();
    json_object_set_new_nocheck(v, "id", json_string(in->id));
    json_object_set_new_nocheck(v, "name", json_string(in->name));
    json_object_set_new_nocheck(v, "owner", json_string(in->owner));
    json_object_set_new_nocheck(v, "queue", json_object());
    json_object_set_new_nocheck(v, "state", json_string("Accepted"));
    json_object_set_new_nocheck(v, "engine", json_string(in->engine));
    json_object_set_new_nocheck(v, "reason", json_null());
    json_object_set_new_nocheck(v, "attempt", json_integer(1));
    json_object_set_new_nocheck(v, "message", json_null());
    json_object_set_new_nocheck(v, "attempts", json_pack("[o]", a));
    json_object_set_new_nocheck(v, "workspace", json_string(in->workspace));
    json_object_set_new_nocheck(v, "created_at", json_string(at));
    json_object_set_new_nocheck(v, "started_at", json_null());
    json_object_set_new_nocheck(v, "updated_at", json_string(at));
    json_object_set_new_nocheck(v, "config_hash", json_string(in->config_hash));
    json_object_set_new_nocheck(v, "finished_at", json_null());
    return v;
}

/* Insert one run with everything that goes with it; *out gets the run. */
static tg_rc_e runs_insert(tg_db_conn_t *conn, const tg_run_new_t *in, json_t **out)
{
    tg_event_t ev = {.state = "Accepted",
                     .reason = "Submitted",
                     .message = "the run was accepted and will be sent to the cluster",
                     .source = "api"};
    char at[40], at_json[40], hash[65];
    int64_t now = tg_now_wall_us();
    tg_time_rfc3339(now, at, sizeof(at));
    runs_pg_time(now, at_json);
    tg_store_event_hash(NULL, in->id, 1, at, &ev, hash);
    char *files = runs_files_json(in);
    const tg_audit_entry_t *au = in->audit;
    char au_status[16];
    snprintf(au_status, sizeof(au_status), "%d", au ? au->status : 0);
    const char *vals[] = {in->id,
                          in->workspace,
                          in->name,
                          in->owner,
                          in->engine,
                          in->spec_text,
                          in->resolved_text,
                          in->manifests_text,
                          in->config_hash,
                          in->idempotency_key,
                          in->request_hash,
                          in->policy_decisions_text,
                          in->policy_digest,
                          files,
                          in->object_ns,
                          in->object_name,
                          in->object_kind,
                          at,
                          ev.state,
                          ev.reason,
                          ev.message,
                          ev.source,
                          hash,
                          au ? au->subject : NULL,
                          au ? au->method : NULL,
                          au ? au->route : NULL,
                          au ? au->target : NULL,
                          au ? au->workspace : NULL,
                          au_status,
                          au ? au->request_id : NULL};
    tg_rc_e rc = in->resolved_text && in->manifests_text && in->object_name && files
                     ? tg_db_run(conn, &stmt_insert, 30, vals)
                     : TG_EINTERNAL;
    if (rc == TG_OK)
        *out = runs_view(in, at_json);
    free(files);
    return rc;
}

tg_rc_e tg_store_run_create(tg_db_conn_t *conn, const tg_run_new_t *in, json_t **out, int *existed)
{
    *out = NULL;
    *existed = 0;
    /* Two tries: a concurrent request with the same key may win the insert,
     * and then the second look-up finds its run. The insert is one
     * statement, so it commits or leaves nothing behind on its own. */
    for (int attempt = 0; attempt < 2; attempt++) {
        tg_rc_e rc;
        if (in->idempotency_key) {
            rc = runs_find_by_key(conn, in, out);
            if (rc != TG_ENOTFOUND) {
                *existed = rc == TG_OK;
                return rc;
            }
        }
        rc = runs_insert(conn, in, out);
        if (rc != TG_ECONFLICT || !in->idempotency_key)
            return rc;
    }
    return TG_ECONFLICT;
}

tg_rc_e tg_store_runs_create_batch(tg_db_conn_t *conn, const tg_run_new_t *in, size_t n,
                                   json_t **runs)
{
    for (size_t i = 0; i < n; i++)
        runs[i] = NULL;
    tg_rc_e rc = tg_db_begin(conn);
    for (size_t i = 0; rc == TG_OK && i < n; i++) {
        if (in[i].idempotency_key) {
            rc = runs_find_by_key(conn, &in[i], &runs[i]);
            if (rc == TG_OK)
                continue; /* stored by an earlier try of this batch */
            if (rc != TG_ENOTFOUND)
                break;
        }
        rc = runs_insert(conn, &in[i], &runs[i]);
    }
    if (rc == TG_OK)
        rc = tg_db_commit(conn);
    else
        tg_db_rollback(conn);
    for (size_t i = 0; rc != TG_OK && i < n; i++) {
        json_decref(runs[i]);
        runs[i] = NULL;
    }
    return rc;
}

tg_rc_e tg_store_run_get(tg_db_conn_t *conn, const char *id, json_t **out)
{
    const char *vals[] = {id};
    return tg_db_json_one(conn, &stmt_get, 1, vals, out);
}

tg_rc_e tg_store_run_get_text(tg_db_conn_t *conn, const char *id, char **workspace, char **json)
{
    const char *vals[] = {id};
    tg_rc_e rc;
    *workspace = *json = NULL;
    PGresult *r = tg_db_exec(conn, &stmt_get_text, 1, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 1) {
        *workspace = tg_xstrdup(PQgetvalue(r, 0, 0));
        *json = tg_json_text_compact(tg_xstrdup(PQgetvalue(r, 0, 1)));
    }
    PQclear(r);
    return *json ? TG_OK : TG_ENOTFOUND;
}
