/* Platform policy over REST, and the policy's lifecycle in the daemon.
 *
 * Admin (platform admins; every change is also in the audit trail and in
 * policy_versions):
 *   GET    /v1/admin/policies                 rules kept in the database (paged)
 *   POST   /v1/admin/policies                 add a rule (201; 409 when the id exists)
 *   GET    /v1/admin/policies/{id}            one rule
 *   PATCH  /v1/admin/policies/{id}            merge-patch a rule; a new version (null
 *                                             removes a field; id and version are fixed)
 *   DELETE /v1/admin/policies/{id}            remove a rule (204)
 *   GET    /v1/admin/policies/{id}/versions   its history, newest first (paged)
 *   GET    /v1/admin/policies:effective       every rule in force (files + database,
 *                                             disabled ones included)
 *   POST   /v1/admin/policies:reload          read the policy files and database
 *                                             again; 422 with file, line and reason
 *                                             when they do not load (nothing changes)
 * Researchers (viewer role or better in the workspace):
 *   GET    /v1/workspaces/{ws}/policy         the rules that can apply there
 *
 * A rule body is one rule of schema/policy.schema.json#/$defs/rule (without
 * `version`, which the gateway keeps). Each write validates the rule, stores
 * it, rebuilds the policy from the database and the policy files in force,
 * and commits and installs it, in one transaction under the policy writers'
 * lock: when the answer comes, the new policy is in force on this replica
 * (other replicas: tg_api_policies_poll). */
#ifndef TG_API_POLICIES_H
#define TG_API_POLICIES_H

#include <jansson.h>

#include "core/status.h"
#include "http/request.h"
#include "policy/registry.h"
#include "store/pool.h"

/* Start-up: load the schema, read the policy folder and the database rules
 * and put them in force. NULL when they do not load, with every problem as
 * "file:line:column: message" lines in err[errlen] (the daemon must not
 * start). */
tg_policy_registry_t *tg_api_policies_start(tg_db_pool_t *pool, const char *schema_file,
                                            const char *dir, char *err, size_t errlen);
/* The handlers (and submissions) use tg_app_t.policies: set before
 * serving; NULL answers 503. */

/* SIGHUP: read the files and the database again. On failure the policy in
 * force stays; *errors (new, may be NULL on success) says why. */
tg_rc_e tg_api_policies_reload(tg_db_pool_t *pool, tg_policy_registry_t *reg,
                               json_t **errors) TG_MUSTCHECK;
/* Periodic (e.g. every 10 s from the daemon's ticker): when the database
 * generation moved (a change through another replica), rebuild with the
 * files in force. Errors are logged. */
void tg_api_policies_poll(tg_db_pool_t *pool, tg_policy_registry_t *reg);

void tg_api_policies_list(tg_req_t *req);
void tg_api_policy_create(tg_req_t *req);
void tg_api_policy_get(tg_req_t *req);
void tg_api_policy_patch(tg_req_t *req);
void tg_api_policy_delete(tg_req_t *req);
void tg_api_policy_versions(tg_req_t *req);
void tg_api_policies_effective(tg_req_t *req);
void tg_api_policies_reload_now(tg_req_t *req);
void tg_api_workspace_policy(tg_req_t *req);

#endif
