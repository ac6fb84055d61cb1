"""Runs end to end: PostgreSQL + kubesim + the gateway. Submission, queueing,
execution and the recorded history, cancel, idempotent retries."""
import base64
import http.client
import os

import pytest

import tokens
from gateway import Gateway
from kubesim import KubeSim
from wait import wait_for, wait_run_state
from world import KV, kind_cpu_cluster, kind_cpu_workspace
from paths import BUILD, SHARED

CONFORMANCE = os.path.join(SHARED, "conformance", "taugrid")


def b64(text):
    return base64.b64encode(text.encode()).decode()


@pytest.fixture(scope="module")
def cluster():
    ks = kind_cpu_cluster(KubeSim().start())
    yield ks
    ks.stop()


@pytest.fixture(scope="module")
def gw(db_url, cluster):
    g = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": cluster.url}).start()
    kind_cpu_workspace(g)
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
    return wait_run_state(gw, run_id, states, timeout)


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
    by_state = {e["state"]: e for e in events if e["state"]}
    assert by_state["Succeeded"]["source"] == "job"
    # the engine applies objects in any order; a pod seen running or a Job
    # seen complete before the Workload's event still records the admission
    # as Kueue shows it (the Workload cache), never as merely implied
    admitted = by_state["Admitted"]
    assert (admitted["source"], admitted["reason"]) == ("kueue", "Admitted"), admitted
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
    wait_for(lambda: [j for j in cluster.list("batch/v1", "jobs", "ray")
                      if j["metadata"]["labels"].get("taugate.io/run-id") == run_id], 20,
             f"run {run_id}'s Job deleted", cond=lambda jobs: not jobs,
             detail=lambda: "\n".join(l for l in gw.logs().splitlines()
                                      if "access" not in l)[-3000:])
    again = gw.req("POST", f"/v1/runs/{run_id}:cancel")
    assert again.status == 409 and "already ended" in again.json()["detail"]
    assert gw.req("GET", f"/v1/runs/{run_id}").json()["state"] == "Cancelled"


def test_cancel_before_the_cluster_sees_it(gw, cluster, pg, db_url):
    db = db_url.rsplit("/", 1)[1]
    # the cluster refuses the run's Job (503) until the engine's create waits
    # in its outbox; the wait is then made long (the UPDATE waits for a try in
    # progress to settle), so the cancel lands while no one is creating it
    cluster.control("faults/api", {"rate": 1.0, "code": 503,
                                   "pathPrefix": "/apis/batch/v1/namespaces/ray/jobs"})
    try:
        run_id = submit(gw, name="cancel-early").json()["id"]
        run = wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}").json(), 30,
                       f"run {run_id} waiting for the cluster",
                       cond=lambda r: r["reason"] == "WaitingForCluster")
        assert run["state"] == "Accepted", run
        assert pg.psql("UPDATE outbox SET not_before = now() + interval '1 hour'"
                       f" WHERE run_id = '{run_id}' AND action = 'create' RETURNING 1", db=db) == "1"
    finally:
        cluster.control("faults/api", method="DELETE")
    c = gw.req("DELETE", f"/v1/runs/{run_id}")
    assert c.status == 200 and c.json()["state"] == "Cancelled", c
    # the cancel dropped the waiting create; the engine settles the rest of
    # the run's outbox (its delete) with the cluster answering again
    wait_for(lambda: pg.psql(f"SELECT count(*) FROM outbox WHERE run_id = '{run_id}'", db=db),
             30, f"the engine to settle run {run_id}'s outbox", cond=lambda n: n == "0")
    assert not [j for j in cluster.list("batch/v1", "jobs", "ray")
                if j["metadata"]["labels"].get("taugate.io/run-id") == run_id]
    assert gw.req("GET", f"/v1/runs/{run_id}").json()["state"] == "Cancelled"
    reasons = [e["reason"] for e in gw.req("GET", f"/v1/runs/{run_id}/events").json()["items"]]
    assert reasons == ["Submitted", "CancelledByUser"], reasons


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
    # runs of its own, one of them failed, whatever ran before
    ok = submit(gw, name="listed-ok").json()["id"]
    bad = submit(gw, script="#!/usr/bin/env bash\nexit 1\n", name="listed-failed").json()["id"]
    wait_state(gw, bad, {"Failed"})
    items = gw.req("GET", "/v1/workspaces/ray/runs?limit=200").json()["items"]
    assert {ok, bad} <= {i["id"] for i in items}
    assert items and all(i["workspace"] == "ray" for i in items)
    times = [i["created_at"] for i in items]
    assert times == sorted(times, reverse=True)
    failed = gw.req("GET", "/v1/workspaces/ray/runs?state=Failed").json()["items"]
    assert bad in {i["id"] for i in failed} and all(i["state"] == "Failed" for i in failed)
    assert gw.req("GET", "/v1/workspaces/ray/runs?state=Bogus").status == 400
    page = gw.req("GET", "/v1/workspaces/ray/runs?limit=1").json()
    nxt = gw.req("GET", f"/v1/workspaces/ray/runs?limit=1&cursor={page['next_cursor']}").json()
    assert nxt["items"][0]["id"] != page["items"][0]["id"]


def spec_with(name, extra, queue="kind-cpu"):
    base = smoke_spec(name).replace("  queue: kind-cpu", f"  queue: {queue}")
    return base + extra


def submit_spec(gw, spec, script):
    return gw.req("POST", "/v1/workspaces/ray/runs",
                  body={"spec": spec, "files": {"train.sh": b64(script)}})


def attempt_pods(cluster, run_id, attempt):
    return [p for p in cluster.list("v1", "pods", "ray")
            if p["metadata"]["labels"].get("taugate.io/run-id") == run_id
            and p["metadata"]["labels"].get("taugate.io/attempt") == str(attempt)]


def test_oomkilled_is_not_retried_by_default_and_resume_needs_force(gw, cluster):
    r = submit_spec(gw, spec_with("oom-run", ""), "#!/usr/bin/env bash\nsleep 60\n")
    run_id = r.json()["id"]
    wait_state(gw, run_id, {"Running"})
    pods = cluster.wait_for(lambda: attempt_pods(cluster, run_id, 1), cond=lambda ps: ps)
    cluster.control(f"pods/ray/{pods[0]['metadata']['name']}/oomkill")
    done = wait_state(gw, run_id, {"Failed", "Succeeded"})
    assert done["state"] == "Failed" and done["reason"] == "OOMKilled", done
    assert "not in resilience.retry_on" in done["message"]
    r = gw.req("POST", f"/v1/runs/{run_id}:resume")
    assert r.status == 409 and "OOMKilled" in r.json()["detail"]
    r = gw.req("POST", f"/v1/runs/{run_id}:resume", body={"force": True})
    assert r.status == 202, r
    assert r.json()["attempt"] == 2 and r.json()["state"] == "Recovering"
    wait_state(gw, run_id, {"Running", "Succeeded"})
    events = gw.req("GET", f"/v1/runs/{run_id}/events").json()["items"]
    assert any(e["reason"] == "Resumed" and e["source"] == "user" for e in events)
    gw.req("POST", f"/v1/runs/{run_id}:cancel")


def test_an_oomkill_the_job_reports_before_its_pod_is_still_oomkilled(gw, cluster):
    """The Job and its pods come on different watches, so the Job's failure can
    reach the gateway before the pod's OOMKill does. The run still ends
    OOMKilled (not with the Job's BackoffLimitExceeded): the gateway asks the
    cluster for the attempt's pods when its cache shows them still running."""
    r = submit_spec(gw, spec_with("oom-lag", ""), "#!/usr/bin/env bash\nsleep 60\n")
    run_id = r.json()["id"]
    wait_state(gw, run_id, {"Running"})
    pods = cluster.wait_for(lambda: attempt_pods(cluster, run_id, 1), cond=lambda ps: ps)
    cluster.control("watches/stall", {"seconds": 120, "resource": "pods"})
    try:
        cluster.control(f"pods/ray/{pods[0]['metadata']['name']}/oomkill")
        # within the 120 s stall: the end comes from the Job's watch
        done = wait_state(gw, run_id, {"Failed", "Succeeded"}, timeout=60)
        assert done["state"] == "Failed" and done["reason"] == "OOMKilled", done
    finally:
        cluster.control("watches/stall", {"seconds": 0})


def test_a_run_whose_pod_events_lag_still_has_its_whole_log(gw, cluster):
    """The Job's completion can reach the gateway before any event of its
    pod. The run's pods are then recorded from the cluster with its end (the
    log collector works from them), and a plain read of the ended run's log
    waits for the collector: the log is whole, not empty."""
    cluster.control("watches/stall", {"seconds": 120, "resource": "pods"})
    try:
        r = submit_spec(gw, spec_with("pods-lag", ""),
                        "#!/usr/bin/env bash\necho first line of pods-lag\necho last line\n")
        run_id = r.json()["id"]
        # within the 120 s stall: the end comes from the Job's watch alone
        done = wait_state(gw, run_id, {"Failed", "Succeeded"}, timeout=60)
        assert done["state"] == "Succeeded", done
        got = gw.req("GET", f"/v1/runs/{run_id}/logs", timeout=60)
        assert got.status == 200
        assert got.body.decode().splitlines() == ["first line of pods-lag", "last line"], got.body
    finally:
        cluster.control("watches/stall", {"seconds": 0})


def test_a_follow_begun_before_the_pod_is_recorded_reads_its_whole_log(gw, cluster, tmp_path):
    """A follow reads the pods recorded when it began and looks for new ones
    as it goes, and once more before it ends as complete. A pod recorded after
    the follow began is read, even when its whole log was stored between two
    looks (the follow ended empty: the README walk-through's `tau logs -f`)."""
    go = tmp_path / "go"
    cluster.control("watches/stall", {"seconds": 120, "resource": "pods"})
    try:
        r = submit_spec(gw, spec_with("late-pod", ""),
                        f"#!/usr/bin/env bash\nwhile [ ! -e {go} ]; do sleep 0.05; done\n"
                        "echo first line of late-pod\necho last line\n")
        run_id = r.json()["id"]
        conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=60)
        try:
            conn.request("GET", f"/v1/runs/{run_id}/logs?follow=true",
                         headers={"Authorization": "Bearer " + tokens.admin_token()})
            resp = conn.getresponse()
            assert resp.status == 200
            # the follow has begun, and no pod of the run is recorded: the
            # pods' watch stalls and the script waits for this file, so the
            # pod is recorded with the run's end
            go.touch()
            body = resp.read().decode()
        finally:
            conn.close()
        assert body.splitlines() == ["first line of late-pod", "last line"], body
        assert wait_state(gw, run_id, {"Failed", "Succeeded"})["state"] == "Succeeded"
    finally:
        cluster.control("watches/stall", {"seconds": 0})


def test_preempted_run_is_retried_with_resume_env(gw, cluster):
    # a queue with room for one smoke run at a time, preempting lower priority
    cluster.create({"apiVersion": KV, "kind": "ClusterQueue", "metadata": {"name": "tight-cq"},
                    "spec": {"namespaceSelector": {}, "preemption": {
                        "withinClusterQueue": "LowerPriority"},
                        "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
                            {"name": "default-flavor", "resources": [
                                {"name": "cpu", "nominalQuota": "15m"},
                                {"name": "memory", "nominalQuota": "1Gi"}]}]}]}})
    cluster.create({"apiVersion": KV, "kind": "LocalQueue",
                    "metadata": {"name": "tight", "namespace": "ray"},
                    "spec": {"clusterQueue": "tight-cq"}})
    for name, value in (("low", 10), ("high", 10000)):
        cluster.create({"apiVersion": KV, "kind": "WorkloadPriorityClass",
                        "metadata": {"name": name}, "value": value})
        assert gw.req("POST", "/v1/admin/priority-classes",
                      body={"name": name, "value": value}).status == 201
    assert gw.req("POST", "/v1/admin/cluster-queues", body={"name": "tight-cq"}).status == 201
    assert gw.req("POST", "/v1/admin/workspaces/ray/queues",
                  body={"name": "tight", "cluster_queue": "tight-cq"}).status == 201

    low = submit_spec(gw, spec_with("low-one", "\n".join([
        "resilience:", "  max_retries: 2", "  backoff_initial: 1s", "  backoff_max: 2s",
        "  checkpoint_path: /data/ckpt/low-one", ""]), queue="tight").replace(
        "  lane: training", "  lane: training\n  workload_priority_class: low"),
        "#!/usr/bin/env bash\nsleep 3\necho \"resume=$TAU_RESUME_FROM retry=$TAU_RETRY_REASON\"\n")
    assert low.status == 201, low
    low_id = low.json()["id"]
    wait_state(gw, low_id, {"Running"})
    high = submit_spec(gw, spec_with("high-one", "", queue="tight").replace(
        "  lane: training", "  lane: training\n  workload_priority_class: high"),
        "#!/usr/bin/env bash\nsleep 1\n")
    assert high.status == 201, high
    high_id = high.json()["id"]
    assert wait_state(gw, high_id, {"Succeeded", "Failed"})["state"] == "Succeeded"
    done = wait_state(gw, low_id, {"Succeeded", "Failed"}, timeout=90)
    assert done["state"] == "Succeeded" and done["attempt"] == 2, (done, gw.req("GET", f"/v1/runs/{low_id}/events").body.decode())
    events = gw.req("GET", f"/v1/runs/{low_id}/events").json()["items"]
    recovering = [e for e in events if e["state"] == "Recovering"]
    assert recovering and recovering[0]["reason"] == "Preempted"
    # the second attempt carried the retry contract
    jobs = [j for j in cluster.list("batch/v1", "jobs", "ray")
            if j["metadata"]["labels"].get("taugate.io/run-id") == low_id]
    assert [j["metadata"]["labels"]["taugate.io/attempt"] for j in jobs] == ["2"]
    env = {e["name"]: e.get("value") for c in
           jobs[0]["spec"]["template"]["spec"]["containers"] for e in c.get("env", [])}
    assert env["TAU_RETRY_REASON"] == "Preempted" and env["TAU_RETRY_ATTEMPT"] == "1"
    assert env["TAU_RESUME_FROM"] == "/data/ckpt/low-one" and env["TAU_RETRY_MAX"] == "2"


def test_queued_run_says_why_in_plain_words(gw, cluster):
    cluster.create({"apiVersion": KV, "kind": "ClusterQueue", "metadata": {"name": "tiny-cq"},
                    "spec": {"namespaceSelector": {}, "resourceGroups": [{
                        "coveredResources": ["cpu", "memory"], "flavors": [
                            {"name": "default-flavor", "resources": [
                                {"name": "cpu", "nominalQuota": "5m"},
                                {"name": "memory", "nominalQuota": "1Gi"}]}]}]}})
    cluster.create({"apiVersion": KV, "kind": "LocalQueue",
                    "metadata": {"name": "tiny", "namespace": "ray"},
                    "spec": {"clusterQueue": "tiny-cq"}})
    assert gw.req("POST", "/v1/admin/cluster-queues", body={"name": "tiny-cq"}).status == 201
    assert gw.req("POST", "/v1/admin/workspaces/ray/queues",
                  body={"name": "tiny", "cluster_queue": "tiny-cq"}).status == 201
    r = submit_spec(gw, spec_with("blocked", "", queue="tiny"), "#!/usr/bin/env bash\necho x\n")
    run_id = r.json()["id"]
    wait_state(gw, run_id, {"Queued"})
    # Kueue's reason and the queue position follow the Queued state
    run = wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}").json(), 30,
                   f"run {run_id} to say why it waits",
                   cond=lambda r: "default-flavor" in (r.get("message") or "")
                   and (r.get("queue") or {}).get("position") is not None)
    assert "cpu" in run["message"] and "default-flavor" in run["message"], run
    assert run["queue"]["local_queue"] == "tiny"
    assert run["queue"]["position"] == 1 and "queue position 1 of 1" in run["queue"]["message"]
    assert run["attempts"][0]["state"] == "Queued"
    assert gw.req("POST", f"/v1/runs/{run_id}:cancel").status == 200
