/* Platform policy rules kept in PostgreSQL, with their version history. */
#include "store/policies.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/json_rows.h"

#define POL_COLS "id, version, enabled, rule, created_by, updated_by, created_at, updated_at"

static tg_stmt_t pol_list = TG_STMT("SELECT to_jsonb(t) FROM (SELECT " POL_COLS " FROM policies"
                                    " WHERE $1::text IS NULL OR id > $1 ORDER BY id"
                                    " LIMIT $2::int) t");

static tg_stmt_t pol_get =
    TG_STMT("SELECT to_jsonb(t) FROM (SELECT " POL_COLS " FROM policies WHERE id = $1) t");

static tg_stmt_t pol_versions =
    TG_STMT("SELECT to_jsonb(t) FROM (SELECT policy_id AS id, version, change, rule, enabled,"
            " changed_by, request_id, changed_at FROM policy_versions WHERE policy_id = $1"
            " AND ($2::int IS NULL OR version < $2::int) ORDER BY version DESC LIMIT $3::int) t");

static tg_stmt_t pol_lock = TG_STMT("SELECT pg_advisory_xact_lock(hashtext('taugate.policies'))");

static tg_stmt_t pol_create =
    TG_STMT("WITH v AS (SELECT COALESCE(MAX(version), 0) + 1 AS n FROM policy_versions"
            "           WHERE policy_id = $1),"
            " ins AS (INSERT INTO policies (id, version, rule, enabled, created_by, updated_by)"
            "         SELECT $1, v.n, $2::jsonb, $3::boolean, $4, $4 FROM v RETURNING *),"
            " hist AS (INSERT INTO policy_versions (policy_id, version, change, rule, enabled,"
            "          changed_by, request_id)"
            "          SELECT id, version, 'create', rule, enabled, created_by, $5 FROM ins)"
            " SELECT to_jsonb(t) FROM (SELECT " POL_COLS " FROM ins) t");

static tg_stmt_t pol_update =
    TG_STMT("WITH up AS (UPDATE policies SET version = version + 1, rule = $2::jsonb,"
            "            enabled = $3::boolean, updated_by = $4, updated_at = now()"
            "            WHERE id = $1 AND version = $5::int RETURNING *),"
            " hist AS (INSERT INTO policy_versions (policy_id, version, change, rule, enabled,"
            "          changed_by, request_id)"
            "          SELECT id, version, 'update', rule, enabled, updated_by, $6 FROM up)"
            " SELECT to_jsonb(t) FROM (SELECT " POL_COLS " FROM up) t");

static tg_stmt_t pol_delete =
    TG_STMT("WITH del AS (DELETE FROM policies WHERE id = $1 RETURNING *),"
            " hist AS (INSERT INTO policy_versions (policy_id, version, change, rule, enabled,"
            "          changed_by, request_id)"
            "          SELECT id, version + 1, 'delete', NULL, false, $2, $3 FROM del)"
            " SELECT id FROM del");

static tg_stmt_t pol_load =
    TG_STMT("SELECT jsonb_build_object("
            " 'generation', (SELECT COALESCE(MAX(seq), 0) FROM policy_versions),"
            " 'rows', COALESCE((SELECT jsonb_agg(jsonb_build_object('id', id, 'version', version,"
            "                  'rule', rule, 'enabled', enabled) ORDER BY id) FROM policies),"
            "         '[]'::jsonb))");

static tg_stmt_t pol_generation =
    TG_STMT("SELECT COALESCE(MAX(seq), 0)::text FROM policy_versions");

tg_rc_e tg_store_policies_list(tg_db_conn_t *conn, const char *after, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", limit);
    const char *vals[] = {after, lim};
    return tg_db_json_all(conn, &pol_list, 2, vals, out);
}

tg_rc_e tg_store_policy_get(tg_db_conn_t *conn, const char *id, json_t **out)
{
    const char *vals[] = {id};
    return tg_db_json_one(conn, &pol_get, 1, vals, out);
}

tg_rc_e tg_store_policy_versions(tg_db_conn_t *conn, const char *id, long before, int limit,
                                 json_t **out)
{
    char b[24], lim[16];
    snprintf(b, sizeof(b), "%ld", before);
    snprintf(lim, sizeof(lim), "%d", limit);
    const char *vals[] = {id, before > 0 ? b : NULL, lim};
    return tg_db_json_all(conn, &pol_versions, 3, vals, out);
}

tg_rc_e tg_store_policies_lock(tg_db_conn_t *conn)
{
    return tg_db_run(conn, &pol_lock, 0, NULL);
}

tg_rc_e tg_store_policy_create(tg_db_conn_t *conn, const char *id, const json_t *rule, int enabled,
                               const char *who, const char *request_id, json_t **out)
{
    char *text = json_dumps(rule, JSON_COMPACT | JSON_SORT_KEYS);
    const char *vals[] = {id, text, enabled ? "true" : "false", who, request_id};
    tg_rc_e rc = tg_db_json_one(conn, &pol_create, 5, vals, out);
    free(text);
    return rc;
}

tg_rc_e tg_store_policy_update(tg_db_conn_t *conn, const char *id, long expected_version,
                               const json_t *rule, int enabled, const char *who,
                               const char *request_id, json_t **out)
{
    char *text = json_dumps(rule, JSON_COMPACT | JSON_SORT_KEYS);
    char ver[24];
    snprintf(ver, sizeof(ver), "%ld", expected_version);
    const char *vals[] = {id, text, enabled ? "true" : "false", who, ver, request_id};
    tg_rc_e rc = tg_db_json_one(conn, &pol_update, 6, vals, out);
    free(text);
    if (rc == TG_ENOTFOUND) {
        /* Gone, or changed by someone else since it was read. */
        json_t *row = NULL;
        tg_rc_e g = tg_store_policy_get(conn, id, &row);
        json_decref(row);
        rc = g == TG_OK ? TG_ECONFLICT : g;
    }
    return rc;
}

tg_rc_e tg_store_policy_delete(tg_db_conn_t *conn, const char *id, const char *who,
                               const char *request_id)
{
    const char *vals[] = {id, who, request_id};
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &pol_delete, 3, vals, &rc);
    if (!r)
        return rc;
    rc = PQntuples(r) ? TG_OK : TG_ENOTFOUND;
    PQclear(r);
    return rc;
}

tg_rc_e tg_store_policies_load(tg_db_conn_t *conn, json_t **rows, long long *generation)
{
    json_t *o = NULL;
    *rows = NULL;
    *generation = 0;
    tg_rc_e rc = tg_db_json_one(conn, &pol_load, 0, NULL, &o);
    if (rc != TG_OK)
        return rc;
    const json_t *r = json_object_get(o, "rows");
    if (!json_is_array(r) || !json_is_integer(json_object_get(o, "generation"))) {
        json_decref(o);
        return TG_EINTERNAL;
    }
    *rows = json_incref((json_t *)r);
    *generation = json_integer_value(json_object_get(o, "generation"));
    json_decref(o);
    return TG_OK;
}

tg_rc_e tg_store_policies_generation(tg_db_conn_t *conn, long long *generation)
{
    tg_rc_e rc;
    *generation = 0;
    PGresult *r = tg_db_exec(conn, &pol_generation, 0, NULL, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 1)
        *generation = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return TG_OK;
}
