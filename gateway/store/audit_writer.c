/* The audit writer thread. */
#include "store/audit_writer.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/ids.h"

#define BATCH_MAX 512 /* rows in one statement */

typedef struct audit_waiter_s {
    struct audit_waiter_s *next;
    json_t *row;
    tg_rc_e rc;
    int done;
} audit_waiter_t;

struct tg_audit_writer_s {
    tg_db_pool_t *pool; /* one connection, the writer's own */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work; /* the writer waits for entries */
    pthread_cond_t done; /* requests wait for their batch */
    audit_waiter_t *head, **tail;
    int stop;
};

/* Take up to BATCH_MAX waiters off the queue, oldest first (lock held). */
static audit_waiter_t *writer_take(tg_audit_writer_t *w)
{
    audit_waiter_t *batch = w->head, *last = batch;
    for (int n = 1; n < BATCH_MAX && last->next; n++)
        last = last->next;
    w->head = last->next;
    if (!w->head)
        w->tail = &w->head;
    last->next = NULL;
    return batch;
}

static tg_rc_e writer_store(tg_audit_writer_t *w, audit_waiter_t *batch)
{
    json_t *rows = json_array();
    for (audit_waiter_t *x = batch; x; x = x->next)
        json_array_append(rows, x->row);
    tg_db_conn_t *conn = NULL;
    tg_rc_e rc = tg_db_checkout(w->pool, &conn);
    if (rc == TG_OK)
        rc = tg_store_audit_append_rows(conn, rows);
    tg_db_release(w->pool, conn);
    json_decref(rows);
    return rc;
}

static void *writer_main(void *arg)
{
    tg_audit_writer_t *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->work, &w->lock);
        if (!w->head)
            break; /* stopping, and everything is written */
        audit_waiter_t *batch = writer_take(w);
        pthread_mutex_unlock(&w->lock);
        tg_rc_e rc = writer_store(w, batch);
        pthread_mutex_lock(&w->lock);
        for (audit_waiter_t *x = batch, *n; x; x = n) {
            n = x->next; /* x lives on its request's stack: read first */
            x->rc = rc;
            x->done = 1;
        }
        pthread_cond_broadcast(&w->done);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

tg_audit_writer_t *tg_audit_writer_start(const tg_db_pool_config_t *db)
{
    tg_audit_writer_t *w = tg_xcalloc(1, sizeof(*w));
    tg_db_pool_config_t pc = *db;
    pc.size = 1;
    pc.metrics = 0;
    w->pool = tg_db_pool_new(&pc);
    w->tail = &w->head;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->done, NULL);
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        tg_db_pool_free(w->pool);
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->work);
        pthread_cond_destroy(&w->done);
        free(w);
        return NULL;
    }
    return w;
}

void tg_audit_writer_stop(tg_audit_writer_t *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    tg_db_pool_free(w->pool);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    free(w);
}

tg_rc_e tg_audit_writer_append(tg_audit_writer_t *w, const tg_audit_entry_t *e)
{
    char at[40];
    tg_time_rfc3339(tg_now_wall_us(), at, sizeof(at));
    audit_waiter_t me = {.row = tg_store_audit_row(e, at)};
    if (!me.row)
        return TG_EINVAL;
    pthread_mutex_lock(&w->lock);
    *w->tail = &me;
    w->tail = &me.next;
    pthread_cond_signal(&w->work);
    while (!me.done)
        pthread_cond_wait(&w->done, &w->lock);
    pthread_mutex_unlock(&w->lock);
    json_decref(me.row);
    return me.rc;
}
