/* Compute profiles and the Kueue objects admins own: admin resources. */
#ifndef TG_API_CATALOG_H
#define TG_API_CATALOG_H

#include "api/crud.h"

extern const tg_crud_t tg_api_profiles;
extern const tg_crud_t tg_api_flavors;
extern const tg_crud_t tg_api_cluster_queues;
extern const tg_crud_t tg_api_priority_classes;

#endif
