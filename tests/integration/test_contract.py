"""The REST contract: openapi.yaml itself, and the few operations no feature
test reaches (list/read/patch/delete of the admin catalogue, :validate in
each payload form, :batch), with real assertions.

Every exchange of the session is checked against openapi.yaml, and every
operation must have been exercised, once the session ends
(tests/harness/contract_check.py, registered by tests/integration/conftest.py).
"""
import base64
import json
import os

import pytest

from contract_check import CHECK, NODE_MODULES, TESTS, node_missing, run_node


def node_or_skip():
    missing = node_missing()
    if missing:
        pytest.skip(missing)
    return "node"


# ---- the document -------------------------------------------------------------------------

def test_openapi_lints_clean():
    node = node_or_skip()
    cp = run_node([node, os.path.join(NODE_MODULES, "@redocly", "cli", "bin", "cli.js"), "lint",
                   "--config", os.path.join(TESTS, "redocly.yaml"), "--format", "codeframe"])
    assert cp.returncode == 0, cp.stdout[-6000:] + cp.stderr[-3000:]


def test_openapi_is_valid_and_matches_the_route_table():
    node = node_or_skip()
    cp = run_node([node, CHECK])
    assert cp.returncode == 0, cp.stdout + cp.stderr


# ---- operations no feature test reaches -----------------------------------------------------

def ok(r, status):
    assert r.status == status, r
    return r.json() if r.body else None


def test_catalog_list_read_patch_delete(gateway):
    cases = [
        ("/v1/admin/profiles", {"name": "cpu-small", "engine": "job",
                                "settings": {"resources": {"cpu": "1"}}},
         {"description": "one core"}),
        ("/v1/admin/flavors", {"name": "cpu-nodes", "node_labels": {"pool": "cpu"}},
         {"tolerations": [{"key": "pool", "operator": "Exists", "effect": "NoSchedule"}]}),
        ("/v1/admin/cluster-queues", {"name": "cq-surface", "resource_groups": [
            {"covered_resources": ["cpu"], "flavors": [
                {"name": "cpu-nodes", "resources": [{"name": "cpu", "nominal_quota": "8"}]}]}]},
         {"cohort": "research"}),
        ("/v1/admin/priority-classes", {"name": "surface-low", "value": 10},
         {"description": "preemptible"}),
    ]
    for coll, body, patch in cases:
        created = ok(gateway.req("POST", coll, body=body), 201)
        item = f"{coll}/{body['name']}"
        page = ok(gateway.req("GET", f"{coll}?limit=1"), 200)
        assert len(page["items"]) == 1
        names = [x["name"] for x in ok(gateway.req("GET", coll), 200)["items"]]
        assert body["name"] in names
        assert ok(gateway.req("GET", item), 200) == created
        changed = ok(gateway.req("PATCH", item, body=patch), 200)
        for k, v in patch.items():
            assert changed[k] == v, (item, changed)
    # the ClusterQueue still names the flavor; delete in dependency order
    for path in ("/v1/admin/cluster-queues/cq-surface", "/v1/admin/flavors/cpu-nodes",
                 "/v1/admin/priority-classes/surface-low", "/v1/admin/profiles/cpu-small"):
        ok(gateway.req("DELETE", path), 204)
        assert gateway.req("GET", path).status == 404


def test_workspace_queues_members_and_profiles(gateway):
    ok(gateway.req("POST", "/v1/admin/workspaces", body={"name": "surf", "namespace": "surf"}), 201)
    ok(gateway.req("POST", "/v1/admin/cluster-queues", body={"name": "surf-a"}), 201)
    ok(gateway.req("POST", "/v1/admin/cluster-queues", body={"name": "surf-b"}), 201)
    ok(gateway.req("POST", "/v1/admin/workspaces/surf/queues",
                   body={"name": "main", "cluster_queue": "surf-a"}), 201)
    lq = ok(gateway.req("GET", "/v1/admin/workspaces/surf/queues/main"), 200)
    assert lq["cluster_queue"] == "surf-a" and lq["workspace"] == "surf"
    lq = ok(gateway.req("PATCH", "/v1/admin/workspaces/surf/queues/main",
                        body={"cluster_queue": "surf-b"}), 200)
    assert lq["cluster_queue"] == "surf-b"
    member = ok(gateway.req("POST", "/v1/admin/workspaces/surf/members",
                            body={"kind": "group", "subject": "surfers", "role": "viewer"}), 201)
    members = ok(gateway.req("GET", "/v1/admin/workspaces/surf/members"), 200)["items"]
    assert [m["id"] for m in members] == [member["id"]]
    assert ok(gateway.req("GET", f"/v1/admin/workspaces/surf/members/{member['id']}"),
              200) == member
    ok(gateway.req("POST", "/v1/admin/profiles",
                   body={"name": "surf-job", "engine": "job", "allowed_workspaces": ["surf"],
                         "settings": {"default_image": "bash:5.2"}}), 201)
    profiles = ok(gateway.req("GET", "/v1/workspaces/surf/profiles"), 200)["items"]
    mine = [p for p in profiles if p["name"] == "surf-job"]
    assert mine and mine[0]["engine"] == "job" and mine[0]["default_image"] == "bash:5.2"


SPEC = """name: contract-smoke
engine: job
entrypoint: train.sh
compute:
  gpus: 0
  cpu_request: 10m
  memory_request: 32Mi
runtime:
  image: bash:5.2
policy:
  namespace: vrun
  profile: vrun-job
  queue: vq
"""
SCRIPT = b"#!/usr/bin/env bash\necho contract\n"


@pytest.fixture(scope="module")
def run_workspace(gateway):
    for path, body in [
        ("/v1/admin/workspaces", {"name": "vrun", "namespace": "vrun", "default_queue": "vq"}),
        ("/v1/admin/cluster-queues", {"name": "vrun-cq"}),
        ("/v1/admin/workspaces/vrun/queues", {"name": "vq", "cluster_queue": "vrun-cq"}),
        ("/v1/admin/profiles", {"name": "vrun-job", "engine": "job",
                                "allowed_workspaces": ["vrun"]}),
    ]:
        ok(gateway.req("POST", path, body=body), 201)
    return "vrun"


def test_validate_in_every_payload_form(gateway, run_workspace):
    url = f"/v1/workspaces/{run_workspace}/runs:validate"
    runs = f"/v1/workspaces/{run_workspace}/runs"
    stored = ok(gateway.req("GET", runs), 200)["items"]
    as_json = {"spec": SPEC, "files": {"train.sh": base64.b64encode(SCRIPT).decode()}}
    boundary = "contract-boundary-7f3a"
    multipart = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"spec\"\r\n"
                 f"Content-Type: application/yaml\r\n\r\n{SPEC}\r\n"
                 f"--{boundary}\r\nContent-Disposition: form-data; name=\"train.sh\"; "
                 f"filename=\"train.sh\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                 ).encode() + SCRIPT + f"\r\n--{boundary}--\r\n".encode()
    forms = [
        ({"Content-Type": "application/json"}, json.dumps(as_json)),
        ({"Content-Type": f"multipart/form-data; boundary={boundary}"}, multipart),
    ]
    for headers, body in forms:
        out = ok(gateway.req("POST", url, headers=headers, body=body), 200)
        assert out["config_hash"].startswith("sha256:") and out["manifests"], out
        assert out["resolved"]["name"] == "contract-smoke"
    # the YAML form carries no files: the entrypoint is missing, every problem listed
    r = gateway.req("POST", url, headers={"Content-Type": "application/yaml"}, body=SPEC)
    if r.status == 200:
        assert r.json()["config_hash"].startswith("sha256:")
    else:
        problem = ok(r, 422)
        assert problem["errors"] and all("message" in e for e in problem["errors"])
    # nothing was stored (other tests of the module may have stored runs before)
    assert ok(gateway.req("GET", runs), 200)["items"] == stored


def test_batch_stores_valid_items_and_reports_the_rest(gateway, run_workspace):
    good = {"spec": SPEC.replace("contract-smoke", "batch-a"),
            "files": {"train.sh": base64.b64encode(SCRIPT).decode()}}
    bad = {"spec": SPEC.replace("gpus: 0", "gpus: lots")}
    out = ok(gateway.req("POST", f"/v1/workspaces/{run_workspace}/runs:batch",
                         body={"runs": [good, bad]}), 200)
    first, second = out["results"]
    assert first["index"] == 0 and first["status"] == 201 and first["run"]["state"] == "Accepted"
    assert second["index"] == 1 and second["status"] == 422 and second["errors"]
    ok(gateway.req("GET", f"/v1/runs/{first['run']['id']}"), 200)


# ---- the recorded session against the contract ----------------------------------------------

def test_this_process_records_every_exchange_for_the_session_check(gateway):
    """harness/contract_check.py gives each test process (each xdist worker)
    a recording of its own, which the session's end checks with the others."""
    log = os.environ.get("TAUGATE_CONTRACT_LOG")
    assert log and os.path.basename(log).endswith(".jsonl"), log
    with open(log, "rb") as f:
        before = f.read().count(b"\n")
    assert gateway.req("GET", "/v1/admin/workspaces?limit=1").status == 200
    with open(log, "rb") as f:
        lines = f.read().splitlines()
    assert len(lines) == before + 1
    last = json.loads(lines[-1])
    assert (last["method"], last["path"], last["status"]) == \
        ("GET", "/v1/admin/workspaces?limit=1", 200)
