/* The effective platform policy at one moment: every rule of the policy
 * files plus the database, compiled, in evaluation order.
 *
 * A snapshot is immutable once built and reference-counted (atomically), so
 * request threads evaluate against the one they acquired while a reload
 * builds and installs the next (policy/registry.h). The last release frees it. */
#ifndef TG_POLICY_SNAPSHOT_H
#define TG_POLICY_SNAPSHOT_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "policy/files.h"
#include "policy/rule.h"

typedef struct tg_policy_snapshot_s {
    long refs;               /* atomic; see tg_policy_snapshot_ref/_release */
    tg_policy_rule_t *rules; /* owned; file rules (by file name, then file order), then
                                database rules (by id); a database rule with a file rule's
                                id takes that rule's place */
    size_t nrules, cap;
    long long generation; /* the database's policy generation it was built from (0: none) */
    time_t loaded_at;
    json_t *sources;           /* owned: [{"source", "rules", "sha256"}] */
    char digest[65];           /* sha256 over every rule's source, version, digest, enabled */
    tg_policy_files_t files;   /* owned: the policy file texts it was built from */
    json_t *db_rows;           /* owned: the database rows it was built from (or NULL) */
    unsigned long files_epoch; /* which reading of the policy folder `files` is (registry) */
} tg_policy_snapshot_t;

/* A new empty snapshot holding one reference. */
tg_policy_snapshot_t *tg_policy_snapshot_new(void);
/* Take another reference (NULL-safe); returns `s`. */
tg_policy_snapshot_t *tg_policy_snapshot_ref(tg_policy_snapshot_t *s);
/* Drop a reference (NULL-safe); the last one frees the snapshot. */
void tg_policy_snapshot_release(tg_policy_snapshot_t *s);

/* Append a compiled rule (its contents are moved in; `r` is zeroed). */
void tg_policy_snapshot_add(tg_policy_snapshot_t *s, tg_policy_rule_t *r);
/* The index of the rule with this id, or -1. */
long tg_policy_snapshot_find(const tg_policy_snapshot_t *s, const char *id);
/* Compute s->digest once every rule is in. */
void tg_policy_snapshot_seal(tg_policy_snapshot_t *s);

/* The rules that can apply in `workspace` (every rule whose scope does not
 * exclude it; NULL: all), for GET /v1/workspaces/{ws}/policy:
 * {"workspace", "digest", "generation", "loaded_at", "sources", "rules": [...]}
 * where each rule is tg_policy_rule_describe(). Disabled rules are listed
 * only when `with_disabled`. New reference. */
json_t *tg_policy_snapshot_effective(const tg_policy_snapshot_t *s, const char *workspace,
                                     int with_disabled);

#endif
