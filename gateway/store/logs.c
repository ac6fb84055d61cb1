/* Log collection storage (see logs.h). */
#include "store/logs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"

#define PRUNE_BATCH "5000"

/* Each pending container's stream is looked up by primary key (OFFSET 0
 * keeps the sub-select a per-row probe): as a plain join the planner hashed
 * the whole of log_streams, one row per container ever collected, on every
 * scan, so the collector's cost grew with every run that ever ran. */
static tg_stmt_t stmt_candidates =
    TG_STMT("SELECT p.run_id, p.attempt, p.namespace, p.pod, p.uid, c.container,"
            " coalesce(s.failures, 0)"
            " FROM run_pods p"
            " CROSS JOIN LATERAL unnest(p.containers) AS c(container)"
            " LEFT JOIN LATERAL (SELECT s.failures, s.done, s.claimed_until FROM log_streams s"
            "  WHERE s.namespace = p.namespace AND s.pod = p.pod AND s.uid = p.uid"
            "  AND s.container = c.container OFFSET 0) s ON true"
            " WHERE NOT p.log_done AND p.phase <> 'Pending'"
            "  AND (s.failures IS NULL OR (NOT s.done AND s.claimed_until < now()))"
            " ORDER BY p.started_at NULLS LAST, p.run_id, p.pod, c.container LIMIT $1::int");

static tg_stmt_t stmt_claim = TG_STMT(
    "INSERT INTO log_streams AS s (namespace, pod, uid, container, claimed_by, claimed_until)"
    " VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6::int))"
    " ON CONFLICT (namespace, pod, uid, container) DO UPDATE"
    " SET claimed_by = EXCLUDED.claimed_by, claimed_until = EXCLUDED.claimed_until,"
    "  updated_at = now()"
    " WHERE NOT s.done AND s.claimed_until < now()"
    " RETURNING 1");

static tg_stmt_t stmt_renew = TG_STMT(
    "UPDATE log_streams s SET claimed_until = now() + make_interval(secs => $3::int)"
    " FROM jsonb_to_recordset($2::jsonb) AS t(namespace text, pod text, uid text, container text)"
    " WHERE s.claimed_by = $1 AND s.namespace = t.namespace AND s.pod = t.pod"
    "  AND s.uid = t.uid AND s.container = t.container");

static tg_stmt_t stmt_release = TG_STMT(
    "UPDATE log_streams SET claimed_by = NULL,"
    " claimed_until = CASE WHEN $6::boolean THEN now()"
    "  ELSE now() + make_interval(secs => $9::int) END,"
    " done = $6::boolean,"
    " failures = CASE WHEN $7::boolean THEN failures + 1 ELSE 0 END,"
    " last_error = CASE WHEN $7::boolean THEN $8 ELSE last_error END, updated_at = now()"
    " WHERE namespace = $1 AND pod = $2 AND uid = $3 AND container = $4 AND claimed_by = $5");

/* A pod's log is complete once every container it lists is done. */
static tg_stmt_t stmt_pod_done =
    TG_STMT("UPDATE run_pods p SET log_done = true"
            " WHERE p.namespace = $1 AND p.pod = $2 AND p.uid = $3 AND NOT p.log_done"
            "  AND NOT EXISTS (SELECT 1 FROM unnest(p.containers) AS c(container)"
            "   WHERE NOT EXISTS (SELECT 1 FROM log_streams s WHERE s.namespace = p.namespace"
            "    AND s.pod = p.pod AND s.uid = p.uid AND s.container = c.container AND s.done))");

static tg_stmt_t stmt_tail =
    TG_STMT("SELECT seq, content FROM log_chunks"
            " WHERE run_id = $1::uuid AND attempt = $2::int AND pod = $3 AND container = $4"
            " ORDER BY seq DESC LIMIT $5::int");

static tg_stmt_t stmt_phase =
    TG_STMT("SELECT phase FROM run_pods WHERE namespace = $1 AND pod = $2 AND uid = $3");

static tg_stmt_t stmt_lease_check =
    TG_STMT("UPDATE log_streams SET claimed_until = now() + make_interval(secs => $6::int)"
            " WHERE namespace = $1 AND pod = $2 AND uid = $3 AND container = $4 AND claimed_by = $5"
            "  AND NOT done RETURNING 1");

static tg_stmt_t stmt_chunk = TG_STMT(
    "INSERT INTO log_chunks (run_id, attempt, pod, container, seq, first_at, last_at, lines,"
    " content, sha256) VALUES ($1::uuid, $2::int, $3, $4, $5::int, $6::timestamptz,"
    " $7::timestamptz, $8::int, $9, $10)");

static tg_stmt_t stmt_metrics =
    TG_STMT("INSERT INTO run_metrics (run_id, attempt, name, step, at, value, raw, source)"
            " SELECT $1::uuid, $2::int, m.name, m.step, m.at, m.value, m.raw, 'stdout'"
            " FROM ROWS FROM (jsonb_to_recordset($3::jsonb)"
            "  AS (name text, step bigint, at timestamptz, value float8, raw text)) WITH ORDINALITY"
            "  AS m(name, step, at, value, raw, ord)"
            " ORDER BY m.ord");

/* A path reported twice in one chunk keeps its last report. */
static tg_stmt_t stmt_checkpoints = TG_STMT(
    "INSERT INTO run_checkpoints AS k (run_id, attempt, path, step, at)"
    " SELECT DISTINCT ON (c.path) $1::uuid, $2::int, c.path, c.step, c.at"
    " FROM ROWS FROM (jsonb_to_recordset($3::jsonb)"
    "  AS (path text, step bigint, at timestamptz)) WITH ORDINALITY AS c(path, step, at, ord)"
    " ORDER BY c.path, c.ord DESC"
    " ON CONFLICT (run_id, attempt, path) DO UPDATE SET step = EXCLUDED.step, at = EXCLUDED.at");

static tg_stmt_t stmt_bytes = TG_STMT("UPDATE run_pods SET log_bytes = log_bytes + $4::bigint"
                                      " WHERE namespace = $1 AND pod = $2 AND uid = $3");

static tg_stmt_t stmt_prune =
    TG_STMT("WITH doomed AS (SELECT c.id FROM log_chunks c"
            "  JOIN runs r ON r.id = c.run_id JOIN workspaces w ON w.name = r.workspace"
            "  WHERE c.created_at < now() - make_interval(days => w.log_retention_days)"
            "   AND NOT EXISTS (SELECT 1 FROM run_pods p WHERE p.run_id = c.run_id"
            "    AND p.attempt = c.attempt AND p.pod = c.pod AND NOT p.log_done)"
            "  LIMIT $1::int)"
            " DELETE FROM log_chunks WHERE id IN (SELECT id FROM doomed)");

void tg_log_target_clean(tg_log_target_t *t)
{
    if (!t)
        return;
    free(t->namespace_);
    free(t->pod);
    free(t->uid);
    free(t->container);
    memset(t, 0, sizeof(*t));
}

void tg_log_targets_free(tg_log_target_t *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++)
        tg_log_target_clean(&t[i]);
    free(t);
}

void tg_log_target_copy(tg_log_target_t *dst, const tg_log_target_t *src)
{
    *dst = *src;
    dst->namespace_ = tg_xstrdup(src->namespace_);
    dst->pod = tg_xstrdup(src->pod);
    dst->uid = tg_xstrdup(src->uid);
    dst->container = tg_xstrdup(src->container);
}

tg_rc_e tg_store_log_candidates(tg_db_conn_t *conn, int limit, tg_log_target_t **out, size_t *n)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", limit);
    const char *vals[] = {lim};
    tg_rc_e rc;
    *out = NULL;
    *n = 0;
    PGresult *r = tg_db_exec(conn, &stmt_candidates, 1, vals, &rc);
    if (!r)
        return rc;
    int rows = PQntuples(r);
    tg_log_target_t *t = tg_xcalloc(rows ? (size_t)rows : 1, sizeof(*t));
    for (int i = 0; i < rows; i++) {
        snprintf(t[i].run_id, sizeof(t[i].run_id), "%s", PQgetvalue(r, i, 0));
        t[i].attempt = atoi(PQgetvalue(r, i, 1));
        t[i].namespace_ = tg_xstrdup(PQgetvalue(r, i, 2));
        t[i].pod = tg_xstrdup(PQgetvalue(r, i, 3));
        t[i].uid = tg_xstrdup(PQgetvalue(r, i, 4));
        t[i].container = tg_xstrdup(PQgetvalue(r, i, 5));
        t[i].failures = atoi(PQgetvalue(r, i, 6));
    }
    PQclear(r);
    *out = t;
    *n = (size_t)rows;
    return TG_OK;
}

tg_rc_e tg_store_log_claim(tg_db_conn_t *conn, const tg_log_target_t *t, const char *owner,
                           long lease_s)
{
    char lease[24];
    snprintf(lease, sizeof(lease), "%ld", lease_s);
    const char *vals[] = {t->namespace_, t->pod, t->uid, t->container, owner, lease};
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_claim, 6, vals, &rc);
    if (!r)
        return rc;
    rc = PQntuples(r) == 1 ? TG_OK : TG_ECONFLICT;
    PQclear(r);
    return rc;
}

tg_rc_e tg_store_log_renew(tg_db_conn_t *conn, const char *owner, const json_t *targets,
                           long lease_s)
{
    char lease[24];
    snprintf(lease, sizeof(lease), "%ld", lease_s);
    char *list = json_dumps(targets, JSON_COMPACT);
    const char *vals[] = {owner, list ? list : "[]", lease};
    tg_rc_e rc = tg_db_run(conn, &stmt_renew, 3, vals);
    free(list);
    return rc;
}

tg_rc_e tg_store_log_release(tg_db_conn_t *conn, const tg_log_target_t *t, const char *owner,
                             int done, int failed, const char *error, long retry_s)
{
    char retry[24];
    snprintf(retry, sizeof(retry), "%ld", retry_s > 0 ? retry_s : 0);
    const char *vals[] = {t->namespace_,
                          t->pod,
                          t->uid,
                          t->container,
                          owner,
                          done ? "true" : "false",
                          failed ? "true" : "false",
                          error,
                          retry};
    tg_rc_e rc = tg_db_run(conn, &stmt_release, 9, vals);
    if (rc == TG_OK && done) {
        const char *pv[] = {t->namespace_, t->pod, t->uid};
        rc = tg_db_run(conn, &stmt_pod_done, 3, pv);
    }
    return rc;
}

tg_rc_e tg_store_log_tail(tg_db_conn_t *conn, const tg_log_target_t *t, int max, char ***contents,
                          size_t **lens, size_t *n, long *last_seq)
{
    char att[16], lim[16];
    snprintf(att, sizeof(att), "%d", t->attempt);
    snprintf(lim, sizeof(lim), "%d", max);
    const char *vals[] = {t->run_id, att, t->pod, t->container, lim};
    tg_rc_e rc;
    *contents = NULL;
    *lens = NULL;
    *n = 0;
    *last_seq = 0;
    PGresult *r = tg_db_exec(conn, &stmt_tail, 5, vals, &rc);
    if (!r)
        return rc;
    int rows = PQntuples(r);
    char **c = tg_xcalloc(rows ? (size_t)rows : 1, sizeof(*c));
    size_t *l = tg_xcalloc(rows ? (size_t)rows : 1, sizeof(*l));
    for (int i = 0; i < rows; i++) {
        l[i] = (size_t)PQgetlength(r, i, 1);
        c[i] = tg_xstrndup(PQgetvalue(r, i, 1), l[i]);
    }
    if (rows)
        *last_seq = atol(PQgetvalue(r, 0, 0));
    PQclear(r);
    *contents = c;
    *lens = l;
    *n = (size_t)rows;
    return TG_OK;
}

tg_rc_e tg_store_log_pod_phase(tg_db_conn_t *conn, const tg_log_target_t *t, char *out,
                               size_t outlen)
{
    const char *vals[] = {t->namespace_, t->pod, t->uid};
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &stmt_phase, 3, vals, &rc);
    if (!r)
        return rc;
    rc = PQntuples(r) ? TG_OK : TG_ENOTFOUND;
    if (rc == TG_OK)
        snprintf(out, outlen, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return rc;
}

tg_rc_e tg_store_log_chunk_put(tg_db_conn_t *conn, const tg_log_target_t *t, const char *owner,
                               long lease_s, const tg_log_chunk_in_t *in)
{
    char lease[24], att[16], seq[24], lines[24], bytes[24], sha[65];
    char *metrics = NULL, *checkpoints = NULL;
    PGresult *r = NULL;
    snprintf(lease, sizeof(lease), "%ld", lease_s);
    snprintf(att, sizeof(att), "%d", t->attempt);
    snprintf(seq, sizeof(seq), "%ld", in->seq);
    snprintf(lines, sizeof(lines), "%ld", in->lines);
    snprintf(bytes, sizeof(bytes), "%zu", in->len);
    tg_sha256_hex(in->content, in->len, sha);

    tg_rc_e rc = tg_db_begin(conn);
    if (rc != TG_OK)
        return rc;
    const char *lv[] = {t->namespace_, t->pod, t->uid, t->container, owner, lease};
    r = tg_db_exec(conn, &stmt_lease_check, 6, lv, &rc);
    if (!r)
        goto out;
    if (PQntuples(r) != 1) {
        rc = TG_ECONFLICT; /* the lease ran out and someone else may hold it */
        goto out;
    }
    const char *cv[] = {t->run_id,    att,         t->pod, t->container, seq,
                        in->first_at, in->last_at, lines,  in->content,  sha};
    if ((rc = tg_db_run(conn, &stmt_chunk, 10, cv)) != TG_OK)
        goto out;
    if (json_array_size(in->metrics)) {
        metrics = json_dumps(in->metrics, JSON_COMPACT);
        const char *mv[] = {t->run_id, att, metrics};
        if ((rc = tg_db_run(conn, &stmt_metrics, 3, mv)) != TG_OK)
            goto out;
    }
    if (json_array_size(in->checkpoints)) {
        checkpoints = json_dumps(in->checkpoints, JSON_COMPACT);
        const char *kv[] = {t->run_id, att, checkpoints};
        if ((rc = tg_db_run(conn, &stmt_checkpoints, 3, kv)) != TG_OK)
            goto out;
    }
    const char *bv[] = {t->namespace_, t->pod, t->uid, bytes};
    if ((rc = tg_db_run(conn, &stmt_bytes, 4, bv)) != TG_OK)
        goto out;
    rc = tg_db_commit(conn);
out:
    if (rc != TG_OK)
        tg_db_rollback(conn);
    PQclear(r);
    free(metrics);
    free(checkpoints);
    return rc;
}

tg_rc_e tg_store_log_prune(tg_db_conn_t *conn, long *deleted)
{
    const char *vals[] = {PRUNE_BATCH};
    *deleted = 0;
    for (;;) {
        tg_rc_e rc;
        PGresult *r = tg_db_exec(conn, &stmt_prune, 1, vals, &rc);
        if (!r)
            return rc;
        long n = atol(PQcmdTuples(r));
        PQclear(r);
        *deleted += n;
        if (n < atol(PRUNE_BATCH))
            return TG_OK;
    }
}
