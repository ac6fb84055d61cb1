/* The kubelet: runs each bound pod's containers as local processes
 * (process mode) or as timers (simulated mode), turns their output into
 * timestamped logs, and reports container and pod status. */
#ifndef KS_PODS_H
#define KS_PODS_H

#include <jansson.h>

#include "api.h"

void ks_pods_init(void);
/* Kill every process (shutdown); waits briefly for reader threads. */
void ks_pods_shutdown(void);
/* Queue the pods a store change affects (store.h observer). */
void ks_pods_observe(int rt, json_t *old, json_t *obj);
/* One kubelet pass over the queued pods (lock held): start bound pods,
 * finish simulated containers, publish status changes, complete graceful
 * deletions. */
void ks_pods_pass(void);
/* Begin termination of a pod's processes (lock held). Returns 1 when
 * processes are still running (the caller keeps the object with a
 * deletionTimestamp), 0 when nothing runs. grace -1 = the pod's own. */
int ks_pods_kill(json_t *pod, long grace);
/* POST pods/{name}/eviction: a graceful delete. */
void ks_pods_eviction(ks_req_t *r, ks_target_t *t);
/* Faults (lock held): 0 on success, -1 if the pod is unknown/not running. */
int ks_pods_oomkill(const char *ns, const char *name, const char *container);
int ks_pods_evict(const char *ns, const char *name, const char *reason, const char *msg);
/* Log file of a container ("" when none yet); previous selects the last
 * terminated instance. Returns 0 when found. */
int ks_pods_log_path(const char *uid, const char *container, int previous, char *out,
                     size_t n, int *running);
/* The Ray driver (entrypoint) run inside a head pod (lock held). */
int ks_pods_start_driver(const char *head_uid, const char *cmd, json_t *container_env_src,
                         double sim_secs, int sim_exit);
/* 0 = not started, 1 = running, 2 = finished (exit code in *code). */
int ks_pods_driver_state(const char *head_uid, int *code);
/* Count live processes (stats). */
int ks_pods_running(void);

#endif
