/* The platform's catalogue: compute profiles and the Kueue objects admins own
 * (ResourceFlavors, ClusterQueues, WorkloadPriorityClasses). */
#ifndef TG_STORE_CATALOG_H
#define TG_STORE_CATALOG_H

#include "store/crud.h"

extern tg_crud_stmts_t tg_store_profiles;
extern tg_crud_stmts_t tg_store_flavors;
extern tg_crud_stmts_t tg_store_cluster_queues;
extern tg_crud_stmts_t tg_store_priority_classes;

#endif
