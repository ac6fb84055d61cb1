"""Real kubectl 1.32 against kubesim: discovery, tables, apply, logs, delete, watch."""
import json
import threading

from job_manifests import job_manifest

RAYJOB_YAML = """
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rj1
spec:
  entrypoint: echo ray entrypoint done
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.9.0
    workerGroupSpecs:
    - groupName: workers
      replicas: 1
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.9.0
"""

CQ_YAML = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq-apply
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 4
      - name: memory
        nominalQuota: 8Gi
"""


def test_get_all_kinds_all_namespaces(ks, kubectl_bin):
    ks.create(job_manifest("listed", "echo hi"))
    ks.wait_for(lambda: ks.list("v1", "pods", "default"), what="a pod")
    out = ks.kubectl("get", "jobs,pods,rayjobs,workloads,clusterqueues,localqueues", "-A").stdout
    assert "job.batch/listed" in out
    assert "NAMESPACE" in out and "COMPLETIONS" in out
    assert "pod/listed-" in out


def test_get_nodes_table_has_kubectl_columns(ks, kubectl_bin):
    out = ks.kubectl("get", "nodes").stdout.splitlines()
    assert out[0].split()[:3] == ["NAME", "STATUS", "ROLES"]
    assert any(l.startswith("gpu-node-1") and " Ready " in l for l in out)


def test_apply_job_then_logs_then_delete(ks, kubectl_bin):
    manifest = json.dumps(job_manifest("kj", "echo line-one; echo line-two"))
    out = ks.kubectl("apply", "-f", "-", input=manifest).stdout
    assert "job.batch/kj created" in out
    ks.wait_for(lambda: ks.get_obj("batch/v1", "jobs", "kj", "default"),
                cond=lambda j: j.get("status", {}).get("succeeded") == 1, what="job success")
    logs = ks.kubectl("logs", "job/kj").stdout
    assert logs == "line-one\nline-two\n"
    # applying the same manifest again is a no-op
    assert "unchanged" in ks.kubectl("apply", "-f", "-", input=manifest).stdout
    out = ks.kubectl("delete", "job", "kj").stdout
    assert 'job.batch "kj" deleted' in out
    assert ks.get_obj("batch/v1", "jobs", "kj", "default") is None
    # background propagation removes the pods too
    ks.wait_for(lambda: ks.list("v1", "pods", "default", labelSelector="job-name=kj"),
                cond=lambda items: items == [], what="pods gone")


def test_apply_rayjob_and_clusterqueue(ks, kubectl_bin):
    out = ks.kubectl("apply", "-f", "-", input=RAYJOB_YAML).stdout
    assert "rayjob.ray.io/rj1 created" in out
    rj = ks.get_obj("ray.io/v1", "rayjobs", "rj1", "default")
    # CRD defaults were applied
    assert rj["spec"]["submissionMode"] == "K8sJobMode"
    assert rj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["numOfHosts"] == 1
    out = ks.kubectl("apply", "-f", "-", input=CQ_YAML).stdout
    assert "clusterqueue.kueue.x-k8s.io/cq-apply created" in out
    out = ks.kubectl("get", "cq", "-o", "wide").stdout
    assert "cq-apply" in out and "BestEffortFIFO" in out
    # an unknown field is refused under kubectl's default Strict validation
    bad = CQ_YAML.replace("namespaceSelector: {}", "namespaceSelector: {}\n  bogusField: 1")
    cp = ks.kubectl("apply", "-f", "-", input=bad.replace("cq-apply", "cq-bad"), check=False)
    assert cp.returncode != 0 and "bogusField" in cp.stderr


def test_get_pods_watch_streams_rows(ks, kubectl_bin):
    proc = ks.kubectl_popen("get", "pods", "-w", "--request-timeout=20s")
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        # kubectl lists, then watches: the pod must come while it watches
        ks.wait_for(ks.stats, cond=lambda s: s["watches"] >= 1, what="kubectl's watch open")
        ks.create(job_manifest("watched", "sleep 0.5"))
        ks.wait_for(lambda: [l for l in lines if l.startswith("watched-")],
                    cond=lambda rows: any("Completed" in l for l in rows),
                    what="a Completed row from kubectl")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        reader.join(timeout=10)
    rows = [l for l in lines if l.startswith("watched-")]
    assert len(rows) >= 2, "".join(lines) + proc.stderr.read()
