"""Runs end to end: PostgreSQL + kubesim + the gateway. Submission, queueing,
execution and the recorded history, cancel, idempotent retries."""
import base64
import os
import time

import pytest

from gateway import Gateway
from kubesim import KubeSim
from paths import BUILD, SHARED

KV = "kueue.x-k8s.io/v1beta1"
CONFORMANCE = os.path.join(SHARED, "conformance", "taugrid")


def b64(text):
    return base64.b64encode(text.encode()).decode()


@pytest.fixture(scope="module")
def cluster():
    ks = KubeSim().start()
    ks.ensure_namespace("ray")
    ks.create({"apiVersion": KV, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"},
               "spec": {}})
    ks.create({"apiVersion": KV, "kind": "ClusterQueue", "metadata": {"name": "kind-cpu-cq"},
               "spec": {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                        "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
                            {"name": "default-flavor", "resources": [
                                {"name": "cpu", "nominalQuota": "4"},
                                {"name": "memory", "nominalQuota": "12Gi"}]}]}]}})
    ks.create({"apiVersion": KV, "kind": "WorkloadPriorityClass",
               "metadata": {"name": "taugrid-default"}, "value": 1000})
    ks.create({"apiVersion": KV, "kind": "LocalQueue",
               "metadata": {"name": "kind-cpu", "namespace": "ray"},
               "spec": {"clusterQueue": "kind-cpu-cq"}})
    yield ks
    ks.stop()


@pytest.fixture(scope="module")
def gw(db_url, cluster):
    g = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": cluster.url}).start()
    for path, body in [
        ("/v1/admin/workspaces", {"name": "ray", "namespace": "ray", "default_queue": "kind-cpu"}),
        ("/v1/admin/cluster-queues", {"name": "kind-cpu-cq"}),
        ("/v1/admin/workspaces/ray/queues", {"name": "kind-cpu", "cluster_queue": "kind-cpu-cq"}),
        ("/v1/admin/profiles", {"name": "kind-cpu-job", "engine": "job",
                                "allowed_workspaces": ["ray"]}),
        ("/v1/admin/priority-classes", {"name": "taugrid-default", "value": 1000}),
    ]:
        r = g.req("POST", path, body=body)
        assert r.status == 201, (path, r)
    yield g
    status = g.stop()
    logs = g.logs()
    g.close()
    assert status == 0, logs[-3000:]


def smoke_spec(name="tau-kind-smoke"):
    with open(os.path.join(CONFORMANCE, "01-kind-smoke_tau.yaml")) as f:
        return f.read().replace("name: tau-kind-smoke", f"name: {name}")


def submit(gw, script="#!/usr/bin/env bash\necho hello from taugate\n", name="tau-kind-smoke",
           headers=None):
    return gw.req("POST", "/v1/workspaces/ray/runs", headers=headers,
                  body={"spec": smoke_spec(name), "files": {"train.sh": b64(script)}})


def wait_state(gw, run_id, states, timeout=60):
    deadline = time.time() + timeout
    run = None
    while time.time() < deadline:
        run = gw.req("GET", f"/v1/runs/{run_id}").json()
        if run["state"] in states:
            return run
        time.sleep(0.2)
    events = gw.req("GET", f"/v1/runs/{run_id}/events").body.decode()
    logs = "\n".join(l for l in gw.logs().splitlines() if "access" not in l)
    raise AssertionError(f"run stayed {run and run['state']}: {events}\n{logs[-3000:]}")


def test_job_runs_to_success_with_history(gw, cluster):
    r = submit(gw)
    assert r.status == 201, r
    run = r.json()
    assert run["state"] == "Accepted" and run["engine"] == "job"
    assert r.header("Location") == f"/v1/runs/{run['id']}"
    done = wait_state(gw, run["id"], {"Succeeded", "Failed"})
    assert done["state"] == "Succeeded", done
    events = gw.req("GET", f"/v1/runs/{run['id']}/events").json()["items"]
    states = [e["state"] for e in events if e["state"]]
    assert states[0] == "Accepted" and states[-1] == "Succeeded"
    assert "Admitted" in states and "Running" in states
    sources = {e["state"]: e["source"] for e in events if e["state"]}
    assert sources["Admitted"] == "kueue" and sources["Succeeded"] == "job"
    # the chain links every event to the one before it
    for prev, cur in zip(events, events[1:]):
        assert cur["prev_hash"] == prev["hash"] and cur["seq"] == prev["seq"] + 1
    # the Job in the cluster carries the queue label and our run id
    jobs = cluster.list("batch/v1", "jobs", "ray")
    mine = [j for j in jobs if j["metadata"]["labels"].get("taugate.io/run-id") == run["id"]]
    assert len(mine) == 1
    assert mine[0]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "kind-cpu"


def test_failing_run_reports_failure(gw):
    r = submit(gw, script="#!/usr/bin/env bash\necho about to fail\nexit 3\n", name="will-fail")
    assert r.status == 201, r
    done = wait_state(gw, r.json()["id"], {"Succeeded", "Failed"})
    assert done["state"] == "Failed" and done["reason"], done


def test_cancel_a_running_run_and_refuse_cancelling_ended_ones(gw, cluster):
    r = submit(gw, script="#!/usr/bin/env bash\nsleep 60\n", name="long-one")
    run_id = r.json()["id"]
    wait_state(gw, run_id, {"Running"})
    c = gw.req("POST", f"/v1/runs/{run_id}:cancel")
    assert c.status == 200 and c.json()["state"] == "Cancelled", c
    # the engine deletes the Job from the cluster
    deadline = time.time() + 20
    while time.time() < deadline:
        jobs = [j for j in cluster.list("batch/v1", "jobs", "ray")
                if j["metadata"]["labels"].get("taugate.io/run-id") == run_id]
        if not jobs:
            break
        time.sleep(0.2)
    assert not jobs
    again = gw.req("POST", f"/v1/runs/{run_id}:cancel")
    assert again.status == 409 and "already ended" in again.json()["detail"]
    assert gw.req("GET", f"/v1/runs/{run_id}").json()["state"] == "Cancelled"


def test_cancel_before_the_cluster_sees_it(gw):
    r = submit(gw, name="cancel-early")
    run_id = r.json()["id"]
    c = gw.req("DELETE", f"/v1/runs/{run_id}")
    assert c.status == 200 and c.json()["state"] == "Cancelled"
    time.sleep(1)
    assert gw.req("GET", f"/v1/runs/{run_id}").json()["state"] == "Cancelled"


def test_idempotent_submission(gw):
    key = {"Idempotency-Key": "retry-me-1"}
    first = submit(gw, headers=key, name="idem")
    assert first.status == 201
    again = submit(gw, headers=key, name="idem")
    assert again.status == 201 and again.header("Idempotency-Replayed") == "true"
    assert again.json()["id"] == first.json()["id"]
    other = submit(gw, headers=key, name="idem-other")
    assert other.status == 409 and "Idempotency-Key" in other.json()["detail"]


def test_list_and_filter_runs(gw):
    items = gw.req("GET", "/v1/workspaces/ray/runs?limit=200").json()["items"]
    assert items and all(i["workspace"] == "ray" for i in items)
    times = [i["created_at"] for i in items]
    assert times == sorted(times, reverse=True)
    failed = gw.req("GET", "/v1/workspaces/ray/runs?state=Failed").json()["items"]
    assert failed and all(i["state"] == "Failed" for i in failed)
    assert gw.req("GET", "/v1/workspaces/ray/runs?state=Bogus").status == 400
    page = gw.req("GET", "/v1/workspaces/ray/runs?limit=1").json()
    nxt = gw.req("GET", f"/v1/workspaces/ray/runs?limit=1&cursor={page['next_cursor']}").json()
    assert nxt["items"][0]["id"] != page["items"][0]["id"]
