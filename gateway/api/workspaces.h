/* Workspaces, their LocalQueues and members: admin resources. */
#ifndef TG_API_WORKSPACES_H
#define TG_API_WORKSPACES_H

#include "api/crud.h"

extern const tg_crud_t tg_api_workspaces;
extern const tg_crud_t tg_api_local_queues;
extern const tg_crud_t tg_api_members;

#endif
