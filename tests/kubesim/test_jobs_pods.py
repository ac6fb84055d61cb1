"""Process-mode pods, the Job controller, logs, watches, patches, deletion."""
import base64
import os
import threading
import time

from job_manifests import job_manifest
from kubesim import KubeSim, api_path


def job_status(ks, name):
    j = ks.get_obj("batch/v1", "jobs", name, "default")
    return j.get("status", {}) if j else {}


def conds(status):
    return [c["type"] for c in status.get("conditions", [])]


def test_failing_job_retries_then_fails_with_backoff_limit(ks):
    ks.create(job_manifest("fails", "echo try; exit 3", backoffLimit=1))
    st = ks.wait_for(lambda: job_status(ks, "fails"), cond=lambda s: "Failed" in conds(s),
                     timeout=30, what="job failed")
    assert st["failed"] == 2 and "succeeded" not in st
    assert conds(st) == ["FailureTarget", "Failed"]
    failed = [c for c in st["conditions"] if c["type"] == "Failed"][0]
    assert failed["reason"] == "BackoffLimitExceeded"
    pods = ks.list("v1", "pods", "default", labelSelector="job-name=fails")
    assert len(pods) == 2
    term = pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 3 and term["reason"] == "Error"
    assert pods[0]["status"]["phase"] == "Failed"


def test_env_secrets_volumes_and_log_options(ks):
    ks.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
               "data": {"token": base64.b64encode(b"s3cr3t").decode()}})
    job = job_manifest("envjob", "echo token=$TOKEN pod=$POD; echo data > /data/out.txt; "
                       "ls /data; sleep 0.3; echo last")
    c = job["spec"]["template"]["spec"]["containers"][0]
    c["env"] = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "token"}}},
                {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    ks.create(job)
    ks.wait_for(lambda: job_status(ks, "envjob"), cond=lambda s: s.get("succeeded") == 1,
                what="success")
    pod = ks.list("v1", "pods", "default", labelSelector="job-name=envjob")[0]
    name = pod["metadata"]["name"]
    text = ks.logs("default", name)
    assert text == "token=s3cr3t pod=%s\nout.txt\nlast\n" % name
    assert ks.logs("default", name, tailLines=1) == "last\n"
    stamped = ks.logs("default", name, timestamps="true").splitlines()
    assert stamped[0].endswith(" token=s3cr3t pod=" + name) and stamped[0][4] == "-"
    assert ks.logs("default", name, limitBytes=5) == "token"
    # /data maps to a per-namespace folder under the state dir
    with open(os.path.join(ks.state_dir, "volumes", "default", "data", "out.txt")) as f:
        assert f.read() == "data\n"
    status, _, body = ks.request("GET", api_path("v1", "pods", "default", name, "log"),
                                 query={"container": "nope"})
    assert status == 400 and body["message"] == "container nope is not valid for pod " + name


def test_each_pod_has_its_own_tmp(ks):
    # two pods write the same /tmp file at once; each reads back its own
    for name in ("tmp-a", "tmp-b"):
        ks.create(job_manifest(name, f"echo {name} > /tmp/run.sh; sleep 0.5; cat /tmp/run.sh;"
                               " test \"$TMPDIR\" = \"$KUBESIM_POD_DIR/tmp\" && test -d \"$TMPDIR\" && echo own"))
    for name in ("tmp-a", "tmp-b"):
        ks.wait_for(lambda: job_status(ks, name), cond=lambda s: s.get("succeeded") == 1,
                    what=f"{name} done")
        pod = ks.list("v1", "pods", "default", labelSelector=f"job-name={name}")[0]
        assert ks.logs("default", pod["metadata"]["name"]) == f"{name}\nown\n"


def test_log_follow_streams_until_exit(ks):
    ks.create(job_manifest("follow", "for i in 1 2 3; do echo tick $i; sleep 0.3; done"))
    pod = ks.wait_for(lambda: ks.list("v1", "pods", "default", labelSelector="job-name=follow"),
                      cond=lambda p: p and p[0]["status"].get("phase") == "Running")[0]
    start = time.time()
    text = ks.logs("default", pod["metadata"]["name"], follow="true")
    assert text == "tick 1\ntick 2\ntick 3\n"
    assert time.time() - start >= 0.3  # it waited for the process


def test_watch_from_resource_version_bookmarks_and_gone(ks):
    listed = ks.get(api_path("v1", "configmaps", "default"))
    rv = listed["metadata"]["resourceVersion"]
    events = []

    def run():
        for ev in ks.watch(api_path("v1", "configmaps", "default"), timeout=10,
                           resourceVersion=rv, allowWatchBookmarks="true", timeoutSeconds=7):
            events.append(ev)
            if ev["type"] == "DELETED":
                return
    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.3)
    ks.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w1"}},
              namespace="default")
    ks.patch(api_path("v1", "configmaps", "default", "w1"), {"data": {"k": "v"}})
    ks.delete(api_path("v1", "configmaps", "default", "w1"))
    t.join(15)
    types = [e["type"] for e in events]
    assert types == ["ADDED", "MODIFIED", "DELETED"]
    assert events[1]["object"]["data"] == {"k": "v"}
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)


def test_list_paging_and_selectors(ks):
    for i in range(5):
        ks.create({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "p%d" % i, "labels": {"tier": "a" if i % 2 else "b"}}},
                  namespace="default")
    page = ks.get(api_path("v1", "configmaps", "default"), limit=2)
    assert [i["metadata"]["name"] for i in page["items"]] == ["p0", "p1"]
    assert page["metadata"]["remainingItemCount"] == 3
    page2 = ks.get(api_path("v1", "configmaps", "default"), limit=2,
                   **{"continue": page["metadata"]["continue"]})
    assert [i["metadata"]["name"] for i in page2["items"]] == ["p2", "p3"]
    sel = ks.list("v1", "configmaps", "default", labelSelector="tier in (a)")
    assert [i["metadata"]["name"] for i in sel] == ["p1", "p3"]
    sel = ks.list("v1", "configmaps", "default", fieldSelector="metadata.name!=p0",
                  labelSelector="tier=b")
    assert [i["metadata"]["name"] for i in sel] == ["p2", "p4"]


def test_server_side_apply_creates_and_json_patch_updates(ks):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa", "namespace": "default"},
          "data": {"a": "1"}}
    out = ks.apply(cm)
    assert out["data"] == {"a": "1"} and out["metadata"]["uid"]
    out = ks.patch(api_path("v1", "configmaps", "default", "ssa"),
                   [{"op": "add", "path": "/data/b", "value": "2"}], patch_type="json")
    assert out["data"] == {"a": "1", "b": "2"}


def test_orphan_delete_keeps_pods_and_status_subresource(ks):
    ks.create(job_manifest("orph", "sleep 30"))
    ks.wait_for(lambda: ks.list("v1", "pods", "default", labelSelector="job-name=orph"))
    status, hdrs, _ = ks.request("DELETE", api_path("batch/v1", "jobs", "default", "orph"))
    assert status == 200 and "child pods are preserved" in hdrs.get("warning", "")
    ks.wait_for(lambda: ks.get_obj("batch/v1", "jobs", "orph", "default"), cond=lambda j: j is None)
    time.sleep(0.5)
    pods = ks.list("v1", "pods", "default", labelSelector="job-name=orph")
    assert len(pods) == 1 and "ownerReferences" not in pods[0]["metadata"]
    # /status ignores spec changes; the main resource ignores status
    ks.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})
    ns = ks.get(api_path("v1", "namespaces", None, "x"))
    ns["status"] = {"phase": "Terminating"}
    out = ks.put(api_path("v1", "namespaces", None, "x"), ns)
    assert out["status"]["phase"] == "Active"


def test_simulated_mode_and_oomkill_fault(ks):
    job = job_manifest("sim", "ignored", annotations={"kubesim.io/mode": "simulated",
                                                      "kubesim.io/duration-seconds": "0.5",
                                                      "kubesim.io/exit-code": "0"})
    ks.create(job)
    ks.wait_for(lambda: job_status(ks, "sim"), cond=lambda s: s.get("succeeded") == 1,
                what="simulated success")
    ks.create(job_manifest("oom", "sleep 30"))
    pod = ks.wait_for(lambda: ks.list("v1", "pods", "default", labelSelector="job-name=oom"),
                      cond=lambda p: p and p[0]["status"].get("phase") == "Running")[0]
    ks.control("pods/default/%s/oomkill" % pod["metadata"]["name"])
    p = ks.wait_for(lambda: ks.get_obj("v1", "pods", pod["metadata"]["name"], "default"),
                    cond=lambda p: p["status"].get("phase") == "Failed", what="oomkilled")
    term = p["status"]["containerStatuses"][0]["state"]["terminated"]
    assert term == dict(term, reason="OOMKilled", exitCode=137)
    ks.wait_for(lambda: job_status(ks, "oom"), cond=lambda s: "Failed" in conds(s))


def test_node_faults_and_api_faults(ks):
    ks.control("nodes/gpu-node-1/ready", {"ready": False})
    node = ks.get(api_path("v1", "nodes", None, "gpu-node-1"))
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"][0]
    assert ready["status"] == "False"
    assert any(t["key"] == "node.kubernetes.io/not-ready" for t in node["spec"]["taints"])
    ks.control("nodes/cpu-node-1/condition", {"type": "GPUHealthy", "status": "False",
                                              "reason": "XidError"})
    node = ks.get(api_path("v1", "nodes", None, "cpu-node-1"))
    assert any(c["type"] == "GPUHealthy" and c["status"] == "False"
               for c in node["status"]["conditions"])
    ks.control("faults/api", {"rate": 1.0, "code": 429})
    status, hdrs, body = ks.request("GET", api_path("v1", "pods", "default"))
    assert status == 429 and hdrs.get("retry-after") == "1" and body["reason"] == "TooManyRequests"
    ks.control("faults/api", {"rate": 1.0, "code": "drop"})
    try:
        ks.request("GET", api_path("v1", "pods", "default"))
        dropped = False
    except Exception:
        dropped = True
    assert dropped
    ks.control("faults/api", method="DELETE")
    assert ks.get(api_path("v1", "pods", "default"))["kind"] == "PodList"
    assert ks.stats()["faultsInjected"] == 2


def test_tls_token_and_state_file(tmp_path, kubectl_bin):
    state = str(tmp_path / "state.json")
    with KubeSim(tls=True, token="t0ken", state_file=state) as ks:
        ks.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}},
                  namespace="default")
        out = ks.kubectl("get", "configmaps").stdout
        assert "kept" in out
        status, _, body = ks.request("GET", api_path("v1", "pods", "default"),
                                     headers={"Authorization": "Bearer wrong"})
        assert status == 401 and body["reason"] == "Unauthorized"
        uid = ks.get(api_path("v1", "configmaps", "default", "kept"))["metadata"]["uid"]
        ks.restart()
        again = ks.get(api_path("v1", "configmaps", "default", "kept"))
        assert again["metadata"]["uid"] == uid


def test_foreground_deletion_of_running_job_completes(ks):
    """The Job controller releases the pods of a Job deleted in the foreground
    (tracking finalizer removed once they terminate), so the Job goes."""
    ks.create(job_manifest("fg", "sleep 60"))
    ks.wait_for(lambda: job_status(ks, "fg"), cond=lambda s: s.get("active") == 1,
                what="job running")
    cp = ks.kubectl("delete", "job", "fg", "--cascade=foreground", "--timeout=30s")
    assert cp.stdout.strip() == 'job.batch "fg" deleted'
    assert ks.get_obj("batch/v1", "jobs", "fg", "default") is None
    assert ks.list("v1", "pods", "default", labelSelector="job-name=fg") == []


def test_orphaned_pod_loses_tracking_finalizer_when_it_ends(ks):
    """Pods orphaned by deleting their Job with propagationPolicy=Orphan keep
    running; once one ends, the controller removes its tracking finalizer."""
    ks.create(job_manifest("orph", "sleep 0.5"))
    ks.wait_for(lambda: job_status(ks, "orph"), cond=lambda s: s.get("active") == 1,
                what="job running")
    ks.delete(api_path("batch/v1", "jobs", "default", "orph"), propagation="Orphan")
    pod = ks.wait_for(lambda: ks.list("v1", "pods", "default", labelSelector="job-name=orph"),
                      cond=lambda ps: ps and ps[0]["status"].get("phase") == "Succeeded"
                      and not ps[0]["metadata"].get("finalizers"), what="released pod")[0]
    assert "ownerReferences" not in pod["metadata"]
