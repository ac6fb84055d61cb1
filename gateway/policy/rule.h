/* One platform policy rule: its kinds, its checks beyond the JSON Schema, and
 * its compiled form.
 *
 * A rule is a JSON object shaped by schema/policy.schema.json#/$defs/rule:
 *   {id, description, action: deny|warn|default, message?, scope?, version?,
 *    enabled?, <exactly one kind key>: <its value>}
 * The kind key names the check (allowed_images, max_gpus_per_run, ...). The
 * schema types every kind's value; this module adds what a schema cannot say:
 * exactly one kind key, `default` only for kinds with a value to fill, glob
 * patterns that compile, quantities that parse.
 *
 * A compiled rule keeps a reference to its JSON and borrows every string and
 * list from it, so it is immutable once built and may be shared between
 * threads (see policy/snapshot.h). */
#ifndef TG_POLICY_RULE_H
#define TG_POLICY_RULE_H

#include <jansson.h>
#include <stddef.h>

#include "core/mem.h"
#include "core/quantity.h"
#include "core/status.h"
#include "tauyaml/diag.h"

typedef enum {
    TG_POLICY_DENY = 0,
    TG_POLICY_WARN,
    TG_POLICY_DEFAULT,
} tg_policy_action_e;

typedef enum {
    TG_PK_ALLOWED_IMAGES = 0,
    TG_PK_REQUIRE_IMAGE_DIGEST,
    TG_PK_MAX_GPUS_PER_RUN,
    TG_PK_MAX_GPUS_PER_WORKER,
    TG_PK_MAX_NODES,
    TG_PK_ALLOWED_GPU_CLASSES,
    TG_PK_ALLOWED_PROFILES,
    TG_PK_MAX_ACTIVE_DEADLINE,
    TG_PK_REQUIRE_ACTIVE_DEADLINE,
    TG_PK_REQUIRE_SECURITY_MODE,
    TG_PK_DENIED_ENV_NAMES,
    TG_PK_REQUIRED_EXPERIMENT_FIELDS,
    TG_PK_MAX_RETRIES,
    TG_PK_ALLOWED_PRIORITY_TIERS,
    TG_PK_MAX_CPU_PER_POD,
    TG_PK_MAX_MEMORY_PER_POD,
    TG_PK_ALLOWED_PVCS,
    TG_PK_COUNT
} tg_policy_kind_e;

/* The rule key of a kind ("max_gpus_per_run"); NULL when out of range. */
const char *tg_policy_kind_name(tg_policy_kind_e k);
/* Whether action `default` is meaningful for a kind (it has a value to fill). */
int tg_policy_kind_can_default(tg_policy_kind_e k);
const char *tg_policy_action_name(tg_policy_action_e a);

typedef struct tg_policy_rule_s {
    json_t *json;            /* owned reference: the rule as written (normalised) */
    const char *id;          /* borrowed from json */
    const char *description; /* borrowed from json */
    const char *message;     /* borrowed from json; NULL when the rule has none */
    tg_policy_kind_e kind;
    tg_policy_action_e action;
    int enabled;
    json_int_t version;  /* the file's `version` (default 1) or the database version */
    const json_t *param; /* borrowed: the kind key's value */
    json_int_t ilimit;   /* integer kinds */
    tg_qty_t qlimit;     /* quantity kinds, exact */
    /* scope lists (borrowed arrays of strings); NULL when not narrowed */
    const json_t *scope_workspaces, *scope_teams, *scope_lanes, *scope_engines;
    char *source;          /* owned: "file:default.yaml" or "database" */
    unsigned line;         /* 1-based line of the rule in its file; 0 for the database */
    char digest[17];       /* first 16 hex of the sha256 of the canonical rule JSON */
    json_t *decision_base; /* owned: {rule_id, version, kind, action, source, digest}, the
                              start of each decision (built by tg_policy_rule_seal) */
    json_t *provenance;    /* owned: "policy:<id>", what a filled field's provenance says */
    char *decision_text;   /* owned: decision_base plus "expected" as compact JSON text
                              without its closing brace (policy/decisions.c) */
    size_t decision_text_len;
} tg_policy_rule_t;

/* Check `rule` (borrowed; already valid against the rule schema) for what the
 * schema cannot say. Problems are added to `diag` at `base` + "." + field
 * ("rules[3].max_cpu_per_pod"; base "" for a rule on its own), located
 * through diag->pos. Returns the number of problems added. */
size_t tg_policy_rule_check(const json_t *rule, const char *base, tg_tauyaml_diag_t *diag);

/* Compile a checked rule into `out`. Takes a new reference to `rule`;
 * `source` is copied. `version` 0 means "the rule's own version field, else 1".
 * TG_EINVAL when the rule does not pass tg_policy_rule_check (a caller bug). */
tg_rc_e tg_policy_rule_compile(json_t *rule, const char *source, json_int_t version, unsigned line,
                               tg_policy_rule_t *out) TG_MUSTCHECK;
/* Build r->decision_base once source and version are final. */
void tg_policy_rule_seal(tg_policy_rule_t *r);
/* Release what a compiled rule owns (NULL-safe; the struct itself is the caller's). */
void tg_policy_rule_clean(tg_policy_rule_t *r);

/* The rule as shown to users: its JSON plus {kind, version, source, digest}.
 * New reference. */
json_t *tg_policy_rule_describe(const tg_policy_rule_t *r);

/* Whole-name shell glob match of `name` against a list of patterns
 * (borrowed array of strings). 1 when one matches. */
int tg_policy_match_any(const json_t *patterns, const char *name);

#endif
