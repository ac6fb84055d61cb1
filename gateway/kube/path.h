/* Kubernetes API paths and query strings.
 *
 * A resource is named by group/version/resource (GVR). Core resources live
 * under /api/v1, the others under /apis/{group}/{version}; namespaced ones
 * add /namespaces/{ns} unless the request spans all namespaces:
 *   /api/v1/namespaces/{ns}/pods/{name}/log
 *   /apis/batch/v1/namespaces/{ns}/jobs/{name}/status
 *   /apis/kueue.x-k8s.io/v1beta1/clusterqueues/{name}
 * Every segment is percent-encoded, and empty, "." and ".." segments are
 * refused, so a name can never change which resource a path addresses.
 *
 * No jansson values here. Thread-safety: pure functions; the GVR constants
 * are immutable. */
#ifndef TG_KUBE_PATH_H
#define TG_KUBE_PATH_H

#include <stddef.h>

#include "core/buf.h"
#include "core/mem.h"
#include "core/status.h"

typedef struct tg_kube_gvr_s {
    const char *group; /* "" or NULL for the core group */
    const char *version;
    const char *resource; /* plural, lower case */
    int namespaced;
} tg_kube_gvr_t;

/* The resources the gateway uses (k8s-api.md 1.1). */
extern const tg_kube_gvr_t tg_kube_gvr_pods;
extern const tg_kube_gvr_t tg_kube_gvr_events;
extern const tg_kube_gvr_t tg_kube_gvr_nodes;
extern const tg_kube_gvr_t tg_kube_gvr_namespaces;
extern const tg_kube_gvr_t tg_kube_gvr_jobs;
extern const tg_kube_gvr_t tg_kube_gvr_rayjobs;
extern const tg_kube_gvr_t tg_kube_gvr_rayclusters;
extern const tg_kube_gvr_t tg_kube_gvr_workloads;
extern const tg_kube_gvr_t tg_kube_gvr_localqueues;
extern const tg_kube_gvr_t tg_kube_gvr_clusterqueues;
extern const tg_kube_gvr_t tg_kube_gvr_resourceflavors;
extern const tg_kube_gvr_t tg_kube_gvr_workloadpriorityclasses;
/* visibility.kueue.x-k8s.io; use with sub "pendingworkloads". */
extern const tg_kube_gvr_t tg_kube_gvr_visibility_clusterqueues;
extern const tg_kube_gvr_t tg_kube_gvr_visibility_localqueues;

/* What a request addresses. All strings borrowed.
 *   ns:   the namespace; NULL for cluster-scoped resources, or for a
 *         collection across all namespaces;
 *   name: NULL for the collection;
 *   sub:  subresource ("status", "log", "pendingworkloads") or NULL. */
typedef struct tg_kube_ref_s {
    const tg_kube_gvr_t *gvr;
    const char *ns;
    const char *name;
    const char *sub;
} tg_kube_ref_t;

/* Append the path for `ref` to `out`.
 * RET: TG_OK; TG_EINVAL for a bad segment, a namespace on a cluster-scoped
 *      resource, or a subresource without a name; TG_ETOOLARGE when `out`
 *      is full. `out` is unchanged on error only in length terms (callers
 *      discard it). */
tg_rc_e tg_kube_path_append(tg_buf_t *out, const tg_kube_ref_t *ref) TG_MUSTCHECK;
/* The same, as a new string (caller frees). NULL on error. */
char *tg_kube_path(const tg_kube_ref_t *ref);

/* Append "key=value" to a query string in `q`, percent-encoding both and
 * adding '&' when q is not empty. A NULL value appends nothing. */
tg_rc_e tg_kube_query_add(tg_buf_t *q, const char *key, const char *value) TG_MUSTCHECK;
tg_rc_e tg_kube_query_add_long(tg_buf_t *q, const char *key, long value) TG_MUSTCHECK;

/* Percent-encode everything outside RFC 3986 unreserved characters. */
tg_rc_e tg_kube_url_escape(tg_buf_t *out, const char *s) TG_MUSTCHECK;

#endif
