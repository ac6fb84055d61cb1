/* The policy in force: one reference-counted snapshot, swapped atomically.
 *
 * Readers (every :validate and submission) call tg_policy_registry_acquire,
 * which never blocks and never fails: it announces itself on one of two
 * reader counters, loads the current pointer and takes a reference. A writer
 * (SIGHUP, an admin change, a poll that saw a new database generation)
 * builds the next snapshot off to the side; if that fails the current one
 * stays in force and the errors are returned. Installing swaps the pointer,
 * flips the reader epoch and waits (briefly, and only the writer) for the
 * readers of the old epoch to have taken their references before dropping
 * its own: in-flight requests finish on the snapshot they started with, and
 * the last release frees it. Writers are serialised among themselves.
 *
 * The registry does no database I/O: callers pass the database rows (see
 * api/policies.h, which fetches them, and store/policies.h). */
#ifndef TG_POLICY_REGISTRY_H
#define TG_POLICY_REGISTRY_H

#include <jansson.h>

#include "core/status.h"
#include "policy/load.h"
#include "policy/snapshot.h"

typedef struct tg_policy_registry_s tg_policy_registry_t;

/* A registry over policy folder `dir` (copied) validating with `schema`
 * (stolen; freed with the registry). It starts with an empty snapshot; call
 * tg_policy_registry_reload before serving. Registers Prometheus series
 * taugate_policy_rules, taugate_policy_generation and
 * taugate_policy_reloads_total{result}. */
tg_policy_registry_t *tg_policy_registry_new(tg_policy_schema_t *schema, const char *dir);
void tg_policy_registry_free(tg_policy_registry_t *reg);

const tg_policy_schema_t *tg_policy_registry_schema(const tg_policy_registry_t *reg);
const char *tg_policy_registry_dir(const tg_policy_registry_t *reg);

/* The snapshot in force, with a reference the caller must release
 * (tg_policy_snapshot_release). Never NULL; never blocks. */
tg_policy_snapshot_t *tg_policy_registry_acquire(tg_policy_registry_t *reg);

/* Build a snapshot with `db_rows` (borrowed; see tg_policy_snapshot_build)
 * from database generation `generation`, without installing it. The policy
 * files are read again from the folder when `reread_files`, else taken from
 * the snapshot in force (so an admin change never picks up an unreviewed
 * file edit). TG_OK: *out new. TG_EUNPROCESSABLE: *errors new (file, path,
 * line, column, message each). */
tg_rc_e tg_policy_registry_build(tg_policy_registry_t *reg, const json_t *db_rows,
                                 long long generation, int reread_files, tg_policy_snapshot_t **out,
                                 json_t **errors) TG_MUSTCHECK;
/* Put `snap` in force (stolen). Reloads may race (a SIGHUP re-reading the
 * files while an admin change reads the database), so each half is kept
 * only when it is not older than the one in force: a snapshot with newer
 * rows but older files (or the reverse) is merged with the one in force, and
 * one older in both is dropped. Returns 1 when something was installed. */
int tg_policy_registry_install(tg_policy_registry_t *reg, tg_policy_snapshot_t *snap);

/* Build and install. On failure the policy in force is kept, *errors is set
 * (new) and the failure is counted and logged. */
tg_rc_e tg_policy_registry_reload(tg_policy_registry_t *reg, const json_t *db_rows,
                                  long long generation, int reread_files,
                                  json_t **errors) TG_MUSTCHECK;

/* Record a reload that failed before building (the database could not be
 * read), for the reloads_total{result="error"} series. */
void tg_policy_registry_count_failure(tg_policy_registry_t *reg);

/* The database generation of the snapshot in force. */
long long tg_policy_registry_generation(tg_policy_registry_t *reg);

#endif
