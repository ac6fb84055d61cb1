"""Node operations for platform admins (POST /v1/admin/nodes/{name}:cordon,
:uncordon, :drain): written to the cluster (kubesim, through the gateway's
kube client), shown in the node and fleet views, recorded in the node's
history and the audit log, and respected by the node-health automation:
it never takes an admin's cordon back, and an admin's uncordon of a faulty
node holds for that fault. A drain moves the taugate runs there to another
node without spending their retry budget and evicts every pod but DaemonSet
ones."""
import datetime
import time

import pytest

import tokens
from gateway import Gateway
from paths import BUILD
from test_fleet import XID, make_cluster, node_obj, run_state, start_gateway, stop_gateway, \
    submit, wait
from wait import wait_for

ADMIN_SUBJECT = "platform-admin@example.com"


@pytest.fixture(scope="module")
def cluster():
    ks = make_cluster()
    yield ks
    ks.stop()


@pytest.fixture(scope="module")
def gw(db_url, cluster):
    g = start_gateway(db_url, cluster)
    wait(g, "the nodes", lambda: len(g.req("GET", "/v1/admin/nodes").json()["items"]) == 4)
    yield g
    stop_gateway(g)


def node(gw, name):
    r = gw.req("GET", f"/v1/admin/nodes/{name}")
    assert r.status == 200, r
    return r.json()


def op(gw, name, verb, body=None, status=200):
    r = gw.req("POST", f"/v1/admin/nodes/{name}:{verb}", body=body)
    assert r.status == status, r
    return r.json() if r.body else None


def automation_cycle(gw, cluster, name):
    """A GPU fault on `name`, cordoned by the automation, then healed and
    uncordoned by it: proof that the node-health loop looked at the nodes
    (and had every chance to act on the others) meanwhile."""
    cluster.control(f"nodes/{name}/condition", XID)
    wait(gw, f"the automation's cordon of {name}",
         lambda: (node(gw, name)["cordon"] or {}).get("source") == "automation")
    cluster.control(f"nodes/{name}/condition", dict(XID, status="False", reason="NoXidErrors"))
    wait(gw, f"the automation's uncordon of {name}", lambda: node(gw, name)["cordon"] is None)


def test_cordon_is_written_shown_audited_and_kept(gw, cluster):
    cordoned_before = gw.req("GET", "/v1/admin/fleet").json()["totals"]["cordoned_nodes"]
    view = op(gw, "h100-2", "cordon", {"reason": "replacing the NVLink bridge"})
    assert view["name"] == "h100-2" and view["unschedulable"] is True
    c = view["cordon"]
    assert (c["by"], c["reason"], c["source"], c["drain"]) == (
        ADMIN_SUBJECT, "replacing the NVLink bridge", "admin", False)
    assert "history" not in view
    n = node_obj(cluster, "h100-2")
    ann = n["metadata"]["annotations"]
    assert n["spec"]["unschedulable"] is True
    assert ann["taugate.io/cordoned-by"] == ADMIN_SUBJECT
    assert ann["taugate.io/cordon-reason"] == "replacing the NVLink bridge"
    assert ann["taugate.io/cordon-source"] == "admin"
    # the fleet view counts it, the history and the audit log say who and why
    assert gw.req("GET", "/v1/admin/fleet").json()["totals"]["cordoned_nodes"] == \
        cordoned_before + 1
    ev = node(gw, "h100-2")["history"][0]
    assert (ev["kind"], ev["actor"], ev["message"]) == (
        "cordon", ADMIN_SUBJECT, "replacing the NVLink bridge")
    audit = gw.req("GET", f"/v1/admin/audit?subject={ADMIN_SUBJECT}").json()["items"]
    mine = [a for a in audit if a["target"] == "/v1/admin/nodes/h100-2:cordon"]
    assert mine and mine[0]["status"] == 200 and mine[0]["method"] == "POST"
    assert mine[0]["detail"]["reason"] == "replacing the NVLink bridge"
    # the node is healthy, and the automation (which uncordons its own
    # cordons of healthy nodes) leaves an admin's alone
    automation_cycle(gw, cluster, "h100-1")
    assert node_obj(cluster, "h100-2")["spec"]["unschedulable"] is True
    assert node(gw, "h100-2")["cordon"]["source"] == "admin"
    # taken back by an admin
    view = op(gw, "h100-2", "uncordon", {"reason": "bridge replaced"})
    assert view["cordon"] is None and view["unschedulable"] is False
    n = node_obj(cluster, "h100-2")
    assert not n["spec"].get("unschedulable")
    assert "taugate.io/cordoned-by" not in n["metadata"]["annotations"]
    assert n["metadata"]["annotations"]["taugate.io/uncordoned-at"]
    assert node(gw, "h100-2")["history"][0]["kind"] == "uncordon"


def test_an_admins_uncordon_holds_for_the_current_fault(gw, cluster):
    cluster.control("nodes/h100-1/condition", XID)
    wait(gw, "the automation's cordon",
         lambda: (node(gw, "h100-1")["cordon"] or {}).get("source") == "automation")
    # condition times have whole seconds: an uncordon in the fault's own
    # second is taken for one that came before it (and the fault for a new
    # one), so the admin answers in a later second, as people do
    since = node(gw, "h100-1")["health_since"]
    began = datetime.datetime.fromisoformat(since.replace("Z", "+00:00")).timestamp()
    wait_for(time.time, 5, "the fault's second to pass", cond=lambda now: now >= int(began) + 1.05,
             interval=0.05)
    op(gw, "h100-1", "uncordon")  # no body: no reason needed
    uncordoned = time.time()
    # the loop goes on (another node's fault is handled) but not for this one
    automation_cycle(gw, cluster, "h100-2")
    n = node(gw, "h100-1")
    assert n["health"] == "Unhealthy" and n["cordon"] is None and not n["unschedulable"]
    # healthy, then a new fault: the automation acts again (condition times
    # have one-second resolution: the new fault must start after the uncordon)
    cluster.control("nodes/h100-1/condition", dict(XID, status="False", reason="NoXidErrors"))
    wait(gw, "healthy again", lambda: node(gw, "h100-1")["health"] == "Healthy")
    wait_for(time.time, 5, "the uncordon's second to pass",
             cond=lambda now: now >= uncordoned + 1.1, interval=0.05)
    cluster.control("nodes/h100-1/condition", XID)
    wait(gw, "a new fault cordoned",
         lambda: (node(gw, "h100-1")["cordon"] or {}).get("source") == "automation")
    cluster.control("nodes/h100-1/condition", dict(XID, status="False", reason="NoXidErrors"))
    wait(gw, "uncordoned when healed", lambda: node(gw, "h100-1")["cordon"] is None)


def test_drain_moves_runs_without_spending_retries_and_evicts_pods(gw, cluster):
    run_id = submit(gw, "drained-run", "#!/usr/bin/env bash\nsleep 8\necho done\n",
                    extra="resilience:\n  max_retries: 0\n")
    run_state(gw, run_id, {"Running"})
    run = wait(gw, "the run's node",
               lambda: (lambda r: r if r["attempts"][0]["node_names"] else None)(
                   gw.req("GET", f"/v1/runs/{run_id}").json()))
    where = run["attempts"][0]["node_names"][0]
    wait(gw, "the run listed on its node", lambda: node(gw, where)["runs"])
    # a static (mirror) pod there, which a drain leaves alone as it does a
    # DaemonSet's
    cluster.ensure_namespace("infra")
    cluster.create({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "agent", "namespace": "infra",
                                 "annotations": {"kubesim.io/mode": "simulated",
                                                 "kubesim.io/duration-seconds": "600",
                                                 "kubernetes.io/config.mirror": "static-1"}},
                    "spec": {"nodeName": where,
                             "containers": [{"name": "c", "image": "busybox"}]}})
    out = op(gw, where, "drain", {"reason": "kernel upgrade", "grace_period_seconds": 5})
    assert out["node"]["cordon"]["drain"] is True and out["node"]["cordon"]["source"] == "admin"
    pods = {(p["namespace"], p["pod"]): p for p in out["pods"]}
    assert pods[("infra", "agent")]["outcome"] == "skipped"
    mine = [p for p in out["pods"] if p["run_id"] == run_id]
    assert mine and all(p["outcome"] in ("evicted", "gone") for p in mine), out["pods"]
    assert node_obj(cluster, where)["metadata"]["annotations"]["taugate.io/cordon-source"] == \
        "drain"
    # the run goes on elsewhere; max_retries 0, yet the drain cost it nothing
    done = run_state(gw, run_id, {"Succeeded", "Failed"}, timeout=90)
    assert done["state"] == "Succeeded" and done["attempt"] == 2, done
    assert done["attempts"][1]["retry_reason"] == "NodeFault"
    assert where not in done["attempts"][1]["node_names"]
    history = node(gw, where)["history"]
    assert history[0]["kind"] == "drain" and history[0]["actor"] == ADMIN_SUBJECT
    assert cluster.get_obj("v1", "pods", "agent", namespace="infra")  # still there
    op(gw, where, "uncordon", {"reason": "upgraded"})


def test_bad_requests(gw):
    r = gw.req("POST", "/v1/admin/nodes/h100-1:cordon", body={})
    assert r.status == 422 and r.json()["errors"][0]["path"] == "reason", r
    r = gw.req("POST", "/v1/admin/nodes/h100-1:drain",
               body={"reason": "x", "grace_period_seconds": -1})
    assert r.status == 422 and r.json()["errors"][0]["path"] == "grace_period_seconds", r
    r = gw.req("POST", "/v1/admin/nodes/h100-1:cordon", body={"reason": "x", "extra": 1})
    assert r.status == 422 and r.json()["errors"][0]["path"] == "extra", r
    r = gw.req("POST", "/v1/admin/nodes/no-such-node:cordon", body={"reason": "x"})
    assert r.status == 404, r
    r = gw.req("POST", "/v1/admin/nodes/h100-1:cordon", body={"reason": "x"},
               token=tokens.mint("rita"))
    assert r.status == 403, r


def test_without_a_cluster_it_is_503(db_url):
    g = Gateway(BUILD, db_url).start()
    try:
        r = g.req("POST", "/v1/admin/nodes/h100-1:cordon", body={"reason": "x"})
        assert r.status == 503, r
    finally:
        g.stop()
        g.close()
