"""TauGrid's own cases (tests/conformance/upstream/cases.json) through the
HTTP API: in the world of world.json, created through the admin API, each
case gets the outcome the corpus records from POST .../runs:validate, as
build/tests/unit/test_submit_pipeline_upstream checks it through the unit pipeline
(tests/conformance/upstream/README.md says how a case reads). Accepted
cases are also accepted as runs, with the manifests their dry runs answer."""
import base64
import json
import os

import pytest

from paths import REPO

UP = os.path.join(REPO, "tests", "conformance", "upstream")
with open(os.path.join(UP, "cases.json"), encoding="utf-8") as _f:
    CASES = {c["id"]: c for c in json.load(_f)["cases"]}
with open(os.path.join(UP, "world.json"), encoding="utf-8") as _f:
    WORLD = json.load(_f)


# TauGrid's examples run in the namespace named default, which a workspace
# may only be bound to when the operator allows it.
GATEWAY_ENV = {"TAUGATE_WORKSPACES_ALLOW_DEFAULT_NAMESPACE": "true"}


@pytest.fixture(scope="module")
def world(gateway):
    posts = [("/v1/admin/priority-classes", pc) for pc in WORLD["priority_classes"]]
    posts += [("/v1/admin/cluster-queues", {"name": cq}) for cq in WORLD["cluster_queues"]]
    for w in WORLD["workspaces"]:
        posts.append(("/v1/admin/workspaces",
                      {k: w[k] for k in ("name", "namespace", "default_queue",
                                         "default_priority", "pvcs")}))
        posts += [(f"/v1/admin/workspaces/{w['name']}/queues", {"name": q, "cluster_queue": cq})
                  for q, cq in w["queues"].items()]
    posts += [("/v1/admin/profiles", p) for p in WORLD["profiles"]]
    for path, body in posts:
        r = gateway.req("POST", path, body=body)
        assert r.status == 201, (path, body, r)
    return gateway


@pytest.fixture(scope="module")
def sql(pg, db_url):
    db = db_url.rsplit("/", 1)[1]
    return lambda text: pg.psql(text, db=db)


def payload(case, with_files=True):
    with open(os.path.join(UP, case["spec"]), encoding="utf-8") as f:
        spec = f.read()
    files = {}
    if case["files"] and with_files:
        root = os.path.join(UP, "files", case["files"])
        for dirpath, _, names in os.walk(root):
            for n in names:
                full = os.path.join(dirpath, n)
                with open(full, "rb") as f:
                    files[os.path.relpath(full, root)] = base64.b64encode(f.read()).decode()
    return {"spec": spec, "files": files}


def validate(gw, case, **kw):
    return gw.req("POST", f"/v1/workspaces/{case['workspace']}/runs:validate",
                  body=payload(case, **kw))


@pytest.fixture(scope="module")
def answers(world):
    """Every case's dry run, once."""
    return {cid: validate(world, c) for cid, c in CASES.items()}


def has(entries, needle, path=None):
    return any(needle in e.get("message", "") and (not path or e.get("path") == path)
               for e in entries)


def workload(body):
    return next((m for m in body["manifests"] if m["kind"] in ("Job", "RayJob")), None)


def check_workload(check, body):
    wl = workload(body)
    assert wl, "no workload rendered"
    if "kind" in check:
        assert wl["kind"] == check["kind"]
    groups = wl["spec"].get("rayClusterSpec", {}).get("workerGroupSpecs", [{}])
    if "worker_replicas" in check:
        assert groups[0]["replicas"] == check["worker_replicas"]
    if "worker_gpus" in check:
        assert int(groups[0]["rayStartParams"]["num-gpus"]) == check["worker_gpus"]
    if "worker_group_suffix" in check:
        assert groups[0]["groupName"].endswith(check["worker_group_suffix"])
    if "cpu_worker_replicas" in check:  # rayjob-eval's CPU fan-out group
        fan = groups[1]
        assert fan["replicas"] == check["cpu_worker_replicas"]
        assert fan["groupName"].endswith("-cpu")
        assert fan["rayStartParams"]["num-gpus"] == "0"
    if "ray_version" in check:
        assert wl["spec"]["rayClusterSpec"]["rayVersion"] == check["ray_version"]
    if "entrypoint_contains" in check:
        assert check["entrypoint_contains"] in wl["spec"]["entrypoint"]
    if "experiment_name" in check:
        assert body["resolved"]["experiment"]["name"] == check["experiment_name"]
    if "annotation" in check:
        key, value = check["annotation"]
        assert wl["metadata"]["annotations"].get(key) == value
    inits = {c["name"] for c in wl["spec"].get("template", {}).get("spec", {})
             .get("initContainers", [])}
    assert set(check.get("init_containers", [])) <= inits, inits


@pytest.mark.parametrize("cid", sorted(CASES))
def test_upstream_case_gets_its_outcome(answers, cid):
    case, r = CASES[cid], answers[cid]
    want = case["taugate"]
    assert r.status == want["status"], (cid, r)
    body = r.json()
    if r.status == 200:
        assert body["resolved"]["policy"]["workspace"] == case["workspace"]
        warnings = body["warnings"]
        for w in want.get("warnings", []):
            assert has(warnings, w), (w, warnings)
        if "no_warning_containing" in want:
            assert not has(warnings, want["no_warning_containing"]), warnings
        for needle, n in want.get("warning_count", {}).items():
            assert sum(needle in w["message"] for w in warnings) == n, warnings
        check_workload(want.get("check", {}), body)
        return
    # A 422 problem carries the errors (the warnings are only answered with
    # a 200; the unit runner checks those of refused cases).
    assert body["type"].endswith("/invalid-run-config"), body
    assert all({"path", "message"} <= set(e) for e in body["errors"]), body
    err = want.get("error")
    if err:
        assert has(body["errors"], err["contains"], err["path"] or None), body["errors"]
        for part in err.get("also", []):
            assert has(body["errors"], part), (part, body["errors"])


# the run id a dry run renders with (api/runs_submit.c)
DRY_RUN_ID = "00000000-0000-4000-8000-000000000000"
STORED = ["example-kind-smoke", "example-kind-smoke-ray", "example-aks-cpu-quickstart",
          "cli-example-aks-gpu-quickstart"]


@pytest.mark.parametrize("cid", STORED)
@pytest.mark.parametrize("route", ["runs", "runs:batch"])
def test_stored_manifests_are_the_dry_runs(answers, world, sql, cid, route):
    """A run stores the manifests its dry run answers (as jsonb), but for the
    run id and the object name derived from it, and its first attempt names
    the workload object among them: a Job, a RayJob, a managed CPU and a
    managed GPU RayJob."""
    case, dry = CASES[cid], answers[cid]
    ws = case["workspace"]
    assert dry.status == 200, (cid, dry)
    manifests = dry.json()["manifests"]
    primary = workload(dry.json())
    if route == "runs":
        r = world.req("POST", f"/v1/workspaces/{ws}/runs", body=payload(case))
        assert r.status == 201, (cid, r)
        run = r.json()
    else:
        r = world.req("POST", f"/v1/workspaces/{ws}/runs:batch", body={"runs": [payload(case)]})
        assert r.status == 200 and r.json()["results"][0]["status"] == 201, (cid, r)
        run = r.json()["results"][0]["run"]
    assert run["state"] == "Accepted"
    obj = run["attempts"][0]["object"]
    expected = (json.dumps(manifests).replace(primary["metadata"]["name"], obj)
                .replace(DRY_RUN_ID, run["id"]))
    assert "$m$" not in expected
    row = sql(f"SELECT r.manifests = $m${expected}$m$::jsonb, a.namespace, a.object_name,"
              f" a.object_kind FROM runs r JOIN run_attempts a ON a.run_id = r.id"
              f" AND a.attempt = 1 WHERE r.id = '{run['id']}'").split("|")
    assert row[0] == "t", sql(f"SELECT manifests FROM runs WHERE id = '{run['id']}'")
    assert row[1:] == [primary["metadata"]["namespace"], obj, primary["kind"]]


def test_conformance_details(answers, world):
    job = workload(answers["example-kind-smoke"].json())
    assert job["metadata"]["namespace"] == "ray" and job["spec"]["suspend"] is True
    labels = job["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "kind-cpu"
    assert labels["tau.azure.com/managed-by"] == "tau"  # TauGrid's contract next to taugate's
    c = job["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == "bash:5.2"
    assert c["resources"]["requests"] == {"cpu": "10m", "memory": "32Mi"}
    assert "nvidia.com/gpu" not in str(c["resources"])

    err = next(e for e in answers["example-market-policy"].json()["errors"]
               if e["path"] == "metrics.offload.out")
    assert err["line"] == 43 and err["column"] > 0

    err = next(e for e in answers["e2e-tau-native-nightly"].json()["errors"]
               if e["path"] == "name")
    assert err["line"] == 4 and "DNS-1123" in err["message"]

    # a managed workflow manifest (shared/conformance case 08, superseded by
    # issue #20): rendered as TauGrid's CPU RayJob template
    body = answers["example-aks-cpu-quickstart"].json()
    rj = workload(body)
    assert rj["metadata"]["labels"]["tau.azure.com/managed-by"] == "tau"
    assert rj["spec"]["rayClusterSpec"]["rayVersion"] == "2.40.0"
    assert body["resolved"]["managed"]["main_script"]

    r = validate(world, CASES["example-stellar-sweep-lr-baseline"], with_files=False)
    assert r.status == 422
    assert any(e["path"] == "run.working_dir" and "project files" in e["message"]
               for e in r.json()["errors"])


def test_profile_pod_settings_reach_every_pod(world):
    """A profile's pod settings are checked by the admin API and land on the
    pods of the runs it sizes."""
    bad = world.req("POST", "/v1/admin/profiles", body={
        "name": "pods-bad", "engine": "job",
        "settings": {"gpu_placement": "anywhere", "workload_identity": "yes",
                     "image_pull_secrets": ["Not A Name"], "ray_version": "latest"}})
    assert bad.status == 422
    assert {e["path"] for e in bad.json()["errors"]} == {
        "settings.gpu_placement", "settings.workload_identity",
        "settings.image_pull_secrets", "settings.ray_version"}
    r = world.req("POST", "/v1/admin/profiles", body={
        "name": "pods", "engine": "rayjob", "allowed_workspaces": ["research"],
        "settings": {"service_account": "trainer", "workload_identity": True,
                     "image_pull_secrets": ["acr-pull"], "security_mode": "restricted",
                     "gpu_placement": "single-device", "ray_version": "2.47.1"}})
    assert r.status == 201, r
    spec = ("name: pod-settings\nengine: rayjob\nentrypoint: train.py\npolicy:\n"
            "  profile: pods\nruntime:\n  image: rayproject/ray:2.47.1-py311\n"
            "compute:\n  workers: 1\n  gpus_per_worker: 1\n")
    files = {"train.py": base64.b64encode(b"print(1)\n").decode()}
    r = world.req("POST", "/v1/workspaces/research/runs:validate",
                  body={"spec": spec, "files": files})
    assert r.status == 200, r
    rj = workload(r.json())
    assert rj["spec"]["rayClusterSpec"]["rayVersion"] == "2.47.1"
    groups = [rj["spec"]["rayClusterSpec"]["headGroupSpec"],
              *rj["spec"]["rayClusterSpec"]["workerGroupSpecs"]]
    for g in groups:
        pod = g["template"]["spec"]
        assert pod["serviceAccountName"] == "trainer"
        assert pod["imagePullSecrets"] == [{"name": "acr-pull"}]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert g["template"]["metadata"]["labels"]["azure.workload.identity/use"] == "true"
        for c in pod["containers"] + pod.get("initContainers", []):
            assert c["securityContext"]["allowPrivilegeEscalation"] is False, c["name"]
    worker = groups[1]["template"]
    assert worker["metadata"]["labels"]["tau.azure.com/gpu-count"] == "1"
    assert "podAffinity" in worker["spec"]["affinity"]


def test_bad_inputs_through_the_api(world):
    def post(spec, ct="application/yaml"):
        return world.req("POST", "/v1/workspaces/ray/runs:validate", body=spec.encode(),
                         headers={"Content-Type": ct})
    # inside a well-formed document: 422 with the position
    r = post("name: a\nname: b\n")
    assert r.status == 422 and r.json()["errors"][0]["line"] == 2
    assert post("a: &x [1]\nb: *x\n").status == 422
    assert post("").status == 422
    assert post("a: 1\n---\nb: 2\n").status == 422
    r = post("name: x\nengine: job\nbogus_key: 1\n")
    assert r.status == 422
    assert any(e["path"] == "bogus_key" and e["line"] == 3 for e in r.json()["errors"])
    # text that is not YAML: 400; a tab is named
    r = post("name: x\nrun:\n\tentrypoint: y\n")
    assert r.status == 400 and "tab" in r.json()["errors"][0]["message"], r
    assert post("a: [1\n").status == 400
    # a leading byte order mark is not content
    body = payload(CASES["example-kind-smoke"])
    body["spec"] = "\ufeff" + body["spec"]
    r = world.req("POST", "/v1/workspaces/ray/runs:validate", body=body)
    assert r.status == 200, r
    r = world.req("POST", "/v1/workspaces/ray/runs:validate", body=b"x: y",
                  headers={"Content-Type": "text/plain"})
    assert r.status == 415
    # a 2 MiB body is refused before it is read (Expect: 100-continue)
    import socket
    with socket.create_connection(("127.0.0.1", world.port), timeout=10) as sock:
        sock.sendall(b"POST /v1/workspaces/ray/runs:validate HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/yaml\r\nExpect: 100-continue\r\n"
                     b"Content-Length: %d\r\n\r\n" % (2 * 1024 * 1024))
        assert sock.recv(65536).startswith(b"HTTP/1.1 413")
