/* Workspaces: the admin API under /v1/admin/workspaces. */
#ifndef TG_API_WORKSPACES_H
#define TG_API_WORKSPACES_H

#include "http/request.h"

void tg_api_admin_workspaces_list(tg_req_t *req);
void tg_api_admin_workspaces_create(tg_req_t *req);
void tg_api_admin_workspace_get(tg_req_t *req);
void tg_api_admin_workspace_patch(tg_req_t *req);
void tg_api_admin_workspace_delete(tg_req_t *req);

#endif
