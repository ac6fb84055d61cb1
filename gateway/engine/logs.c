/* The log collector: a scanner thread and one follower thread per container
 * (see logs.h for the design). */
#include "engine/logs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/monotonic.h"
#include "core/ids.h"
#include "core/log.h"
#include "core/metrics.h"
#include "engine/logs_batch.h"
#include "kube/logs.h"
#include "store/logs.h"

#define LOGS_TAIL_CHUNKS 8 /* chunks read back for the resume rule */
#define LOGS_TRUNCATED   " [line truncated by taugate]"
#define LOGS_RETRY_MAX_S 60
#define LOGS_SCAN_GAP_MS 200u /* wakes within this of a scan wait for the next one */
/* A container's stream ends as its pod finishes, a moment before the
 * observer stores the pod's end: the follower looks again after 50, 100,
 * 200, 400, 400... ms, up to LOGS_SETTLE_MS in all, rather than give the
 * stream back and have it claimed, resumed and requested from the cluster
 * once more a second later. A pause is short enough not to hold up a stop. */
#define LOGS_SETTLE_FIRST_MS 50L
#define LOGS_SETTLE_STEP_MS  400L
#define LOGS_SETTLE_MS       1600L

typedef struct logs_follower_s logs_follower_t;

struct tg_logs_collector_s {
    tg_db_pool_t *pool;
    tg_kube_client_t *kube;
    tg_logs_config_t cfg;
    char owner[160];
    pthread_t scanner;
    int started;
    pthread_mutex_t lock; /* followers list, stopping, woken */
    pthread_cond_t cond;
    int stopping;
    int woken;
    logs_follower_t *followers;
    int nfollowers;
    uint64_t last_scan_us;
    uint64_t last_renew_us;
    uint64_t last_prune_us;
    atomic_ullong bytes_total;
    atomic_ullong chunks_total;
    atomic_ullong errors_total;
    atomic_ullong invalid_total;
    atomic_ullong pruned_total;
    atomic_int active;
};

struct logs_follower_s {
    tg_logs_collector_t *col;
    tg_log_target_t t;
    pthread_t thread;
    atomic_int finished;  /* the thread has ended: join it */
    atomic_int stop;      /* kube stop flag */
    pthread_mutex_t lock; /* batch, seq, resume, partial, lost, store_failed */
    tg_logs_batch_t batch;
    long next_seq;
    tg_logs_resume_t resume;
    tg_buf_t partial;        /* a line longer than max_line_bytes: its first piece */
    int lost;                /* lease lost or seq taken: someone else writes now */
    int store_failed;        /* the batch hit its ceiling and could not be stored */
    uint64_t flush_retry_us; /* after a failed store, wait until then to try again */
    logs_follower_t *next;
};

/* ---- storing batches ---- */

/* Store the batch as the next chunk. Caller holds f->lock. */
static tg_rc_e follower_flush(logs_follower_t *f)
{
    tg_logs_collector_t *col = f->col;
    if (f->batch.lines == 0 || f->lost)
        return TG_OK;
    tg_db_conn_t *conn = NULL;
    tg_rc_e rc = tg_db_checkout(col->pool, &conn);
    if (rc != TG_OK)
        return rc;
    char first[48] = "", last[48] = "";
    if (f->batch.has_ts) {
        tg_logs_ts_format_ns(f->batch.first_ns, first, sizeof(first));
        tg_logs_ts_format_ns(f->batch.last_ns, last, sizeof(last));
    }
    tg_log_chunk_in_t in = {.seq = f->next_seq,
                            .content = f->batch.content.data,
                            .len = f->batch.content.len,
                            .lines = f->batch.lines,
                            .first_at = f->batch.has_ts ? first : NULL,
                            .last_at = f->batch.has_ts ? last : NULL,
                            .metrics = f->batch.metrics,
                            .checkpoints = f->batch.checkpoints};
    rc = tg_store_log_chunk_put(conn, &f->t, col->owner, col->cfg.lease_s, &in);
    if (rc == TG_EINTERNAL || rc == TG_EINVAL || rc == TG_EUNPROCESSABLE) {
        /* Not the database being away: something in the batch was refused.
         * Keep the log text and drop what the markers carried, rather than
         * retrying a batch that can never be stored. */
        tg_log_error("logs", "%s/%s/%s: chunk %ld refused; storing it without its markers",
                     f->t.namespace_, f->t.pod, f->t.container, f->next_seq);
        in.metrics = NULL;
        in.checkpoints = NULL;
        rc = tg_store_log_chunk_put(conn, &f->t, col->owner, col->cfg.lease_s, &in);
    }
    tg_db_release(col->pool, conn);
    f->flush_retry_us = rc == TG_OK ? 0 : tg_now_mono_us() + 1000000;
    if (rc == TG_OK) {
        atomic_fetch_add(&col->bytes_total, (unsigned long long)in.len);
        atomic_fetch_add(&col->chunks_total, 1);
        atomic_fetch_add(&col->invalid_total, (unsigned long long)f->batch.invalid_markers);
        f->next_seq++;
        tg_logs_batch_reset(&f->batch);
    } else if (rc == TG_ECONFLICT) {
        tg_log_warn("logs", "%s/%s/%s: lost the claim or chunk %ld exists; stopping",
                    f->t.namespace_, f->t.pod, f->t.container, f->next_seq);
        f->lost = 1;
        tg_logs_batch_reset(&f->batch);
    }
    return rc;
}

/* Add one whole line (timestamp first). Caller holds f->lock. RET: 0 to go
 * on, 1 to stop the stream. */
static int follower_take_line(logs_follower_t *f, const char *line, size_t len)
{
    int64_t ns = 0;
    const char *text;
    size_t tlen;
    int has_ts = tg_logs_line_split(line, len, &ns, &text, &tlen);
    if (!tg_logs_resume_keep(&f->resume, has_ts, ns))
        return 0;
    uint64_t now = tg_now_mono_us();
    if (tg_logs_batch_add(&f->batch, line, len, now) != TG_OK) {
        /* at the ceiling: the database did not take the earlier batches */
        if (follower_flush(f) != TG_OK || tg_logs_batch_add(&f->batch, line, len, now) != TG_OK) {
            f->store_failed = !f->lost;
            return 1;
        }
    }
    if (now >= f->flush_retry_us &&
        tg_logs_batch_due(&f->batch, now, (uint64_t)f->col->cfg.flush_interval_ms * 1000))
        (void)follower_flush(f); /* on failure the batch waits for the next try */
    return f->lost;
}

/* kube/logs.h callback: lines, or pieces of an over-long line. */
static int follower_line(const char *data, size_t len, int flags, void *arg)
{
    logs_follower_t *f = arg;
    int stop = 0;
    pthread_mutex_lock(&f->lock);
    if (flags & TG_KUBE_LOG_PARTIAL) {
        if (f->partial.len == 0 && tg_buf_append(&f->partial, data, len) != TG_OK)
            tg_buf_reset(&f->partial);
    } else if (f->partial.len) {
        if (tg_buf_puts(&f->partial, LOGS_TRUNCATED) == TG_OK)
            stop = follower_take_line(f, f->partial.data, f->partial.len);
        tg_buf_reset(&f->partial);
    } else {
        stop = follower_take_line(f, data, len);
    }
    pthread_mutex_unlock(&f->lock);
    return stop || atomic_load(&f->stop);
}

/* ---- one follower ---- */

static int follower_resume(logs_follower_t *f)
{
    tg_db_conn_t *conn = NULL;
    if (tg_db_checkout(f->col->pool, &conn) != TG_OK)
        return -1;
    char **contents = NULL;
    size_t *lens = NULL, n = 0;
    long last_seq = 0;
    tg_rc_e rc = tg_store_log_tail(conn, &f->t, LOGS_TAIL_CHUNKS, &contents, &lens, &n, &last_seq);
    tg_db_release(f->col->pool, conn);
    if (rc != TG_OK)
        return -1;
    tg_logs_resume_from_content(&f->resume, (const char *const *)contents, lens, n);
    f->next_seq = last_seq + 1;
    for (size_t i = 0; i < n; i++)
        free(contents[i]);
    free(contents);
    free(lens);
    return 0;
}

static int phase_terminal(const char *phase)
{
    return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

/* Give the claim back with the outcome of the follow. */
static void follower_release(logs_follower_t *f, int done, int failed, const char *error,
                             long retry_s)
{
    tg_db_conn_t *conn = NULL;
    if (tg_db_checkout(f->col->pool, &conn) != TG_OK)
        return; /* the lease runs out by itself */
    if (tg_store_log_release(conn, &f->t, f->col->owner, done, failed, error, retry_s) != TG_OK)
        tg_log_warn("logs", "%s/%s/%s: could not release the claim", f->t.namespace_, f->t.pod,
                    f->t.container);
    tg_db_release(f->col->pool, conn);
}

static long follower_backoff(const logs_follower_t *f)
{
    int n = f->t.failures < 6 ? f->t.failures : 6;
    long s = 1L << n;
    return s < LOGS_RETRY_MAX_S ? s : LOGS_RETRY_MAX_S;
}

/* After the stream: is the pod finished (or gone)? */
static int follower_pod_finished(logs_follower_t *f)
{
    tg_db_conn_t *conn = NULL;
    char phase[32] = "";
    if (tg_db_checkout(f->col->pool, &conn) != TG_OK)
        return 0;
    tg_rc_e rc = tg_store_log_pod_phase(conn, &f->t, phase, sizeof(phase));
    tg_db_release(f->col->pool, conn);
    return rc == TG_ENOTFOUND || (rc == TG_OK && phase_terminal(phase));
}

/* After a stream that ended because its container exited: is the pod
 * finished, waiting up to LOGS_SETTLE_MS for the store to say so? */
static int follower_pod_settled(logs_follower_t *f)
{
    for (long step = LOGS_SETTLE_FIRST_MS, waited = 0;;
         waited += step, step = step * 2 < LOGS_SETTLE_STEP_MS ? step * 2 : LOGS_SETTLE_STEP_MS) {
        if (follower_pod_finished(f))
            return 1;
        if (waited + step > LOGS_SETTLE_MS || atomic_load(&f->stop))
            return 0;
        struct timespec pause = {.tv_sec = step / 1000, .tv_nsec = (step % 1000) * 1000000L};
        nanosleep(&pause, NULL);
    }
}

static void *follower_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tg-logfollow");
    logs_follower_t *f = arg;
    tg_logs_collector_t *col = f->col;
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    if (follower_resume(f) != 0) {
        follower_release(f, 0, 1, "database unavailable", follower_backoff(f));
        goto out;
    }
    char since[48] = "";
    if (f->resume.active)
        tg_logs_ts_format_s(f->resume.last_ns, since, sizeof(since));
    tg_kube_logs_opts_t o = {.container = f->t.container,
                             .follow = 1,
                             .timestamps = 1,
                             .since_time = since[0] ? since : NULL,
                             .max_line_bytes = col->cfg.max_line_bytes,
                             .stop = &f->stop};
    tg_rc_e rc = tg_kube_logs(col->kube, f->t.namespace_, f->t.pod, &o, follower_line, f, &res);

    pthread_mutex_lock(&f->lock);
    if (f->partial.len) /* the stream ended inside an over-long line */
        (void)follower_take_line(f, f->partial.data, f->partial.len);
    tg_rc_e frc = follower_flush(f);
    int lost = f->lost, store_failed = f->store_failed || (frc != TG_OK && !lost);
    pthread_mutex_unlock(&f->lock);

    if (lost)
        goto out; /* another writer owns the container now */
    if (store_failed) {
        atomic_fetch_add(&col->errors_total, 1);
        follower_release(f, 0, 1, "could not store the log", follower_backoff(f));
    } else if (atomic_load(&f->stop)) {
        follower_release(f, 0, 0, NULL, 0); /* shutting down: free for another replica */
    } else if (rc == TG_OK) {
        /* the container exited; done once the pod is finished too */
        follower_release(f, follower_pod_settled(f), 0, NULL, 1);
    } else if (res.reason == TG_KUBE_R_NOT_FOUND) {
        tg_log_info("logs", "%s/%s: pod gone; its stored log is final", f->t.namespace_, f->t.pod);
        follower_release(f, 1, 0, NULL, 0);
    } else if (res.reason == TG_KUBE_R_BAD_REQUEST) {
        /* waiting to start, or never started in a finished pod */
        int fin = follower_pod_finished(f);
        follower_release(f, fin, 0, NULL, 2);
    } else {
        atomic_fetch_add(&col->errors_total, 1);
        tg_log_warn("logs", "%s/%s/%s: log stream failed: %s", f->t.namespace_, f->t.pod,
                    f->t.container, res.message ? res.message : tg_kube_reason_name(res.reason));
        follower_release(f, 0, 1, tg_kube_reason_name(res.reason), follower_backoff(f));
    }
out:
    tg_kube_result_clean(&res);
    atomic_store(&f->finished, 1);
    pthread_mutex_lock(&col->lock);
    col->woken = 1; /* let the scanner reap us and look again */
    pthread_cond_signal(&col->cond);
    pthread_mutex_unlock(&col->lock);
    return NULL;
}

static logs_follower_t *follower_new(tg_logs_collector_t *col, const tg_log_target_t *t)
{
    logs_follower_t *f = tg_xcalloc(1, sizeof(*f));
    f->col = col;
    tg_log_target_copy(&f->t, t);
    pthread_mutex_init(&f->lock, NULL);
    tg_logs_batch_init(&f->batch, col->cfg.chunk_max_bytes, col->cfg.max_line_bytes);
    tg_buf_init(&f->partial, col->cfg.max_line_bytes + sizeof(LOGS_TRUNCATED));
    tg_logs_resume_none(&f->resume);
    return f;
}

static void follower_free(logs_follower_t *f)
{
    tg_log_target_clean(&f->t);
    tg_logs_batch_clean(&f->batch);
    tg_buf_clean(&f->partial);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

/* ---- the scanner ---- */

static int collector_has(tg_logs_collector_t *col, const tg_log_target_t *t)
{
    for (logs_follower_t *f = col->followers; f; f = f->next)
        if (!strcmp(f->t.namespace_, t->namespace_) && !strcmp(f->t.pod, t->pod) &&
            !strcmp(f->t.uid, t->uid) && !strcmp(f->t.container, t->container))
            return 1;
    return 0;
}

/* Join followers that ended. Scanner thread only. */
static void collector_reap(tg_logs_collector_t *col)
{
    pthread_mutex_lock(&col->lock);
    logs_follower_t **pp = &col->followers;
    while (*pp) {
        logs_follower_t *f = *pp;
        if (atomic_load(&f->finished)) {
            *pp = f->next;
            col->nfollowers--;
            atomic_store(&col->active, col->nfollowers);
            pthread_mutex_unlock(&col->lock);
            pthread_join(f->thread, NULL);
            follower_free(f);
            pthread_mutex_lock(&col->lock);
            pp = &col->followers;
            continue;
        }
        pp = &f->next;
    }
    pthread_mutex_unlock(&col->lock);
}

/* Store batches that waited long enough, and renew the leases. */
static void collector_tick_followers(tg_logs_collector_t *col, tg_db_conn_t *conn, uint64_t now)
{
    uint64_t interval = (uint64_t)col->cfg.flush_interval_ms * 1000;
    int renew = now - col->last_renew_us >= (uint64_t)col->cfg.lease_s * 1000000 / 3;
    json_t *keys = renew ? json_array() : NULL;
    /* Only the scanner changes the list, so it walks it without col->lock
     * (no database work under that lock). */
    for (logs_follower_t *f = col->followers; f; f = f->next) {
        if (atomic_load(&f->finished))
            continue;
        if (pthread_mutex_trylock(&f->lock) == 0) {
            if (now >= f->flush_retry_us && tg_logs_batch_due(&f->batch, now, interval))
                (void)follower_flush(f);
            pthread_mutex_unlock(&f->lock);
        }
        if (keys)
            json_array_append_new(keys, json_pack("{s:s, s:s, s:s, s:s}", "namespace",
                                                  f->t.namespace_, "pod", f->t.pod, "uid", f->t.uid,
                                                  "container", f->t.container));
    }
    if (keys && json_array_size(keys) &&
        tg_store_log_renew(conn, col->owner, keys, col->cfg.lease_s) != TG_OK)
        tg_log_warn("logs", "could not renew log claims");
    if (renew)
        col->last_renew_us = now;
    json_decref(keys);
}

static void collector_start_followers(tg_logs_collector_t *col, tg_db_conn_t *conn)
{
    pthread_mutex_lock(&col->lock);
    int room = col->cfg.max_followers - col->nfollowers;
    pthread_mutex_unlock(&col->lock);
    if (room <= 0)
        return;
    tg_log_target_t *t = NULL;
    size_t n = 0;
    if (tg_store_log_candidates(conn, room, &t, &n) != TG_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&col->lock);
        int have = collector_has(col, &t[i]) || col->stopping;
        pthread_mutex_unlock(&col->lock);
        if (have || tg_store_log_claim(conn, &t[i], col->owner, col->cfg.lease_s) != TG_OK)
            continue;
        logs_follower_t *f = follower_new(col, &t[i]);
        if (pthread_create(&f->thread, NULL, follower_main, f) != 0) {
            tg_log_error("logs", "cannot start a log follower thread");
            if (tg_store_log_release(conn, &t[i], col->owner, 0, 0, NULL, 1) != TG_OK)
                tg_log_warn("logs", "could not release a claim (it runs out by itself)");
            follower_free(f);
            break;
        }
        tg_log_debug("logs", "following %s/%s/%s (run %s attempt %d)", t[i].namespace_, t[i].pod,
                     t[i].container, t[i].run_id, t[i].attempt);
        pthread_mutex_lock(&col->lock);
        f->next = col->followers;
        col->followers = f;
        col->nfollowers++;
        atomic_store(&col->active, col->nfollowers);
        pthread_mutex_unlock(&col->lock);
    }
    tg_log_targets_free(t, n);
}

static void collector_prune(tg_logs_collector_t *col, tg_db_conn_t *conn, uint64_t now)
{
    if (col->cfg.prune_interval_s <= 0 ||
        (col->last_prune_us &&
         now - col->last_prune_us < (uint64_t)col->cfg.prune_interval_s * 1000000))
        return;
    col->last_prune_us = now;
    long deleted = 0;
    if (tg_store_log_prune(conn, &deleted) != TG_OK) {
        tg_log_warn("logs", "log retention pass failed");
        return;
    }
    atomic_fetch_add(&col->pruned_total, (unsigned long long)deleted);
    if (deleted)
        tg_log_info("logs", "retention: deleted %ld log chunks", deleted);
}

static void *collector_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tg-logs");
    tg_logs_collector_t *col = arg;
    int scan_due = 0; /* woken (a follower ended) since the last scan */
    pthread_mutex_lock(&col->lock);
    while (!col->stopping) {
        if (!col->woken) {
            /* wake often enough that a batch waits at most ~1.25 flush intervals */
            long ms = col->cfg.scan_interval_ms;
            if (col->cfg.flush_interval_ms / 4 < ms)
                ms = col->cfg.flush_interval_ms / 4 > 0 ? col->cfg.flush_interval_ms / 4 : 1;
            struct timespec until = tg_mono_deadline_ms((uint64_t)ms);
            pthread_cond_timedwait(&col->cond, &col->lock, &until);
        }
        int woken = col->woken;
        col->woken = 0;
        if (col->stopping)
            break;
        pthread_mutex_unlock(&col->lock);

        collector_reap(col);
        uint64_t now = tg_now_mono_us();
        /* A follower's end asks for a scan, but at most one per LOGS_SCAN_GAP_MS: when
         * hundreds of followers end each second, one scan serves them all
         * (the scan's cost is per pending container, each wake would pay it). */
        scan_due |= woken;
        uint64_t gap = now - col->last_scan_us;
        int scan = (scan_due && gap >= LOGS_SCAN_GAP_MS * 1000u) ||
                   gap >= (uint64_t)col->cfg.scan_interval_ms * 1000;
        tg_db_conn_t *conn = NULL;
        if (tg_db_checkout(col->pool, &conn) == TG_OK) {
            collector_tick_followers(col, conn, now);
            if (scan) {
                col->last_scan_us = now;
                scan_due = 0;
                collector_start_followers(col, conn);
                collector_prune(col, conn, now);
            }
            tg_db_release(col->pool, conn);
        }
        pthread_mutex_lock(&col->lock);
    }
    pthread_mutex_unlock(&col->lock);
    return NULL;
}

/* ---- metrics ---- */

static void collector_metrics(tg_buf_t *out, void *arg)
{
    tg_logs_collector_t *col = arg;
    tg_rc_e rc = tg_buf_printf(
        out,
        "# HELP taugate_log_bytes_stored_total Pod log bytes stored in log_chunks.\n"
        "# TYPE taugate_log_bytes_stored_total counter\n"
        "taugate_log_bytes_stored_total %llu\n"
        "# HELP taugate_log_chunks_stored_total Log chunks stored.\n"
        "# TYPE taugate_log_chunks_stored_total counter\n"
        "taugate_log_chunks_stored_total %llu\n"
        "# HELP taugate_log_followers Pod container log streams being followed.\n"
        "# TYPE taugate_log_followers gauge\n"
        "taugate_log_followers %d\n"
        "# HELP taugate_log_follow_errors_total Log follows that failed (stream or storage).\n"
        "# TYPE taugate_log_follow_errors_total counter\n"
        "taugate_log_follow_errors_total %llu\n"
        "# HELP taugate_log_markers_invalid_total Marker lines (TAU_METRIC, TAU_CHECKPOINT) "
        "refused.\n"
        "# TYPE taugate_log_markers_invalid_total counter\n"
        "taugate_log_markers_invalid_total %llu\n"
        "# HELP taugate_log_chunks_pruned_total Log chunks deleted by the retention pass.\n"
        "# TYPE taugate_log_chunks_pruned_total counter\n"
        "taugate_log_chunks_pruned_total %llu\n",
        atomic_load(&col->bytes_total), atomic_load(&col->chunks_total), atomic_load(&col->active),
        atomic_load(&col->errors_total), atomic_load(&col->invalid_total),
        atomic_load(&col->pruned_total));
    (void)rc; /* a full scrape buffer truncates the output; nothing else to do */
}

/* ---- lifecycle ---- */

tg_logs_collector_t *tg_logs_collector_new(tg_db_pool_t *pool, tg_kube_client_t *kube,
                                           const tg_logs_config_t *cfg)
{
    tg_logs_collector_t *col = tg_xcalloc(1, sizeof(*col));
    col->pool = pool;
    col->kube = kube;
    if (cfg)
        col->cfg = *cfg;
    tg_logs_config_t *c = &col->cfg;
    if (c->max_followers <= 0)
        c->max_followers = 64;
    if (c->scan_interval_ms <= 0)
        c->scan_interval_ms = 1000;
    if (c->flush_interval_ms <= 0)
        c->flush_interval_ms = 1000;
    if (c->chunk_max_bytes == 0)
        c->chunk_max_bytes = 64 * 1024;
    if (c->max_line_bytes == 0)
        c->max_line_bytes = 64 * 1024;
    if (c->lease_s <= 0)
        c->lease_s = 30;
    if (c->lease_s < 3)
        c->lease_s = 3;
    if (c->prune_interval_s == 0)
        c->prune_interval_s = 3600;
    if (cfg && cfg->replica_id && *cfg->replica_id) {
        snprintf(col->owner, sizeof(col->owner), "%s", cfg->replica_id);
    } else {
        char host[64] = "", id[TG_UUID_LEN + 1];
        gethostname(host, sizeof(host) - 1);
        tg_uuid_v4(id);
        snprintf(col->owner, sizeof(col->owner), "%s:%ld:%.8s", host, (long)getpid(), id);
    }
    c->replica_id = NULL; /* not kept: owner holds the copy */
    pthread_mutex_init(&col->lock, NULL);
    tg_cond_init_monotonic(&col->cond);
    tg_metrics_register(collector_metrics, col);
    return col;
}

int tg_logs_collector_start(tg_logs_collector_t *c)
{
    if (!c || c->started)
        return c ? 0 : -1;
    if (pthread_create(&c->scanner, NULL, collector_main, c) != 0)
        return -1;
    c->started = 1;
    tg_log_info("logs", "log collector started (owner %s, up to %d followers)", c->owner,
                c->cfg.max_followers);
    return 0;
}

void tg_logs_collector_stop_and_free(tg_logs_collector_t *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->stopping = 1;
    pthread_cond_signal(&c->cond);
    for (logs_follower_t *f = c->followers; f; f = f->next)
        atomic_store(&f->stop, 1);
    pthread_mutex_unlock(&c->lock);
    tg_kube_client_interrupt(c->kube); /* idle follows end now, not at libcurl's next tick */
    if (c->started)
        pthread_join(c->scanner, NULL);
    /* the scanner is gone: the list is ours */
    logs_follower_t *f = c->followers;
    while (f) {
        logs_follower_t *next = f->next;
        atomic_store(&f->stop, 1);
        pthread_join(f->thread, NULL);
        follower_free(f);
        f = next;
    }
    tg_metrics_unregister(collector_metrics, c);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

long tg_logs_prune(tg_db_pool_t *pool)
{
    tg_db_conn_t *conn = NULL;
    if (tg_db_checkout(pool, &conn) != TG_OK)
        return -1;
    long deleted = 0;
    tg_rc_e rc = tg_store_log_prune(conn, &deleted);
    tg_db_release(pool, conn);
    return rc == TG_OK ? deleted : -1;
}
