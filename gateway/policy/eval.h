/* Policy evaluation: a resolved run config against a policy snapshot.
 *
 * Pure: no I/O, no locks, no global state. The inputs are only read unless
 * the caller says it owns them (patch_in_place): the resolved config shares
 * leaf nodes with the spec and the context and is never modified in place
 * otherwise; when a `default` rule fills a value, the result holds a patched
 * copy of the top level, the provenance and the sections it touched. Safe to
 * call from any number of threads on a shared snapshot.
 *
 * Order: every `default` rule in scope first (in snapshot order; the first
 * rule to fill a field wins), then every `deny` and `warn` rule in scope on
 * the patched config. A rule is in scope when each of its scope lists that is
 * given matches the run's workspace, team, lane and engine.
 *
 * Each rule in scope adds at least one decision:
 *   {"rule_id", "version", "kind", "action", "source", "digest",
 *    "outcome": "allow" | "deny" | "warn" | "default",
 *    "path", "line", "column",       where in the spec (see below)
 *    "actual", "expected",           the values compared (JSON; actual may be null)
 *    "message"}                      deny and warn (and default when the rule
                                     has a message of its own): what the user is told
 * A rule that finds several violations (two env names, three pods) adds one
 * decision per violation. Out-of-scope and disabled rules add none.
 *
 * Locations: decisions name the spec path that set the value (an alias such
 * as `image` when the spec wrote that), with its line and column from the
 * caller's lookup. A value the spec did not write is named by the spec path
 * that would set it and located at what brought it in (policy.profile for a
 * profile value), else at the nearest section the spec wrote, else at 1:1.
 *
 * Messages: the rule's `message` with {actual}, {expected}, {path} and {id}
 * filled in, else a built-in description of the finding; " (policy <id>)"
 * is appended. */
#ifndef TG_POLICY_EVAL_H
#define TG_POLICY_EVAL_H

#include <jansson.h>

#include "core/buf.h"
#include "core/status.h"
#include "policy/snapshot.h"
#include "tauyaml/prov.h"

/* Where a spec path was written: 1 with *line and *column set when the
 * spec has a node at exactly `spec_path` (its key when want_value is 0, else
 * its value), 0 when it has none. tg_policy_locate_pos (policy/hook.h)
 * adapts the spec position table. */
typedef int (*tg_policy_locate_fn)(void *arg, const char *spec_path, int want_value, unsigned *line,
                                   unsigned *column);

typedef struct tg_policy_input_s {
    const json_t *resolved;        /* borrowed: RESOLVED (tauyaml/resolve.h) */
    tg_tauyaml_prov_t *provenance; /* borrowed, may be NULL; written to only with patch_in_place */
    const char *workspace;         /* NULL: resolved policy.workspace */
    const char *team;              /* NULL: resolved policy.team */
    const char *lane;              /* NULL: resolved policy.lane */
    const char *engine;            /* NULL: resolved engine */
    tg_policy_locate_fn locate;
    void *locate_arg;   /* NULL locate: every location is 1:1 */
    int patch_in_place; /* the caller owns `resolved`, `provenance` and the section
                           objects of `resolved` exclusively (as the spec pipeline
                           does between resolving and rendering): fills are written
                           into them instead of a copy. Leaf values are never
                           modified either way. */
} tg_policy_input_t;

/* Outcomes of a decision. */
typedef enum {
    TG_POLICY_ALLOW = 0,
    TG_POLICY_DENIED,
    TG_POLICY_WARNED,
    TG_POLICY_DEFAULTED,
} tg_policy_outcome_e;

/* One decision as recorded during evaluation (turned into JSON only when
 * asked, by tg_policy_result_decisions, so evaluation allocates little). */
typedef struct tg_policy_decision_s {
    const tg_policy_rule_t *rule; /* borrowed from the result's snapshot */
    tg_policy_outcome_e outcome;
    unsigned line, column;
    size_t path;        /* offset of the path in the result's `strs` */
    json_t *actual;     /* owned reference; NULL: JSON null, or see has_int */
    json_int_t iactual; /* the actual value when has_int (saves an allocation) */
    int has_int;
    json_t *message; /* owned string; NULL for allow */
} tg_policy_decision_t;

typedef struct tg_policy_result_s {
    json_t *resolved; /* new reference: the input's, or a patched copy when patched */
    /* the provenance, filled fields saying "policy:<rule id>": read it
     * with tg_policy_result_provenance */
    tg_tauyaml_prov_t *prov_in;  /* the input's (borrowed; may be NULL) */
    tg_tauyaml_prov_t prov_copy; /* the patched copy, when patched without patch_in_place */
    int prov_copied;
    json_t *errors;         /* new array: deny violations, {path, line, column, message, rule_id} */
    json_t *warnings;       /* new array: warn violations, same shape */
    int patched;            /* a default rule filled at least one value */
    char policy_digest[65]; /* the snapshot's digest */
    long long generation;   /* the snapshot's database generation */
    /* the decisions, in evaluation order; read them with tg_policy_result_decisions */
    tg_policy_decision_t *dv;
    size_t ndv, dcap;
    char *strs; /* decision paths, NUL-separated */
    size_t slen, scap;
    tg_policy_snapshot_t *snapshot; /* a reference held for dv[i].rule */
} tg_policy_result_t;

/* Evaluate. Always fills `out` (clean it with tg_policy_result_clean).
 * TG_OK: the run may go ahead (errors empty); TG_EUNPROCESSABLE: at least one
 * deny rule is violated (errors lists every violation); TG_EINVAL: the
 * input has no resolved object (a caller bug). */
tg_rc_e tg_policy_evaluate(const tg_policy_snapshot_t *snap, const tg_policy_input_t *in,
                           tg_policy_result_t *out);
void tg_policy_result_clean(tg_policy_result_t *r);

/* The provenance of the result's config: the input's, patched in place, or
 * the patched copy. Borrowed; never NULL. */
const tg_tauyaml_prov_t *tg_policy_result_provenance(const tg_policy_result_t *r);

/* The decisions as JSON (see the top of this file), for the run's evidence
 * record and the :validate answer. New reference, built on each call (an
 * empty array when `r` is NULL or was never filled). */
json_t *tg_policy_result_decisions(const tg_policy_result_t *r);

/* How many decisions were recorded. */
size_t tg_policy_result_ndecisions(const tg_policy_result_t *r);

/* {"digest", "generation", "decisions"}: what evidence embeds. New reference. */
json_t *tg_policy_result_evidence(const tg_policy_result_t *r);

/* The same as compact JSON text appended to `out`, written directly (no
 * jansson tree; several times cheaper): what a submission stores with its
 * run (runs.policy_decisions takes the _decisions_text form). TG_ETOOLARGE
 * when `out` reaches its ceiling. */
tg_rc_e tg_policy_result_decisions_text(const tg_policy_result_t *r, tg_buf_t *out) TG_MUSTCHECK;
tg_rc_e tg_policy_result_evidence_text(const tg_policy_result_t *r, tg_buf_t *out) TG_MUSTCHECK;

#endif
