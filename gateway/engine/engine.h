/* The engine: background loops that carry accepted runs to the cluster and
 * follow them there. Any number of replicas may run it at once: the outbox
 * is claimed with FOR UPDATE SKIP LOCKED, and state transitions are
 * idempotent (store/lifecycle.h), so no leader is needed for these loops. */
#ifndef TG_ENGINE_ENGINE_H
#define TG_ENGINE_ENGINE_H

#include "core/config.h"
#include "core/signer.h"
#include "kube/client.h"
#include "store/pool.h"

typedef struct tg_engine_s tg_engine_t;

/* Start the loops. NULL with a message when they cannot start. */
tg_engine_t *tg_engine_start(const tg_config_t *cfg, tg_db_pool_t *pool, tg_kube_client_t *kube,
                             const tg_signer_t *signer, char *err, size_t errlen);
/* Wake the submitter now (a run was just accepted on this replica). */
void tg_engine_kick(tg_engine_t *e);
/* Stop every loop and wait for them; NULL-safe. */
void tg_engine_stop(tg_engine_t *e);

#endif
