/* The reconciler's thread: leadership by advisory lock, a step per interval
 * or kick, and its Prometheus series (see reconcile.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/monotonic.h"
#include "core/log.h"
#include "core/metrics.h"
#include "engine/reconcile.h"
#include "engine/engine.h"

/* pg_try_advisory_lock(int4, int4): "taug", "Kueu". The two-key form lives
 * in its own key space (objsubid 2), apart from the migrator's bigint lock. */
#define RL_KEY1 "1952544103"
#define RL_KEY2 "1265984885"

#define RL_FOLLOWER_RETRY_S 1

static tg_stmt_t stmt_try_lock = TG_STMT("SELECT pg_try_advisory_lock($1::int, $2::int)");
static tg_stmt_t stmt_holds_lock =
    TG_STMT("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND pid = pg_backend_pid() AND classid = $1::oid AND objid = $2::oid"
            " AND objsubid = 2");

struct tg_reconcile_loop_s {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int stop, kicked;
    atomic_int stop_flag;
    atomic_int leader;
    tg_db_pool_t *lock_pool; /* one dedicated connection */
    tg_db_conn_t *lock_conn; /* held while leading */
    tg_kube_client_t *kube;
    tg_reconcile_opts_t opts;
    char *conninfo;
    char identity[200];
    /* metrics */
    atomic_long steps_ok, steps_failed, created, updated, corrected, deleted, drifted, failed;
};

static void rl_lose(tg_reconcile_loop_t *rl, const char *why)
{
    if (rl->lock_conn) {
        tg_db_release(rl->lock_pool, rl->lock_conn);
        rl->lock_conn = NULL;
    }
    if (atomic_exchange(&rl->leader, 0))
        tg_log_warn("reconcile", "no longer the Kueue reconciler leader: %s", why);
}

/* Hold (or try to take) the lock. RET: 1 when this process leads. */
static int rl_lead(tg_reconcile_loop_t *rl)
{
    static const char *const keys[] = {RL_KEY1, RL_KEY2};
    tg_rc_e rc;
    if (rl->lock_conn) {
        PGresult *r = tg_db_exec(rl->lock_conn, &stmt_holds_lock, 2, keys, &rc);
        int held = r && PQntuples(r) == 1 && atoi(PQgetvalue(r, 0, 0)) > 0;
        PQclear(r);
        if (held)
            return 1;
        rl_lose(rl, r ? "the lock is gone" : "its database connection broke");
    }
    if (tg_db_checkout(rl->lock_pool, &rl->lock_conn) != TG_OK) {
        rl->lock_conn = NULL;
        return 0;
    }
    PGresult *r = tg_db_exec(rl->lock_conn, &stmt_try_lock, 2, keys, &rc);
    int got = r && PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    if (!got) {
        tg_db_release(rl->lock_pool, rl->lock_conn);
        rl->lock_conn = NULL;
        return 0;
    }
    atomic_store(&rl->leader, 1);
    tg_log_info("reconcile", "%s leads the Kueue reconciler", rl->identity);
    return 1;
}

static void rl_count(tg_reconcile_loop_t *rl, const tg_reconcile_report_t *r, tg_rc_e rc)
{
    atomic_fetch_add(rc == TG_OK ? &rl->steps_ok : &rl->steps_failed, 1);
    atomic_fetch_add(&rl->created, r->created);
    atomic_fetch_add(&rl->updated, r->updated);
    atomic_fetch_add(&rl->corrected, r->corrected);
    atomic_fetch_add(&rl->deleted, r->deleted);
    atomic_fetch_add(&rl->drifted, r->drifted);
    atomic_fetch_add(&rl->failed, r->failed);
}

static void rl_step(tg_reconcile_loop_t *rl)
{
    tg_reconcile_report_t rep;
    tg_rc_e rc = tg_reconcile_step_conn(rl->lock_conn, rl->kube, &rl->opts, &rep);
    rl_count(rl, &rep, rc);
    if (rc != TG_OK)
        tg_log_warn("reconcile", "step incomplete: %s", rep.error);
    else if (rep.created || rep.updated || rep.corrected || rep.deleted || rep.drifted ||
             rep.failed)
        tg_log_info("reconcile",
                    "step: %d created, %d updated, %d corrected, %d deleted, %d drifted, "
                    "%d kept, %d failed",
                    rep.created, rep.updated, rep.corrected, rep.deleted, rep.drifted, rep.kept,
                    rep.failed);
}

static void *rl_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tg-reconcile");
    tg_reconcile_loop_t *rl = arg;
    for (;;) {
        pthread_mutex_lock(&rl->lock);
        int stop = rl->stop;
        rl->kicked = 0;
        pthread_mutex_unlock(&rl->lock);
        if (stop)
            break;
        int leading = rl_lead(rl);
        if (leading)
            rl_step(rl);
        pthread_mutex_lock(&rl->lock);
        if (!rl->stop && !rl->kicked) {
            /* a follower asks for the lock every second, so a leader that
             * died is replaced within about a second of PostgreSQL letting
             * its session (and lock) go */
            long secs = !leading                  ? RL_FOLLOWER_RETRY_S
                        : rl->opts.interval_s > 0 ? rl->opts.interval_s
                                                  : 30;
            struct timespec until = tg_mono_deadline_ms((uint64_t)secs * 1000);
            pthread_cond_timedwait(&rl->wake, &rl->lock, &until);
        }
        pthread_mutex_unlock(&rl->lock);
    }
    rl_lose(rl, "stopping");
    return NULL;
}

static void rl_metrics(tg_buf_t *out, void *arg)
{
    tg_reconcile_loop_t *rl = arg;
    /* a full scrape buffer remembers the failure (tg_metrics_collect_fn) */
    if (tg_buf_printf(
            out,
            "# HELP taugate_kueue_reconcile_leader 1 while this replica runs the Kueue "
            "reconciler.\n"
            "# TYPE taugate_kueue_reconcile_leader gauge\n"
            "taugate_kueue_reconcile_leader %d\n"
            "# HELP taugate_kueue_reconcile_steps_total Reconcile steps by outcome.\n"
            "# TYPE taugate_kueue_reconcile_steps_total counter\n"
            "taugate_kueue_reconcile_steps_total{result=\"ok\"} %ld\n"
            "taugate_kueue_reconcile_steps_total{result=\"error\"} %ld\n"
            "# HELP taugate_kueue_objects_total Kueue objects written, by action.\n"
            "# TYPE taugate_kueue_objects_total counter\n"
            "taugate_kueue_objects_total{action=\"created\"} %ld\n"
            "taugate_kueue_objects_total{action=\"updated\"} %ld\n"
            "taugate_kueue_objects_total{action=\"corrected\"} %ld\n"
            "taugate_kueue_objects_total{action=\"deleted\"} %ld\n"
            "taugate_kueue_objects_total{action=\"failed\"} %ld\n"
            "# HELP taugate_kueue_drift_total Hand edits of managed Kueue objects found.\n"
            "# TYPE taugate_kueue_drift_total counter\n"
            "taugate_kueue_drift_total %ld\n",
            atomic_load(&rl->leader), atomic_load(&rl->steps_ok), atomic_load(&rl->steps_failed),
            atomic_load(&rl->created), atomic_load(&rl->updated), atomic_load(&rl->corrected),
            atomic_load(&rl->deleted), atomic_load(&rl->failed),
            atomic_load(&rl->drifted)) != TG_OK)
        return;
}

static void rl_free(tg_reconcile_loop_t *rl)
{
    pthread_cond_destroy(&rl->wake);
    pthread_mutex_destroy(&rl->lock);
    tg_db_pool_free(rl->lock_pool);
    free(rl->conninfo);
    free(rl);
}

tg_reconcile_loop_t *tg_reconcile_loop_start(tg_kube_client_t *kube,
                                             const tg_reconcile_opts_t *opts, char *err,
                                             size_t errlen)
{
    if (!opts->conninfo || !kube) {
        snprintf(err, errlen, "the Kueue reconciler needs a database URL and a cluster");
        return NULL;
    }
    tg_reconcile_loop_t *rl = tg_xcalloc(1, sizeof(*rl));
    pthread_mutex_init(&rl->lock, NULL);
    rl->kube = kube;
    rl->opts = *opts;
    rl->conninfo = tg_xstrdup(opts->conninfo);
    rl->opts.conninfo = rl->conninfo;
    rl->opts.stop = &rl->stop_flag;
    if (opts->identity && *opts->identity) {
        snprintf(rl->identity, sizeof(rl->identity), "%s", opts->identity);
    } else {
        char host[128] = "unknown";
        if (gethostname(host, sizeof(host) - 1) != 0)
            snprintf(host, sizeof(host), "unknown");
        snprintf(rl->identity, sizeof(rl->identity), "%s:%ld", host, (long)getpid());
    }
    rl->opts.identity = rl->identity;
    tg_db_pool_config_t pc = {.conninfo = rl->conninfo,
                              .size = 1,
                              .checkout_timeout_ms = 1000,
                              .connect_timeout_s =
                                  (int)(opts->connect_timeout_s > 0 ? opts->connect_timeout_s : 5),
                              .statement_timeout_ms = 0};
    rl->lock_pool = tg_db_pool_new(&pc);
    tg_cond_init_monotonic(&rl->wake);
    if (pthread_create(&rl->thread, NULL, rl_main, rl) != 0) {
        snprintf(err, errlen, "cannot start the Kueue reconciler thread");
        rl_free(rl);
        return NULL;
    }
    tg_metrics_register(rl_metrics, rl);
    tg_log_info("reconcile", "Kueue reconciler started (every %lds, drift: %s%s)",
                rl->opts.interval_s, rl->opts.correct_drift ? "correct" : "report only",
                rl->opts.adopt ? ", adopting unmanaged objects" : "");
    return rl;
}

void tg_reconcile_loop_stop(tg_reconcile_loop_t *rl)
{
    if (!rl)
        return;
    pthread_mutex_lock(&rl->lock);
    rl->stop = 1;
    atomic_store(&rl->stop_flag, 1);
    pthread_cond_signal(&rl->wake);
    pthread_mutex_unlock(&rl->lock);
    pthread_join(rl->thread, NULL);
    tg_metrics_unregister(rl_metrics, rl);
    rl_free(rl); /* closing the lock session releases the lock */
}

void tg_reconcile_kick(tg_reconcile_loop_t *rl)
{
    if (!rl)
        return;
    pthread_mutex_lock(&rl->lock);
    rl->kicked = 1;
    pthread_cond_signal(&rl->wake);
    pthread_mutex_unlock(&rl->lock);
}

int tg_reconcile_is_leader(tg_reconcile_loop_t *rl)
{
    return rl && atomic_load(&rl->leader);
}
