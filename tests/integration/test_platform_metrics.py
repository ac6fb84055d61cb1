"""The platform view in /metrics: runs by workspace and state, queue wait,
admissions, retries, outbox depth and age, watch lag, GPUs; the text passes
`promtool check metrics`, and the alert rules shipped in deploy/observability
pass `promtool check rules` and name only series taugate exports."""
import base64
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from gateway import Gateway
from kubesim import KubeSim
from wait import wait_for, wait_run_state
from world import kind_cpu_cluster
from paths import BUILD, REPO, SHARED

CONFORMANCE = os.path.join(SHARED, "conformance", "taugrid")
OBS = os.path.join(REPO, "deploy", "observability")
PROMTOOL = shutil.which("promtool")
# a series name in an expression (a histogram's _bucket/_sum/_count belong to it)
SERIES = re.compile(r"\b(taugate_[a-z_]*?[a-z])(?:_bucket|_sum|_count)?\b")
needs_promtool = pytest.mark.skipif(not PROMTOOL, reason="promtool (Debian's prometheus) missing")


def b64(text):
    return base64.b64encode(text.encode()).decode()


def spec(name):
    with open(os.path.join(CONFORMANCE, "01-kind-smoke_tau.yaml")) as f:
        return f.read().replace("name: tau-kind-smoke", f"name: {name}")


def scrape(gw):
    r = gw.req("GET", "/metrics", token=None)
    assert r.status == 200
    assert r.header("Content-Type").startswith("text/plain; version=0.0.4")
    return r.body.decode()


def values(text):
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def promtool_check(text):
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text.encode(), capture_output=True,
                       timeout=30)
    return p.returncode, (p.stdout + p.stderr).decode()


@pytest.fixture(scope="module")
def cluster():
    ks = kind_cpu_cluster(KubeSim().start())
    yield ks
    ks.stop()


def setup_catalog(g):
    for path, body in [
        ("/v1/admin/workspaces", {"name": "ray", "namespace": "ray", "default_queue": "kind-cpu"}),
        ("/v1/admin/cluster-queues", {"name": "kind-cpu-cq", "resource_groups": [{
            "covered_resources": ["cpu", "memory"], "flavors": [
                {"name": "default-flavor", "resources": [
                    {"name": "cpu", "nominal_quota": "4"},
                    {"name": "memory", "nominal_quota": "12Gi"}]}]}]}),
        ("/v1/admin/flavors", {"name": "default-flavor"}),
        ("/v1/admin/workspaces/ray/queues", {"name": "kind-cpu", "cluster_queue": "kind-cpu-cq"}),
        ("/v1/admin/profiles", {"name": "kind-cpu-job", "engine": "job",
                                "allowed_workspaces": ["ray"]}),
        ("/v1/admin/priority-classes", {"name": "taugrid-default", "value": 1000}),
    ]:
        r = g.req("POST", path, body=body)
        assert r.status == 201, (path, r)


@pytest.fixture(scope="module")
def gw(db_url, cluster):
    g = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": cluster.url,
                                          "TAUGATE_PLATFORM_METRICS_CACHE_MS": "0",
                                          "TAUGATE_METRICS_TENANT_LABELS": "true"}).start()
    setup_catalog(g)
    yield g
    status = g.stop()
    logs = g.logs()
    g.close()
    assert status == 0, logs[-3000:]


def wait_state(gw, run_id, states, timeout=60):
    return wait_run_state(gw, run_id, states, timeout)


def test_runs_queue_wait_admissions_and_watch_lag(gw, cluster):
    before = values(scrape(gw))
    assert before['taugate_runs{workspace="ray",state="Succeeded"}'] == 0
    assert before['taugate_admissions_total{cluster_queue="kind-cpu-cq"}'] == 0
    ids = []
    for i in range(2):
        r = gw.req("POST", "/v1/workspaces/ray/runs",
                   body={"spec": spec(f"metrics-{i}"),
                         "files": {"train.sh": b64("#!/usr/bin/env bash\necho hi\n")}})
        assert r.status == 201, r
        ids.append(r.json()["id"])
    for run_id in ids:
        assert wait_state(gw, run_id, {"Succeeded", "Failed"})["state"] == "Succeeded"
    m = values(scrape(gw))
    assert m['taugate_runs{workspace="ray",state="Succeeded"}'] == 2
    assert m['taugate_runs{workspace="ray",state="Queued"}'] == 0
    assert m['taugate_admissions_total{cluster_queue="kind-cpu-cq"}'] == 2
    assert m['taugate_queue_wait_seconds_count{cluster_queue="kind-cpu-cq"}'] == 2
    assert m['taugate_queue_wait_seconds_bucket{cluster_queue="kind-cpu-cq",le="+Inf"}'] == 2
    assert m['taugate_queue_wait_seconds_bucket{cluster_queue="kind-cpu-cq",le="60"}'] == 2
    assert m['taugate_preemptions_total{cluster_queue="kind-cpu-cq"}'] == 0
    assert m['taugate_retries_total{reason="Preempted"}'] == 0
    # the submitter deletes a create's outbox row when it records the Job;
    # under load a short run can succeed (another thread) before that commit
    wait_for(lambda: values(scrape(gw))['taugate_outbox_due_rows{action="create"}'], 30,
             "the outbox drained of the two creates", cond=lambda n: n == 0)
    assert m["taugate_platform_metrics_up"] == 1
    # the watchers saw Jobs and Pods change (the lead's engine hook) and nodes (the nodes loop)
    assert m['taugate_watch_lag_seconds_count{kind="Job"}'] >= 1
    assert m['taugate_watch_last_event_timestamp_seconds{kind="Pod"}'] > time.time() - 600
    assert m['taugate_watch_last_event_timestamp_seconds{kind="Node"}'] > 0
    # what other modules export is there too
    assert any(k.startswith("taugate_kube_requests_total{") for k in m)
    assert m['taugate_nodes{gpu_class="NVIDIA-H100-80GB-HBM3",health="Healthy"}'] == 2
    assert m['taugate_gpu_free{gpu_class="NVIDIA-H100-80GB-HBM3"}'] == 16


@needs_promtool
def test_metrics_pass_promtool(gw):
    text = scrape(gw)
    rc, out = promtool_check(text)
    assert rc == 0, out
    # label values are bounded: no run ids
    assert not re.search(r'="[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"', text)


def test_outbox_depth_and_age_when_nothing_submits(pg):
    """A gateway without a cluster accepts runs and never submits them: the
    outbox grows and its oldest due row ages (what TaugateOutboxStuck sees)."""
    name = f"stuck{os.getpid()}"
    pg.psql(f"CREATE DATABASE {name}", db="postgres")
    g = Gateway(BUILD, f"postgresql://{pg.user}@127.0.0.1:{pg.port}/{name}",
                extra_env={"TAUGATE_PLATFORM_METRICS_CACHE_MS": "0"}).start()
    try:
        setup_catalog(g)
        r = g.req("POST", "/v1/workspaces/ray/runs",
                  body={"spec": spec("stuck"),
                        "files": {"train.sh": b64("#!/usr/bin/env bash\necho hi\n")}})
        assert r.status == 201, r
        # the row ages while nothing submits it
        m = wait_for(lambda: values(scrape(g)), 30, "the outbox row a second old",
                     cond=lambda m: m['taugate_outbox_oldest_due_age_seconds{action="create"}']
                     >= 1)
        assert m['taugate_outbox_rows{action="create"}'] == 1
        assert m['taugate_outbox_due_rows{action="create"}'] == 1
        assert m['taugate_outbox_oldest_due_age_seconds{action="create"}'] >= 1
        # this gateway names no tenant on /metrics (the default)
        assert m['taugate_runs{state="Accepted"}'] == 1
        assert not any("workspace=" in k for k in m)
        assert "taugate_nodes_leader" not in m  # no cluster, no nodes loop
        q = g.req("GET", "/v1/workspaces/ray/queue").json()
        assert q["cluster"] == "unavailable"
        item = q["items"][0]
        assert item["state"] == "Accepted" and item["position"] is None
        assert item["why"].startswith("Accepted; taugate has not submitted it to the cluster yet")
        assert g.req("POST", f"/v1/runs/{r.json()['id']}:cancel").status == 200
        m = values(scrape(g))
        assert m['taugate_outbox_rows{action="create"}'] == 0
    finally:
        assert g.stop() == 0, g.logs()[-3000:]
        g.close()


@needs_promtool
def test_alert_rules_unit_tests_pass():
    p = subprocess.run([PROMTOOL, "test", "rules", "alerts_test.yaml"], cwd=OBS,
                       capture_output=True, timeout=60)
    assert p.returncode == 0, (p.stdout + p.stderr).decode()


@needs_promtool
def test_alert_rules_pass_promtool_and_use_exported_series(gw):
    rules = os.path.join(OBS, "alerts.yaml")
    p = subprocess.run([PROMTOOL, "check", "rules", rules], capture_output=True, timeout=30)
    assert p.returncode == 0, (p.stdout + p.stderr).decode()
    exported = {line.split()[2] for line in scrape(gw).splitlines()
                if line.startswith("# TYPE ")}
    with open(rules) as f:
        text = "\n".join(l for l in f if not l.lstrip().startswith("#"))
    used = set(re.findall(SERIES, text))
    missing = {u for u in used if u not in exported}
    assert not missing, missing


def test_dashboard_queries_use_exported_series(gw):
    with open(os.path.join(OBS, "taugate-dashboard.json")) as f:
        dash = json.load(f)
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    assert len(exprs) >= 10
    exported = {line.split()[2] for line in scrape(gw).splitlines()
                if line.startswith("# TYPE ")}
    used = set()
    for e in exprs:
        used |= set(re.findall(SERIES, e))
    assert not {u for u in used if u not in exported}, used - exported
