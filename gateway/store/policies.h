/* Platform policy rules kept in PostgreSQL (migrations/0005_policies.sql),
 * with their version history.
 *
 * A row, as the API shows it (to_jsonb):
 *   {"id", "version", "enabled", "rule", "created_by", "updated_by",
 *    "created_at", "updated_at"}
 * where `rule` is the rule object (schema/policy.schema.json#/$defs/rule)
 * without `enabled` and `version`, which are columns. Every change appends
 * to policy_versions in the same statement; writers serialise on an
 * advisory lock (tg_store_policies_lock) so the generation (the highest
 * policy_versions.seq) follows commit order. */
#ifndef TG_STORE_POLICIES_H
#define TG_STORE_POLICIES_H

#include <jansson.h>

#include "store/pool.h"

/* Rows by id after `after` (NULL: from the start), at most `limit`. *out new array. */
tg_rc_e tg_store_policies_list(tg_db_conn_t *conn, const char *after, int limit,
                               json_t **out) TG_MUSTCHECK;
/* One row; TG_ENOTFOUND when there is none. *out new. */
tg_rc_e tg_store_policy_get(tg_db_conn_t *conn, const char *id, json_t **out) TG_MUSTCHECK;
/* The history of a rule id, newest first: [{id, version, change, rule,
 * enabled, changed_by, request_id, changed_at}], versions below `before`
 * (0: from the newest), at most `limit`. An unknown id gives []. */
tg_rc_e tg_store_policy_versions(tg_db_conn_t *conn, const char *id, long before, int limit,
                                 json_t **out) TG_MUSTCHECK;

/* Take the policy writers' lock until the transaction ends (call after
 * tg_db_begin). */
tg_rc_e tg_store_policies_lock(tg_db_conn_t *conn) TG_MUSTCHECK;

/* Insert rule `id` (rule borrowed; stored as given) at the next version of
 * its history. TG_ECONFLICT when the id exists. *out the new row. */
tg_rc_e tg_store_policy_create(tg_db_conn_t *conn, const char *id, const json_t *rule, int enabled,
                               const char *who, const char *request_id, json_t **out) TG_MUSTCHECK;
/* Replace rule `id` if it is still at `expected_version`, as version + 1.
 * TG_ENOTFOUND when it does not exist, TG_ECONFLICT when it changed since. */
tg_rc_e tg_store_policy_update(tg_db_conn_t *conn, const char *id, long expected_version,
                               const json_t *rule, int enabled, const char *who,
                               const char *request_id, json_t **out) TG_MUSTCHECK;
/* Delete rule `id`, recording the deletion. TG_ENOTFOUND when there is none. */
tg_rc_e tg_store_policy_delete(tg_db_conn_t *conn, const char *id, const char *who,
                               const char *request_id) TG_MUSTCHECK;

/* Every rule, as policy/load.h wants them ([{id, version, rule, enabled}]
 * by id; *rows new), and the generation they are from, read in one
 * statement so the two agree. */
tg_rc_e tg_store_policies_load(tg_db_conn_t *conn, json_t **rows,
                               long long *generation) TG_MUSTCHECK;
/* Only the generation (cheap; for replicas polling for changes). */
tg_rc_e tg_store_policies_generation(tg_db_conn_t *conn, long long *generation) TG_MUSTCHECK;

#endif
