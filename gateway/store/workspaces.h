/* Workspaces and what hangs off them: LocalQueues and members. */
#ifndef TG_STORE_WORKSPACES_H
#define TG_STORE_WORKSPACES_H

#include "store/crud.h"

extern tg_crud_stmts_t tg_store_workspaces;
extern tg_crud_stmts_t tg_store_local_queues; /* nested: workspace */
extern tg_crud_stmts_t tg_store_members;      /* nested: workspace; key: the member id */

#endif
