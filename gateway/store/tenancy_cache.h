/* Tenancy facts that almost every request reads and that rarely change —
 * the roles a subject holds in a workspace, a workspace's resolution
 * context — kept in memory so a request does not pay a query for them.
 *
 * Coherent across replicas: triggers on the tables behind these facts
 * NOTIFY taugate_tenancy on commit (migration 0009), and a listener thread
 * on its own connection bumps a generation that voids every entry read
 * before it. An entry is stamped with the generation seen before its query,
 * so a change that commits while the query runs voids it too. While the
 * listener is disconnected nothing is served from memory, and entries also
 * expire after a TTL as a last resort. Changes made through this process
 * invalidate at once (tg_tenancy_cache_invalidate), without waiting for the
 * notification to come back. */
#ifndef TG_STORE_TENANCY_CACHE_H
#define TG_STORE_TENANCY_CACHE_H

#include <jansson.h>

#include "store/pool.h"

typedef struct tg_tenancy_cache_s tg_tenancy_cache_t;

typedef struct {
    const char *conninfo; /* the listener's own connection */
    int connect_timeout_s;
    int ttl_ms;  /* an entry's life at most; 0 disables caching */
    int wait_ms; /* a miss waits this long at most for another request's read */
} tg_tenancy_cache_config_t;

/* Start the listener. With ttl_ms 0, NULL is returned, and the functions
 * below then always query. */
tg_tenancy_cache_t *tg_tenancy_cache_start(const tg_tenancy_cache_config_t *cfg);
void tg_tenancy_cache_stop(tg_tenancy_cache_t *c);
void tg_tenancy_cache_invalidate(tg_tenancy_cache_t *c);

/* As tg_store_member_roles and tg_store_resolve_context, through the cache
 * (c may be NULL). New references in *roles and *out, which may be shared
 * with the cache and other requests: read them, never change them. */
tg_rc_e tg_tenancy_roles(tg_tenancy_cache_t *c, tg_db_conn_t *conn, const char *workspace,
                         const char *subject, const char *groups, json_t **roles,
                         int *exists) TG_MUSTCHECK;
tg_rc_e tg_tenancy_context(tg_tenancy_cache_t *c, tg_db_conn_t *conn, const char *workspace,
                           json_t **out) TG_MUSTCHECK;

#endif
