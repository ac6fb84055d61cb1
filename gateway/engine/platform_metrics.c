/* Platform metrics: database aggregates (cached) and watch lag (in memory). */
#include "engine/platform_metrics.h"

#include "core/run_state.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ids.h"
#include "core/log.h"
#include "core/metrics.h"
#include "store/platform_stats.h"

/* Queue wait: seconds to hours. */
static const double pm_wait_bounds[] = {1,   5,    15,   30,   60,    120,  300,
                                        600, 1800, 3600, 7200, 21600, 86400};
#define PM_NWAIT     TG_ARRAY_LEN(pm_wait_bounds)
#define PM_WAIT_TEXT "{1,5,15,30,60,120,300,600,1800,3600,7200,21600,86400}"

/* Watch lag: timestamps have one-second precision. */
static const double pm_lag_bounds[] = {1, 2, 5, 10, 30, 60, 120, 300, 600, 1800};
#define PM_NLAG TG_ARRAY_LEN(pm_lag_bounds)

static const char *const pm_kinds[] = {"Workload", "Job", "RayJob", "Pod", "Node", "other"};
#define PM_NKINDS TG_ARRAY_LEN(pm_kinds)

static const char *const pm_retry_reasons[] = {"Preempted", "Evicted", "OOMKilled", "NodeFault",
                                               "Resumed"};
static const char *const pm_healths[] = {"Healthy", "Unhealthy", "NotReady", "Unknown"};
static const char *const pm_actions[] = {"cordon", "uncordon", "evict", "recover"};

/* Per process, like core/metrics' own series: every informer of the
 * process feeds it (tg_platform_metrics_watch_event, a hook with no context
 * to carry), whichever gateway context owns the informer. */
static struct {
    _Atomic uint64_t buckets[PM_NKINDS][PM_NLAG];
    _Atomic uint64_t count[PM_NKINDS];
    _Atomic uint64_t sum_ms[PM_NKINDS];
    _Atomic int64_t last_s[PM_NKINDS];
} pm_watch;

struct tg_platform_metrics_s {
    pthread_mutex_t lock;
    tg_db_pool_t *pool;
    long cache_ms;
    /* workspace names on /metrics only when the operator opts in
     * (metrics_tenant_labels): the endpoint is unauthenticated */
    int tenant_labels;
    char *text; /* the last rendering of the database series */
    size_t len;
    uint64_t at_us; /* monotonic time of `text` */
    int up;
    double query_s;
};

/* ---- watch lag ------------------------------------------------------------ */

double tg_platform_metrics_parse_time(const char *s)
{
    if (!s)
        return -1;
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    int n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &n) != 6)
        return -1;
    const char *p = s + n;
    double frac = 0, scale = 0.1;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    long off = 0;
    if (*p == '+' || *p == '-') {
        int oh = 0, om = 0;
        if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2)
            return -1;
        off = (*p == '+' ? 1 : -1) * (oh * 3600L + om * 60L);
    } else if (*p != 'Z' && *p != 'z') {
        return -1;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    return (double)t - (double)off + frac;
}

static double pm_max_time(double a, const json_t *s)
{
    double t = tg_platform_metrics_parse_time(json_string_value(s));
    return t > a ? t : a;
}

double tg_platform_metrics_newest_time(const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const json_t *status = json_object_get(obj, "status");
    double t = 0;
    t = pm_max_time(t, json_object_get(meta, "creationTimestamp"));
    t = pm_max_time(t, json_object_get(meta, "deletionTimestamp"));
    t = pm_max_time(t, json_object_get(status, "startTime"));
    t = pm_max_time(t, json_object_get(status, "completionTime"));
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(meta, "managedFields"), i, x) {
        t = pm_max_time(t, json_object_get(x, "time"));
    }
    json_array_foreach(json_object_get(status, "conditions"), i, x) {
        t = pm_max_time(t, json_object_get(x, "lastTransitionTime"));
    }
    json_array_foreach(json_object_get(status, "containerStatuses"), i, x) {
        const json_t *st = json_object_get(x, "state");
        t = pm_max_time(t, json_object_get(json_object_get(st, "running"), "startedAt"));
        t = pm_max_time(t, json_object_get(json_object_get(st, "terminated"), "finishedAt"));
    }
    return t;
}

json_t *tg_platform_metrics_time_mask(void)
{
    return json_pack(
        "{s:{s:b, s:b, s:[{s:b}]}, s:{s:b, s:b, s:[{s:b}], s:[{s:{s:{s:b}, s:{s:b}}}]}}",
        "metadata", "creationTimestamp", 1, "deletionTimestamp", 1, "managedFields", "time", 1,
        "status", "startTime", 1, "completionTime", 1, "conditions", "lastTransitionTime", 1,
        "containerStatuses", "state", "running", "startedAt", 1, "terminated", "finishedAt", 1);
}

void tg_platform_metrics_watch_event(const char *kind, int type, const json_t *obj)
{
    size_t k = PM_NKINDS - 1;
    for (size_t i = 0; kind && i + 1 < PM_NKINDS; i++)
        if (!strcmp(kind, pm_kinds[i]))
            k = i;
    double now = (double)tg_now_wall_us() / 1e6;
    if (obj)
        atomic_store_explicit(&pm_watch.last_s[k], (int64_t)now, memory_order_relaxed);
    if (!obj || (type != 1 && type != 2)) /* MODIFIED, DELETED */
        return;
    double t = tg_platform_metrics_newest_time(obj);
    if (t <= 0)
        return;
    double lag = now - t;
    if (lag < 0)
        lag = 0;
    if (lag > 3600)
        return;
    for (size_t b = 0; b < PM_NLAG; b++)
        if (lag <= pm_lag_bounds[b]) {
            atomic_fetch_add_explicit(&pm_watch.buckets[k][b], 1, memory_order_relaxed);
            break;
        }
    atomic_fetch_add_explicit(&pm_watch.count[k], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pm_watch.sum_ms[k], (uint64_t)(lag * 1000), memory_order_relaxed);
}

tg_rc_e tg_platform_metrics_render_watch(tg_buf_t *out)
{
    if (tg_buf_puts(out, "# HELP taugate_watch_lag_seconds Delay from a watched object's "
                         "newest timestamp to the watcher seeing the change, by kind.\n"
                         "# TYPE taugate_watch_lag_seconds histogram\n") != TG_OK)
        return TG_ETOOLARGE;
    for (size_t k = 0; k < PM_NKINDS; k++) {
        uint64_t cum = 0;
        for (size_t b = 0; b < PM_NLAG; b++) {
            cum += atomic_load_explicit(&pm_watch.buckets[k][b], memory_order_relaxed);
            if (tg_buf_printf(out, "taugate_watch_lag_seconds_bucket{kind=\"%s\",le=\"%g\"} %llu\n",
                              pm_kinds[k], pm_lag_bounds[b], (unsigned long long)cum) != TG_OK)
                return TG_ETOOLARGE;
        }
        uint64_t n = atomic_load_explicit(&pm_watch.count[k], memory_order_relaxed);
        if (tg_buf_printf(out,
                          "taugate_watch_lag_seconds_bucket{kind=\"%s\",le=\"+Inf\"} %llu\n"
                          "taugate_watch_lag_seconds_sum{kind=\"%s\"} %.3f\n"
                          "taugate_watch_lag_seconds_count{kind=\"%s\"} %llu\n",
                          pm_kinds[k], (unsigned long long)n, pm_kinds[k],
                          (double)atomic_load_explicit(&pm_watch.sum_ms[k], memory_order_relaxed) /
                              1000.0,
                          pm_kinds[k], (unsigned long long)n) != TG_OK)
            return TG_ETOOLARGE;
    }
    if (tg_buf_puts(out, "# HELP taugate_watch_last_event_timestamp_seconds Unix time of the "
                         "last watch event seen, by kind (0: none yet).\n"
                         "# TYPE taugate_watch_last_event_timestamp_seconds gauge\n") != TG_OK)
        return TG_ETOOLARGE;
    for (size_t k = 0; k < PM_NKINDS; k++)
        if (tg_buf_printf(out, "taugate_watch_last_event_timestamp_seconds{kind=\"%s\"} %lld\n",
                          pm_kinds[k],
                          (long long)atomic_load_explicit(&pm_watch.last_s[k],
                                                          memory_order_relaxed)) != TG_OK)
            return TG_ETOOLARGE;
    return TG_OK;
}

/* ---- database series ------------------------------------------------------- */

static const char *pm_s(const json_t *row, size_t i)
{
    const char *s = json_string_value(json_array_get(row, i));
    return s ? s : "";
}

static double pm_n(const json_t *row, size_t i)
{
    return json_number_value(json_array_get(row, i));
}

/* Add `v` to counter map[key] (a JSON object of reals). */
static void pm_add(json_t *map, const char *key, double v)
{
    json_object_set_new(map, key, json_real(json_number_value(json_object_get(map, key)) + v));
}

static tg_rc_e pm_family(tg_buf_t *out, const char *name, const char *type, const char *help)
{
    return tg_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{label="key"} value for every key of map, in key order. */
static tg_rc_e pm_series(tg_buf_t *out, const char *name, const char *label, const json_t *map)
{
    tg_rc_e rc = TG_ETOOLARGE;
    const char **keys = tg_xcalloc(json_object_size(map) + 1, sizeof(*keys));
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)map, k, v)
        keys[n++] = k;
    for (size_t i = 1; i < n; i++) /* insertion sort: a few dozen keys */
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            const char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        char esc[512];
        tg_metrics_label_escape(keys[i], esc, sizeof(esc));
        if (tg_buf_printf(out, "%s{%s=\"%s\"} %.17g\n", name, label, esc,
                          json_number_value(json_object_get(map, keys[i]))) != TG_OK)
            goto fail;
    }
    rc = TG_OK;
fail:
    free(keys);
    return rc;
}

/* taugate_runs{state} summed over workspaces, or {workspace, state} with
 * tenant labels. Every state is present (0 when none). */
static tg_rc_e pm_runs(const json_t *stats, int per_ws, tg_buf_t *out)
{
    json_t *counts = json_object();
    size_t i;
    json_t *x;
    char key[1100];
    char esc[512];
    if (per_ws) {
        json_array_foreach(json_object_get(stats, "workspaces"), i, x) {
            tg_metrics_label_escape(json_string_value(x), esc, sizeof(esc));
            for (size_t s = 0; s < TG_RUN_STATE_COUNT; s++) {
                snprintf(key, sizeof(key), "workspace=\"%s\",state=\"%s", esc, tg_run_states[s]);
                pm_add(counts, key, 0);
            }
        }
    } else {
        for (size_t s = 0; s < TG_RUN_STATE_COUNT; s++) {
            snprintf(key, sizeof(key), "state=\"%s", tg_run_states[s]);
            pm_add(counts, key, 0);
        }
    }
    json_array_foreach(json_object_get(stats, "runs"), i, x) {
        tg_metrics_label_escape(pm_s(x, 1), esc, sizeof(esc));
        if (per_ws) {
            char ws[512];
            tg_metrics_label_escape(pm_s(x, 0), ws, sizeof(ws));
            snprintf(key, sizeof(key), "workspace=\"%s\",state=\"%s", ws, esc);
        } else {
            snprintf(key, sizeof(key), "state=\"%s", esc);
        }
        pm_add(counts, key, pm_n(x, 2));
    }
    tg_rc_e rc = TG_ETOOLARGE;
    if (pm_family(out, "taugate_runs", "gauge",
                  per_ws ? "Runs by workspace and state."
                         : "Runs by state (per workspace: GET /v1/admin/usage, or "
                           "metrics_tenant_labels).") != TG_OK)
        goto fail;
    /* keys hold pre-escaped label text: print them as they are */
    const char *k;
    json_t *v;
    json_object_foreach(counts, k, v) {
        if (tg_buf_printf(out, "taugate_runs{%s\"} %.17g\n", k, json_number_value(v)) != TG_OK)
            goto fail;
    }
    rc = TG_OK;
fail:
    json_decref(counts);
    return rc;
}

static tg_rc_e pm_queues(const json_t *stats, tg_buf_t *out)
{
    json_t *cqs = json_object(); /* cq -> [bucket counts..., sum] */
    json_t *adm = json_object(), *pre = json_object();
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(stats, "cluster_queues"), i, x) {
        pm_add(adm, json_string_value(x), 0);
        pm_add(pre, json_string_value(x), 0);
    }
    json_array_foreach(json_object_get(stats, "waits"), i, x) {
        const char *cq = pm_s(x, 0);
        json_t *h = json_object_get(cqs, cq);
        if (!h) {
            h = json_array();
            for (size_t b = 0; b <= PM_NWAIT + 1; b++)
                json_array_append_new(h, json_real(0));
            json_object_set_new(cqs, cq, h);
        }
        size_t b = (size_t)pm_n(x, 1);
        if (b > PM_NWAIT)
            b = PM_NWAIT;
        json_array_set_new(h, b, json_real(json_number_value(json_array_get(h, b)) + pm_n(x, 2)));
        json_array_set_new(
            h, PM_NWAIT + 1,
            json_real(json_number_value(json_array_get(h, PM_NWAIT + 1)) + pm_n(x, 3)));
        pm_add(adm, cq, pm_n(x, 2));
    }
    json_array_foreach(json_object_get(stats, "preemptions"), i, x) {
        pm_add(pre, pm_s(x, 0), pm_n(x, 1));
    }
    tg_rc_e rc = TG_ETOOLARGE;
    if (pm_family(out, "taugate_queue_wait_seconds", "histogram",
                  "Time from an attempt's creation (submission or retry) to its "
                  "admission by Kueue, per ClusterQueue.") != TG_OK)
        goto fail;
    const char *cq;
    json_t *h;
    json_object_foreach(cqs, cq, h) {
        char esc[512];
        tg_metrics_label_escape(cq, esc, sizeof(esc));
        double cum = 0;
        for (size_t b = 0; b < PM_NWAIT; b++) {
            cum += json_number_value(json_array_get(h, b));
            if (tg_buf_printf(out,
                              "taugate_queue_wait_seconds_bucket{cluster_queue=\"%s\",le=\"%g\"}"
                              " %.17g\n",
                              esc, pm_wait_bounds[b], cum) != TG_OK)
                goto fail;
        }
        cum += json_number_value(json_array_get(h, PM_NWAIT));
        if (tg_buf_printf(out,
                          "taugate_queue_wait_seconds_bucket{cluster_queue=\"%s\",le=\"+Inf\"}"
                          " %.17g\n"
                          "taugate_queue_wait_seconds_sum{cluster_queue=\"%s\"} %.3f\n"
                          "taugate_queue_wait_seconds_count{cluster_queue=\"%s\"} %.17g\n",
                          esc, cum, esc, json_number_value(json_array_get(h, PM_NWAIT + 1)), esc,
                          cum) != TG_OK)
            goto fail;
    }
    if (pm_family(out, "taugate_admissions_total", "counter",
                  "Attempts admitted by Kueue, per ClusterQueue.") != TG_OK)
        goto fail;
    if (pm_series(out, "taugate_admissions_total", "cluster_queue", adm) != TG_OK)
        goto fail;
    if (pm_family(out, "taugate_preemptions_total", "counter",
                  "Attempts preempted by Kueue, per ClusterQueue.") != TG_OK)
        goto fail;
    if (pm_series(out, "taugate_preemptions_total", "cluster_queue", pre) != TG_OK)
        goto fail;
    rc = TG_OK;
fail:
    json_decref(cqs);
    json_decref(adm);
    json_decref(pre);
    return rc;
}

static tg_rc_e pm_retries(const json_t *stats, tg_buf_t *out)
{
    json_t *r = json_object();
    for (size_t i = 0; i < TG_ARRAY_LEN(pm_retry_reasons); i++)
        pm_add(r, pm_retry_reasons[i], 0);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(stats, "retries"), i, x) {
        pm_add(r, pm_s(x, 0), pm_n(x, 1));
    }
    tg_rc_e rc = TG_ETOOLARGE;
    if (pm_family(out, "taugate_retries_total", "counter",
                  "Attempts started again after the first, by reason (NodeFault and "
                  "Resumed do not spend the retry budget).") != TG_OK ||
        pm_series(out, "taugate_retries_total", "reason", r) != TG_OK)
        goto fail;
    rc = TG_OK;
fail:
    json_decref(r);
    return rc;
}

static tg_rc_e pm_outbox(const json_t *stats, tg_buf_t *out)
{
    static const struct {
        const char *name, *help;
        size_t col;
    } fam[] = {
        {"taugate_outbox_rows", "Outbox rows waiting for the engine, by action.", 1},
        {"taugate_outbox_due_rows", "Outbox rows that are due now, by action.", 2},
        {"taugate_outbox_failing_rows", "Outbox rows that were tried and failed, by action.", 3},
        {"taugate_outbox_oldest_due_age_seconds",
         "How long the oldest due outbox row has waited, by action (0 when none is due).", 4},
    };
    for (size_t f = 0; f < TG_ARRAY_LEN(fam); f++) {
        json_t *m = json_object();
        static const char *const actions[] = {"create", "retry", "delete"};
        for (size_t a = 0; a < 3; a++)
            pm_add(m, actions[a], 0);
        size_t i;
        json_t *x;
        json_array_foreach(json_object_get(stats, "outbox"), i, x) {
            pm_add(m, pm_s(x, 0), pm_n(x, fam[f].col));
        }
        tg_rc_e rc = pm_family(out, fam[f].name, "gauge", fam[f].help);
        if (rc == TG_OK)
            rc = pm_series(out, fam[f].name, "action", m);
        json_decref(m);
        if (rc != TG_OK)
            return rc;
    }
    return TG_OK;
}

static tg_rc_e pm_nodes(const json_t *stats, tg_buf_t *out)
{
    json_t *by = json_object(); /* class -> {health: n, cordoned, cap, alloc, used, free, bad} */
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(stats, "nodes"), i, x) {
        const char *cls = json_is_string(json_array_get(x, 0)) ? pm_s(x, 0) : "none";
        json_t *c = json_object_get(by, cls);
        if (!c) {
            c = json_object();
            for (size_t h = 0; h < TG_ARRAY_LEN(pm_healths); h++)
                pm_add(c, pm_healths[h], 0);
            json_object_set_new(by, cls, c);
        }
        const char *health = pm_s(x, 1);
        int unsched = json_is_true(json_array_get(x, 2));
        double n = pm_n(x, 3), cap = pm_n(x, 4), alloc = pm_n(x, 5), used = pm_n(x, 6);
        pm_add(c, health, n);
        pm_add(c, " cordoned", unsched ? n : 0);
        pm_add(c, " capacity", cap);
        pm_add(c, " allocatable", alloc);
        pm_add(c, " allocated", used);
        int healthy = !strcmp(health, "Healthy");
        pm_add(c, " free", healthy && !unsched && alloc > used ? alloc - used : 0);
        pm_add(c, " unhealthy", healthy ? 0 : alloc);
    }
    tg_rc_e rc = TG_ETOOLARGE;
    if (pm_family(out, "taugate_nodes", "gauge", "Nodes by GPU class and health.") != TG_OK)
        goto fail;
    const char *cls;
    json_t *c;
    json_object_foreach(by, cls, c) {
        char esc[512];
        tg_metrics_label_escape(cls, esc, sizeof(esc));
        for (size_t h = 0; h < TG_ARRAY_LEN(pm_healths); h++)
            if (tg_buf_printf(out, "taugate_nodes{gpu_class=\"%s\",health=\"%s\"} %.17g\n", esc,
                              pm_healths[h],
                              json_number_value(json_object_get(c, pm_healths[h]))) != TG_OK)
                goto fail;
    }
    static const struct {
        const char *name, *key, *help;
    } fam[] = {
        {"taugate_nodes_cordoned", " cordoned", "Unschedulable (cordoned) nodes by GPU class."},
        {"taugate_gpu_capacity", " capacity", "GPUs installed, by GPU class."},
        {"taugate_gpu_allocatable", " allocatable", "GPUs the kubelets offer, by GPU class."},
        {"taugate_gpu_allocated", " allocated",
         "GPUs requested by bound, unfinished pods, by GPU class."},
        {"taugate_gpu_free", " free",
         "Unallocated GPUs on healthy, schedulable nodes, by GPU class."},
        {"taugate_gpu_unhealthy", " unhealthy",
         "Allocatable GPUs on nodes that are not healthy, by GPU class."},
    };
    for (size_t f = 0; f < TG_ARRAY_LEN(fam); f++) {
        if (pm_family(out, fam[f].name, "gauge", fam[f].help) != TG_OK)
            goto fail;
        json_object_foreach(by, cls, c) {
            if (f > 0 && !strcmp(cls, "none"))
                continue; /* nodes without GPUs */
            char esc[512];
            tg_metrics_label_escape(cls, esc, sizeof(esc));
            if (tg_buf_printf(out, "%s{gpu_class=\"%s\"} %.17g\n", fam[f].name, esc,
                              json_number_value(json_object_get(c, fam[f].key))) != TG_OK)
                goto fail;
        }
    }
    rc = TG_OK;
fail:
    json_decref(by);
    return rc;
}

/* The node actions and health transitions the nodes loop recorded. */
static tg_rc_e pm_node_events(const json_t *stats, tg_buf_t *out)
{
    tg_rc_e rc = TG_ETOOLARGE;
    size_t i;
    json_t *x;
    json_t *acts = json_object(), *health = json_object();
    for (size_t a = 0; a < TG_ARRAY_LEN(pm_actions); a++) {
        char key[64];
        snprintf(key, sizeof(key), "%s\",result=\"ok", pm_actions[a]);
        pm_add(acts, key, 0);
        snprintf(key, sizeof(key), "%s\",result=\"failed", pm_actions[a]);
        pm_add(acts, key, 0);
    }
    for (size_t h = 0; h < TG_ARRAY_LEN(pm_healths); h++)
        pm_add(health, pm_healths[h], 0);
    json_array_foreach(json_object_get(stats, "node_events"), i, x) {
        const char *kind = pm_s(x, 0);
        if (!strcmp(kind, "health")) {
            pm_add(health, pm_s(x, 2), pm_n(x, 3));
            continue;
        }
        for (size_t a = 0; a < TG_ARRAY_LEN(pm_actions); a++)
            if (!strcmp(kind, pm_actions[a])) {
                char key[64];
                snprintf(key, sizeof(key), "%s\",result=\"%s", kind,
                         json_is_true(json_array_get(x, 1)) ? "ok" : "failed");
                pm_add(acts, key, pm_n(x, 3));
            }
    }
    if (pm_family(out, "taugate_node_actions_total", "counter",
                  "Actions the nodes loop took on nodes and their runs, by action and result.") !=
        TG_OK)
        goto fail;
    const char *k;
    json_t *v;
    json_object_foreach(acts, k, v) {
        if (tg_buf_printf(out, "taugate_node_actions_total{action=\"%s\"} %.17g\n", k,
                          json_number_value(v)) != TG_OK)
            goto fail;
    }
    if (pm_family(out, "taugate_node_health_transitions_total", "counter",
                  "Node health changes, by the health entered.") != TG_OK)
        goto fail;
    if (pm_series(out, "taugate_node_health_transitions_total", "health", health) != TG_OK)
        goto fail;
    if (tg_buf_printf(out,
                      "# HELP taugate_node_fault_runs_total Run attempts found on an unhealthy "
                      "node.\n# TYPE taugate_node_fault_runs_total counter\n"
                      "taugate_node_fault_runs_total %.17g\n",
                      json_number_value(json_object_get(stats, "node_fault_runs"))) != TG_OK)
        goto fail;
    rc = TG_OK;
fail:
    json_decref(acts);
    json_decref(health);
    return rc;
}

/* The sealing backlog: runs that ended and are not sealed yet. A run waits
 * up to evidence_log_grace_s for its logs, so a short backlog is normal; one
 * whose oldest run keeps ageing is a sealer that cannot work. */
static tg_rc_e pm_evidence(const json_t *stats, tg_buf_t *out)
{
    const json_t *e = json_object_get(stats, "evidence");
    return tg_buf_printf(out,
                         "# HELP taugate_evidence_pending_runs Runs that ended and are not "
                         "sealed yet.\n"
                         "# TYPE taugate_evidence_pending_runs gauge\n"
                         "taugate_evidence_pending_runs %.17g\n"
                         "# HELP taugate_evidence_oldest_pending_age_seconds How long the run "
                         "longest waiting to be sealed has waited since it ended (0 when none "
                         "waits).\n"
                         "# TYPE taugate_evidence_oldest_pending_age_seconds gauge\n"
                         "taugate_evidence_oldest_pending_age_seconds %.3f\n",
                         pm_n(e, 0), pm_n(e, 1));
}

tg_rc_e tg_platform_metrics_render_stats(const json_t *stats, int tenant_labels, tg_buf_t *out)
{
    if (pm_runs(stats, tenant_labels, out) != TG_OK)
        return TG_ETOOLARGE;
    if (pm_queues(stats, out) != TG_OK)
        return TG_ETOOLARGE;
    if (pm_retries(stats, out) != TG_OK)
        return TG_ETOOLARGE;
    if (pm_outbox(stats, out) != TG_OK)
        return TG_ETOOLARGE;
    if (pm_nodes(stats, out) != TG_OK)
        return TG_ETOOLARGE;
    if (pm_node_events(stats, out) != TG_OK)
        return TG_ETOOLARGE;
    if (pm_evidence(stats, out) != TG_OK)
        return TG_ETOOLARGE;
    return TG_OK;
}

/* Refresh the cached rendering when it is older than cache_ms (pm->lock held). */
static void pm_refresh(tg_platform_metrics_t *pm)
{
    uint64_t now = tg_now_mono_us();
    if (pm->text && pm->cache_ms > 0 && now - pm->at_us < (uint64_t)pm->cache_ms * 1000)
        return;
    tg_db_conn_t *conn = NULL;
    json_t *stats = NULL;
    int ok = 0;
    if (tg_db_checkout(pm->pool, &conn) == TG_OK &&
        tg_store_platform_stats(conn, PM_WAIT_TEXT, &stats) == TG_OK) {
        tg_buf_t b;
        tg_buf_init(&b, 8 * 1024 * 1024);
        if (tg_platform_metrics_render_stats(stats, pm->tenant_labels, &b) == TG_OK) {
            free(pm->text);
            pm->text = tg_buf_steal(&b, &pm->len);
            ok = 1;
        }
        tg_buf_clean(&b);
    }
    tg_db_release(pm->pool, conn);
    json_decref(stats);
    if (!ok)
        tg_log_warn("metrics", "platform metrics: the database aggregates could not be read");
    pm->up = ok;
    pm->query_s = (double)(tg_now_mono_us() - now) / 1e6;
    pm->at_us = now;
}

static void pm_collect(tg_buf_t *out, void *arg)
{
    tg_platform_metrics_t *pm = arg;
    pthread_mutex_lock(&pm->lock);
    pm_refresh(pm);
    /* stop at the first failed append (see tg_metrics_collect_fn) */
    int full = pm->text && tg_buf_append(out, pm->text, pm->len) != TG_OK;
    full = full ||
           tg_buf_printf(out,
                         "# HELP taugate_platform_metrics_up 1 when the last database aggregate "
                         "query for these metrics worked.\n"
                         "# TYPE taugate_platform_metrics_up gauge\n"
                         "taugate_platform_metrics_up %d\n"
                         "# HELP taugate_platform_metrics_query_seconds Time the last database "
                         "aggregate query took.\n"
                         "# TYPE taugate_platform_metrics_query_seconds gauge\n"
                         "taugate_platform_metrics_query_seconds %.6f\n",
                         pm->up, pm->query_s);
    pthread_mutex_unlock(&pm->lock);
    if (!full && tg_platform_metrics_render_watch(out) != TG_OK)
        return; /* the buffer says so */
}

tg_platform_metrics_t *tg_platform_metrics_start(tg_db_pool_t *pool, long cache_ms,
                                                 int tenant_labels)
{
    tg_platform_metrics_t *pm = tg_xcalloc(1, sizeof(*pm));
    pthread_mutex_init(&pm->lock, NULL);
    pm->pool = pool;
    pm->cache_ms = cache_ms;
    pm->tenant_labels = tenant_labels;
    tg_metrics_register(pm_collect, pm);
    return pm;
}

void tg_platform_metrics_stop(tg_platform_metrics_t *pm)
{
    if (!pm)
        return;
    tg_metrics_unregister(pm_collect, pm);
    pthread_mutex_destroy(&pm->lock);
    free(pm->text);
    free(pm);
}
