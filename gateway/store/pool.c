/* PostgreSQL connection pool with per-connection prepared statements. */
#include "store/pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/metrics.h"
#include "core/monotonic.h"

struct tg_db_conn_s {
    PGconn *pg;
    int broken;
    tg_db_conn_t *next_idle;
    unsigned char prepared[TG_STMT_MAX];
};

struct tg_db_pool_s {
    tg_db_pool_config_t cfg;
    char *conninfo;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    tg_db_conn_t *idle;
    int total; /* open or being opened */
    int in_use;
    _Atomic uint64_t waits, timeouts, connects, connect_failures;
};

/* Per process: statements are file-scope constants (tg_stmt_t) numbered on
 * first use, and the number names the prepared statement ("s<id>") on every
 * connection of every pool, so one counter hands them out. */
static _Atomic int stmt_next_id;

static void pool_collect(tg_buf_t *out, void *arg)
{
    tg_db_pool_t *p = arg;
    pthread_mutex_lock(&p->lock);
    int in_use = p->in_use, total = p->total;
    pthread_mutex_unlock(&p->lock);
    tg_rc_e rc = tg_buf_printf(
        out,
        "# HELP taugate_db_pool_size Configured PostgreSQL pool size.\n"
        "# TYPE taugate_db_pool_size gauge\ntaugate_db_pool_size %d\n"
        "# HELP taugate_db_pool_open Open PostgreSQL connections.\n"
        "# TYPE taugate_db_pool_open gauge\ntaugate_db_pool_open %d\n"
        "# HELP taugate_db_pool_in_use Connections checked out right now.\n"
        "# TYPE taugate_db_pool_in_use gauge\ntaugate_db_pool_in_use %d\n"
        "# HELP taugate_db_pool_waits_total Checkouts that had to wait for a connection.\n"
        "# TYPE taugate_db_pool_waits_total counter\ntaugate_db_pool_waits_total %llu\n"
        "# HELP taugate_db_pool_timeouts_total Checkouts that gave up (answered 503).\n"
        "# TYPE taugate_db_pool_timeouts_total counter\ntaugate_db_pool_timeouts_total %llu\n"
        "# HELP taugate_db_connects_total Connections opened, by result.\n"
        "# TYPE taugate_db_connects_total counter\n"
        "taugate_db_connects_total{result=\"ok\"} %llu\n"
        "taugate_db_connects_total{result=\"error\"} %llu\n",
        p->cfg.size, total, in_use, (unsigned long long)atomic_load(&p->waits),
        (unsigned long long)atomic_load(&p->timeouts),
        (unsigned long long)atomic_load(&p->connects),
        (unsigned long long)atomic_load(&p->connect_failures));
    (void)rc; /* a truncated scrape is still valid text up to the last line */
}

tg_db_pool_config_t tg_db_pool_config_of(const tg_config_t *cfg, int one_shot)
{
    return (tg_db_pool_config_t){
        .conninfo = cfg->database_url,
        .size = one_shot ? 1 : (int)cfg->db_pool_size,
        .checkout_timeout_ms = (int)cfg->db_checkout_timeout_ms,
        .connect_timeout_s = (int)cfg->db_connect_timeout_s,
        .statement_timeout_ms = one_shot ? 0 : (int)cfg->db_statement_timeout_ms,
        .metrics = !one_shot,
    };
}

tg_db_pool_t *tg_db_pool_new(const tg_db_pool_config_t *cfg)
{
    tg_db_pool_t *p = tg_xcalloc(1, sizeof(*p));
    p->cfg = *cfg;
    p->conninfo = tg_xstrdup(cfg->conninfo);
    p->cfg.conninfo = p->conninfo;
    pthread_mutex_init(&p->lock, NULL);
    tg_cond_init_monotonic(&p->cond);
    if (cfg->metrics)
        tg_metrics_register(pool_collect, p);
    return p;
}

static void pool_conn_close(tg_db_conn_t *c)
{
    if (!c)
        return;
    PQfinish(c->pg);
    free(c);
}

void tg_db_pool_free(tg_db_pool_t *p)
{
    if (!p)
        return;
    tg_metrics_unregister(pool_collect, p);
    for (tg_db_conn_t *c = p->idle, *n; c; c = n) {
        n = c->next_idle;
        pool_conn_close(c);
    }
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p->conninfo);
    free(p);
}

static tg_db_conn_t *pool_connect(tg_db_pool_t *p)
{
    char timeout[16], options[96];
    snprintf(timeout, sizeof(timeout), "%d", p->cfg.connect_timeout_s);
    /* Timestamps in UTC whatever the server's zone: every replica answers
     * the same text, and a run's view built in C (store/runs.c) matches the
     * one PostgreSQL serialises. */
    snprintf(options, sizeof(options), "-c statement_timeout=%d -c TimeZone=UTC",
             p->cfg.statement_timeout_ms);
    const char *keys[] = {"dbname", "connect_timeout", "application_name", "options", NULL};
    const char *vals[] = {p->conninfo, timeout, "taugate", options, NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    if (!pg || PQstatus(pg) != CONNECTION_OK) {
        atomic_fetch_add(&p->connect_failures, 1);
        /* libpq's message names host and port, never the password */
        tg_log_warn("store", "cannot connect to PostgreSQL: %s",
                    pg ? PQerrorMessage(pg) : "out of memory");
        PQfinish(pg);
        return NULL;
    }
    atomic_fetch_add(&p->connects, 1);
    tg_db_conn_t *c = tg_xcalloc(1, sizeof(*c));
    c->pg = pg;
    return c;
}

tg_rc_e tg_db_checkout(tg_db_pool_t *p, tg_db_conn_t **out)
{
    *out = NULL;
    struct timespec deadline = tg_mono_deadline_ms((uint64_t)p->cfg.checkout_timeout_ms);

    pthread_mutex_lock(&p->lock);
    int waited = 0;
    while (!p->idle && p->total >= p->cfg.size) {
        if (!waited) {
            atomic_fetch_add(&p->waits, 1);
            waited = 1;
        }
        if (pthread_cond_timedwait(&p->cond, &p->lock, &deadline) == ETIMEDOUT) {
            pthread_mutex_unlock(&p->lock);
            atomic_fetch_add(&p->timeouts, 1);
            return TG_EUNAVAILABLE;
        }
    }
    tg_db_conn_t *c = p->idle;
    if (c) {
        p->idle = c->next_idle;
        c->next_idle = NULL;
        p->in_use++;
        pthread_mutex_unlock(&p->lock);
        if (PQstatus(c->pg) == CONNECTION_OK) {
            *out = c;
            return TG_OK;
        }
        /* the server closed it while idle: replace it below */
        pool_conn_close(c);
        c = NULL;
    } else {
        p->total++;
        p->in_use++;
        pthread_mutex_unlock(&p->lock);
    }

    c = pool_connect(p);
    if (!c) {
        pthread_mutex_lock(&p->lock);
        p->total--;
        p->in_use--;
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
        return TG_EUNAVAILABLE;
    }
    *out = c;
    return TG_OK;
}

void tg_db_release(tg_db_pool_t *p, tg_db_conn_t *c)
{
    if (!c)
        return;
    if (!c->broken && PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
        PGresult *r = PQexec(c->pg, "ROLLBACK");
        PQclear(r);
    }
    int keep = !c->broken && PQstatus(c->pg) == CONNECTION_OK &&
               PQtransactionStatus(c->pg) == PQTRANS_IDLE;
    pthread_mutex_lock(&p->lock);
    p->in_use--;
    if (keep) {
        c->next_idle = p->idle;
        p->idle = c;
    } else {
        p->total--;
    }
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    if (!keep)
        pool_conn_close(c);
}

static tg_rc_e pool_result_rc(tg_db_conn_t *c, PGresult *r)
{
    if (PQstatus(c->pg) != CONNECTION_OK) {
        c->broken = 1;
        return TG_EUNAVAILABLE;
    }
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (!state)
        return TG_EINTERNAL;
    if (strcmp(state, "23505") == 0)
        return TG_ECONFLICT;
    if (strncmp(state, "23", 2) == 0)
        return TG_EUNPROCESSABLE;
    if (strncmp(state, "08", 2) == 0 || strcmp(state, "57P01") == 0) {
        tg_log_warn("store", "connection dropped (%s): %s", state, PQresultErrorMessage(r));
        c->broken = 1;
        return TG_EUNAVAILABLE;
    }
    if (strcmp(state, "57014") == 0)
        return TG_ETIMEOUT;
    if (strncmp(state, "22", 2) == 0) /* data exception: a value the client sent */
        return TG_EINVAL;
    return TG_EINTERNAL;
}

PGresult *tg_db_exec(tg_db_conn_t *c, tg_stmt_t *stmt, int nparams, const char *const *values,
                     tg_rc_e *rc)
{
    int id = __atomic_load_n(&stmt->id, __ATOMIC_ACQUIRE);
    if (id < 0) {
        int fresh = atomic_fetch_add(&stmt_next_id, 1);
        int expected = -1;
        if (!__atomic_compare_exchange_n(&stmt->id, &expected, fresh, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            fresh = expected; /* another thread numbered it first */
        id = fresh;
    }
    if (id >= TG_STMT_MAX) {
        tg_log_error("store", "more than %d distinct statements; raise TG_STMT_MAX", TG_STMT_MAX);
        *rc = TG_EINTERNAL;
        return NULL;
    }
    char name[16];
    snprintf(name, sizeof(name), "tg%d", id);
    if (!c->prepared[id]) {
        PGresult *pr = PQprepare(c->pg, name, stmt->sql, 0, NULL);
        if (PQresultStatus(pr) != PGRES_COMMAND_OK) {
            *rc = pool_result_rc(c, pr);
            if (*rc != TG_EUNAVAILABLE)
                tg_log_error("store", "prepare failed: %s", PQresultErrorMessage(pr));
            PQclear(pr);
            return NULL;
        }
        PQclear(pr);
        c->prepared[id] = 1;
    }
    PGresult *r = PQexecPrepared(c->pg, name, nparams, values, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        *rc = TG_OK;
        return r;
    }
    *rc = pool_result_rc(c, r);
    if (*rc == TG_EINTERNAL)
        tg_log_error("store", "statement failed: %s", PQresultErrorMessage(r));
    PQclear(r);
    return NULL;
}

tg_rc_e tg_db_run(tg_db_conn_t *c, tg_stmt_t *stmt, int nparams, const char *const *values)
{
    tg_rc_e rc;
    PGresult *r = tg_db_exec(c, stmt, nparams, values, &rc);
    PQclear(r);
    return rc;
}

static tg_rc_e pool_simple(tg_db_conn_t *c, const char *sql)
{
    PGresult *r = PQexec(c->pg, sql);
    tg_rc_e rc = PQresultStatus(r) == PGRES_COMMAND_OK ? TG_OK : pool_result_rc(c, r);
    PQclear(r);
    return rc;
}

tg_rc_e tg_db_begin(tg_db_conn_t *c)
{
    return pool_simple(c, "BEGIN");
}

tg_rc_e tg_db_commit(tg_db_conn_t *c)
{
    return pool_simple(c, "COMMIT");
}

void tg_db_rollback(tg_db_conn_t *c)
{
    if (PQtransactionStatus(c->pg) != PQTRANS_IDLE)
        (void)pool_simple(c, "ROLLBACK");
}

PGconn *tg_db_pgconn(tg_db_conn_t *c)
{
    return c->pg;
}

const char *tg_db_error(tg_db_conn_t *c)
{
    return PQerrorMessage(c->pg);
}
