/* The resource type table. */
#include "rtypes.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

#define KUEUE_DIR  "kueue-v0.14.8/"
#define RAY_DIR    "kuberay-v1.7.0/"
#define RBAC_GROUP "rbac.authorization.k8s.io"

static const ks_rtype_t ks_rtypes[KS_RT_COUNT] = {
    {"", "v1", "namespaces", "namespace", "Namespace", 0, 1, "ns", "", NULL, KS_RT_NAMESPACES},
    {"", "v1", "nodes", "node", "Node", 0, 1, "no", "", NULL, KS_RT_NODES},
    {"", "v1", "pods", "pod", "Pod", 1, 1, "po", "all", NULL, KS_RT_PODS},
    {"", "v1", "services", "service", "Service", 1, 1, "svc", "all", NULL, KS_RT_SERVICES},
    {"", "v1", "events", "event", "Event", 1, 0, "ev", "", NULL, KS_RT_EVENTS},
    {"", "v1", "configmaps", "configmap", "ConfigMap", 1, 0, "cm", "", NULL, KS_RT_CONFIGMAPS},
    {"", "v1", "secrets", "secret", "Secret", 1, 0, "", "", NULL, KS_RT_SECRETS},
    {"batch", "v1", "jobs", "job", "Job", 1, 1, "", "all", NULL, KS_RT_JOBS},
    {"ray.io", "v1", "rayjobs", "rayjob", "RayJob", 1, 1, "", "all", RAY_DIR "ray.io_rayjobs.yaml",
     KS_RT_RAYJOBS},
    {"ray.io", "v1", "rayclusters", "raycluster", "RayCluster", 1, 1, "", "all",
     RAY_DIR "ray.io_rayclusters.yaml", KS_RT_RAYCLUSTERS},
    {"kueue.x-k8s.io", "v1beta1", "resourceflavors", "resourceflavor", "ResourceFlavor", 0, 0,
     "flavor,flavors,rf", "", KUEUE_DIR "kueue.x-k8s.io_resourceflavors.yaml",
     KS_RT_RESOURCEFLAVORS},
    {"kueue.x-k8s.io", "v1beta1", "clusterqueues", "clusterqueue", "ClusterQueue", 0, 1, "cq", "",
     KUEUE_DIR "kueue.x-k8s.io_clusterqueues.yaml", KS_RT_CLUSTERQUEUES},
    {"kueue.x-k8s.io", "v1beta1", "localqueues", "localqueue", "LocalQueue", 1, 1,
     "queue,queues,lq", "", KUEUE_DIR "kueue.x-k8s.io_localqueues.yaml", KS_RT_LOCALQUEUES},
    {"kueue.x-k8s.io", "v1beta1", "workloads", "workload", "Workload", 1, 1, "wl,kwl,kueueworkload",
     "", KUEUE_DIR "kueue.x-k8s.io_workloads.yaml", KS_RT_WORKLOADS},
    {"kueue.x-k8s.io", "v1beta1", "workloadpriorityclasses", "workloadpriorityclass",
     "WorkloadPriorityClass", 0, 0, "", "", KUEUE_DIR "kueue.x-k8s.io_workloadpriorityclasses.yaml",
     KS_RT_WPCS},
    {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", 1, 0, "sa", "", NULL,
     KS_RT_SERVICEACCOUNTS},
    {"apps", "v1", "deployments", "deployment", "Deployment", 1, 1, "deploy", "all", NULL,
     KS_RT_DEPLOYMENTS},
    {"policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", 1, 1,
     "pdb", "", NULL, KS_RT_PDBS},
    {RBAC_GROUP, "v1", "clusterroles", "clusterrole", "ClusterRole", 0, 0, "", "", NULL,
     KS_RT_CLUSTERROLES},
    {RBAC_GROUP, "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", 0, 0, "",
     "", NULL, KS_RT_CLUSTERROLEBINDINGS},
    {RBAC_GROUP, "v1", "roles", "role", "Role", 1, 0, "", "", NULL, KS_RT_ROLES},
    {RBAC_GROUP, "v1", "rolebindings", "rolebinding", "RoleBinding", 1, 0, "", "", NULL,
     KS_RT_ROLEBINDINGS},
    {"coordination.k8s.io", "v1", "leases", "lease", "Lease", 1, 0, "", "", NULL, KS_RT_LEASES},
    {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", 1, 1, "rs", "all", NULL,
     KS_RT_REPLICASETS},
};

const ks_rtype_t *ks_rtype(int idx)
{
    return idx >= 0 && idx < KS_RT_COUNT ? &ks_rtypes[idx] : NULL;
}

const ks_rtype_t *ks_rtype_find(const char *group, const char *version, const char *resource)
{
    for (int i = 0; i < KS_RT_COUNT; i++) {
        const ks_rtype_t *rt = &ks_rtypes[i];
        if (strcmp(rt->group, group) == 0 && strcmp(rt->version, version) == 0 &&
            strcmp(rt->resource, resource) == 0)
            return rt;
    }
    return NULL;
}

void ks_rtype_gv(const ks_rtype_t *rt, char *out, size_t n)
{
    if (rt->group[0])
        snprintf(out, n, "%s/%s", rt->group, rt->version);
    else
        ks_strlcpy(out, rt->version, n);
}

void ks_rtype_qualified(const ks_rtype_t *rt, char *out, size_t n)
{
    if (rt->group[0])
        snprintf(out, n, "%s.%s", rt->resource, rt->group);
    else
        ks_strlcpy(out, rt->resource, n);
}
