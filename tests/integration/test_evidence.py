"""Evidence end to end: PostgreSQL + kubesim + the gateway. A run that ends
gets a sealed record (canonical JSON, sha256, Ed25519 signature) served at
GET /v1/runs/{id}/evidence; the public key at GET /v1/evidence/public-key
verifies it with plain openssl; `taugate verify` passes, and fails once a
stored event, log chunk or the record is edited. docs/evidence.md is the
format."""
import base64
import hashlib
import json
import os
import subprocess

import pytest

import tokens
from gateway import Gateway
from kubesim import KubeSim
from world import kind_cpu_cluster, kind_cpu_workspace
from paths import BUILD, SHARED
from wait import wait_for, wait_run_state

CONFORMANCE = os.path.join(SHARED, "conformance", "taugrid")
SECTIONS = {"schema", "run", "workspace", "spec", "config", "manifests", "queue", "history",
            "chain", "attempts", "logs", "metrics", "checkpoints", "policy", "totals", "seal"}
SCRIPT = """#!/usr/bin/env bash
echo "hello from taugate"
echo 'TAU_METRIC {"_step": 1, "loss": 0.5}'
echo 'TAU_METRIC {"_step": 2, "loss": 0.25, "acc": "NaN"}'
echo 'TAU_CHECKPOINT {"path": "/out/ckpt-2", "step": 2}'
echo done
"""


def b64(text):
    return base64.b64encode(text.encode()).decode()


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    d = tmp_path_factory.mktemp("evidence-key")
    priv, pub = str(d / "key.pem"), str(d / "pub.pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", priv], check=True)
    os.chmod(priv, 0o600)
    subprocess.run(["openssl", "pkey", "-in", priv, "-pubout", "-out", pub], check=True)
    der = subprocess.run(["openssl", "pkey", "-in", priv, "-pubout", "-outform", "DER"],
                         check=True, capture_output=True).stdout
    raw = der[-32:]  # SubjectPublicKeyInfo of Ed25519: 12-byte prefix + 32-byte key
    with open(pub) as f:
        pem = f.read()
    return {"path": priv, "pub": pub, "pem": pem, "raw_b64": base64.b64encode(raw).decode(),
            "key_id": hashlib.sha256(raw).hexdigest()[:16], "dir": str(d)}


@pytest.fixture(scope="module")
def cluster():
    ks = kind_cpu_cluster(KubeSim().start())
    yield ks
    ks.stop()


@pytest.fixture(scope="module")
def gw(db_url, cluster, key):
    g = Gateway(BUILD, db_url, extra_env={
        "TAUGATE_KUBE_API_URL": cluster.url,
        "TAUGATE_EVIDENCE_SIGNING_KEY": key["path"],
        "TAUGATE_EVIDENCE_LOG_GRACE_S": "5",
    }).start()
    kind_cpu_workspace(g, [
        ("/v1/admin/workspaces", {"name": "other", "namespace": "other"}),
        ("/v1/admin/workspaces/ray/members", {"kind": "user", "subject": "vera", "role": "viewer"}),
        ("/v1/admin/workspaces/other/members",
         {"kind": "user", "subject": "mallory", "role": "admin"}),
    ])
    yield g
    status = g.stop()
    logs = g.logs()
    g.close()
    assert status == 0, logs[-3000:]


@pytest.fixture(scope="module")
def sql(pg, db_url):
    db = db_url.rsplit("/", 1)[1]
    return lambda text: pg.psql(text, db=db)


def smoke_spec(name):
    with open(os.path.join(CONFORMANCE, "01-kind-smoke_tau.yaml")) as f:
        return f.read().replace("name: tau-kind-smoke", f"name: {name}")


def submit(gw, name, script):
    spec = smoke_spec(name)
    r = gw.req("POST", "/v1/workspaces/ray/runs",
               body={"spec": spec, "files": {"train.sh": b64(script)}})
    assert r.status == 201, r
    return r.json()["id"], spec


def wait_sealed(gw, run_id, timeout=90):
    """The evidence once sealed (the log grace may be the 60 s default)."""
    r = wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}/evidence"), timeout,
                 f"run {run_id}'s evidence sealed",
                 cond=lambda r: r.status == 200 and r.json()["sealed"],
                 detail=lambda: gw.logs()[-3000:])
    return r.json()


def verify(gw, run_id):
    """`taugate verify RUN_ID` with the gateway's configuration."""
    p = subprocess.run([gw.binary, "verify", run_id], env=gw.env(), capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def log_digest(hashes):
    return hashlib.sha256("".join(h + "\n" for h in hashes).encode()).hexdigest()


@pytest.fixture(scope="module")
def sealed(gw):
    run_id, spec = submit(gw, "evidence-ok", SCRIPT)
    done = wait_run_state(gw, run_id, {"Succeeded", "Failed"})
    assert done["state"] == "Succeeded", done
    return {"id": run_id, "spec": spec, "evidence": wait_sealed(gw, run_id)}


def test_public_key_is_served_without_authentication(gw, key):
    r = gw.req("GET", "/v1/evidence/public-key", token=None)
    assert r.status == 200, r
    body = r.json()
    assert body["algorithm"] == "Ed25519"
    assert body["key_id"] == key["key_id"]
    assert body["public_key_b64"] == key["raw_b64"]
    assert body["public_key_pem"] == key["pem"]


def test_succeeded_run_is_sealed_with_every_section(gw, key, sealed, sql):
    ev, run_id = sealed["evidence"], sealed["id"]
    assert ev["sealed"] is True and ev["run_id"] == run_id
    assert ev["algorithm"] == "Ed25519" and ev["key_id"] == key["key_id"]
    canonical = ev["canonical"].encode()
    assert hashlib.sha256(canonical).hexdigest() == ev["sha256"]
    rec = ev["record"]
    assert json.loads(canonical) == rec
    # the canonical form: every object's keys sorted bytewise, no whitespace between tokens
    def sorted_pairs(pairs):
        keys = [k.encode() for k, _ in pairs]
        assert keys == sorted(keys), keys
        return dict(pairs)
    json.loads(canonical, object_pairs_hook=sorted_pairs)
    assert not ev["canonical"].startswith("{ ") and '": ' not in ev["canonical"]
    assert set(rec) == SECTIONS
    assert rec["schema"] == "taugate.evidence/v1"
    assert rec["seal"] == {"algorithm": "Ed25519", "key_id": key["key_id"],
                           "sealed_at": ev["sealed_at"]}

    run = rec["run"]
    assert run["id"] == run_id and run["state"] == "Succeeded" and run["workspace"] == "ray"
    assert run["owner"] == "platform-admin@example.com" and run["attempts"] == 1
    assert run["created_at"] <= run["finished_at"] and run["duration_ms"] >= 0
    assert rec["workspace"] == {"name": "ray", "namespace": "ray"}

    # the spec exactly as submitted, and its files' digests
    assert rec["spec"]["text"] == sealed["spec"]
    assert rec["spec"]["sha256"] == hashlib.sha256(sealed["spec"].encode()).hexdigest()
    assert rec["spec"]["files"] == [{"name": "train.sh", "bytes": len(SCRIPT.encode()),
                                     "sha256": hashlib.sha256(SCRIPT.encode()).hexdigest()}]
    # resolved config with provenance, manifests, config hash
    cfg = rec["config"]
    assert cfg["resolved"]["name"] == "evidence-ok"
    # where each value came from; a policy default names its rule
    sources = set(cfg["provenance"].values())
    assert cfg["provenance"] and {s for s in sources if not s.startswith("policy:")} <= {
        "spec", "profile", "workspace", "default"}
    assert cfg["provenance"].get("resources.active_deadline_seconds",
                                 "policy:deadline-default") == "policy:deadline-default"
    assert cfg["config_hash"] == run["config_hash"] and cfg["config_hash"].startswith("sha256:")
    assert any(m.get("kind") == "Job" for m in rec["manifests"])

    # queue facts
    q = rec["queue"]
    assert q["local_queue"] == "kind-cpu" and q["cluster_queue"] == "kind-cpu-cq"
    assert q["flavors"] and set(q["flavors"].values()) == {"default-flavor"}
    assert q["priority_class"] == "taugrid-default" and q["priority"] == 1000
    assert isinstance(q["wait_ms"], int) and q["wait_ms"] >= 0

    # the state history with the hash chain
    hist = rec["history"]
    states = [e["state"] for e in hist if e["state"]]
    assert states[0] == "Accepted" and states[-1] == "Succeeded" and "Admitted" in states
    for prev, cur in zip(hist, hist[1:]):
        assert cur["prev_hash"] == prev["hash"] and cur["seq"] == prev["seq"] + 1
    assert rec["chain"] == {"events": len(hist), "head": hist[-1]["hash"]}
    live = sql(f"SELECT string_agg(hash, ',' ORDER BY seq) FROM run_events "
               f"WHERE run_id = '{run_id}'").split(",")
    assert [e["hash"] for e in hist] == live

    # attempts: nodes, exit codes, reasons, GPU count and hours, pods
    (a,) = rec["attempts"]
    assert a["attempt"] == 1 and a["state"] == "Succeeded" and a["exit_code"] == 0
    assert a["node_names"] and a["reason"]
    assert a["gpu_count"] == 0 and a["gpu_hours"] == 0
    assert a["queue_wait_ms"] >= 0 and a["runtime_ms"] >= 0
    assert a["pods"] and a["pods"][0]["exit_code"] == 0
    assert rec["totals"]["attempts"] == 1 and rec["totals"]["gpu_hours"] == 0

    # logs: per container bytes, chunks and digest over the chunk hashes
    assert rec["logs"], "the log collector stored no chunks"
    for s in rec["logs"]:
        rows = sql(f"SELECT string_agg(sha256, ',' ORDER BY seq), sum(octet_length(content)) "
                   f"FROM log_chunks WHERE run_id = '{run_id}' AND attempt = {s['attempt']} "
                   f"AND pod = '{s['pod']}' AND container = '{s['container']}'").split("|")
        hashes = rows[0].split(",")
        assert s["chunks"] == len(hashes) and s["bytes"] == int(rows[1])
        assert s["sha256"] == log_digest(hashes)
    # metric summaries (NaN counted apart) and checkpoints
    metrics = {m["name"]: m for m in rec["metrics"]}
    assert metrics["loss"]["count"] == 2 and metrics["loss"]["min"] == 0.25
    assert metrics["loss"]["max"] == 0.5 and metrics["loss"]["latest"]["step"] == 2
    assert metrics["acc"]["non_finite_count"] == 1 and metrics["acc"]["finite_count"] == 0
    assert [c["path"] for c in rec["checkpoints"]] == ["/out/ckpt-2"]
    # every rule of the shipped policy that applied was decided and recorded
    decisions = rec["policy"]["decisions"]
    assert decisions, rec["policy"]
    assert all({"rule_id", "version", "outcome"} <= set(d) for d in decisions)
    assert {"gpus-per-run", "no-library-injection", "deadline-default"} <= \
        {d["rule_id"] for d in decisions}


def test_signature_verifies_with_openssl_and_the_served_key(gw, key, sealed, tmp_path):
    ev = sealed["evidence"]
    served = gw.req("GET", "/v1/evidence/public-key", token=None).json()
    pub = tmp_path / "served.pem"
    pub.write_text(served["public_key_pem"])
    doc, sig = tmp_path / "record.json", tmp_path / "record.sig"
    doc.write_bytes(ev["canonical"].encode())
    sig.write_bytes(base64.b64decode(ev["signature"]))

    def openssl_verify():
        return subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(pub),
                               "-rawin", "-in", str(doc), "-sigfile", str(sig)],
                              capture_output=True, text=True)
    ok = openssl_verify()
    assert ok.returncode == 0 and "Signature Verified Successfully" in ok.stdout, ok
    # one byte of the record changed: the signature no longer verifies
    doc.write_bytes(ev["canonical"].replace('"Succeeded"', '"Succeedee"', 1).encode())
    assert openssl_verify().returncode != 0


def test_taugate_verify_passes_then_detects_tampering(gw, sealed, sql):
    run_id = sealed["id"]
    rc, out = verify(gw, run_id)
    assert rc == 0 and out.rstrip().endswith("verified"), out
    assert "FAIL" not in out

    # one stored event edited
    sql(f"CREATE TABLE ev_backup AS SELECT * FROM run_events WHERE run_id = '{run_id}'")
    sql(f"UPDATE run_events SET message = 'x' WHERE run_id = '{run_id}' AND seq = 2")
    rc, out = verify(gw, run_id)
    assert rc == 1, out
    assert "FAIL events: seq 2" in out and "the event was edited" in out
    sql("UPDATE run_events e SET message = b.message FROM ev_backup b "
        "WHERE e.id = b.id AND e.seq = 2")
    assert verify(gw, run_id)[0] == 0

    # one log chunk edited
    sql(f"CREATE TABLE chunk_backup AS SELECT * FROM log_chunks WHERE run_id = '{run_id}'")
    sql(f"UPDATE log_chunks SET content = content || 'forged' WHERE id = "
        f"(SELECT min(id) FROM log_chunks WHERE run_id = '{run_id}')")
    rc, out = verify(gw, run_id)
    assert rc == 1, out
    assert "FAIL logs:" in out and "the chunk was edited" in out
    # ... even when its stored sha256 is updated to match
    sql(f"UPDATE log_chunks SET sha256 = encode(sha256(convert_to(content, 'UTF8')), 'hex') "
        f"WHERE run_id = '{run_id}'")
    rc, out = verify(gw, run_id)
    assert rc == 1 and "FAIL logs:" in out and "sealed" in out, out
    sql("UPDATE log_chunks c SET content = b.content, sha256 = b.sha256 FROM chunk_backup b "
        "WHERE c.id = b.id")
    assert verify(gw, run_id)[0] == 0

    # a deleted event
    sql(f"DELETE FROM run_events WHERE run_id = '{run_id}' AND seq = (SELECT max(seq) "
        f"FROM run_events WHERE run_id = '{run_id}')")
    rc, out = verify(gw, run_id)
    assert rc == 1 and "events deleted" in out, out
    sql("INSERT INTO run_events SELECT * FROM ev_backup b WHERE NOT EXISTS "
        "(SELECT 1 FROM run_events e WHERE e.id = b.id)")
    assert verify(gw, run_id)[0] == 0

    # the stored record edited
    sql(f"CREATE TABLE evidence_backup AS SELECT * FROM evidence WHERE run_id = '{run_id}'")
    sql(f"UPDATE evidence SET record = jsonb_set(record, '{{run,state}}', '\"Failed\"') "
        f"WHERE run_id = '{run_id}'")
    rc, out = verify(gw, run_id)
    assert rc == 1 and "FAIL record" in out, out
    sql(f"UPDATE evidence SET canonical = replace(canonical, '\"Succeeded\"', '\"Failed\"'), "
        f"record = replace(canonical, '\"Succeeded\"', '\"Failed\"')::jsonb "
        f"WHERE run_id = '{run_id}'")
    rc, out = verify(gw, run_id)
    assert rc == 1 and "FAIL record: the canonical text hashes to" in out, out
    sql(f"UPDATE evidence SET canonical = '{{broken' WHERE run_id = '{run_id}'")
    rc, out = verify(gw, run_id)
    assert rc == 1 and "FAIL record" in out and "not JSON" in out, out
    sql("UPDATE evidence e SET record = b.record, canonical = b.canonical "
        "FROM evidence_backup b WHERE e.run_id = b.run_id")
    assert verify(gw, run_id)[0] == 0

    # an unknown run has nothing to verify
    rc, out = verify(gw, "00000000-0000-4000-8000-000000000000")
    assert rc == 2 and "no sealed evidence" in out, out


def test_evidence_is_for_the_runs_tenants_only(gw, sealed):
    path = f"/v1/runs/{sealed['id']}/evidence"
    r = gw.req("GET", path, token=tokens.mint("mallory"))
    assert r.status == 404 and "sha256" not in r.body.decode(), r
    r = gw.req("GET", path, token=tokens.mint("vera"))  # a viewer of the run's workspace
    assert r.status == 200 and r.json()["sha256"] == sealed["evidence"]["sha256"], r
    assert gw.req("GET", path, token=None).status == 401
    missing = gw.req("GET", "/v1/runs/00000000-0000-4000-8000-000000000000/evidence")
    assert missing.status == 404


def test_unended_run_has_no_evidence_and_cancelled_runs_are_sealed(gw, sql):
    run_id, _ = submit(gw, "evidence-long", "#!/usr/bin/env bash\nsleep 60\n")
    wait_run_state(gw, run_id, {"Running"})
    r = gw.req("GET", f"/v1/runs/{run_id}/evidence")
    assert r.status == 409, r
    assert r.json()["type"].endswith("/evidence-not-sealed")
    assert "sealed when it ends" in r.json()["detail"]
    assert gw.req("POST", f"/v1/runs/{run_id}:cancel").status == 200
    ev = wait_sealed(gw, run_id)
    assert ev["record"]["run"]["state"] == "Cancelled"
    assert verify(gw, run_id)[0] == 0

    # Between the end and the seal the gateway answers a live, unsigned
    # preview: take the seal away and keep the sealer from redoing it.
    sql(f"DELETE FROM evidence WHERE run_id = '{run_id}'")
    r = gw.req("GET", f"/v1/runs/{run_id}/evidence")
    assert r.status == 200, r
    body = r.json()
    assert body["sealed"] is False and "signature" not in body and "sha256" not in body
    assert body["record"]["run"]["state"] == "Cancelled" and "seal" not in body["record"]
    # queued again, it is sealed again
    sql(f"INSERT INTO evidence_queue (run_id) VALUES ('{run_id}')")
    assert wait_sealed(gw, run_id)["sealed"] is True


def run_with_workload_watch_down(gw, cluster, name, path_prefix):
    """Run to its end while the cluster refuses `path_prefix` (a 503 each time)
    and every open watch is closed, so the gateway's Workload informer cannot
    see the admission while the Job and Pod watches carry the run to its end.
    RET: the run id and its sealed evidence."""
    cluster.control("faults/api", {"rate": 1.0, "code": 503, "pathPrefix": path_prefix})
    try:
        cluster.control("watches/close")
        run_id, _ = submit(gw, name, SCRIPT)
        assert wait_run_state(gw, run_id, {"Succeeded", "Failed"})["state"] == "Succeeded"
        return run_id, wait_sealed(gw, run_id)
    finally:
        cluster.control("faults/api", method="DELETE")


def test_sealed_record_has_the_admission_the_workload_watch_missed(gw, cluster, sql):
    # Only the cluster-wide Workload list and watch fail: the sealer reads the
    # run's Workload in its namespace and records the flavors Kueue assigned.
    run_id, ev = run_with_workload_watch_down(gw, cluster, "evidence-late-wl",
                                              "/apis/kueue.x-k8s.io/v1beta1/workloads")
    q = ev["record"]["queue"]
    assert q["cluster_queue"] == "kind-cpu-cq" and "note" not in q, q
    assert q["flavors"] and set(q["flavors"].values()) == {"default-flavor"}, q
    assert q["workload"], q
    assert ev["record"]["attempts"][0]["queue"]["flavors"] == q["flavors"]
    assert verify(gw, run_id)[0] == 0


def test_run_whose_workload_cannot_be_read_is_sealed_saying_so(gw, cluster):
    # Every Kueue path fails: the sealer waits out the log grace (5 s here),
    # then seals with what it knows and a note on why the flavors are missing.
    run_id, ev = run_with_workload_watch_down(gw, cluster, "evidence-no-wl",
                                              "/apis/kueue.x-k8s.io/")
    q = ev["record"]["queue"]
    assert q["flavors"] == {} and "could not be read" in q["note"], q
    assert ev["record"]["run"]["state"] == "Succeeded"
    assert verify(gw, run_id)[0] == 0
