"""KubeRay RayJob lifecycle, plain and queued through Kueue."""
from kueue_fixtures import KV, cond, setup_queue, workload_of

RV = "ray.io/v1"


def rayjob(name, entrypoint, queue=None, ttl=None, workers=1):
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    res = {"requests": {"cpu": "1"}}
    spec = {"entrypoint": entrypoint, "shutdownAfterJobFinishes": True,
            "rayClusterSpec": {
                "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [
                    {"name": "ray-head", "image": "rayproject/ray:2.9.0", "resources": res,
                     "env": [{"name": "GREETING", "value": "hello-from-head"}]}]}}},
                "workerGroupSpecs": [{"groupName": "workers", "replicas": workers,
                                      "rayStartParams": {}, "template": {"spec": {"containers": [
                                          {"name": "ray-worker", "image": "rayproject/ray:2.9.0",
                                           "resources": res}]}}}]}}
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    return {"apiVersion": RV, "kind": "RayJob",
            "metadata": {"name": name, "namespace": "default", "labels": labels}, "spec": spec}


def test_rayjob_runs_entrypoint_in_head_and_completes(ks):
    ks.create(rayjob("rj", "echo $GREETING; echo driver-done", ttl=0))
    rj = ks.wait_for(lambda: ks.get_obj(RV, "rayjobs", "rj", "default"),
                     cond=lambda r: r.get("status", {}).get("jobDeploymentStatus") == "Complete",
                     timeout=30, what="rayjob complete")
    st = rj["status"]
    assert st["jobStatus"] == "SUCCEEDED"
    cluster = st["rayClusterName"]
    assert cluster.startswith("rj-") and len(cluster) == len("rj-") + 5
    assert st["dashboardURL"] == cluster + "-head-svc.default.svc.cluster.local:8265"
    assert st["startTime"] and st["endTime"]
    # the submitter Job's pod carries the driver output
    pods = ks.list("v1", "pods", "default", labelSelector="batch.kubernetes.io/job-name=rj")
    assert pods, "submitter pod"
    assert ks.logs("default", pods[0]["metadata"]["name"]) == "hello-from-head\ndriver-done\n"
    # shutdownAfterJobFinishes with ttl 0 removes the cluster and its pods
    ks.wait_for(lambda: ks.get_obj(RV, "rayclusters", cluster, "default"), cond=lambda c: c is None,
                what="cluster deleted")
    ks.wait_for(lambda: ks.list("v1", "pods", "default", labelSelector="ray.io/cluster=" + cluster),
                cond=lambda p: p == [], what="ray pods deleted")


def test_rayjob_cluster_pods_labels_and_failure(ks):
    ks.create(rayjob("rjf", "sleep 1; exit 3", ttl=60))
    rj = ks.wait_for(lambda: ks.get_obj(RV, "rayjobs", "rjf", "default"),
                     cond=lambda r: r.get("status", {}).get("jobDeploymentStatus") == "Running",
                     timeout=30, what="running")
    cluster = rj["status"]["rayClusterName"]
    rc = ks.get_obj(RV, "rayclusters", cluster, "default")
    assert rc["metadata"]["labels"]["ray.io/originated-from-crd"] == "RayJob"
    assert rc["status"]["state"] == "ready"
    head = ks.list("v1", "pods", "default",
                   labelSelector="ray.io/cluster=%s,ray.io/node-type=head" % cluster)
    assert len(head) == 1 and head[0]["metadata"]["name"].startswith(cluster + "-head-")
    workers = ks.list("v1", "pods", "default", labelSelector="ray.io/group=workers")
    assert len(workers) == 1 and workers[0]["metadata"]["labels"]["ray.io/is-ray-node"] == "yes"
    rj = ks.wait_for(lambda: ks.get_obj(RV, "rayjobs", "rjf", "default"),
                     cond=lambda r: r["status"].get("jobDeploymentStatus") == "Failed",
                     timeout=30, what="failed")
    assert rj["status"]["jobStatus"] == "FAILED" and rj["status"]["reason"] == "AppFailed"
    # ttl 60: the cluster is kept for now
    assert ks.get_obj(RV, "rayclusters", cluster, "default") is not None
    # kubesim writes only what the KubeRay CRDs declare, so a RayJob that has
    # run and its cluster apply back server-side under strict validation
    assert "ready" in rj["status"]["rayClusterStatus"]["stateTransitionTimes"]
    for kind, name in (("rayjob", "rjf"), ("raycluster", cluster)):
        text = ks.kubectl("get", kind, name, "-o", "json").stdout
        ks.kubectl("apply", "--server-side", "--force-conflicts", "--validate=strict", "-f", "-",
                   input=text)
    # a /status write of an undeclared field is refused under Strict and
    # pruned otherwise, as the API server does for custom resources
    path = "/apis/ray.io/v1/namespaces/default/rayjobs/rjf/status"
    cur = ks.get_obj(RV, "rayjobs", "rjf", "default")
    cur["status"]["rayClusterStatus"]["readyTime"] = "2026-01-01T00:00:00Z"
    status, _, body = ks.request("PUT", path, cur, query={"fieldValidation": "Strict"})
    assert status == 400, body
    assert ".status.rayClusterStatus.readyTime: field not declared in schema" in body["message"]
    status, _, body = ks.request("PUT", path, cur)
    assert status == 200 and "readyTime" not in body["status"]["rayClusterStatus"]


def test_queued_rayjob_is_suspended_then_admitted(ks):
    setup_queue(ks, cpu=1)  # too small: head+worker+submitter need 2.5 cpu
    ks.create(rayjob("rjq", "echo queued", queue="lq"))
    rj = ks.wait_for(lambda: ks.get_obj(RV, "rayjobs", "rjq", "default"),
                     cond=lambda r: r.get("status", {}).get("jobDeploymentStatus") == "Suspended",
                     what="suspended")
    assert rj["spec"]["suspend"] is True and rj["status"]["jobStatus"] == ""
    assert "rayClusterName" not in rj["status"]
    wl = ks.wait_for(lambda: workload_of(ks, "rjq"), cond=lambda w: w and cond(w, "QuotaReserved"),
                     what="workload")
    assert wl["metadata"]["name"].startswith("rayjob-rjq-")
    assert [p["name"] for p in wl["spec"]["podSets"]] == ["head", "workers", "submitter"]
    assert "insufficient quota for cpu" in cond(wl, "QuotaReserved")["message"]
    # grow the queue: admission unsuspends and the job completes
    cq = ks.get_obj(KV, "clusterqueues", "cq")
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "4"
    ks.put("/apis/%s/clusterqueues/cq" % KV, cq)
    ks.wait_for(lambda: ks.get_obj(RV, "rayjobs", "rjq", "default"),
                cond=lambda r: r["status"].get("jobDeploymentStatus") == "Complete", timeout=30,
                what="complete")
    ks.wait_for(lambda: workload_of(ks, "rjq"), cond=lambda w: cond(w, "Finished") is not None,
                what="workload finished")
