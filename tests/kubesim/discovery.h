/* Discovery: /version, /api, /apis and the per group/version resource
 * lists (legacy format, which kubectl falls back to). */
#ifndef KS_DISCOVERY_H
#define KS_DISCOVERY_H

#include "server.h"

void ks_disc_version(ks_req_t *r);
void ks_disc_api(ks_req_t *r);
void ks_disc_apis(ks_req_t *r);
/* Returns 0 when the group/version is served (reply written), -1 if not. */
int ks_disc_resources(ks_req_t *r, const char *group, const char *version);
/* Is group/version one kubesim serves? */
int ks_disc_gv_known(const char *group, const char *version);

#endif
