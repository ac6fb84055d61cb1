/* Platform metrics for /metrics (Prometheus text format 0.0.4).
 *
 * From PostgreSQL at scrape time (store/platform_stats.h: one aggregate
 * statement, its rendering cached for cache_ms so a burst of scrapes costs
 * one query). These are the same on every replica: aggregate them with
 * max(), not sum().
 *   taugate_runs{state}                                 gauge; {workspace,state}
 *        with tenant labels (metrics_tenant_labels): /metrics is
 *        unauthenticated, so workspace names appear only when the operator
 *        opts in; admins get per-workspace figures from GET /v1/admin/usage
 *   taugate_queue_wait_seconds{cluster_queue}           histogram: attempt
 *        created (submission or retry) → admitted by Kueue
 *   taugate_admissions_total{cluster_queue}             counter
 *   taugate_preemptions_total{cluster_queue}            counter
 *   taugate_retries_total{reason}                       counter: attempts
 *        after the first, by why (Preempted, Evicted, OOMKilled, NodeFault,
 *        Resumed...)
 *   taugate_outbox_rows{action}                         gauge
 *   taugate_outbox_due_rows{action}                     gauge
 *   taugate_outbox_failing_rows{action}                 gauge: tried and failed
 *   taugate_outbox_oldest_due_age_seconds{action}       gauge: how long the
 *        oldest due row has waited (0 when none is due)
 *   taugate_nodes{gpu_class,health}                     gauge ("none": no GPUs)
 *   taugate_nodes_cordoned{gpu_class}                   gauge
 *   taugate_gpu_capacity{gpu_class}                     gauge
 *   taugate_gpu_allocatable{gpu_class}                  gauge
 *   taugate_gpu_allocated{gpu_class}                    gauge: requested by
 *        bound, unfinished pods
 *   taugate_gpu_free{gpu_class}                         gauge: allocatable and
 *        unallocated on Healthy, schedulable nodes
 *   taugate_gpu_unhealthy{gpu_class}                    gauge: allocatable on
 *        nodes that are not Healthy
 *   taugate_node_actions_total{action,result}           counter: cordon,
 *        uncordon, evict, recover; ok or failed
 *   taugate_node_health_transitions_total{health}       counter
 *   taugate_node_fault_runs_total                       counter: run attempts
 *        found on a faulty node
 *   taugate_platform_metrics_up                         gauge: 1 when the last
 *        query worked (the other series then come from the last good one)
 * In memory, per replica (tg_platform_metrics_watch_event):
 *   taugate_watch_lag_seconds{kind}                     histogram: from the
 *        newest timestamp a MODIFIED or DELETED object carries (managed
 *        fields, conditions, creation, deletion, container start and end) to
 *        the moment the watcher sees it; changes older than an hour are not
 *        counted (they were not timestamped)
 *   taugate_watch_last_event_timestamp_seconds{kind}    gauge
 * kind is one of Workload, Job, RayJob, Pod, Node or other; label values are
 * bounded by the workspaces, ClusterQueues and GPU classes the platform
 * defines (never run ids).
 *
 * Thread-safety: every function may be called from any thread. */
#ifndef TG_ENGINE_PLATFORM_METRICS_H
#define TG_ENGINE_PLATFORM_METRICS_H

#include <jansson.h>

#include "core/buf.h"
#include "store/pool.h"

/* The database series' collector: kept in the application context
 * (tg_app_t.platform_metrics). */
typedef struct tg_platform_metrics_s tg_platform_metrics_t;

/* Register the collector. `pool` must outlive it; cache_ms 0 queries on
 * every scrape; tenant_labels: label taugate_runs by workspace (1) or not
 * (0). RET: the collector; stop it with tg_platform_metrics_stop. */
tg_platform_metrics_t *tg_platform_metrics_start(tg_db_pool_t *pool, long cache_ms,
                                                 int tenant_labels);
/* Unregister and free. NULL is fine. */
void tg_platform_metrics_stop(tg_platform_metrics_t *pm);

/* Hook for every informer callback: `type` is the tg_kube_event_type_e of
 * the event, `obj` borrowed (may be NULL). Cheap; never blocks. The watch
 * series are per process, whatever context the informer belongs to. */
void tg_platform_metrics_watch_event(const char *kind, int type, const json_t *obj);

/* Render the database series from a stats object (store/platform_stats.h
 * shape) into out, taugate_runs by workspace when tenant_labels. Exposed
 * for tests. RET: TG_OK or TG_ETOOLARGE. */
tg_rc_e tg_platform_metrics_render_stats(const json_t *stats, int tenant_labels,
                                         tg_buf_t *out) TG_MUSTCHECK;
/* Render the in-memory watch series. RET: TG_OK or TG_ETOOLARGE. */
tg_rc_e tg_platform_metrics_render_watch(tg_buf_t *out) TG_MUSTCHECK;
/* The newest timestamp an object carries, in Unix seconds; 0 when none. */
double tg_platform_metrics_newest_time(const json_t *obj);
/* The fields tg_platform_metrics_newest_time reads, as a mask for
 * kube/json_mask.h (a NEW reference): what an informer whose callback
 * reports watch lag must decode. */
json_t *tg_platform_metrics_time_mask(void);
/* RFC 3339 → Unix seconds; -1 when it does not parse. */
double tg_platform_metrics_parse_time(const char *s);

#endif
