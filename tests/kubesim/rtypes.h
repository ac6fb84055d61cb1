/* The resource types kubesim serves: one static table drives routing,
 * discovery, OpenAPI generation and tables. */
#ifndef KS_RTYPES_H
#define KS_RTYPES_H

#include <stddef.h>

typedef struct ks_rtype_s {
    const char *group; /* "" for core */
    const char *version;
    const char *resource; /* plural */
    const char *singular;
    const char *kind;
    int namespaced;
    int has_status;          /* serves <plural>/status */
    const char *short_names; /* comma separated, "" for none */
    const char *categories;  /* comma separated */
    const char *crd_file;    /* CRD YAML relative to the schema dir, or NULL */
    int idx;                 /* position in the table */
} ks_rtype_t;

enum {
    KS_RT_NAMESPACES = 0,
    KS_RT_NODES,
    KS_RT_PODS,
    KS_RT_SERVICES,
    KS_RT_EVENTS,
    KS_RT_CONFIGMAPS,
    KS_RT_SECRETS,
    KS_RT_JOBS,
    KS_RT_RAYJOBS,
    KS_RT_RAYCLUSTERS,
    KS_RT_RESOURCEFLAVORS,
    KS_RT_CLUSTERQUEUES,
    KS_RT_LOCALQUEUES,
    KS_RT_WORKLOADS,
    KS_RT_WPCS,
    /* Stored and served, no controller: what a deployment manifest holds. */
    KS_RT_SERVICEACCOUNTS,
    KS_RT_DEPLOYMENTS,
    KS_RT_PDBS,
    KS_RT_CLUSTERROLES,
    KS_RT_CLUSTERROLEBINDINGS,
    KS_RT_ROLES,
    KS_RT_ROLEBINDINGS,
    KS_RT_LEASES,      /* coordination.k8s.io: node heartbeats, leader election */
    KS_RT_REPLICASETS, /* apps/v1: what the Deployment controller manages */
    KS_RT_COUNT
};

const ks_rtype_t *ks_rtype(int idx);
/* Find by group, version and plural; NULL when unknown. */
const ks_rtype_t *ks_rtype_find(const char *group, const char *version, const char *resource);
/* "batch/v1" or "v1". */
void ks_rtype_gv(const ks_rtype_t *rt, char *out, size_t n);
/* "jobs.batch" or "pods", as Status messages spell resources. */
void ks_rtype_qualified(const ks_rtype_t *rt, char *out, size_t n);

#endif
