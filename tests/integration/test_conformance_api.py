"""TauGrid's own tau.yaml files through the HTTP API: each gets the outcome
written in ../shared/conformance/README.md from POST .../runs:validate, and
the valid ones are accepted by POST .../runs."""
import base64
import json
import os

import pytest

from paths import REPO, SHARED

CONF = os.path.join(SHARED, "conformance", "taugrid")
FILES = os.path.join(REPO, "tests", "fixtures", "files")

CASES = {  # file -> (workspace, files folder or None, expected status)
    "01-kind-smoke_tau.yaml": ("ray", "conformance-01", 200),
    "02-kind-smoke_tau-ray.yaml": ("ray", "conformance-02", 200),
    "03-ray-tune-smoke_tau.yaml": ("taugrid-default", "conformance-03", 200),
    "04-portal-ray-stellar_tau.yaml": ("taugrid-default", "conformance-04", 200),
    "05-market-policy_tau.yaml": ("default", "conformance-04", 422),
    "06-aks-cpu-quickstart_stellar-demo_sweep-lr-baseline.yaml":
        ("taugrid-default", "conformance-06", 200),
    "07-e2e_tau-native-nightly_tau.yaml": ("taugrid-default", "conformance-07", 422),
    "08-aks-cpu-quickstart_tau.yaml": ("taugrid-default", None, 422),
}


# TauGrid's examples run in the namespace named default, which a workspace
# may only be bound to when the operator allows it.
GATEWAY_ENV = {"TAUGATE_WORKSPACES_ALLOW_DEFAULT_NAMESPACE": "true"}


@pytest.fixture(scope="module")
def world(gateway):
    posts = [
        ("/v1/admin/priority-classes", {"name": "taugrid-default", "value": 1000}),
        ("/v1/admin/priority-classes", {"name": "taugrid-priority", "value": 1200}),
        ("/v1/admin/cluster-queues", {"name": "kind-cpu-cq"}),
        ("/v1/admin/cluster-queues", {"name": "shared-cq"}),
        ("/v1/admin/workspaces", {"name": "ray", "namespace": "ray", "default_queue": "kind-cpu",
                                  "default_priority": "taugrid-default"}),
        ("/v1/admin/workspaces", {"name": "taugrid-default", "namespace": "taugrid-default",
                                  "default_queue": "jobqueue", "pvcs": ["blob-training"],
                                  "default_priority": "taugrid-default"}),
        ("/v1/admin/workspaces", {"name": "default", "namespace": "default",
                                  "default_queue": "jobqueue", "pvcs": ["workspace-data"],
                                  "default_priority": "taugrid-default"}),
        ("/v1/admin/workspaces/ray/queues", {"name": "kind-cpu", "cluster_queue": "kind-cpu-cq"}),
        ("/v1/admin/workspaces/taugrid-default/queues",
         {"name": "jobqueue", "cluster_queue": "shared-cq"}),
        ("/v1/admin/workspaces/default/queues", {"name": "jobqueue", "cluster_queue": "shared-cq"}),
        ("/v1/admin/profiles", {"name": "kind-cpu-job", "engine": "job",
                                "allowed_workspaces": ["ray"],
                                "settings": {"default_queue": "kind-cpu"}}),
        ("/v1/admin/profiles", {"name": "kind-cpu-ray", "engine": "rayjob",
                                "allowed_workspaces": ["ray"],
                                "settings": {"default_queue": "kind-cpu"}}),
        ("/v1/admin/profiles", {"name": "unbounded.cpu.topology-smoke", "engine": "job",
                                "allowed_workspaces": ["taugrid-default"],
                                "settings": {"teams": ["research"], "lanes": ["training"]}}),
    ]
    for path, body in posts:
        r = gateway.req("POST", path, body=body)
        assert r.status == 201, (path, r)
    return gateway


@pytest.fixture(scope="module")
def sql(pg, db_url):
    db = db_url.rsplit("/", 1)[1]
    return lambda text: pg.psql(text, db=db)


def payload(name, folder):
    with open(os.path.join(CONF, name)) as f:
        spec = f.read()
    files = {}
    if folder:
        root = os.path.join(FILES, folder)
        for dirpath, _, names in os.walk(root):
            for n in names:
                full = os.path.join(dirpath, n)
                with open(full, "rb") as f:
                    files[os.path.relpath(full, root)] = base64.b64encode(f.read()).decode()
    return {"spec": spec, "files": files}


@pytest.mark.parametrize("name", sorted(CASES))
def test_conformance_file_gets_its_outcome(world, name):
    ws, folder, status = CASES[name]
    r = world.req("POST", f"/v1/workspaces/{ws}/runs:validate", body=payload(name, folder))
    assert r.status == status, (name, r)
    body = r.json()
    if status == 200:
        assert body["manifests"] and body["resolved"]["policy"]["workspace"] == ws
        kinds = {m["kind"] for m in body["manifests"]}
        assert kinds & {"Job", "RayJob"}
        # and the same payload is accepted as a run
        s = world.req("POST", f"/v1/workspaces/{ws}/runs", body=payload(name, folder))
        assert s.status == 201, (name, s)
        assert s.json()["state"] == "Accepted"
    else:
        assert body["type"].endswith("invalid-run-config"), body
        assert all({"path", "message"} <= set(e) for e in body["errors"])


# the run id a dry run renders with (api/runs_submit.c)
DRY_RUN_ID = "00000000-0000-4000-8000-000000000000"


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c[2] == 200))
@pytest.mark.parametrize("route", ["runs", "runs:batch"])
def test_stored_manifests_are_the_dry_runs(world, sql, name, route):
    """A run stores the manifests its dry run answers (as jsonb), but for the
    run id and the object name derived from it, and its first attempt names
    the workload object among them: 01 renders a Job, 02 a RayJob."""
    ws, folder, _ = CASES[name]
    dry = world.req("POST", f"/v1/workspaces/{ws}/runs:validate", body=payload(name, folder))
    assert dry.status == 200, (name, dry)
    manifests = dry.json()["manifests"]
    primary = next(m for m in manifests if m["kind"] in ("Job", "RayJob"))
    if route == "runs":
        r = world.req("POST", f"/v1/workspaces/{ws}/runs", body=payload(name, folder))
        assert r.status == 201, (name, r)
        run = r.json()
    else:
        r = world.req("POST", f"/v1/workspaces/{ws}/runs:batch",
                      body={"runs": [payload(name, folder)]})
        assert r.status == 200 and r.json()["results"][0]["status"] == 201, (name, r)
        run = r.json()["results"][0]["run"]
    obj = run["attempts"][0]["object"]
    expected = (json.dumps(manifests).replace(primary["metadata"]["name"], obj)
                .replace(DRY_RUN_ID, run["id"]))
    assert "$m$" not in expected
    row = sql(f"SELECT r.manifests = $m${expected}$m$::jsonb, a.namespace, a.object_name,"
              f" a.object_kind FROM runs r JOIN run_attempts a ON a.run_id = r.id"
              f" AND a.attempt = 1 WHERE r.id = '{run['id']}'").split("|")
    assert row[0] == "t", sql(f"SELECT manifests FROM runs WHERE id = '{run['id']}'")
    assert row[1:] == [primary["metadata"]["namespace"], obj, primary["kind"]]


def test_conformance_details(world):
    r = world.req("POST", "/v1/workspaces/ray/runs:validate",
                  body=payload("01-kind-smoke_tau.yaml", "conformance-01")).json()
    job = next(m for m in r["manifests"] if m["kind"] == "Job")
    assert job["metadata"]["namespace"] == "ray" and job["spec"]["suspend"] is True
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "kind-cpu"
    c = job["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == "bash:5.2"
    assert c["resources"]["requests"] == {"cpu": "10m", "memory": "32Mi"}
    assert "nvidia.com/gpu" not in str(c["resources"])

    r = world.req("POST", "/v1/workspaces/default/runs:validate",
                  body=payload("05-market-policy_tau.yaml", "conformance-04")).json()
    err = next(e for e in r["errors"] if e["path"] == "metrics.offload.out")
    assert err["line"] == 43 and err["column"] > 0

    r = world.req("POST", "/v1/workspaces/taugrid-default/runs:validate",
                  body=payload("07-e2e_tau-native-nightly_tau.yaml", "conformance-07")).json()
    err = next(e for e in r["errors"] if e["path"] == "name")
    assert err["line"] == 4 and "DNS-1123" in err["message"]

    r = world.req("POST", "/v1/workspaces/taugrid-default/runs:validate",
                  body=payload("08-aks-cpu-quickstart_tau.yaml", None)).json()
    assert "managed workflow manifest" in r["detail"] + str(r["errors"])

    name = "06-aks-cpu-quickstart_stellar-demo_sweep-lr-baseline.yaml"
    r = world.req("POST", "/v1/workspaces/taugrid-default/runs:validate",
                  body=payload(name, None))
    assert r.status == 422
    assert any(e["path"] == "run.working_dir" and "project files" in e["message"]
               for e in r.json()["errors"])


def test_bad_inputs_through_the_api(world):
    def validate(spec, ct="application/yaml"):
        return world.req("POST", "/v1/workspaces/ray/runs:validate", body=spec.encode(),
                         headers={"Content-Type": ct})
    r = validate("name: a\nname: b\n")
    assert r.status == 400 and r.json()["errors"][0]["line"] == 2
    r = validate("a: &x [1]\nb: *x\n")
    assert r.status == 400
    r = validate("")
    assert r.status == 400
    r = validate("a: 1\n---\nb: 2\n")
    assert r.status == 400
    r = validate("name: x\nengine: job\nbogus_key: 1\n")
    assert r.status == 422
    assert any(e["path"] == "bogus_key" and e["line"] == 3 for e in r.json()["errors"])
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
