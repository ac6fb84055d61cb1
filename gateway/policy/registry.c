/* The policy in force: one reference-counted snapshot, swapped atomically. */
#include "policy/registry.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/metrics.h"

struct tg_policy_registry_s {
    tg_policy_snapshot_t *current; /* atomic pointer; holds one reference */
    unsigned long epoch;           /* atomic; readers register on readers[epoch & 1] */
    long readers[2];               /* atomic */
    pthread_mutex_t write_lock;    /* one writer at a time */
    tg_policy_schema_t *schema;
    char *dir;
    unsigned long files_epoch;       /* readings of the folder so far; under write_lock */
    long reloads_ok, reloads_failed; /* atomic */
};

static void registry_metrics(tg_buf_t *out, void *arg)
{
    tg_policy_registry_t *reg = arg;
    tg_policy_snapshot_t *s = tg_policy_registry_acquire(reg);
    size_t enabled = 0;
    for (size_t i = 0; i < s->nrules; i++)
        enabled += s->rules[i].enabled != 0;
    tg_rc_e rc =
        tg_buf_printf(out,
                      "# HELP taugate_policy_rules Enabled platform policy rules in force.\n"
                      "# TYPE taugate_policy_rules gauge\n"
                      "taugate_policy_rules %zu\n"
                      "# HELP taugate_policy_generation Database policy generation in force.\n"
                      "# TYPE taugate_policy_generation gauge\n"
                      "taugate_policy_generation %lld\n"
                      "# HELP taugate_policy_reloads_total Policy reloads by result.\n"
                      "# TYPE taugate_policy_reloads_total counter\n"
                      "taugate_policy_reloads_total{result=\"ok\"} %ld\n"
                      "taugate_policy_reloads_total{result=\"error\"} %ld\n",
                      enabled, s->generation, __atomic_load_n(&reg->reloads_ok, __ATOMIC_RELAXED),
                      __atomic_load_n(&reg->reloads_failed, __ATOMIC_RELAXED));
    (void)rc; /* a scrape past its buffer cap is cut by the caller */
    tg_policy_snapshot_release(s);
}

tg_policy_registry_t *tg_policy_registry_new(tg_policy_schema_t *schema, const char *dir)
{
    tg_policy_registry_t *reg = tg_xcalloc(1, sizeof(*reg));
    reg->current = tg_policy_snapshot_new();
    pthread_mutex_init(&reg->write_lock, NULL);
    reg->schema = schema;
    reg->dir = tg_xstrdup(dir ? dir : "policies");
    tg_metrics_register(registry_metrics, reg);
    return reg;
}

void tg_policy_registry_free(tg_policy_registry_t *reg)
{
    if (!reg)
        return;
    tg_metrics_unregister(registry_metrics, reg);
    tg_policy_snapshot_release(reg->current);
    pthread_mutex_destroy(&reg->write_lock);
    tg_policy_schema_free(reg->schema);
    free(reg->dir);
    free(reg);
}

const tg_policy_schema_t *tg_policy_registry_schema(const tg_policy_registry_t *reg)
{
    return reg->schema;
}

const char *tg_policy_registry_dir(const tg_policy_registry_t *reg)
{
    return reg->dir;
}

tg_policy_snapshot_t *tg_policy_registry_acquire(tg_policy_registry_t *reg)
{
    /* Register on the current epoch's counter; if a writer flipped the epoch
     * meanwhile, move to the new one (the writer waits only for the old). */
    unsigned long e;
    for (;;) {
        e = __atomic_load_n(&reg->epoch, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&reg->readers[e & 1], 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&reg->epoch, __ATOMIC_SEQ_CST) == e)
            break;
        __atomic_sub_fetch(&reg->readers[e & 1], 1, __ATOMIC_SEQ_CST);
    }
    tg_policy_snapshot_t *s = __atomic_load_n(&reg->current, __ATOMIC_SEQ_CST);
    tg_policy_snapshot_ref(s);
    __atomic_sub_fetch(&reg->readers[e & 1], 1, __ATOMIC_SEQ_CST);
    return s;
}

static void registry_swap(tg_policy_registry_t *reg, tg_policy_snapshot_t *snap)
{
    tg_policy_snapshot_t *old = __atomic_exchange_n(&reg->current, snap, __ATOMIC_SEQ_CST);
    /* A reader that could still see `old` registered before the flip, on
     * the old epoch's counter; once that drains, nobody can take a new
     * reference to `old` and ours may go. */
    unsigned long e = __atomic_fetch_add(&reg->epoch, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&reg->readers[e & 1], __ATOMIC_SEQ_CST) != 0)
        sched_yield();
    tg_policy_snapshot_release(old);
}

/* A snapshot with the newer half of each: the files of one, the database
 * rows of the other. NULL when that does not load (it did before, so only
 * on a bug). */
static tg_policy_snapshot_t *registry_merge(tg_policy_registry_t *reg,
                                            const tg_policy_snapshot_t *with_files,
                                            const tg_policy_snapshot_t *with_rows)
{
    tg_policy_snapshot_t *m = NULL;
    json_t *errors = NULL;
    if (tg_policy_snapshot_build(reg->schema, &with_files->files, with_rows->db_rows,
                                 with_rows->generation, &m, &errors) != TG_OK) {
        json_decref(errors);
        return NULL;
    }
    m->files_epoch = with_files->files_epoch;
    return m;
}

int tg_policy_registry_install(tg_policy_registry_t *reg, tg_policy_snapshot_t *snap)
{
    pthread_mutex_lock(&reg->write_lock);
    tg_policy_snapshot_t *cur = __atomic_load_n(&reg->current, __ATOMIC_SEQ_CST);
    long long in_force = cur->generation;
    int rows_ok = snap->generation >= cur->generation;
    int files_ok = snap->files_epoch >= cur->files_epoch;
    tg_policy_snapshot_t *put = NULL;
    if (rows_ok && files_ok) {
        put = snap;
        snap = NULL;
    } else if (rows_ok && snap->generation > cur->generation) {
        /* Built concurrently with the one in force (an admin change read
         * the database while a SIGHUP re-read the files): keep the newer
         * half of each. */
        put = registry_merge(reg, cur, snap);
    } else if (files_ok && snap->files_epoch > cur->files_epoch) {
        put = registry_merge(reg, snap, cur);
    }
    if (put)
        registry_swap(reg, put);
    pthread_mutex_unlock(&reg->write_lock);
    if (!put)
        tg_log_info("policy", "dropped a policy built from generation %lld; %lld is in force",
                    snap->generation, in_force);
    else
        tg_log_info("policy", "policy in force: %zu rules, generation %lld, digest %.16s",
                    put->nrules, put->generation, put->digest);
    tg_policy_snapshot_release(snap);
    return put != NULL;
}

tg_rc_e tg_policy_registry_build(tg_policy_registry_t *reg, const json_t *db_rows,
                                 long long generation, int reread_files, tg_policy_snapshot_t **out,
                                 json_t **errors)
{
    tg_policy_files_t files = {0};
    unsigned long epoch;
    *out = NULL;
    *errors = NULL;
    if (reread_files) {
        pthread_mutex_lock(&reg->write_lock);
        epoch = ++reg->files_epoch;
        pthread_mutex_unlock(&reg->write_lock);
        json_t *read_errors = json_array();
        if (tg_policy_files_read(reg->dir, &files, read_errors) != TG_OK) {
            tg_policy_files_clean(&files);
            *errors = read_errors;
            return TG_EUNPROCESSABLE;
        }
        json_decref(read_errors);
    } else {
        tg_policy_snapshot_t *cur = tg_policy_registry_acquire(reg);
        tg_policy_files_copy(&files, &cur->files);
        epoch = cur->files_epoch;
        tg_policy_snapshot_release(cur);
    }
    tg_rc_e rc = tg_policy_snapshot_build(reg->schema, &files, db_rows, generation, out, errors);
    if (rc == TG_OK)
        (*out)->files_epoch = epoch;
    tg_policy_files_clean(&files);
    return rc;
}

void tg_policy_registry_count_failure(tg_policy_registry_t *reg)
{
    __atomic_add_fetch(&reg->reloads_failed, 1, __ATOMIC_RELAXED);
}

tg_rc_e tg_policy_registry_reload(tg_policy_registry_t *reg, const json_t *db_rows,
                                  long long generation, int reread_files, json_t **errors)
{
    tg_policy_snapshot_t *snap = NULL;
    tg_rc_e rc = tg_policy_registry_build(reg, db_rows, generation, reread_files, &snap, errors);
    if (rc != TG_OK) {
        char text[2048];
        tg_policy_errors_format(*errors, text, sizeof(text));
        tg_log_error("policy", "policy not reloaded; the previous policy stays in force:\n%s",
                     text);
        tg_policy_registry_count_failure(reg);
        return rc;
    }
    tg_policy_registry_install(reg, snap);
    __atomic_add_fetch(&reg->reloads_ok, 1, __ATOMIC_RELAXED);
    return TG_OK;
}

long long tg_policy_registry_generation(tg_policy_registry_t *reg)
{
    tg_policy_snapshot_t *s = tg_policy_registry_acquire(reg);
    long long g = s->generation;
    tg_policy_snapshot_release(s);
    return g;
}
