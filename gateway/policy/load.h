/* Loading platform policy: schema/policy.schema.json, the policy files of
 * policy_dir (every policies/NAME.yaml) and the rules kept in PostgreSQL, into one
 * snapshot.
 *
 * A file is parsed with spec/yaml_tree (so every node has a line and
 * column), validated against the schema (spec/schema, spec/validate) and
 * then against the rules a schema cannot say (policy/rule.h). Every problem
 * of every file is reported, each as
 *   {"file", "path", "line", "column", "message"}
 * and one bad file fails the whole load: the caller keeps the policy it had. */
#ifndef TG_POLICY_LOAD_H
#define TG_POLICY_LOAD_H

#include <jansson.h>
#include <stddef.h>

#include "core/status.h"
#include "policy/snapshot.h"
#include "tauyaml/schema.h"

#define TG_POLICY_MAX_RULES  2000
#define TG_POLICY_MAX_ERRORS 200

/* policy.schema.json compiled twice: the whole file, and one rule
 * (#/$defs/rule, for rules from the database and the admin API). Immutable;
 * shared between threads. */
typedef struct tg_policy_schema_s {
    tg_tauyaml_schema_t *file;
    tg_tauyaml_schema_t *rule;
} tg_policy_schema_t;

/* NULL with a reason in err[errlen] when the schema cannot be read or compiled. */
tg_policy_schema_t *tg_policy_schema_load_file(const char *path, char *err, size_t errlen);
tg_policy_schema_t *tg_policy_schema_load_text(const char *text, size_t len, char *err,
                                               size_t errlen);
void tg_policy_schema_free(tg_policy_schema_t *s);

/* Build a snapshot from files and database rows.
 *   db_rows: borrowed array of {"id", "version", "rule", "enabled"} (NULL: none)
 *   generation: the database policy generation those rows are from
 * TG_OK: *out is a new snapshot (one reference), *errors NULL.
 * TG_EUNPROCESSABLE: *out NULL, *errors a new array of every problem. */
tg_rc_e tg_policy_snapshot_build(const tg_policy_schema_t *schema, const tg_policy_files_t *files,
                                 const json_t *db_rows, long long generation,
                                 tg_policy_snapshot_t **out, json_t **errors) TG_MUSTCHECK;

/* Validate one rule for the admin API: schema (#/$defs/rule) plus
 * tg_policy_rule_check. `rule` (borrowed) is normalised in place. Returns a
 * new array of {"path", "message"} problems; empty when the rule is good. */
json_t *tg_policy_rule_validate(const tg_policy_schema_t *schema, json_t *rule);

/* Errors as text, one "file:line:column: message" per line, into out[outlen]
 * (cut with "..." when it does not fit). */
void tg_policy_errors_format(const json_t *errors, char *out, size_t outlen);

#endif
