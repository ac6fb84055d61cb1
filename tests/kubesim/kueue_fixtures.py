"""Builders for Kueue objects used by the scenario tests."""

KV = "kueue.x-k8s.io/v1beta1"


def flavor(name, node_labels=None):
    spec = {"nodeLabels": node_labels} if node_labels else {}
    return {"apiVersion": KV, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def cluster_queue(name, cpu, flavor_name="default-flavor", cohort=None, strategy=None,
                  borrowing_limit=None, lending_limit=None, within=None, reclaim=None):
    res = {"name": "cpu", "nominalQuota": str(cpu)}
    if borrowing_limit is not None:
        res["borrowingLimit"] = str(borrowing_limit)
    if lending_limit is not None:
        res["lendingLimit"] = str(lending_limit)
    mem = {"name": "memory", "nominalQuota": "64Gi"}
    spec = {"namespaceSelector": {}, "resourceGroups": [{
        "coveredResources": ["cpu", "memory"],
        "flavors": [{"name": flavor_name, "resources": [res, mem]}]}]}
    if cohort:
        spec["cohort"] = cohort
    if strategy:
        spec["queueingStrategy"] = strategy
    if within or reclaim:
        spec["preemption"] = {}
        if within:
            spec["preemption"]["withinClusterQueue"] = within
        if reclaim:
            spec["preemption"]["reclaimWithinCohort"] = reclaim
    return {"apiVersion": KV, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def local_queue(name, cq, namespace="default"):
    return {"apiVersion": KV, "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"clusterQueue": cq}}


def priority_class(name, value):
    return {"apiVersion": KV, "kind": "WorkloadPriorityClass", "metadata": {"name": name},
            "value": value}


def setup_queue(ks, cq_name="cq", lq_name="lq", cpu=2, **kw):
    if not ks.get_obj(KV, "resourceflavors", kw.get("flavor_name", "default-flavor")):
        ks.create(flavor(kw.get("flavor_name", "default-flavor")))
    ks.create(cluster_queue(cq_name, cpu, **kw))
    ks.create(local_queue(lq_name, cq_name))


def workload_of(ks, job_name, namespace="default"):
    """The Workload owned by the named Job/RayJob, or None."""
    for wl in ks.list(KV, "workloads", namespace):
        refs = wl["metadata"].get("ownerReferences", [])
        if refs and refs[0]["name"] == job_name:
            return wl
    return None


def cond(obj, ctype):
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == ctype:
            return c
    return None
