/* The nodes loop: leadership, the Node and Pod informers, the fleet cache,
 * and the flush that writes the snapshot and applies the policy. */
#include "engine/nodes.h"

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
#include "engine/node_health.h"
#include "engine/node_policy.h"
#include "engine/platform_metrics.h"
#include "kube/informer.h"
#include "store/nodes.h"

#define NODES_LOCK_K1       "1952544103" /* "taug" */
#define NODES_LOCK_K2       "1315923045" /* "Node" */
#define NODES_CHECK_MS      5000L
#define NODES_FLUSH_WAIT_MS 1000L

/* The lock connection runs only these constant statements (no parameters). */
static const char nodes_sql_try[] =
    "SELECT pg_try_advisory_lock(" NODES_LOCK_K1 ", " NODES_LOCK_K2 ")";
static const char nodes_sql_unlock[] =
    "SELECT pg_advisory_unlock(" NODES_LOCK_K1 ", " NODES_LOCK_K2 ")";
static const char nodes_sql_holds[] =
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'"
    " AND pid = pg_backend_pid() AND classid = " NODES_LOCK_K1 " AND objid = " NODES_LOCK_K2
    " AND objsubid = 2 AND granted)";

struct tg_nodes_s {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    int stop;
    atomic_int leader;
    char *conninfo; /* for the lock connection */
    long connect_timeout_s;
    PGconn *lockconn;   /* the lock connection, held while leader (and while trying) */
    tg_db_pool_t *pool; /* the daemon's pool: the leader's work borrows from it */
    tg_db_conn_t *conn; /* borrowed for one flush */
    tg_kube_client_t *kube;
    tg_node_rules_t rules;
    tg_node_policy_t policy;
    char identity[160];
    long resync_s, lock_retry_s;
    /* the cache, guarded by lock */
    json_t *nodes; /* name -> summary */
    json_t *alloc; /* node -> {resource: count} */
    json_t *pods;  /* "ns/name" -> {node, gpus} */
    json_t *dirty; /* name -> true */
    json_t *force; /* name -> true: apply the policy even when nothing changed */
    int synced;    /* a full node list arrived since the last flush */
    /* informers */
    tg_kube_informer_t *inf[2];
    pthread_t inf_thread[2];
    int inf_started[2];
    /* loop thread only */
    json_t *written; /* name -> fingerprint of the row last written */
};

static long nodes_now_ms(void)
{
    return (long)(tg_now_mono_us() / 1000);
}

static void nodes_wait_ms(tg_nodes_t *nl, long ms)
{
    struct timespec until = tg_mono_deadline_ms((uint64_t)ms);
    pthread_cond_timedwait(&nl->cond, &nl->lock, &until);
}

/* ---- the cache (informer threads) ---------------------------------------- */

static void nodes_mark(tg_nodes_t *nl, const char *name)
{
    json_object_set_new(nl->dirty, name, json_true());
    pthread_cond_signal(&nl->cond);
}

static int nodes_on_node(const tg_kube_event_t *ev, void *arg)
{
    tg_nodes_t *nl = arg;
    tg_platform_metrics_watch_event("Node", (int)ev->type, ev->object);
    if (ev->type == TG_KUBE_EV_SYNC) {
        pthread_mutex_lock(&nl->lock);
        nl->synced = 1;
        pthread_cond_signal(&nl->cond);
        pthread_mutex_unlock(&nl->lock);
        return 0;
    }
    const char *name =
        json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name"));
    if (!name)
        return 0;
    json_t *summary =
        ev->type == TG_KUBE_EV_DELETED ? NULL : tg_node_summarize(ev->object, &nl->rules);
    pthread_mutex_lock(&nl->lock);
    if (summary)
        json_object_set_new(nl->nodes, name, summary);
    else
        json_object_del(nl->nodes, name);
    nodes_mark(nl, name);
    pthread_mutex_unlock(&nl->lock);
    return 0;
}

/* Add (sign 1) or take away (-1) a pod's GPUs on its node. */
static void nodes_alloc_add(tg_nodes_t *nl, const json_t *entry, int sign)
{
    const char *node = json_string_value(json_object_get(entry, "node"));
    json_t *a = json_object_get(nl->alloc, node);
    if (!a) {
        a = json_object();
        json_object_set_new(nl->alloc, node, a);
    }
    const char *res;
    json_t *n;
    json_object_foreach(json_object_get(entry, "gpus"), res, n) {
        json_int_t v = json_integer_value(json_object_get(a, res)) + sign * json_integer_value(n);
        if (v > 0)
            json_object_set_new(a, res, json_integer(v));
        else
            json_object_del(a, res);
    }
    if (!json_object_size(a))
        json_object_del(nl->alloc, node);
    nodes_mark(nl, node);
}

static int nodes_on_pod(const tg_kube_event_t *ev, void *arg)
{
    tg_nodes_t *nl = arg;
    if (ev->type == TG_KUBE_EV_SYNC)
        return 0;
    const json_t *meta = json_object_get(ev->object, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (!ns || !name)
        return 0;
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    json_t *entry = NULL;
    if (ev->type != TG_KUBE_EV_DELETED && tg_node_pod_holds(ev->object)) {
        json_t *gpus = tg_node_pod_gpus(ev->object);
        if (json_object_size(gpus))
            entry = json_pack(
                "{s:s, s:o}", "node",
                json_string_value(json_object_get(json_object_get(ev->object, "spec"), "nodeName")),
                "gpus", gpus);
        else
            json_decref(gpus);
    }
    pthread_mutex_lock(&nl->lock);
    json_t *old = json_object_get(nl->pods, key);
    if (old && entry && json_equal(old, entry)) {
        pthread_mutex_unlock(&nl->lock);
        json_decref(entry);
        return 0;
    }
    if (old) {
        nodes_alloc_add(nl, old, -1);
        json_object_del(nl->pods, key);
    }
    if (entry) {
        nodes_alloc_add(nl, entry, 1);
        json_object_set_new(nl->pods, key, entry);
    }
    pthread_mutex_unlock(&nl->lock);
    return 0;
}

static void *nodes_informer_main(void *arg)
{
    tg_kube_informer_run(arg);
    return NULL;
}

static void nodes_informers_start(tg_nodes_t *nl)
{
    static const tg_kube_gvr_t *const gvrs[2] = {&tg_kube_gvr_nodes, &tg_kube_gvr_pods};
    static const tg_kube_event_fn cbs[2] = {nodes_on_node, nodes_on_pod};
    /* Every pod of the cluster passes by: decode only what nodes_on_pod reads. */
    json_t *pod_mask = tg_node_pod_mask();
    for (int i = 0; i < 2; i++) {
        tg_kube_informer_opts_t o = {
            .gvr = gvrs[i], .cb = cbs[i], .arg = nl, .event_mask = i == 1 ? pod_mask : NULL};
        nl->inf[i] = tg_kube_informer_new(nl->kube, &o);
        nl->inf_started[i] = nl->inf[i] && pthread_create(&nl->inf_thread[i], NULL,
                                                          nodes_informer_main, nl->inf[i]) == 0;
    }
    json_decref(pod_mask);
}

static void nodes_informers_stop(tg_nodes_t *nl)
{
    for (int i = 0; i < 2; i++)
        if (nl->inf[i])
            tg_kube_informer_stop(nl->inf[i]);
    for (int i = 0; i < 2; i++) {
        if (nl->inf_started[i])
            pthread_join(nl->inf_thread[i], NULL);
        tg_kube_informer_free(nl->inf[i]);
        nl->inf[i] = NULL;
        nl->inf_started[i] = 0;
    }
}

static void nodes_cache_reset(tg_nodes_t *nl)
{
    pthread_mutex_lock(&nl->lock);
    json_object_clear(nl->nodes);
    json_object_clear(nl->alloc);
    json_object_clear(nl->pods);
    json_object_clear(nl->dirty);
    json_object_clear(nl->force);
    nl->synced = 0;
    pthread_mutex_unlock(&nl->lock);
    json_object_clear(nl->written);
}

/* ---- leadership (loop thread) --------------------------------------------- */

/* Ask the lock connection a yes/no question: 1 "t", 0 "f", -1 when the
 * connection failed (it is closed; the next call opens a new one). */
static int nodes_ask(tg_nodes_t *nl, const char *sql)
{
    if (!nl->lockconn) {
        char timeout[16];
        snprintf(timeout, sizeof(timeout), "%ld", nl->connect_timeout_s);
        const char *keys[] = {"dbname", "connect_timeout", "application_name", NULL};
        const char *vals[] = {nl->conninfo, timeout, "taugate-nodes-lock", NULL};
        nl->lockconn = PQconnectdbParams(keys, vals, 1);
        if (!nl->lockconn || PQstatus(nl->lockconn) != CONNECTION_OK) {
            /* libpq's message names host and port, never the password */
            tg_log_warn("nodes", "lock connection: %s",
                        nl->lockconn ? PQerrorMessage(nl->lockconn) : "out of memory");
            PQfinish(nl->lockconn);
            nl->lockconn = NULL;
            return -1;
        }
    }
    PGresult *r = PQexec(nl->lockconn, sql);
    int yes = -1;
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
        yes = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    if (yes < 0) {
        PQfinish(nl->lockconn);
        nl->lockconn = NULL; /* the session and any lock it held are gone */
    }
    return yes;
}

static void nodes_step_down(tg_nodes_t *nl, const char *why)
{
    if (!atomic_load(&nl->leader))
        return;
    tg_log_warn("nodes", "no longer the nodes leader: %s", why);
    atomic_store(&nl->leader, 0);
    nodes_informers_stop(nl);
    nodes_cache_reset(nl);
    if (nl->lockconn && nodes_ask(nl, nodes_sql_unlock) < 0)
        tg_log_warn("nodes", "could not release the nodes lock; it goes with the session");
}

/* ---- flush (loop thread) -------------------------------------------------- */

/* The row to write: the summary with the allocated GPUs (new reference). */
static json_t *nodes_row(const json_t *summary, const json_t *alloc)
{
    json_t *row = json_deep_copy(summary);
    json_t *gpus = json_object_get(row, "gpus");
    json_t *mig = json_object_get(row, "mig");
    json_int_t whole = 0;
    const char *res;
    json_t *n;
    json_object_foreach((json_t *)alloc, res, n) {
        int kind = tg_node_gpu_resource(res);
        if (kind == 1)
            whole += json_integer_value(n);
        else if (kind == 2 && json_object_get(mig, res))
            json_object_set(json_object_get(mig, res), "allocated", n);
    }
    json_object_set_new(gpus, "allocated", json_integer(whole));
    /* the row's timestamps are cast by PostgreSQL: drop any that are not RFC
     * 3339 (an annotation edited by hand must not fail the write) */
    static const char *const stamps[] = {"health_since", "cordoned_at"};
    for (size_t i = 0; i < TG_ARRAY_LEN(stamps); i++) {
        const char *t = json_string_value(json_object_get(row, stamps[i]));
        if (t && tg_platform_metrics_parse_time(t) < 0)
            json_object_set_new(row, stamps[i], json_null());
    }
    json_object_foreach(mig, res, n) {
        if (!json_object_get(n, "allocated"))
            json_object_set_new(n, "allocated", json_integer(0));
    }
    return row;
}

/* Write one node's row (and its health transition) in one transaction.
 * OUT: *changed when anything was written. */
static tg_rc_e nodes_write(tg_nodes_t *nl, const char *name, const json_t *row, int *changed)
{
    *changed = 0;
    char *fp = row ? json_dumps(row, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    const char *had = json_string_value(json_object_get(nl->written, name));
    if (fp && had && !strcmp(fp, had)) {
        free(fp);
        return TG_OK;
    }
    tg_rc_e rc;
    if (!row) {
        rc = tg_store_node_delete(nl->conn, name);
        if (rc == TG_OK)
            json_object_del(nl->written, name);
        *changed = rc == TG_OK;
        return rc;
    }
    char prev[16] = "";
    rc = tg_db_begin(nl->conn);
    if (rc == TG_OK)
        rc = tg_store_node_upsert(nl->conn, row, prev);
    const char *health = json_string_value(json_object_get(row, "health"));
    if (rc == TG_OK && health && strcmp(prev, health) && (*prev || strcmp(health, "Healthy"))) {
        char problem[512];
        tg_node_problem_text(row, problem, sizeof(problem));
        json_t *data = json_pack("{s:s, s:O}", "from", *prev ? prev : "", "problems",
                                 json_object_get(row, "problems"));
        tg_node_event_t ev = {.node = name,
                              .kind = "health",
                              .health = health,
                              .reason = health,
                              .message = *problem ? problem : "no health problem",
                              .ok = 1,
                              .actor = nl->identity,
                              .data = data};
        rc = tg_store_node_event(nl->conn, &ev);
        json_decref(data);
        tg_log_info("nodes", "%s: %s -> %s%s%s", name, *prev ? prev : "(new)", health,
                    *problem ? ": " : "", problem);
    }
    if (rc == TG_OK)
        rc = tg_db_commit(nl->conn);
    if (rc != TG_OK) {
        tg_db_rollback(nl->conn);
        free(fp);
        return rc;
    }
    json_object_set_new(nl->written, name, json_string(fp));
    free(fp);
    *changed = 1;
    return TG_OK;
}

static tg_rc_e nodes_flush(tg_nodes_t *nl)
{
    pthread_mutex_lock(&nl->lock);
    int work = json_object_size(nl->dirty) || nl->synced;
    pthread_mutex_unlock(&nl->lock);
    if (!work)
        return TG_OK;
    if (tg_db_checkout(nl->pool, &nl->conn) != TG_OK)
        return TG_OK; /* the pool is busy or the database away: next round */
    pthread_mutex_lock(&nl->lock);
    json_t *dirty = nl->dirty;
    json_t *force = nl->force;
    nl->dirty = json_object();
    nl->force = json_object();
    int synced = nl->synced;
    nl->synced = 0;
    json_t *rows = json_object();
    json_t *names = synced ? json_array() : NULL;
    const char *name;
    json_t *v;
    json_object_foreach(dirty, name, v) {
        const json_t *summary = json_object_get(nl->nodes, name);
        if (summary)
            json_object_set_new(rows, name, nodes_row(summary, json_object_get(nl->alloc, name)));
    }
    if (names)
        json_object_foreach(nl->nodes, name, v) {
            json_array_append_new(names, json_string(name));
        }
    pthread_mutex_unlock(&nl->lock);

    tg_rc_e rc = TG_OK;
    json_object_foreach(dirty, name, v) {
        const json_t *row = json_object_get(rows, name);
        int changed = 0;
        rc = nodes_write(nl, name, row, &changed);
        if (rc == TG_OK && row && (changed || json_object_get(force, name)))
            rc = tg_node_policy_apply(&nl->policy, nl->conn, nl->kube, row);
        if (rc == TG_EUNAVAILABLE)
            break;
        rc = TG_OK; /* one node's trouble does not hold up the others */
    }
    if (rc == TG_OK && names) {
        int removed = 0;
        rc = tg_store_nodes_retain(nl->conn, names, &removed);
        if (rc == TG_OK && removed)
            tg_log_info("nodes", "forgot %d node(s) that left the cluster", removed);
        if (rc == TG_OK) { /* forget fingerprints of nodes gone */
            json_t *alive = json_object();
            size_t i;
            json_t *n;
            json_array_foreach(names, i, n) {
                json_object_set_new(alive, json_string_value(n), json_true());
            }
            void *tmp;
            json_object_foreach_safe(nl->written, tmp, name, v) {
                if (!json_object_get(alive, name))
                    json_object_del(nl->written, name);
            }
            json_decref(alive);
        }
    }
    if (rc != TG_OK) { /* put the unwritten nodes back for the next round */
        pthread_mutex_lock(&nl->lock);
        json_object_update_missing(nl->dirty, dirty);
        json_object_update_missing(nl->force, force);
        nl->synced |= synced;
        pthread_mutex_unlock(&nl->lock);
    }
    tg_db_release(nl->pool, nl->conn);
    nl->conn = NULL;
    json_decref(names);
    json_decref(rows);
    json_decref(dirty);
    json_decref(force);
    return rc;
}

/* Look again at every node that is not Healthy or that taugate cordoned. */
static void nodes_resync_mark(tg_nodes_t *nl)
{
    pthread_mutex_lock(&nl->lock);
    const char *name;
    json_t *s;
    json_object_foreach(nl->nodes, name, s) {
        const char *h = json_string_value(json_object_get(s, "health"));
        if ((h && strcmp(h, "Healthy")) || json_is_string(json_object_get(s, "cordoned_by"))) {
            json_object_set_new(nl->dirty, name, json_true());
            json_object_set_new(nl->force, name, json_true());
        }
    }
    pthread_mutex_unlock(&nl->lock);
}

static void *nodes_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tg-nodes");
    tg_nodes_t *nl = arg;
    long last_check = 0, last_resync = 0;
    pthread_mutex_lock(&nl->lock);
    while (!nl->stop) {
        if (!atomic_load(&nl->leader)) {
            pthread_mutex_unlock(&nl->lock);
            int got = nodes_ask(nl, nodes_sql_try);
            pthread_mutex_lock(&nl->lock);
            if (got == 1 && !nl->stop) {
                atomic_store(&nl->leader, 1);
                tg_log_info("nodes", "this replica (%s) is the nodes leader", nl->identity);
                pthread_mutex_unlock(&nl->lock);
                nodes_informers_start(nl);
                pthread_mutex_lock(&nl->lock);
                last_check = last_resync = nodes_now_ms();
                continue;
            }
            nodes_wait_ms(nl, nl->lock_retry_s * 1000);
            continue;
        }
        if (!json_object_size(nl->dirty) && !nl->synced)
            nodes_wait_ms(nl, NODES_FLUSH_WAIT_MS);
        if (nl->stop)
            break;
        pthread_mutex_unlock(&nl->lock);
        long now = nodes_now_ms();
        const char *lost = NULL;
        if (now - last_check >= NODES_CHECK_MS) {
            last_check = now;
            int held = nodes_ask(nl, nodes_sql_holds);
            if (held != 1)
                lost = held == 0 ? "the advisory lock was lost" : "the lock connection failed";
        }
        if (!lost && now - last_resync >= nl->resync_s * 1000) {
            last_resync = now;
            nodes_resync_mark(nl);
        }
        if (!lost)
            (void)nodes_flush(nl); /* a broken pool connection is replaced at the next checkout */
        if (lost)
            nodes_step_down(nl, lost);
        pthread_mutex_lock(&nl->lock);
    }
    pthread_mutex_unlock(&nl->lock);
    nodes_step_down(nl, "stopping");
    return NULL;
}

/* ---- metrics, start, stop --------------------------------------------------- */

static void nodes_collect(tg_buf_t *out, void *arg)
{
    tg_nodes_t *nl = arg;
    pthread_mutex_lock(&nl->lock);
    size_t nodes = json_object_size(nl->nodes), pods = json_object_size(nl->pods);
    pthread_mutex_unlock(&nl->lock);
    /* a full scrape buffer remembers the failure (tg_metrics_collect_fn) */
    if (tg_buf_printf(
            out,
            "# HELP taugate_nodes_leader 1 while this replica runs the nodes loop (GPU health "
            "and cordons).\n"
            "# TYPE taugate_nodes_leader gauge\n"
            "taugate_nodes_leader %d\n"
            "# HELP taugate_nodes_cached Objects in the nodes loop's cache, by kind.\n"
            "# TYPE taugate_nodes_cached gauge\n"
            "taugate_nodes_cached{kind=\"node\"} %zu\n"
            "taugate_nodes_cached{kind=\"gpu_pod\"} %zu\n",
            atomic_load(&nl->leader), nodes, pods) != TG_OK)
        return;
}

int tg_nodes_config_check(const tg_nodes_config_t *cfg, char *err, size_t errlen)
{
    tg_node_rules_t r;
    return tg_node_rules_parse(
        &r, cfg->conditions ? cfg->conditions : TG_NODES_DEFAULT_CONDITIONS,
        cfg->class_labels ? cfg->class_labels : TG_NODES_DEFAULT_CLASS_LABELS, err, errlen);
}

/* What start set up for the loop's thread, once it is gone (or never ran),
 * and the loop itself. */
static void nodes_release(tg_nodes_t *nl)
{
    pthread_cond_destroy(&nl->cond);
    TG_FREE_NULL(nl->conninfo);
    json_decref(nl->nodes);
    json_decref(nl->alloc);
    json_decref(nl->pods);
    json_decref(nl->dirty);
    json_decref(nl->force);
    json_decref(nl->written);
    pthread_mutex_destroy(&nl->lock);
    free(nl);
}

tg_nodes_t *tg_nodes_start(const tg_nodes_config_t *cfg, tg_db_pool_t *pool, tg_kube_client_t *kube,
                           char *err, size_t errlen)
{
    tg_node_rules_t rules;
    if (tg_node_rules_parse(&rules, cfg->conditions ? cfg->conditions : TG_NODES_DEFAULT_CONDITIONS,
                            cfg->class_labels ? cfg->class_labels : TG_NODES_DEFAULT_CLASS_LABELS,
                            err, errlen) != 0)
        return NULL;
    tg_nodes_t *nl = tg_xcalloc(1, sizeof(*nl));
    pthread_mutex_init(&nl->lock, NULL);
    nl->rules = rules;
    if (cfg->identity && *cfg->identity) {
        snprintf(nl->identity, sizeof(nl->identity), "%s", cfg->identity);
    } else {
        char host[128] = "taugate";
        gethostname(host, sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        snprintf(nl->identity, sizeof(nl->identity), "taugate@%s:%ld", host, (long)getpid());
    }
    nl->policy = (tg_node_policy_t){.auto_cordon = cfg->auto_cordon,
                                    .evict_on_fault = cfg->evict_on_fault,
                                    .uncordon_on_recovery = cfg->uncordon_on_recovery,
                                    .identity = nl->identity};
    nl->resync_s = cfg->resync_s > 0 ? cfg->resync_s : 30;
    nl->lock_retry_s = cfg->lock_retry_s > 0 ? cfg->lock_retry_s : 1;
    nl->conninfo = tg_xstrdup(cfg->conninfo ? cfg->conninfo : "");
    nl->connect_timeout_s = cfg->connect_timeout_s > 0 ? cfg->connect_timeout_s : 3;
    nl->pool = pool;
    nl->kube = kube;
    nl->nodes = json_object();
    nl->alloc = json_object();
    nl->pods = json_object();
    nl->dirty = json_object();
    nl->force = json_object();
    nl->written = json_object();
    tg_cond_init_monotonic(&nl->cond);
    if (pthread_create(&nl->thread, NULL, nodes_main, nl) != 0) {
        snprintf(err, errlen, "cannot start the nodes thread");
        nodes_release(nl);
        return NULL;
    }
    tg_metrics_register(nodes_collect, nl);
    tg_log_info("nodes", "nodes loop started (%s; cordon %s, evict %s, uncordon %s)", nl->identity,
                cfg->auto_cordon ? "on" : "off", cfg->evict_on_fault ? "on" : "off",
                cfg->uncordon_on_recovery ? "on" : "off");
    return nl;
}

void tg_nodes_stop(tg_nodes_t *nl)
{
    if (!nl)
        return;
    tg_metrics_unregister(nodes_collect, nl);
    pthread_mutex_lock(&nl->lock);
    nl->stop = 1;
    pthread_cond_signal(&nl->cond);
    pthread_mutex_unlock(&nl->lock);
    pthread_join(nl->thread, NULL);
    PQfinish(nl->lockconn);
    nodes_release(nl);
}

int tg_nodes_is_leader(tg_nodes_t *nl)
{
    return nl && atomic_load(&nl->leader);
}

int tg_nodes_attempt_fault(tg_db_conn_t *conn, const char *run_id, int attempt, char *msg,
                           size_t msglen)
{
    json_t *hit = NULL;
    if (tg_store_node_fault_for_attempt(conn, run_id, attempt, &hit) != TG_OK)
        return -1;
    if (!hit)
        return 0;
    const char *node = json_string_value(json_object_get(hit, "node"));
    const char *problem = json_string_value(json_object_get(hit, "problem"));
    snprintf(msg, msglen, "%s is unhealthy: %s", node ? node : "a node",
             problem && *problem ? problem : "a node fault");
    json_decref(hit);
    return 1;
}
