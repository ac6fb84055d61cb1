"""Kueue synchronisation: admin changes land in the cluster as Kueue objects
with the right fields, hand edits are reported as drift and put back, objects
taugate does not manage are left alone, and only one replica leads."""
import os
import time

import pytest

from gateway import Gateway
from kubesim import KubeSim
from paths import BUILD, REPO
from wait import wait_for

# Until the routes are wired into gateway/api/routes.c these tests cannot run.
with open(os.path.join(REPO, "gateway", "api", "routes.c")) as _f:
    if "tg_api_admin_drift" not in _f.read():
        pytest.skip("the quota and Kueue sync routes are not in routes.c yet",
                    allow_module_level=True)

KV = "kueue.x-k8s.io/v1beta1"
MANAGED = "app.kubernetes.io/managed-by"
HASH = "taugate.io/spec-hash"
FAST = {"TAUGATE_RECONCILE_INTERVAL_S": "1"}


@pytest.fixture(scope="module")
def cluster():
    ks = KubeSim().start()
    yield ks
    ks.stop()


@pytest.fixture(scope="module")
def gw(db_url, cluster):
    g = Gateway(BUILD, db_url, extra_env=dict(FAST, TAUGATE_KUBE_API_URL=cluster.url)).start()
    yield g
    status = g.stop()
    logs = g.logs()
    g.close()
    assert status == 0, logs[-3000:]


def post(gw, path, body):
    r = gw.req("POST", path, body=body)
    assert r.status == 201, (path, r)
    return r.json()


def drift(gw, **query):
    q = "&".join(f"{k}={v}" for k, v in query.items())
    r = gw.req("GET", "/v1/admin/drift" + (f"?{q}" if q else ""))
    assert r.status == 200, r
    return r.json()


def steps_go_by(gw, steps=2):
    """Wait until the leader has made `steps` more reconcile steps (each
    stamps kueue_sync.step_at); returns the drift report after them."""
    def step_at():
        return (drift(gw)["sync"] or {}).get("step_at")
    for n in range(steps):
        seen = step_at()
        wait_for(lambda: step_at() != seen, 20, f"reconcile step {n + 1} of {steps}")
    return drift(gw, state="all")


CQ = {"name": "team-a", "cohort": "research", "queueing_strategy": "StrictFIFO",
      "preemption": {"within_cluster_queue": "LowerPriority", "reclaim_within_cohort": "Any"},
      "resource_groups": [{"covered_resources": ["cpu", "memory", "nvidia.com/gpu"],
                           "flavors": [{"name": "gpu-a100", "resources": [
                               {"name": "cpu", "nominal_quota": "64"},
                               {"name": "memory", "nominal_quota": "256Gi"},
                               {"name": "nvidia.com/gpu", "nominal_quota": "8",
                                "borrowing_limit": "4", "lending_limit": "2"}]}]}]}


@pytest.fixture(scope="module")
def catalog(gw, cluster):
    post(gw, "/v1/admin/flavors", {
        "name": "gpu-a100", "node_labels": {"gpu": "a100"},
        "node_taints": [{"key": "gpu", "value": "a100", "effect": "NoSchedule"}],
        "tolerations": [{"key": "gpu", "operator": "Equal", "value": "a100",
                         "effect": "NoSchedule"}]})
    post(gw, "/v1/admin/cluster-queues", CQ)
    post(gw, "/v1/admin/workspaces", {"name": "vision", "namespace": "vision-ns",
                                      "default_queue": "gpu"})
    post(gw, "/v1/admin/workspaces/vision/queues", {"name": "gpu", "cluster_queue": "team-a"})
    post(gw, "/v1/admin/priority-classes", {"name": "urgent", "value": 1000,
                                            "description": "deadline work"})
    return cluster


def test_admin_objects_appear_in_the_cluster_with_kueue_fields(catalog):
    ks = catalog
    rf = wait_for(lambda: ks.get_obj(KV, "resourceflavors", "gpu-a100"), 20, "flavor")
    assert rf["metadata"]["labels"][MANAGED] == "taugate"
    assert rf["metadata"]["annotations"][HASH].startswith("sha256:")
    assert rf["spec"]["nodeLabels"] == {"gpu": "a100"}
    assert rf["spec"]["nodeTaints"] == [{"key": "gpu", "value": "a100", "effect": "NoSchedule"}]
    assert rf["spec"]["tolerations"][0]["operator"] == "Equal"

    cq = wait_for(lambda: ks.get_obj(KV, "clusterqueues", "team-a"), 20, "cluster queue")
    spec = cq["spec"]
    assert cq["metadata"]["labels"][MANAGED] == "taugate"
    assert spec["cohort"] == "research"
    assert spec["queueingStrategy"] == "StrictFIFO"
    assert spec["namespaceSelector"] == {}
    assert spec["preemption"]["withinClusterQueue"] == "LowerPriority"
    assert spec["preemption"]["reclaimWithinCohort"] == "Any"
    group = spec["resourceGroups"][0]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    assert group["flavors"][0]["name"] == "gpu-a100"
    assert group["flavors"][0]["resources"] == [
        {"name": "cpu", "nominalQuota": "64"},
        {"name": "memory", "nominalQuota": "256Gi"},
        {"name": "nvidia.com/gpu", "nominalQuota": "8", "borrowingLimit": "4",
         "lendingLimit": "2"}]
    # the flavor exists, so Kueue calls the queue active
    active = wait_for(lambda: [c for c in (ks.get_obj(KV, "clusterqueues", "team-a")
                                           .get("status", {}).get("conditions", []))
                               if c["type"] == "Active"], 20, "Active condition")
    assert active[0]["status"] == "True", active

    ns = wait_for(lambda: ks.get_obj("v1", "namespaces", "vision-ns"), 20, "namespace")
    assert ns["metadata"]["labels"][MANAGED] == "taugate"
    lq = wait_for(lambda: ks.get_obj(KV, "localqueues", "gpu", "vision-ns"), 20, "local queue")
    assert lq["spec"]["clusterQueue"] == "team-a"
    assert lq["metadata"]["labels"]["taugate.io/workspace"] == "vision"

    pc = wait_for(lambda: ks.get_obj(KV, "workloadpriorityclasses", "urgent"), 20, "priority")
    assert pc["value"] == 1000 and pc["description"] == "deadline work"
    assert pc["metadata"]["labels"][MANAGED] == "taugate"


def test_a_synced_cluster_reports_no_drift(catalog, gw):
    wait_for(lambda: catalog.get_obj(KV, "workloadpriorityclasses", "urgent"), 20, "sync")
    body = steps_go_by(gw)  # a couple of steps over a cluster that matches
    # nothing open (the module's hand-edit tests leave resolved reports)
    assert [i for i in drift(gw)["items"] if i["problem"] == "edited"] == []
    assert body["leader"] is True
    report = body["sync"]["report"]
    assert report["failed"] == 0 and report["in_sync"] >= 4, body["sync"]


def test_admin_patch_updates_the_cluster_without_drift(catalog, gw):
    groups = CQ["resource_groups"]
    groups = [dict(groups[0], flavors=[dict(groups[0]["flavors"][0], resources=[
        {"name": "cpu", "nominal_quota": "96"},
        {"name": "memory", "nominal_quota": "256Gi"},
        {"name": "nvidia.com/gpu", "nominal_quota": "8", "borrowing_limit": "4",
         "lending_limit": "2"}])])]
    def edits():
        return {i["id"] for i in drift(gw, state="all", name="team-a")["items"]
                if i["problem"] == "edited"}
    before = edits()  # reports the module's hand-edit tests left
    r = gw.req("PATCH", "/v1/admin/cluster-queues/team-a", body={"resource_groups": groups})
    assert r.status == 200, r

    def cpu_quota():
        cq = catalog.get_obj(KV, "clusterqueues", "team-a")
        return cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"]
    try:
        wait_for(lambda: cpu_quota() == "96", 20, "the new quota")
        steps_go_by(gw)
        assert edits() == before
    finally:
        # the queue as the module's fixture made it, for the tests that follow
        r = gw.req("PATCH", "/v1/admin/cluster-queues/team-a",
                   body={"resource_groups": CQ["resource_groups"]})
        assert r.status == 200, r
        wait_for(lambda: cpu_quota() == "64", 20, "the quota put back")


def test_a_hand_edit_is_reported_as_drift_and_put_back(catalog, gw):
    ks = catalog
    wait_for(lambda: ks.get_obj(KV, "clusterqueues", "team-a"), 20, "cluster queue")
    cq = ks.get_obj(KV, "clusterqueues", "team-a")
    groups = cq["spec"]["resourceGroups"]
    groups[0]["flavors"][0]["resources"][2]["nominalQuota"] = "99"
    ks.patch(ks.path_of(cq), {"spec": {"resourceGroups": groups}})

    def edited(state="all"):
        items = drift(gw, state=state, kind="ClusterQueue", name="team-a")["items"]
        return [i for i in items if i["problem"] == "edited" and '"99"' in i["summary"]]
    item = wait_for(edited, 20, "drift report")[0]
    assert "nominalQuota" in item["summary"] and "99" in item["summary"], item
    assert item["live"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] == "99"
    assert item["desired"]["resourceGroups"][0]["flavors"][0]["resources"][2][
        "nominalQuota"] == "8"

    def gpu_quota():
        c = ks.get_obj(KV, "clusterqueues", "team-a")
        return c["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"]
    wait_for(lambda: gpu_quota() == "8", 20, "the quota put back")
    item = wait_for(lambda: [i for i in edited() if i["resolution"]], 20, "resolution")[0]
    assert item["resolution"] == "corrected" and item["resolved_at"]
    # nothing stays open for it
    assert edited("open") == []


def test_a_hand_added_field_is_drift_too(catalog, gw):
    ks = catalog
    cq = ks.get_obj(KV, "clusterqueues", "team-a")
    ks.patch(ks.path_of(cq), {"spec": {"stopPolicy": "Hold"}})
    item = wait_for(lambda: [i for i in drift(gw, state="all", name="team-a")["items"]
                             if i["problem"] == "edited" and "stopPolicy" in i["summary"]],
                    20, "stopPolicy drift")[0]
    assert "Hold" in item["summary"]
    wait_for(lambda: ks.get_obj(KV, "clusterqueues", "team-a")["spec"].get("stopPolicy"), 20,
             "stopPolicy removed", cond=lambda v: v in (None, "None"))


def test_objects_taugate_does_not_manage_are_left_alone(catalog, gw):
    ks = catalog
    ks.create({"apiVersion": KV, "kind": "WorkloadPriorityClass",
               "metadata": {"name": "hand-made"}, "value": 5})
    post(gw, "/v1/admin/priority-classes", {"name": "hand-made", "value": 7})
    item = wait_for(lambda: [i for i in drift(gw, kind="WorkloadPriorityClass",
                                              name="hand-made")["items"]
                             if i["problem"] == "unmanaged"], 20, "unmanaged report")[0]
    assert "left alone" in item["summary"]
    obj = ks.get_obj(KV, "workloadpriorityclasses", "hand-made")
    assert obj["value"] == 5 and MANAGED not in obj["metadata"].get("labels", {})
    # once it is gone from the database, the report is closed as gone
    assert gw.req("DELETE", "/v1/admin/priority-classes/hand-made").status == 204
    wait_for(lambda: not [i for i in drift(gw, name="hand-made")["items"]], 20, "closed")
    assert ks.get_obj(KV, "workloadpriorityclasses", "hand-made")["value"] == 5


def test_objects_removed_from_the_database_leave_the_cluster(catalog, gw):
    ks = catalog
    post(gw, "/v1/admin/priority-classes", {"name": "short-lived", "value": 1})
    wait_for(lambda: ks.get_obj(KV, "workloadpriorityclasses", "short-lived"), 20, "created")
    assert gw.req("DELETE", "/v1/admin/priority-classes/short-lived").status == 204
    wait_for(lambda: ks.get_obj(KV, "workloadpriorityclasses", "short-lived") is None, 20,
             "deleted")


def test_a_flavor_a_queue_still_names_is_kept(catalog, gw, pg, db_url):
    ks = catalog
    post(gw, "/v1/admin/flavors", {"name": "spare"})
    post(gw, "/v1/admin/cluster-queues", {
        "name": "spare-cq", "resource_groups": [{"covered_resources": ["cpu"], "flavors": [
            {"name": "spare", "resources": [{"name": "cpu", "nominal_quota": "1"}]}]}]})
    wait_for(lambda: ks.get_obj(KV, "clusterqueues", "spare-cq"), 20, "spare-cq")
    assert gw.req("DELETE", "/v1/admin/flavors/spare").status == 204
    item = wait_for(lambda: [i for i in drift(gw, kind="ResourceFlavor", name="spare")["items"]
                             if i["problem"] == "orphan_in_use"], 20, "kept flavor")[0]
    assert "spare-cq" in item["summary"]
    assert ks.get_obj(KV, "resourceflavors", "spare") is not None
    # once the queue is gone too, both leave the cluster
    assert gw.req("DELETE", "/v1/admin/cluster-queues/spare-cq").status == 204
    wait_for(lambda: ks.get_obj(KV, "resourceflavors", "spare") is None, 20, "flavor deleted")
    assert ks.get_obj(KV, "clusterqueues", "spare-cq") is None


def test_a_queue_with_admitted_work_is_kept_when_its_row_goes(catalog, gw, pg, db_url):
    ks = catalog
    post(gw, "/v1/admin/workspaces/vision/queues", {"name": "busy", "cluster_queue": "team-a"})
    wait_for(lambda: ks.get_obj(KV, "localqueues", "busy", "vision-ns"), 20, "busy queue")
    ks.create({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "hold", "namespace": "vision-ns",
                            "labels": {"kueue.x-k8s.io/queue-name": "busy"}},
               "spec": {"template": {"spec": {
                   "restartPolicy": "Never",
                   "tolerations": [{"key": "gpu", "operator": "Exists"}],
                   "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "60"],
                                   "resources": {"requests": {"cpu": "1"}}}]}}}})
    wait_for(lambda: (ks.get_obj(KV, "localqueues", "busy", "vision-ns").get("status", {})
                      .get("admittedWorkloads", 0)) > 0, 20, "admission")
    # the row goes behind the API's back (the API itself refuses: test_quota.py)
    pg.psql("DELETE FROM local_queues WHERE workspace = 'vision' AND name = 'busy'",
            db=db_url.rsplit("/", 1)[1])
    item = wait_for(lambda: [i for i in drift(gw, kind="LocalQueue", name="busy")["items"]
                             if i["problem"] == "orphan_in_use"], 20, "kept queue")[0]
    assert "admitted" in item["summary"] and item["namespace"] == "vision-ns"
    assert ks.get_obj(KV, "localqueues", "busy", "vision-ns") is not None
    ks.delete("/apis/batch/v1/namespaces/vision-ns/jobs/hold")
    wait_for(lambda: ks.get_obj(KV, "localqueues", "busy", "vision-ns") is None, 30,
             "queue deleted once idle")


def test_metrics_show_the_leader(catalog, gw):
    r = gw.req("GET", "/metrics", token=None)
    assert r.status == 200
    text = r.body.decode()
    assert "taugate_kueue_reconcile_leader 1" in text
    assert 'taugate_kueue_objects_total{action="created"}' in text


def test_drift_endpoint_is_for_admins_and_checks_its_parameters(gw):
    from tokens import mint
    assert gw.req("GET", "/v1/admin/drift", token=mint("someone@example.com")).status == 403
    assert gw.req("GET", "/v1/admin/drift?state=sometimes").status == 400
    assert gw.req("GET", "/v1/admin/drift?cursor=bm9wZQ").status == 400
    page = gw.req("GET", "/v1/admin/drift?state=all&limit=1").json()
    assert len(page["items"]) <= 1


def test_only_one_replica_leads(pg):
    """Two gateways on one database: one leads; when it dies, the other takes over.
    (Their own cluster: two databases reconciling one cluster would fight.)"""
    cluster = KubeSim().start()
    name = f"lead{int(time.time() * 1000) % 10**9}"
    pg.psql(f"CREATE DATABASE {name}", db="postgres")
    url = f"postgresql://{pg.user}@127.0.0.1:{pg.port}/{name}"
    env = dict(FAST, TAUGATE_KUBE_API_URL=cluster.url)
    first = Gateway(BUILD, url, extra_env=env).start()
    wait_for(lambda: first.req("GET", "/v1/admin/drift").json()["leader"], 20, "a leader")
    second = Gateway(BUILD, url, extra_env=env).start()
    try:
        # steps of the leader go by while the second tries for the lock (at
        # start, then every interval)
        holder = steps_go_by(first)["sync"]["holder"]
        assert steps_go_by(first)["sync"]["holder"] == holder
        assert second.req("GET", "/v1/admin/drift").json()["leader"] is False
        assert first.req("GET", "/v1/admin/drift").json()["leader"] is True
        # the leader dies: its session ends with it, and the other takes over
        first.kill()
        wait_for(lambda: second.req("GET", "/v1/admin/drift").json()["leader"], 15, "takeover")
        post(second, "/v1/admin/priority-classes", {"name": "after-takeover", "value": 3})
        wait_for(lambda: cluster.get_obj(KV, "workloadpriorityclasses", "after-takeover"), 20,
                 "the new leader's work")
        assert second.req("GET", "/v1/admin/drift").json()["sync"]["holder"]
    finally:
        first.close()
        status = second.stop()
        second.close()
        cluster.stop()
        assert status == 0


def test_report_only_mode_leaves_hand_edits_until_the_database_changes(pg):
    cluster = KubeSim().start()
    name = f"rep{int(time.time() * 1000) % 10**9}"
    pg.psql(f"CREATE DATABASE {name}", db="postgres")
    url = f"postgresql://{pg.user}@127.0.0.1:{pg.port}/{name}"
    g = Gateway(BUILD, url, extra_env=dict(FAST, TAUGATE_KUBE_API_URL=cluster.url,
                                           TAUGATE_RECONCILE_DRIFT="report")).start()
    try:
        post(g, "/v1/admin/priority-classes", {"name": "batch", "value": 10})
        pc = wait_for(lambda: cluster.get_obj(KV, "workloadpriorityclasses", "batch"), 20,
                      "priority class")
        cluster.patch(cluster.path_of(pc), {"value": 11})
        item = wait_for(lambda: [i for i in drift(g, name="batch")["items"]
                                 if i["problem"] == "edited"], 20, "drift")[0]
        assert "value: live 11, desired 10" in item["summary"], item
        steps_go_by(g)  # the hand edit stays
        assert cluster.get_obj(KV, "workloadpriorityclasses", "batch")["value"] == 11
        assert drift(g, name="batch")["items"][0]["seen_count"] > 1
        # an admin change wins, and closes the report
        assert g.req("PATCH", "/v1/admin/priority-classes/batch",
                     body={"value": 12}).status == 200
        wait_for(lambda: cluster.get_obj(KV, "workloadpriorityclasses", "batch")["value"] == 12,
                 20, "the admin's value")
        wait_for(lambda: not drift(g, name="batch")["items"], 20, "report closed")
        closed = drift(g, state="resolved", name="batch")["items"][0]
        assert closed["resolution"] == "updated"
    finally:
        status = g.stop()
        g.close()
        cluster.stop()
        assert status == 0
