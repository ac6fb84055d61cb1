/* Who a request acts as, RBAC over the stored Roles, ClusterRoles and
 * bindings, and the review APIs built on it.
 *
 * kubesim has one user of its own, "kubesim-admin" in system:masters,
 * which may do everything. A request that impersonates someone else
 * (Impersonate-User / Impersonate-Group, as `kubectl --as` sends) is
 * authorized with RBAC as a 1.32 server would (403 Forbidden otherwise),
 * so the permissions a deployment manifest grants can be checked against
 * kubesim. Served: SelfSubjectAccessReview, SubjectAccessReview,
 * LocalSubjectAccessReview, SelfSubjectRulesReview (authorization.k8s.io/v1)
 * and SelfSubjectReview (authentication.k8s.io/v1). Aggregated
 * ClusterRoles (aggregationRule) are not expanded. */
#ifndef KS_AUTHZ_H
#define KS_AUTHZ_H

#include <jansson.h>

#include "server.h"

/* Append the review resources of an API group to a discovery list. */
void ks_authz_discovery(const char *group, json_t *resources);
/* Serve /apis/{authorization,authentication}.k8s.io/v1/...; `rest` holds
 * the path segments after the version. Returns 0 when the group is not
 * one of these (nothing written). */
int ks_authz_serve(ks_req_t *r, const char *group, char **rest, int n);
/* Authorize a resource request of an impersonating client: 0 when
 * allowed (or not impersonating), -1 after replying 403. */
int ks_authz_check(ks_req_t *r, const char *group, const char *resource, const char *sub,
                   const char *ns, const char *name);

#endif
