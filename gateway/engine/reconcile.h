/* Kueue reconciler: the platform's rows (flavors, ClusterQueues, LocalQueues,
 * priority classes, workspace namespaces) made real in the cluster.
 *
 * One step (tg_reconcile_step):
 *   1. reads the desired state from PostgreSQL in one snapshot
 *      (store/kueue_sync.h) and renders the objects (render/kueue.h);
 *   2. lists each kind in the cluster, then, in the order Namespace,
 *      ResourceFlavor, WorkloadPriorityClass, ClusterQueue, LocalQueue:
 *      - creates what is missing (namespaces only get created, never changed);
 *      - updates (PUT, keeping others' labels and annotations) a managed
 *        object whose taugate.io/spec-hash annotation is not the desired hash
 *        (the database changed);
 *      - reports drift when a managed object's live spec no longer hashes to
 *        its own annotation (someone edited it by hand): a kueue_drift row
 *        "edited" with a live-vs-desired summary, then, with correct_drift,
 *        puts the desired spec back and closes the row as "corrected";
 *      - leaves an object of the same name that taugate does not manage
 *        alone and reports it ("unmanaged"), unless adopt is set;
 *      - a LocalQueue whose ClusterQueue changed is deleted and recreated
 *        (spec.clusterQueue is immutable), once it has no admitted work;
 *   3. deletes, in reverse order, managed objects no longer in the database,
 *      except a ClusterQueue or LocalQueue that still has admitted or
 *      reserving workloads, and a ResourceFlavor a ClusterQueue still names:
 *      those are kept and reported ("orphan_in_use");
 *   4. a write the cluster refuses is reported ("failed", with its message);
 *      rows of objects that are fine again are closed; the step's counters
 *      go to kueue_sync for GET /v1/admin/drift.
 *
 * Leadership (tg_reconcile_loop_start): the loop holds a PostgreSQL session
 * advisory lock, pg_try_advisory_lock(1952544103, 1265984885), on a connection
 * of its own (a private pool of one); only the holder runs steps, and the
 * step's SQL runs on that same connection, so it never takes a request's
 * pool slot. The lock goes with the session: if the process dies or the
 * connection breaks, another replica takes over within about a second (a
 * follower asks for the lock every second; a clean stop closes the session
 * at once). The holder checks each cycle (pg_locks) that it still holds it.
 *
 * Thread-safety: tg_reconcile_step may run on any thread; the loop functions
 * manage one process-wide loop and may be called from any thread (start and
 * stop not concurrently with each other). */
#ifndef TG_ENGINE_RECONCILE_H
#define TG_ENGINE_RECONCILE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>

#include "kube/client.h"
#include "store/pool.h"

typedef struct tg_reconcile_opts_s {
    const char *conninfo;   /* database URL for the lock connection (loop only; copied) */
    long connect_timeout_s; /* for the lock connection */
    long interval_s;        /* seconds between steps (config reconcile_interval_s) */
    int correct_drift;      /* 1: put hand-edited objects back; 0: report only */
    int adopt;              /* 1: take over same-named objects taugate does not manage */
    const char *identity;   /* this replica in kueue_sync.holder; NULL: "host:pid" */
    atomic_int *stop;       /* optional: cancels a step's Kubernetes calls */
} tg_reconcile_opts_t;

typedef struct tg_reconcile_report_s {
    int created, updated, corrected, deleted, in_sync;
    int drifted;     /* hand edits newly found in this step */
    int unmanaged;   /* same-named objects left alone */
    int kept;        /* objects gone from the database but still in use */
    int failed;      /* writes the cluster refused */
    char error[256]; /* why the step stopped early; "" when it ran through */
} tg_reconcile_report_t;

/* One step with a connection from `pool` (released before returning).
 * RET: TG_OK when every kind could be listed (individual writes may still
 * have failed: see report->failed); otherwise the first error, with
 * report->error saying what. */
tg_rc_e tg_reconcile_step(tg_db_pool_t *pool, tg_kube_client_t *kube,
                          const tg_reconcile_opts_t *opts, tg_reconcile_report_t *report);
/* The same on a connection the caller holds (no transaction is opened). */
tg_rc_e tg_reconcile_step_conn(tg_db_conn_t *conn, tg_kube_client_t *kube,
                               const tg_reconcile_opts_t *opts, tg_reconcile_report_t *report);
/* The counters as {created, updated, ..., error?}; a NEW reference. */
json_t *tg_reconcile_report_json(const tg_reconcile_report_t *r);

/* The loop: kept in the application context (tg_app_t.reconcile). */
typedef struct tg_reconcile_loop_s tg_reconcile_loop_t;

/* Start the loop thread. It tries for the lock, and while
 * it holds it runs a step at once and then every interval_s seconds, or
 * sooner after tg_reconcile_kick (engine/engine.h). Its database work runs on its own lock
 * connection (opts->conninfo), never on the server's pool. `kube` must
 * outlive the loop. Registers Prometheus series taugate_kueue_*.
 * RET: the loop (stop it with tg_reconcile_loop_stop), or NULL with err. */
tg_reconcile_loop_t *tg_reconcile_loop_start(tg_kube_client_t *kube,
                                             const tg_reconcile_opts_t *opts, char *err,
                                             size_t errlen);
/* Stop the loop, wait for it, release the lock, free it. NULL is fine. */
void tg_reconcile_loop_stop(tg_reconcile_loop_t *rl);

#endif
