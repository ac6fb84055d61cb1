/* The Kueue objects the platform's rows stand for, and how to compare them
 * with what the cluster holds. Pure functions; the loop is engine/reconcile.h.
 *
 * Rows (store/kueue_sync.h) are snake_case, objects are Kueue v1beta1:
 *   resource_flavors  → ResourceFlavor spec {nodeLabels, nodeTaints, tolerations}
 *   cluster_queues    → ClusterQueue spec {namespaceSelector: {}, cohort,
 *                       queueingStrategy, preemption {withinClusterQueue,
 *                       reclaimWithinCohort}, resourceGroups [{coveredResources,
 *                       flavors [{name, resources [{name, nominalQuota,
 *                       borrowingLimit?, lendingLimit?}]}]}]}
 *   local_queues      → LocalQueue {namespace: the workspace's} spec {clusterQueue}
 *   priority_classes  → WorkloadPriorityClass {value, description}
 *   workspaces        → Namespace (created when missing, never changed)
 * namespaceSelector {} admits every namespace: the LocalQueues decide who may
 * use a ClusterQueue (a nil selector would admit none).
 *
 * Every object carries the label app.kubernetes.io/managed-by=taugate (plus
 * taugate.io/workspace on LocalQueues and Namespaces) and the annotation
 * taugate.io/spec-hash = "sha256:<hex>" of its *managed part*: the spec (for
 * a WorkloadPriorityClass: {value, description}) with the server's defaults
 * removed and quantities in canonical form, as canonical JSON
 * (core/json_canon.h). Hashing the normalised part means the defaults the API
 * server fills in (queueingStrategy BestEffortFIFO, preemption Never,
 * flavorFungibility, stopPolicy None, fairSharing.weight 1) and "64Gi" written
 * as "68719476736" never look like a change, while anything else does.
 *
 * jansson: every function returning json_t* returns a NEW reference; inputs
 * are BORROWED and never modified. Thread-safe. */
#ifndef TG_ENGINE_RECONCILE_RENDER_H
#define TG_ENGINE_RECONCILE_RENDER_H

#include <jansson.h>
#include <stddef.h>

#define TG_RECONCILE_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"
#define TG_RECONCILE_MANAGER          "taugate"
#define TG_RECONCILE_LABEL_WORKSPACE  "taugate.io/workspace"
#define TG_RECONCILE_ANN_SPEC_HASH    "taugate.io/spec-hash"
#define TG_RECONCILE_HASH_LEN         72 /* "sha256:" + 64 hex + NUL */

typedef enum {
    TG_RK_NAMESPACE = 0,
    TG_RK_FLAVOR,
    TG_RK_PRIORITY_CLASS,
    TG_RK_CLUSTER_QUEUE,
    TG_RK_LOCAL_QUEUE,
    TG_RK_COUNT
} tg_reconcile_kind_e;

/* "ResourceFlavor", "ClusterQueue"... (the Kubernetes kind). */
const char *tg_reconcile_kind_name(tg_reconcile_kind_e k);

/* Desired objects from database rows (the to_jsonb of the row; a LocalQueue
 * row also needs "namespace", a Namespace needs the workspace name and its
 * namespace). NULL when a row lacks its name. Labels, annotations (the spec
 * hash) included. */
json_t *tg_render_kueue_flavor(const json_t *row);
json_t *tg_render_kueue_cluster_queue(const json_t *row);
json_t *tg_render_kueue_local_queue(const json_t *row);
json_t *tg_render_kueue_priority_class(const json_t *row);
json_t *tg_render_kueue_namespace(const char *ns, const char *workspace);

/* The managed part of an object (desired or live), normalised as described
 * above. Never NULL (an object without a spec gives {}). */
json_t *tg_reconcile_managed_part(tg_reconcile_kind_e k, const json_t *obj);
/* "sha256:<hex>" of the canonical text of the managed part, into out. */
void tg_reconcile_hash(tg_reconcile_kind_e k, const json_t *obj, char out[TG_RECONCILE_HASH_LEN]);

/* 1 when metadata.labels says app.kubernetes.io/managed-by: taugate. */
int tg_reconcile_is_managed(const json_t *obj);
/* The taugate.io/spec-hash annotation (borrowed from obj), or NULL. */
const char *tg_reconcile_annotated_hash(const json_t *obj);

/* A short human summary of how two managed parts differ, e.g.
 * "resourceGroups[0].flavors[0].resources[0].nominalQuota: live \"9\", desired \"8\"",
 * entries joined by "; ", at most `max_entries` then "; ... (N more)".
 * Written into out[n] (always NUL-terminated, cut to fit). RET: the number of
 * differing paths (0 when equal). */
int tg_reconcile_diff(const json_t *live, const json_t *desired, int max_entries, char *out,
                      size_t n);

#endif
