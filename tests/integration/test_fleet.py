"""GPU fleet health end to end: kubesim GPU nodes, the nodes loop, the fleet
views, the automated response to a GPU fault (cordon, NodeFault recovery
elsewhere without spending the retry budget, uncordon), metrics at each
step, and why a quota-blocked run is pending."""
import base64
import os
import re

import pytest

import tokens
from gateway import Gateway
from kubesim import KubeSim
from paths import BUILD, SHARED
from wait import wait_for

KV = "kueue.x-k8s.io/v1beta1"
CONFORMANCE = os.path.join(SHARED, "conformance", "taugrid")
H100 = {"taugate.io/gpu-class": "h100", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
NODES = [
    {"namePrefix": "h100-", "count": 2, "labels": dict(H100, pool="gpu"),
     "capacity": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"}},
    {"name": "a100-mig-1",
     "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "pool": "gpu"},
     "capacity": {"cpu": "16", "memory": "128Gi", "nvidia.com/mig-1g.10gb": "7"}},
    {"name": "cpu-1", "labels": {"pool": "cpu"}, "capacity": {"cpu": "4", "memory": "16Gi"}},
]
XID = {"type": "XidErrors", "status": "True", "reason": "XidError79",
       "message": "GPU has fallen off the bus"}


def b64(text):
    return base64.b64encode(text.encode()).decode()


def cq_spec(cpu, memory="12Gi", cohort=None, borrowing_limit=None):
    cpu_res = {"name": "cpu", "nominalQuota": cpu}
    if borrowing_limit:
        cpu_res["borrowingLimit"] = borrowing_limit
    spec = {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
                {"name": "default-flavor", "resources": [
                    cpu_res, {"name": "memory", "nominalQuota": memory}]}]}]}
    if cohort:
        spec["cohort"] = cohort
    return spec


def cq_row(name, cpu, memory="12Gi", cohort=None, borrowing_limit=None):
    """The same ClusterQueue as an admin row (so a Kueue reconciler agrees)."""
    cpu_res = {"name": "cpu", "nominal_quota": cpu}
    if borrowing_limit:
        cpu_res["borrowing_limit"] = borrowing_limit
    row = {"name": name, "resource_groups": [{"covered_resources": ["cpu", "memory"], "flavors": [
        {"name": "default-flavor", "resources": [
            cpu_res, {"name": "memory", "nominal_quota": memory}]}]}]}
    if cohort:
        row["cohort"] = cohort
    return row


def add_queue(gw, ks, cq, lq, cpu, **kw):
    ks.create({"apiVersion": KV, "kind": "ClusterQueue", "metadata": {"name": cq},
               "spec": cq_spec(cpu, cohort=kw.get("cohort"),
                               borrowing_limit=kw.get("borrowing_limit"))})
    ks.create({"apiVersion": KV, "kind": "LocalQueue", "metadata": {"name": lq, "namespace": "ray"},
               "spec": {"clusterQueue": cq}})
    r = gw.req("POST", "/v1/admin/cluster-queues", body=cq_row(cq, cpu, **kw))
    assert r.status == 201, r
    r = gw.req("POST", "/v1/admin/workspaces/ray/queues", body={"name": lq, "cluster_queue": cq})
    assert r.status == 201, r


def make_cluster():
    ks = KubeSim(nodes=NODES).start()
    ks.ensure_namespace("ray")
    ks.ensure_namespace("gpu-users")
    for name, labels in (("default-flavor", None), ("h100", {"taugate.io/gpu-class": "h100"})):
        ks.create({"apiVersion": KV, "kind": "ResourceFlavor", "metadata": {"name": name},
                   "spec": {"nodeLabels": labels} if labels else {}})
    ks.create({"apiVersion": KV, "kind": "WorkloadPriorityClass",
               "metadata": {"name": "taugrid-default"}, "value": 1000})
    return ks


def start_gateway(db_url, ks, evict=True, catalog=True):
    g = Gateway(BUILD, db_url, extra_env={
        "TAUGATE_KUBE_API_URL": ks.url,
        "TAUGATE_NODE_EVICT_ON_FAULT": "true" if evict else "false",
        "TAUGATE_NODE_RESYNC_S": "2",
        "TAUGATE_PLATFORM_METRICS_CACHE_MS": "0",
    }).start()
    if not catalog:
        return g
    for path, body in [
        ("/v1/admin/workspaces", {"name": "ray", "namespace": "ray", "default_queue": "kind-cpu"}),
        ("/v1/admin/flavors", {"name": "default-flavor"}),
        ("/v1/admin/flavors", {"name": "h100", "node_labels": {"taugate.io/gpu-class": "h100"}}),
        ("/v1/admin/profiles", {"name": "kind-cpu-job", "engine": "job",
                                "allowed_workspaces": ["ray"]}),
        ("/v1/admin/priority-classes", {"name": "taugrid-default", "value": 1000}),
    ]:
        r = g.req("POST", path, body=body)
        assert r.status == 201, (path, r)
    add_queue(g, ks, "kind-cpu-cq", "kind-cpu", "4")
    r = g.req("POST", "/v1/admin/workspaces/ray/members",
              body={"kind": "user", "subject": "rita", "role": "researcher"})
    assert r.status == 201, r
    return g


def stop_gateway(g):
    status = g.stop()
    logs = g.logs()
    g.close()
    assert status == 0, logs[-3000:]


@pytest.fixture(scope="module")
def cluster():
    ks = make_cluster()
    yield ks
    ks.stop()


@pytest.fixture(scope="module")
def gw(db_url, cluster):
    g = start_gateway(db_url, cluster)
    yield g
    stop_gateway(g)


def smoke_spec(name, queue="kind-cpu", extra=""):
    with open(os.path.join(CONFORMANCE, "01-kind-smoke_tau.yaml")) as f:
        spec = f.read().replace("name: tau-kind-smoke", f"name: {name}")
    return spec.replace("  queue: kind-cpu", f"  queue: {queue}") + extra


def submit(gw, name, script, queue="kind-cpu", extra=""):
    r = gw.req("POST", "/v1/workspaces/ray/runs",
               body={"spec": smoke_spec(name, queue, extra), "files": {"train.sh": b64(script)}})
    assert r.status == 201, r
    return r.json()["id"]


def gw_logs(gw):
    return "\n".join(l for l in gw.logs().splitlines() if "access" not in l)[-4000:]


def wait(gw, what, fn, timeout=45):
    """wait_for with this gateway's log in the failure message."""
    return wait_for(fn, timeout, what, interval=0.25, detail=lambda: gw_logs(gw))


def run_state(gw, run_id, states, timeout=60):
    return wait(gw, f"run {run_id} in {states}",
                lambda: (lambda r: r if r["state"] in states else None)(
                    gw.req("GET", f"/v1/runs/{run_id}").json()), timeout)


def metrics(gw):
    r = gw.req("GET", "/metrics", token=None)
    assert r.status == 200
    out = {}
    for line in r.body.decode().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def fleet(gw):
    r = gw.req("GET", "/v1/admin/fleet")
    assert r.status == 200, r
    return r.json()


def cls(f, name):
    return next((c for c in f["classes"] if c["class"] == name), None)


def test_fleet_inventory_and_gpu_allocation(gw, cluster):
    f = wait(gw, "the fleet", lambda: (lambda f: f if f["totals"]["nodes"] == 4 else None)(
        fleet(gw)))
    h = cls(f, "h100")
    assert h["nodes"] == 2 and h["healthy_nodes"] == 2 and h["unhealthy_nodes"] == 0
    assert h["gpus"] == {"total": 16, "allocatable": 16, "allocated": 0, "free": 16,
                         "healthy": 16, "unhealthy": 0}
    assert h["utilization"] == 0
    mig_class = cls(f, "NVIDIA-A100-SXM4-80GB")
    assert mig_class and mig_class["gpus"]["total"] == 0
    assert f["mig"] == [{"resource": "nvidia.com/mig-1g.10gb", "capacity": 7, "allocatable": 7,
                         "allocated": 0}]
    assert f["totals"]["gpus"]["total"] == 16 and cls(f, "cpu") is None
    flavors = {x["flavor"]: x for x in f["flavors"]}
    assert flavors["h100"]["nodes"] == 2 and flavors["h100"]["gpus"]["total"] == 16
    assert flavors["default-flavor"]["nodes"] == 4

    # pods that are not taugate's hold GPUs too
    for name, res, n in (("trainer-a", "nvidia.com/gpu", "3"), ("mig-a", "nvidia.com/mig-1g.10gb", "2")):
        cluster.create({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": name, "namespace": "gpu-users",
                                     "annotations": {"kubesim.io/mode": "simulated",
                                                     "kubesim.io/duration-seconds": "600"}},
                        "spec": {"containers": [{"name": "c", "image": "busybox",
                                                 "resources": {"limits": {res: n}}}]}})
    f = wait(gw, "GPU allocation", lambda: (lambda f: f if cls(f, "h100")["gpus"]["allocated"] == 3
                                            and f["mig"][0]["allocated"] == 2 else None)(fleet(gw)))
    h = cls(f, "h100")
    assert h["gpus"]["free"] == 13 and h["utilization"] == pytest.approx(3 / 16)

    nodes = gw.req("GET", "/v1/admin/nodes?gpu=true").json()["items"]
    assert [n["name"] for n in nodes] == ["a100-mig-1", "h100-1", "h100-2"]
    by = {n["name"]: n for n in nodes}
    assert sorted(by["h100-1"]["flavors"]) == ["default-flavor", "h100"]
    assert by["h100-1"]["health"] == "Healthy" and by["h100-1"]["gpu_class"] == "h100"
    assert by["h100-1"]["gpus"]["total"] == 8
    assert sum(n["gpus"]["allocated"] for n in nodes) == 3
    assert by["a100-mig-1"]["mig"]["nvidia.com/mig-1g.10gb"] == {
        "capacity": 7, "allocatable": 7, "allocated": 2}
    assert {c["type"] for c in by["h100-1"]["conditions"]} >= {"Ready", "MemoryPressure"}
    page = gw.req("GET", "/v1/admin/nodes?limit=2").json()
    assert len(page["items"]) == 2 and page["next_cursor"]
    rest = gw.req("GET", f"/v1/admin/nodes?limit=2&cursor={page['next_cursor']}").json()
    assert [n["name"] for n in page["items"] + rest["items"]] == [
        "a100-mig-1", "cpu-1", "h100-1", "h100-2"]
    assert gw.req("GET", "/v1/admin/nodes?health=Sick").status == 400
    assert gw.req("GET", "/v1/admin/nodes/nope").status == 404
    one = gw.req("GET", "/v1/admin/nodes/h100-1").json()
    assert one["name"] == "h100-1" and isinstance(one["history"], list)
    # platform admins only
    rita = tokens.mint("rita")
    for path in ("/v1/admin/nodes", "/v1/admin/fleet", "/v1/admin/nodes/h100-1"):
        assert gw.req("GET", path, token=rita).status == 403

    m = metrics(gw)
    assert m['taugate_gpu_capacity{gpu_class="h100"}'] == 16
    assert m['taugate_gpu_allocated{gpu_class="h100"}'] == 3
    assert m['taugate_gpu_free{gpu_class="h100"}'] == 13
    assert m['taugate_gpu_unhealthy{gpu_class="h100"}'] == 0
    assert m['taugate_nodes{gpu_class="h100",health="Healthy"}'] == 2
    assert m['taugate_nodes{gpu_class="none",health="Healthy"}'] == 1
    assert m["taugate_nodes_leader"] == 1
    cluster.delete("/api/v1/namespaces/gpu-users/pods/trainer-a")
    wait(gw, "GPUs released", lambda: cls(fleet(gw), "h100")["gpus"]["allocated"] == 0)


def node_obj(cluster, name):
    return cluster.get_obj("v1", "nodes", name)


def events_of(gw, run_id):
    return gw.req("GET", f"/v1/runs/{run_id}/events").json()["items"]


def test_gpu_fault_cordons_recovers_elsewhere_and_uncordons(gw, cluster):
    # a run that may not be retried at all: only a node fault may move it
    run_id = submit(gw, "on-a-gpu-node", "#!/usr/bin/env bash\nsleep 6\necho done\n",
                    extra="resilience:\n  max_retries: 0\n")
    run_state(gw, run_id, {"Running"})
    run = wait(gw, "the run's node",
               lambda: (lambda r: r if r["attempts"][0]["node_names"] else None)(
                   gw.req("GET", f"/v1/runs/{run_id}").json()))
    bad = run["attempts"][0]["node_names"][0]
    assert bad.startswith("h100-"), run
    other = "h100-2" if bad == "h100-1" else "h100-1"
    node = wait(gw, "the run listed on its node", lambda: (lambda n: n if n["runs"] else None)(
        gw.req("GET", f"/v1/admin/nodes/{bad}").json()))
    assert node["runs"][0]["run_id"] == run_id and node["runs"][0]["workspace"] == "ray"
    before = metrics(gw)

    cluster.control(f"nodes/{bad}/condition", XID)

    # the node is cordoned, with who and why
    n = wait(gw, "the cordon", lambda: (lambda n: n if n["spec"].get("unschedulable") else None)(
        node_obj(cluster, bad)))
    ann = n["metadata"]["annotations"]
    assert ann["taugate.io/cordoned-by"].startswith("taugate")
    assert "XidErrors=True" in ann["taugate.io/cordon-reason"] and "XidError79" in ann[
        "taugate.io/cordon-reason"]
    assert ann["taugate.io/cordoned-at"]

    # the run is moved: NodeFault, a second attempt elsewhere, budget untouched
    done = run_state(gw, run_id, {"Succeeded", "Failed"}, timeout=90)
    assert done["state"] == "Succeeded" and done["attempt"] == 2, (done, events_of(gw, run_id))
    assert done["attempts"][1]["retry_reason"] == "NodeFault"
    assert done["attempts"][1]["node_names"] == [other]
    events = events_of(gw, run_id)
    note = [e for e in events if e["reason"] == "NodeFault" and e["state"] is None]
    assert note and note[0]["source"] == "node", events
    nf = note[0]["data"]["node_fault"]
    assert nf["node"] == bad and "XidErrors" in nf["problem"] and nf["action"] == "recover"
    assert note[0]["message"].startswith(f"node_fault: {bad} is unhealthy")
    rec = [e for e in events if e["state"] == "Recovering"]
    assert rec[0]["reason"] == "NodeFault" and bad in rec[0]["message"]
    assert "does not spend the retry budget" in rec[0]["message"]

    # the fleet view says so
    node = gw.req("GET", f"/v1/admin/nodes/{bad}").json()
    assert node["health"] == "Unhealthy" and node["unschedulable"] is True
    prob = node["problems"][0]
    assert (prob["type"], prob["reason"]) == ("XidErrors", "XidError79") and prob["since"]
    assert node["cordon"]["by"].startswith("taugate") and node["gpus"]["free"] == 0
    kinds = [h["kind"] for h in node["history"]]
    assert {"health", "cordon", "note", "recover", "evict"} <= set(kinds), node["history"]
    h = cls(fleet(gw), "h100")
    assert (h["healthy_nodes"], h["unhealthy_nodes"], h["cordoned_nodes"]) == (1, 1, 1)
    assert h["gpus"]["unhealthy"] == 8 and h["gpus"]["free"] == 8

    # every action is in the audit trail
    audit = gw.req("GET", "/v1/admin/audit?limit=200").json()["items"]
    routes = {(a["route"], a["target"]) for a in audit if a["subject"] == "system:taugate"}
    assert ("node.cordon", f"nodes/{bad}") in routes
    assert ("run.node_fault", f"runs/{run_id}") in routes
    assert any(r == "node.evict" for r, _ in routes)

    # metrics show each step
    m = metrics(gw)
    assert m['taugate_gpu_unhealthy{gpu_class="h100"}'] == 8
    assert m['taugate_nodes{gpu_class="h100",health="Unhealthy"}'] == 1
    assert m['taugate_nodes_cordoned{gpu_class="h100"}'] == 1
    assert m['taugate_node_actions_total{action="cordon",result="ok"}'] == \
        before['taugate_node_actions_total{action="cordon",result="ok"}'] + 1
    assert m['taugate_node_actions_total{action="recover",result="ok"}'] >= 1
    assert m['taugate_retries_total{reason="NodeFault"}'] == \
        before['taugate_retries_total{reason="NodeFault"}'] + 1
    assert m['taugate_node_health_transitions_total{health="Unhealthy"}'] >= 1
    assert m["taugate_node_fault_runs_total"] >= 1

    # healthy again: taugate takes its cordon back
    cluster.control(f"nodes/{bad}/condition", dict(XID, status="False", reason="NoXidErrors",
                                                    message="no XID errors"))
    n = wait(gw, "the uncordon", lambda: (lambda n: n if not n["spec"].get("unschedulable")
                                          else None)(node_obj(cluster, bad)))
    assert "taugate.io/cordoned-by" not in n["metadata"].get("annotations", {})
    node = wait(gw, "a healthy node", lambda: (lambda n: n if n["health"] == "Healthy"
                                               and not n["unschedulable"] else None)(
        gw.req("GET", f"/v1/admin/nodes/{bad}").json()))
    assert node["cordon"] is None and "uncordon" in [x["kind"] for x in node["history"]]
    h = cls(fleet(gw), "h100")
    assert (h["healthy_nodes"], h["unhealthy_nodes"], h["cordoned_nodes"]) == (2, 0, 0)
    assert h["gpus"]["free"] == 16
    m = metrics(gw)
    assert m['taugate_gpu_unhealthy{gpu_class="h100"}'] == 0
    assert m['taugate_node_actions_total{action="uncordon",result="ok"}'] >= 1
    assert m['taugate_node_health_transitions_total{health="Healthy"}'] >= 1


def test_a_node_cordoned_by_someone_else_is_left_alone(gw, cluster):
    cluster.control("nodes/a100-mig-1/cordon")
    cluster.control("nodes/a100-mig-1/condition", dict(XID, type="GPUHealthy", status="False"))
    node = wait(gw, "an unhealthy node", lambda: (lambda n: n if n["health"] == "Unhealthy"
                                                  else None)(
        gw.req("GET", "/v1/admin/nodes/a100-mig-1").json()))
    assert node["cordon"] is None  # not taugate's cordon
    cluster.control("nodes/a100-mig-1/condition", dict(XID, type="GPUHealthy", status="True"))
    wait(gw, "a healthy node", lambda: gw.req("GET", "/v1/admin/nodes/a100-mig-1").json()[
        "health"] == "Healthy")
    # the nodes loop's next flush: a change to another node, seen through the
    # API, was written after the flush that recorded Healthy (and ran its
    # policy step) had ended; the node is still cordoned: taugate never
    # uncordons what it did not cordon
    for action, cordoned in (("cordon", True), ("uncordon", False)):
        cluster.control(f"nodes/h100-2/{action}")
        wait(gw, f"h100-2 seen {action}ed", lambda: gw.req(
            "GET", "/v1/admin/nodes/h100-2").json()["unschedulable"] is cordoned)
    assert node_obj(cluster, "a100-mig-1")["spec"].get("unschedulable") is True
    assert "uncordon" not in [x["kind"] for x in
                              gw.req("GET", "/v1/admin/nodes/a100-mig-1").json()["history"]]
    cluster.control("nodes/a100-mig-1/uncordon")


def test_why_pending_names_the_resource_and_amount_missing(gw, cluster):
    add_queue(gw, cluster, "tiny-cq", "tiny", "5m")
    run_id = submit(gw, "blocked", "#!/usr/bin/env bash\necho x\n", queue="tiny")
    run_state(gw, run_id, {"Queued"})

    def item():
        r = gw.req("GET", "/v1/workspaces/ray/queue")
        assert r.status == 200, r
        body = r.json()
        mine = [i for i in body["items"] if i["run_id"] == run_id]
        return (body, mine[0]) if mine and mine[0]["position"] and mine[0]["fits"] is False \
            else None

    body, it = wait(gw, "the queue view", item)
    assert body["cluster"] == "ok"
    assert it["local_queue"] == "tiny" and it["cluster_queue"] == "tiny-cq"
    assert it["position"] == 1 and it["pending"] == 1 and it["state"] == "Queued"
    assert it["requests"]["cpu"] == "10m" and it["can_borrow"] is False
    why = it["why"]
    assert "Not enough quota in ClusterQueue tiny-cq" in why, why
    assert "5m cpu missing" in why and "flavor default-flavor" in why, why
    assert "Borrowing is not possible: tiny-cq is in no cohort" in why, why
    assert "Position 1 of 1 in LocalQueue tiny" in why and "Kueue says:" in why, why
    cpu = [q for q in it["quota"] if q["resource"] == "cpu"][0]
    assert (cpu["request"], cpu["nominal"], cpu["free"], cpu["missing"]) == ("10m", "5m", "5m", "5m")
    q = [x for x in body["queues"] if x["local_queue"] == "tiny"][0]
    assert q["cluster_queue"] == "tiny-cq" and q["pending"] == 1
    assert {(x["resource"], x["free"]) for x in q["quota"]} >= {("cpu", "5m")}
    # researchers of the workspace see it; other tenants do not
    assert gw.req("GET", "/v1/workspaces/ray/queue", token=tokens.mint("rita")).status == 200
    assert gw.req("GET", "/v1/workspaces/ray/queue", token=tokens.mint("mallory")).status == 404
    assert gw.req("POST", f"/v1/runs/{run_id}:cancel").status == 200


def test_why_pending_when_borrowing_cannot_close_the_gap(gw, cluster):
    add_queue(gw, cluster, "lender-cq", "lender", "100m", cohort="pool")
    add_queue(gw, cluster, "borrower-cq", "borrower", "5m", cohort="pool", borrowing_limit="2m")
    run_id = submit(gw, "needs-more", "#!/usr/bin/env bash\necho x\n", queue="borrower")
    run_state(gw, run_id, {"Queued"})

    def item():
        items = gw.req("GET", "/v1/workspaces/ray/queue").json()["items"]
        mine = [i for i in items if i["run_id"] == run_id]
        return mine[0] if mine and mine[0]["fits"] is False else None

    it = wait(gw, "the queue view", item)
    why = it["why"]
    assert "5m cpu missing" in why, why
    assert "Borrowing cannot close the gap: cohort pool can lend only 2m cpu" in why, why
    assert it["can_borrow"] is False
    assert gw.req("POST", f"/v1/runs/{run_id}:cancel").status == 200


def test_no_run_ids_in_metric_labels(gw):
    text = gw.req("GET", "/metrics", token=None).body.decode()
    uuid = re.compile(r'="[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"')
    assert not uuid.search(text)


def test_without_eviction_a_failure_there_is_a_node_fault_and_another_replica_takes_over(pg):
    """Two replicas, eviction off: the leader cordons and notes the run, which
    keeps running; when its pod then fails there, that is a NodeFault (the
    budget of 0 retries is untouched). The other replica takes the nodes loop
    over when the leader stops, and uncordons the node once it is healthy."""
    name = f"fleet2_{os.getpid()}"
    pg.psql(f"CREATE DATABASE {name}", db="postgres")
    url = f"postgresql://{pg.user}@127.0.0.1:{pg.port}/{name}"
    ks = make_cluster()
    a = start_gateway(url, ks, evict=False)
    b = start_gateway(url, ks, evict=False, catalog=False)
    try:
        wait(a, "one leader", lambda: metrics(a)["taugate_nodes_leader"] +
             metrics(b)["taugate_nodes_leader"] == 1)
        leader, other = (a, b) if metrics(a)["taugate_nodes_leader"] == 1 else (b, a)
        run_id = submit(a, "stays-put", "#!/usr/bin/env bash\nsleep 60\n",
                        extra="resilience:\n  max_retries: 0\n")
        run_state(a, run_id, {"Running"})
        run = wait(a, "the run's node",
                   lambda: (lambda r: r if r["attempts"][0]["node_names"] else None)(
                       a.req("GET", f"/v1/runs/{run_id}").json()))
        bad = run["attempts"][0]["node_names"][0]
        wait(a, "the nodes snapshot", lambda: a.req("GET", f"/v1/admin/nodes/{bad}").status == 200)
        ks.control(f"nodes/{bad}/condition", XID)
        wait(a, "the cordon", lambda: node_obj(ks, bad)["spec"].get("unschedulable"))
        # noted, not moved
        note = wait(a, "the note", lambda: [e for e in events_of(a, run_id)
                                            if e["reason"] == "NodeFault" and e["state"] is None])
        assert note[0]["data"]["node_fault"]["action"] == "none"
        r = a.req("GET", f"/v1/runs/{run_id}").json()
        assert r["state"] == "Running" and r["attempt"] == 1
        assert r["message"].startswith(f"node_fault: {bad} is unhealthy: XidErrors=True")
        # another look at the running pod (its change applied by the engine)
        # says nothing new: the note stays
        pods = [p for p in ks.list("v1", "pods", "ray")
                if p["metadata"]["labels"].get("taugate.io/run-id") == run_id]
        applied = 'taugate_engine_apply_total{result="ok"}'
        before = metrics(a)[applied]
        ks.patch(f"/api/v1/namespaces/ray/pods/{pods[0]['metadata']['name']}/status",
                 {"status": {"reason": "LookedAtAgain"}})
        wait(a, "the pod's change applied", lambda: metrics(a)[applied] > before)
        r = a.req("GET", f"/v1/runs/{run_id}").json()
        assert r["message"].startswith(f"node_fault: {bad} is unhealthy"), r["message"]
        # the pod dies there: a node fault, retried although max_retries is 0
        ks.control(f"pods/ray/{pods[0]['metadata']['name']}/evict")
        r = wait(a, "the second attempt", lambda: (lambda r: r if r["attempt"] == 2 else None)(
            a.req("GET", f"/v1/runs/{run_id}").json()), timeout=60)
        assert r["attempts"][1]["retry_reason"] == "NodeFault", events_of(a, run_id)
        rec = [e for e in events_of(a, run_id) if e["state"] == "Recovering"]
        assert rec[0]["reason"] == "NodeFault" and bad in rec[0]["message"]
        run_state(a, run_id, {"Running"})
        # the leader goes; the other replica takes over and finishes the job
        stop_gateway(leader)
        wait(other, "a new leader", lambda: metrics(other)["taugate_nodes_leader"] == 1, timeout=30)
        ks.control(f"nodes/{bad}/condition", dict(XID, status="False", reason="NoXidErrors"))
        wait(other, "the uncordon", lambda: not node_obj(ks, bad)["spec"].get("unschedulable"))
        hist = other.req("GET", f"/v1/admin/nodes/{bad}").json()["history"]
        actors = {h["kind"]: h["actor"] for h in hist}
        assert actors["cordon"] != actors["uncordon"]  # two replicas, one after the other
        assert other.req("POST", f"/v1/runs/{run_id}:cancel").status == 200
    finally:
        for g in (a, b):
            if g.proc and g.proc.poll() is None:
                stop_gateway(g)
        ks.stop()
