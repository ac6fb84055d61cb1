/* PostgreSQL connection pool (libpq).
 *
 * Bounded size; checkout waits up to a timeout and then fails with
 * TG_EUNAVAILABLE (the API answers 503). A connection that broke is closed on
 * release and a fresh one is opened on the next checkout, so the gateway
 * recovers from a database restart without restarting itself.
 *
 * SQL is only ever run through tg_db_exec with a statement declared by
 * TG_STMT: a fixed text with $n parameters, prepared once per connection. */
#ifndef TG_STORE_POOL_H
#define TG_STORE_POOL_H

#include <libpq-fe.h>

#include "core/config.h"
#include "core/mem.h"
#include "core/status.h"

#define TG_STMT_MAX 512

typedef struct tg_stmt_s {
    const char *sql;
    int id; /* assigned on first use; -1 until then */
} tg_stmt_t;

#define TG_STMT(text)                                                                              \
    {                                                                                              \
        .sql = (text), .id = -1                                                                    \
    }

typedef struct tg_db_pool_s tg_db_pool_t;
typedef struct tg_db_conn_s tg_db_conn_t;

typedef struct {
    const char *conninfo; /* URI or key=value; a secret: never logged */
    int size;
    int checkout_timeout_ms;
    int connect_timeout_s;
    int statement_timeout_ms;
    int metrics; /* export taugate_db_pool_* (one pool per process should) */
} tg_db_pool_config_t;

/* The pool the configuration describes: the server's (db_pool_size
 * connections, its statement timeout, taugate_db_pool_* exported), or with
 * one_shot a single connection for a command (no statement timeout, no
 * metrics). */
tg_db_pool_config_t tg_db_pool_config_of(const tg_config_t *cfg, int one_shot);

tg_db_pool_t *tg_db_pool_new(const tg_db_pool_config_t *cfg);
void tg_db_pool_free(tg_db_pool_t *pool);

/* Borrow a connection. TG_EUNAVAILABLE when none is free in time or the
 * database cannot be reached. */
tg_rc_e tg_db_checkout(tg_db_pool_t *pool, tg_db_conn_t **out) TG_MUSTCHECK;
/* Give it back (a NULL conn is ignored). An open transaction is rolled back. */
void tg_db_release(tg_db_pool_t *pool, tg_db_conn_t *conn);

/* Run a declared statement with text parameters (NULL values are SQL NULL).
 * Returns the result (caller PQclear()s it) or NULL with *rc set:
 * TG_EUNAVAILABLE when the connection broke, TG_ECONFLICT on a unique
 * violation, TG_EUNPROCESSABLE on a check/foreign-key violation, TG_EINVAL
 * on a data exception (a malformed value such as a bad timestamp), else
 * TG_EINTERNAL. On success *rc is TG_OK. */
PGresult *tg_db_exec(tg_db_conn_t *conn, tg_stmt_t *stmt, int nparams, const char *const *values,
                     tg_rc_e *rc) TG_MUSTCHECK;
/* Run a statement for its effect only; returns the status. */
tg_rc_e tg_db_run(tg_db_conn_t *conn, tg_stmt_t *stmt, int nparams,
                  const char *const *values) TG_MUSTCHECK;
tg_rc_e tg_db_begin(tg_db_conn_t *conn) TG_MUSTCHECK;
tg_rc_e tg_db_commit(tg_db_conn_t *conn) TG_MUSTCHECK;
void tg_db_rollback(tg_db_conn_t *conn);
/* The raw libpq connection, for the migration runner. */
PGconn *tg_db_pgconn(tg_db_conn_t *conn);
/* The last error text of a connection (no secrets in it). */
const char *tg_db_error(tg_db_conn_t *conn);

#endif
