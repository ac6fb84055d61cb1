/* What a researcher sees of tenancy: their workspaces, the profiles a
 * workspace may use, and their personal access tokens. */
#ifndef TG_API_TENANCY_H
#define TG_API_TENANCY_H

#include "http/request.h"

void tg_api_my_workspaces(tg_req_t *req);
void tg_api_my_workspace(tg_req_t *req);
void tg_api_workspace_profiles(tg_req_t *req);
void tg_api_tokens_create(tg_req_t *req);
void tg_api_tokens_list(tg_req_t *req);
void tg_api_token_revoke(tg_req_t *req);

#endif
