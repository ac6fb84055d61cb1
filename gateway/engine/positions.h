/* Queue positions: where a pending Workload stands in its LocalQueue, from
 * Kueue's visibility API (GET .../localqueues/{lq}/pendingworkloads).
 *
 * One answer per LocalQueue is shared by every Workload of that queue for
 * about a second (a Workload not in it asks again, at most four times a
 * second per queue), so a queue of 10,000 pending Workloads costs a few
 * requests a second, not one per watch event. Kueue answers at most its
 * page (1,000 by default): a Workload further back has no position.
 *
 * The answers are kept in a tg_positions_t the observer owns.
 *
 * Thread-safety: any thread. */
#ifndef TG_ENGINE_POSITIONS_H
#define TG_ENGINE_POSITIONS_H

#include "kube/client.h"

typedef struct tg_positions_s tg_positions_t;

tg_positions_t *tg_positions_new(void);
/* NULL is fine. */
void tg_positions_free(tg_positions_t *p);

/* *position (1-based) and *pending (the Workloads pending in the queue, as
 * far as the answer goes) for Workload `name` of LocalQueue ns/lq; both 0
 * when unknown (or p is NULL). */
void tg_positions_lookup(tg_positions_t *p, tg_kube_client_t *kube, const char *ns, const char *lq,
                         const char *name, long *position, long *pending);

#endif
