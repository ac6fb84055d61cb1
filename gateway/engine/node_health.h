/* What a Node says about its GPUs and their health: pure functions over the
 * Node and Pod objects of the Kubernetes API, used by the nodes loop
 * (engine/nodes.c) and its tests.
 *
 * Health rules. GPU monitoring (Node Problem Detector with DCGM or a GPU
 * health checker) publishes node conditions. A rule names a condition type
 * and the status that means trouble:
 *   "XidErrors"          trouble when status is "True" (the NPD convention)
 *   "GPUHealthy=False"   trouble when status is "False" (a positive condition)
 *   "XIDError*"          a trailing '*' matches every type with that prefix
 * A node is
 *   Unhealthy  when any rule matches one of its conditions;
 *   NotReady   else when its Ready condition is False;
 *   Unknown    else when it has no Ready condition, Ready is Unknown, or a
 *              watched GPU condition is Unknown (missing telemetry is never
 *              taken for health);
 *   Healthy    otherwise.
 * Only Unhealthy is a GPU fault that taugate acts on (the node lifecycle
 * controller already taints NotReady nodes), and only Healthy lets taugate
 * take its own cordon back.
 *
 * GPUs: whole devices are the resources nvidia.com/gpu and amd.com/gpu;
 * MIG slices are nvidia.com/mig-<profile> and are counted apart. A pod's
 * request is the Kubernetes effective request: max(sum over containers,
 * max over init containers), each container's value being its request, or
 * its limit when no request is set (extended resources are usually given
 * as limits only).
 *
 * jansson: inputs are borrowed; results are new references. Thread-safety:
 * pure functions on the caller's data; a parsed rule set is read-only. */
#ifndef TG_ENGINE_NODE_HEALTH_H
#define TG_ENGINE_NODE_HEALTH_H

#include <jansson.h>
#include <stddef.h>

#include "engine/engine.h"

#define TG_NODE_RULES_MAX    48
#define TG_NODE_CLASS_LABELS 8

typedef struct tg_node_rules_s {
    int n;
    struct {
        char type[128];
        char bad[16]; /* the status that means trouble: True, False or Unknown */
        int prefix;   /* type ended with '*' */
    } rule[TG_NODE_RULES_MAX];
    int nclass;
    char class_label[TG_NODE_CLASS_LABELS][256]; /* node labels naming the GPU class, in order */
} tg_node_rules_t;

/* Parse the comma-separated rule list and GPU class label list (blanks
 * around items are ignored; empty items are skipped).
 * RET: 0, or -1 with a message in err naming the bad item. */
int tg_node_rules_parse(tg_node_rules_t *r, const char *conditions, const char *class_labels,
                        char *err, size_t errlen);

/* Does condition `type` with `status` mean trouble under the rules? */
int tg_node_rules_match(const tg_node_rules_t *r, const char *type, const char *status);

/* Summarise a Node object. RET: a new object
 *   {name, gpu_class (string|null), labels,
 *    gpus: {capacity, allocatable}, mig: {resource: {capacity, allocatable}},
 *    health, health_since (RFC 3339|null), problems: [{type, status, reason,
 *    message, since}], conditions: [same shape, every condition],
 *    ready (true|false|null), unschedulable, cordoned_by, cordon_reason,
 *    cordoned_at (from taugate's annotations, null when absent),
 *    cordon_source ("automation", "admin" or "drain"; null when taugate did
 *    not cordon it), uncordoned_at (an admin's last uncordon, or null), taints}
 * or NULL when `node` has no metadata.name. The class is the value of the
 * first class label present; a node with GPUs and none of them is
 * "unlabelled"; a node without GPUs has class null. Heartbeat times are
 * left out, so two summaries are equal when nothing but heartbeats moved. */
json_t *tg_node_summarize(const json_t *node, const tg_node_rules_t *r);

/* Is `resource` a whole GPU (1), a MIG slice (2) or neither (0)? */
int tg_node_gpu_resource(const char *resource);

/* The GPU and MIG resources a pod requests, as {resource: count} (a new
 * object, possibly empty). Quantities that are not whole numbers are
 * ignored. */
json_t *tg_node_pod_gpus(const json_t *pod);

/* Does the pod hold its node's resources now: bound (spec.nodeName set) and
 * not Succeeded or Failed? */
int tg_node_pod_holds(const json_t *pod);

/* The fields of a pod tg_node_pod_gpus and tg_node_pod_holds read, as a
 * mask for kube/json_mask.h (a NEW reference). */
json_t *tg_node_pod_mask(void);

/* One line naming a summary's problems for messages and annotations, e.g.
 * "XidErrors=True (XidError79: GPU has fallen off the bus)"; "" when none.
 * Writes at most outlen bytes, always NUL-terminated. */
void tg_node_problem_text(const json_t *summary, char *out, size_t outlen);

#endif
