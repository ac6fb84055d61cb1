"""Platform policy end to end: policy files and database rules enforced on
:validate and submission (422 with rule id, path, line and column; warnings
with a successful answer; defaults filled before rendering), the admin API
(versions, audit), the per-workspace view, reloads on SIGHUP and through the
API that keep the old policy when the new one does not load, and a start
refused on a bad policy file.

Needs the wiring in the daemon (config keys policy_dir and
policy_schema_file, the routes of gateway/api/policies.h, the pipeline hook
in runs_submit.c, SIGHUP); see the policy engine's hand-over notes."""
import base64
import json
import os
import shutil
import signal
import tempfile
import threading
import time

import pytest

import tokens
from gateway import Gateway, REPO
from paths import BUILD
from wait import wait_for

SCHEMA = os.path.join(REPO, "schema", "policy.schema.json")

BASE_POLICY = """\
rules:
  - id: gpus-per-pod
    description: at most 4 GPUs per pod
    action: deny
    max_gpus_per_worker: 4
  - id: no-preload
    description: no loader injection
    action: deny
    denied_env_names: [LD_PRELOAD]
    message: "{actual} may not be set"
  - id: deadline-default
    description: one hour unless the profile says otherwise
    action: default
    max_active_deadline_seconds: 3600
  - id: experiment
    description: name the project
    action: warn
    required_experiment_fields: [project]
  - id: other-only
    description: only in workspace other
    action: deny
    scope: {workspaces: [other]}
    max_retries: 0
"""

# name 1, engine 2, entrypoint 3, image 4, compute 5, gpus 6, ...
SPEC = """\
name: {name}
engine: job
entrypoint: train.sh
image: bash:5.2
compute:
  gpus: {gpus}
  cpu_request: 10m
  memory_request: 32Mi
policy:
  profile: cpu-job
  queue: lq
{extra}"""

SCRIPT = base64.b64encode(b"#!/usr/bin/env bash\necho policy\n").decode()


def spec(name="pol-run", gpus=0, extra=""):
    return SPEC.format(name=name, gpus=gpus, extra=extra)


def body(text):
    return {"spec": text, "files": {"train.sh": SCRIPT}}


def errors_by_rule(r):
    return {e.get("rule_id"): e for e in r.json().get("errors", []) if e.get("rule_id")}


@pytest.fixture(scope="module")
def policy_dir():
    d = tempfile.mkdtemp(prefix="taugate-policies-")
    with open(os.path.join(d, "base.yaml"), "w") as f:
        f.write(BASE_POLICY)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def sql(pg, db_url):
    dbname = db_url.rsplit("/", 1)[1]
    return lambda text: pg.psql(text, db=dbname)


def policy_env(d):
    return {"TAUGATE_POLICY_DIR": d, "TAUGATE_POLICY_SCHEMA_FILE": SCHEMA}


@pytest.fixture(scope="module")
def gw(db_url, policy_dir):
    g = Gateway(BUILD, db_url, extra_env=policy_env(policy_dir)).start()
    for path, b in [
        ("/v1/admin/workspaces", {"name": "pol", "namespace": "pol", "default_queue": "lq"}),
        ("/v1/admin/workspaces", {"name": "other", "namespace": "other", "default_queue": "lq"}),
        ("/v1/admin/cluster-queues", {"name": "cq"}),
        ("/v1/admin/workspaces/pol/queues", {"name": "lq", "cluster_queue": "cq"}),
        ("/v1/admin/workspaces/other/queues", {"name": "lq", "cluster_queue": "cq"}),
        ("/v1/admin/profiles", {"name": "cpu-job", "engine": "job",
                                "allowed_workspaces": ["pol", "other"]}),
        ("/v1/admin/priority-classes", {"name": "taugrid-default", "value": 1000}),
        ("/v1/admin/workspaces/pol/members", {"kind": "user", "subject": "rita",
                                              "role": "researcher"}),
        ("/v1/admin/workspaces/other/members", {"kind": "user", "subject": "oscar",
                                                "role": "viewer"}),
    ]:
        r = g.req("POST", path, body=b)
        assert r.status == 201, (path, r)
    yield g
    status = g.stop()
    logs = g.logs()
    g.close()
    assert status == 0, logs[-3000:]


def validate(gw, text, ws="pol"):
    return gw.req("POST", f"/v1/workspaces/{ws}/runs:validate", body=body(text))


def effective_ids(gw):
    r = gw.req("GET", "/v1/admin/policies:effective")
    assert r.status == 200, r
    return [x["id"] for x in r.json()["rules"]]


# --- enforcement -------------------------------------------------------------------------------

def test_violations_are_one_422_with_rule_path_line_column(gw):
    text = spec(gpus=8, extra="runtime:\n  env:\n    LD_PRELOAD: /evil.so\n")
    stored = gw.req("GET", "/v1/workspaces/pol/runs").json()["items"]  # by other tests
    r = validate(gw, text)
    assert r.status == 422, r
    p = r.json()
    assert p["type"].endswith("/invalid-run-config")
    errs = errors_by_rule(r)
    assert set(errs) == {"gpus-per-pod", "no-preload"}, p
    g = errs["gpus-per-pod"]
    assert (g["path"], g["line"], g["column"]) == ("compute.gpus", 6, 9)
    assert "(policy gpus-per-pod)" in g["message"]
    e = errs["no-preload"]
    assert (e["path"], e["line"], e["column"]) == ("runtime.env.LD_PRELOAD", 14, 5)
    assert e["message"].startswith("LD_PRELOAD may not be set")
    # a submission is refused the same way, and nothing is stored
    r = gw.req("POST", "/v1/workspaces/pol/runs", body=body(text))
    assert r.status == 422 and set(errors_by_rule(r)) == {"gpus-per-pod", "no-preload"}
    assert gw.req("GET", "/v1/workspaces/pol/runs").json()["items"] == stored


def test_warnings_defaults_and_decisions_on_success(gw, sql):
    r = validate(gw, spec())
    assert r.status == 200, r
    out = r.json()
    warn = [w for w in out["warnings"] if w.get("rule_id") == "experiment"]
    assert warn and warn[0]["path"] == "experiment.project", out["warnings"]
    # the default rule filled the deadline before rendering
    assert out["resolved"]["run"]["active_deadline_seconds"] == 3600
    assert out["provenance"]["run.active_deadline_seconds"] == "policy:deadline-default"
    job = [m for m in out["manifests"] if m["kind"] == "Job"][0]
    assert job["spec"]["activeDeadlineSeconds"] == 3600
    # the decisions, as evidence will embed them
    pol = out["policy"]
    assert len(pol["digest"]) == 64
    by_id = {d["rule_id"]: d for d in pol["decisions"]}
    assert by_id["gpus-per-pod"]["outcome"] == "allow"
    assert by_id["gpus-per-pod"]["actual"] == 0 and by_id["gpus-per-pod"]["expected"] == 4
    assert by_id["deadline-default"]["outcome"] == "default"
    assert by_id["experiment"]["outcome"] == "warn"
    assert "other-only" not in by_id  # out of scope in workspace pol
    assert all(d["version"] == 1 and d["source"] == "file:base.yaml" for d in pol["decisions"])

    # a submission carries the same warnings and records the decisions with the run
    r = gw.req("POST", "/v1/workspaces/pol/runs", body=body(spec(name="pol-ok")))
    assert r.status == 201, r
    run = r.json()
    assert any(w.get("rule_id") == "experiment" for w in run["warnings"])
    # runs.policy_decisions is what the evidence record embeds
    stored = json.loads(sql(f"SELECT policy_decisions::text FROM runs WHERE id = '{run['id']}'"))
    assert {d["rule_id"] for d in stored} >= {"gpus-per-pod", "no-preload", "deadline-default"}
    assert sql(f"SELECT policy_digest FROM runs WHERE id = '{run['id']}'") == pol["digest"]


def test_scope_by_workspace(gw):
    text = spec(extra="resilience:\n  max_retries: 1\n")
    assert validate(gw, text).status == 200
    r = validate(gw, text, ws="other")
    assert r.status == 422 and set(errors_by_rule(r)) == {"other-only"}, r


# --- admin API ----------------------------------------------------------------------------------

def test_admin_policy_lifecycle_versions_and_audit(gw):
    rule = {"id": "retries-cap", "description": "few retries", "action": "deny",
            "max_retries": 2, "message": "at most {expected} retries"}
    r = gw.req("POST", "/v1/admin/policies", body=rule)
    assert r.status == 201, r
    assert r.header("Location") == "/v1/admin/policies/retries-cap"
    row = r.json()
    assert row["version"] == 1 and row["enabled"] is True
    assert row["created_by"] == "platform-admin@example.com"
    assert gw.req("POST", "/v1/admin/policies", body=rule).status == 409

    # in force at once
    text = spec(extra="resilience:\n  max_retries: 3\n")
    r = validate(gw, text)
    assert r.status == 422 and "retries-cap" in errors_by_rule(r), r
    e = errors_by_rule(r)["retries-cap"]
    assert (e["path"], e["line"]) == ("resilience.max_retries", 13)
    assert e["message"] == "at most 2 retries (policy retries-cap)"

    # PATCH makes a new version
    r = gw.req("PATCH", "/v1/admin/policies/retries-cap", body={"max_retries": 5})
    assert r.status == 200 and r.json()["version"] == 2, r
    assert validate(gw, text).status == 200
    r = gw.req("PATCH", "/v1/admin/policies/retries-cap", body={"max_retries": 0, "enabled": False})
    assert r.status == 200 and r.json()["version"] == 3 and r.json()["enabled"] is False
    assert validate(gw, text).status == 200
    dec = {d["rule_id"] for d in validate(gw, text).json()["policy"]["decisions"]}
    assert "retries-cap" not in dec

    # bad changes are refused with every problem, and change nothing
    r = gw.req("PATCH", "/v1/admin/policies/retries-cap", body={"max_nodes": 2, "action": "block"})
    assert r.status == 422
    paths = {e["path"] for e in r.json()["errors"]}
    assert "action" in paths and ("max_nodes" in paths or "max_retries" in paths), r.json()
    assert gw.req("PATCH", "/v1/admin/policies/retries-cap", body={"id": "x"}).status == 422
    assert gw.req("PATCH", "/v1/admin/policies/retries-cap", body={"version": 9}).status == 422
    bad = gw.req("POST", "/v1/admin/policies",
                 body={"id": "Bad", "action": "default", "allowed_images": ["x"]})
    assert bad.status == 422
    errs = bad.json()["errors"]
    assert {"id", "action"} <= {e["path"] for e in errs}, errs
    assert any("description" in e["message"] for e in errs), errs
    assert gw.req("GET", "/v1/admin/policies/retries-cap").json()["version"] == 3

    # history, newest first, with who changed it
    h = gw.req("GET", "/v1/admin/policies/retries-cap/versions").json()["items"]
    assert [(x["version"], x["change"]) for x in h] == [(3, "update"), (2, "update"),
                                                       (1, "create")]
    assert h[2]["rule"]["max_retries"] == 2 and h[0]["enabled"] is False
    assert all(x["changed_by"] == "platform-admin@example.com" for x in h)

    listed = gw.req("GET", "/v1/admin/policies").json()["items"]
    assert [x["id"] for x in listed] == ["retries-cap"]

    assert gw.req("DELETE", "/v1/admin/policies/retries-cap").status == 204
    assert gw.req("GET", "/v1/admin/policies/retries-cap").status == 404
    assert gw.req("DELETE", "/v1/admin/policies/retries-cap").status == 404
    h = gw.req("GET", "/v1/admin/policies/retries-cap/versions").json()["items"]
    assert h[0]["change"] == "delete" and h[0]["version"] == 4
    # recreated, it continues the history
    r = gw.req("POST", "/v1/admin/policies", body=rule)
    assert r.status == 201 and r.json()["version"] == 5
    assert gw.req("DELETE", "/v1/admin/policies/retries-cap").status == 204

    # every change is in the audit trail
    audit = gw.req("GET", "/v1/admin/audit?limit=200").json()["items"]
    changes = [(a["method"], a["status"]) for a in audit
               if a["route"].startswith("/v1/admin/policies")]
    for want in [("POST", 201), ("POST", 409), ("PATCH", 200), ("PATCH", 422),
                 ("DELETE", 204)]:
        assert want in changes, changes


def test_admin_routes_need_a_platform_admin(gw):
    rita = tokens.mint("rita")
    for method, path, b in [("GET", "/v1/admin/policies", None),
                            ("POST", "/v1/admin/policies",
                             {"id": "x", "description": "d", "action": "deny", "max_nodes": 1}),
                            ("GET", "/v1/admin/policies:effective", None),
                            ("POST", "/v1/admin/policies:reload", None)]:
        assert gw.req(method, path, body=b, token=rita).status == 403, (method, path)


def test_database_rule_replaces_file_rule(gw):
    text = spec(gpus=8)
    assert validate(gw, text).status == 422
    r = gw.req("POST", "/v1/admin/policies",
               body={"id": "gpus-per-pod", "description": "bigger nodes now", "action": "deny",
                     "max_gpus_per_worker": 8})
    assert r.status == 201, r
    assert validate(gw, text).status == 200
    view = gw.req("GET", "/v1/workspaces/pol/policy").json()
    g = [x for x in view["rules"] if x["id"] == "gpus-per-pod"]
    assert len(g) == 1 and g[0]["source"] == "database (replaces file:base.yaml)"
    assert g[0]["max_gpus_per_worker"] == 8
    assert gw.req("DELETE", "/v1/admin/policies/gpus-per-pod").status == 204
    assert validate(gw, text).status == 422


def test_another_replica_polls_rule_changes_every_policy_poll_s(gw, db_url, policy_dir):
    """A rule made through one replica reaches another on its next poll, at
    the pace of policy_poll_s (1 s here; the keeper's own tick is 10 s)."""
    env = dict(policy_env(policy_dir), TAUGATE_POLICY_POLL_S="1")
    replica = Gateway(BUILD, db_url, extra_env=env).start()
    try:
        rule = {"id": "polled-rule", "description": "made elsewhere", "action": "warn",
                "max_retries": 7}
        assert gw.req("POST", "/v1/admin/policies", body=rule).status == 201
        wait_for(lambda: "polled-rule" in effective_ids(replica), 5,
                 "the replica's next policy poll", detail=lambda: replica.logs()[-2000:])
        assert gw.req("DELETE", "/v1/admin/policies/polled-rule").status == 204
        wait_for(lambda: "polled-rule" not in effective_ids(replica), 5,
                 "the replica's poll after the delete", detail=lambda: replica.logs()[-2000:])
    finally:
        assert replica.stop() == 0, replica.logs()[-2000:]
        replica.close()


def test_workspace_view(gw):
    rita, oscar = tokens.mint("rita"), tokens.mint("oscar")
    r = gw.req("GET", "/v1/workspaces/pol/policy", token=rita)
    assert r.status == 200, r
    view = r.json()
    ids = [x["id"] for x in view["rules"]]
    assert ids[:4] == ["gpus-per-pod", "no-preload", "deadline-default", "experiment"]
    assert "other-only" not in ids
    rule = view["rules"][0]
    assert rule["kind"] == "max_gpus_per_worker" and rule["action"] == "deny"
    assert rule["description"] and rule["version"] == 1
    assert view["workspace"] == "pol" and len(view["digest"]) == 64
    r = gw.req("GET", "/v1/workspaces/other/policy", token=oscar)
    assert "other-only" in [x["id"] for x in r.json()["rules"]]
    # another tenant's workspace is 404
    assert gw.req("GET", "/v1/workspaces/other/policy", token=rita).status == 404
    assert gw.req("GET", "/v1/workspaces/pol/policy", token=None).status == 401


# --- reloads ------------------------------------------------------------------------------------

def test_sighup_reload_and_bad_reload_keeps_old_policy(gw, policy_dir):
    extra = os.path.join(policy_dir, "extra.yaml")
    with open(extra, "w") as f:
        f.write("rules:\n  - {id: nodes-cap, description: d, action: deny, max_nodes: 1}\n")
    gw.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "nodes-cap" in effective_ids(gw), 10, "rule nodes-cap in effect")
    before = gw.req("GET", "/v1/admin/policies:effective").json()

    # broken: SIGHUP keeps the policy, and says where
    with open(extra, "w") as f:
        f.write("rules:\n  - id: nodes-cap\n    description: d\n    action: deny\n"
                "    max_nodes: many\n")
    gw.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "extra.yaml:5:" in gw.logs(), 10, "the bad file's line logged")
    after = gw.req("GET", "/v1/admin/policies:effective").json()
    assert after["digest"] == before["digest"]
    assert validate(gw, spec()).status == 200

    # the same through the API: 422 naming file, line and reason
    r = gw.req("POST", "/v1/admin/policies:reload")
    assert r.status == 422, r
    e = r.json()["errors"][0]
    assert (e["file"], e["path"], e["line"]) == ("extra.yaml", "rules[0].max_nodes", 5), e
    assert gw.req("GET", "/v1/admin/policies:effective").json()["digest"] == before["digest"]

    os.unlink(extra)
    r = gw.req("POST", "/v1/admin/policies:reload")
    assert r.status == 200 and "nodes-cap" not in [x["id"] for x in r.json()["rules"]], r


def test_reloads_do_not_drop_requests(gw, policy_dir):
    results, stop = [], threading.Event()

    def hammer():
        while not stop.is_set():
            try:
                results.append(validate(gw, spec()).status)
            except OSError as exc:  # a dropped connection
                results.append(repr(exc))

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for i in range(20):
            gw.proc.send_signal(signal.SIGHUP)
            assert gw.req("POST", "/v1/admin/policies:reload").status == 200
            r = gw.req("POST", "/v1/admin/policies",
                       body={"id": f"churn-{i}", "description": "d", "action": "warn",
                             "max_nodes": 100})
            assert r.status == 201, r
            time.sleep(0.02)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert results and all(s == 200 for s in results), set(map(str, results))
    for i in range(20):
        assert gw.req("DELETE", f"/v1/admin/policies/churn-{i}").status == 204


def test_metrics(gw):
    text = gw.req("GET", "/metrics", token=None).body.decode()
    assert "taugate_policy_rules " in text
    assert 'taugate_policy_reloads_total{result="ok"}' in text


# --- start ---------------------------------------------------------------------------------------

def test_bad_policy_file_refuses_start(db_url):
    d = tempfile.mkdtemp(prefix="taugate-badpolicy-")
    try:
        with open(os.path.join(d, "a.yaml"), "w") as f:
            f.write(BASE_POLICY)
        with open(os.path.join(d, "b.yaml"), "w") as f:
            f.write("rules:\n  - id: two-checks\n    description: d\n    action: deny\n"
                    "    max_nodes: 1\n    max_retries: 1\n")
        g = Gateway(BUILD, db_url, extra_env=policy_env(d))
        g.start(wait=False)
        try:
            status = g.proc.wait(timeout=20)
            logs = g.logs()
        finally:
            g.close()
        assert status != 0, logs
        assert "b.yaml:6:" in logs and "sets both" in logs, logs[-2000:]
    finally:
        shutil.rmtree(d, ignore_errors=True)
