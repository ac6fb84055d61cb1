"""Pod logs, metrics and checkpoints: the log collector against kubesim's real
pod processes, and GET /v1/runs/{id}/logs|metrics|checkpoints.

Until the watcher and main.c wire the collector in, the tests play the
watcher: they create Pods in kubesim, record them in run_pods with psql, and
mirror each pod's phase there. The gateway under test is
tests/tools/logs_probe (taugate plus the collector and the three routes),
built here with the main Makefile's flags."""
import http.client
import os
import re
import signal
import subprocess
import threading
import time
import urllib.parse
import uuid

import pytest

import tokens
from gateway import Gateway
from kubesim import KubeSim, api_path
from paths import BUILD, REPO
from wait import wait_for

PHASES_DONE = ("Succeeded", "Failed")


# ---- fixtures -------------------------------------------------------------

def _sanitized(build):
    lib = os.path.join(build, "libtaugate.a")
    with open(lib, "rb") as f:
        return b"__asan_" in f.read()


@pytest.fixture(scope="module")
def probe():
    prebuilt = os.environ.get("TAUGATE_LOGS_PROBE")  # a probe built elsewhere
    if prebuilt:
        return prebuilt
    target = os.path.join(BUILD, "tests", "tools", "logs_probe")
    args = ["make", "-s", "-C", REPO, "-f", "Makefile", "-f", "tests/tools/logs_probe.mk",
            "BUILD=" + BUILD, target]
    if _sanitized(BUILD):
        args.insert(-1, "SAN=1")
    subprocess.run(args, check=True, capture_output=True, timeout=600)
    return target


@pytest.fixture(scope="module")
def ks():
    sim = KubeSim(build=BUILD).start()
    yield sim
    sim.cleanup()


class Env:
    """The database, kubesim and a running probe gateway."""

    def __init__(self, pg, db_url, ks, probe):
        self.pg = pg
        self.db = urllib.parse.urlparse(db_url).path.lstrip("/")
        self.db_url = db_url
        self.ks = ks
        self.probe = probe
        self.gw = None
        self.mirrors = []

    def start_gateway(self, **env):
        base = {"TAUGATE_KUBE_API_URL": self.ks.url, "TAUGATE_LOGS_LEASE_S": "3",
                "TAUGATE_LOGS_PRUNE_INTERVAL_S": "1", "TAUGATE_LOGS_HTTP_IDLE_TIMEOUT_S": "3",
                "TAUGATE_LOGS_HTTP_KEEPALIVE_S": "1", "TAUGATE_LOGS_HTTP_MAX_FOLLOWERS": "6",
                "TAUGATE_DB_POOL_SIZE": "6", "TAUGATE_LOG_LEVEL": "info"}
        base.update(env)
        gw = Gateway(BUILD, self.db_url, extra_env=base)
        gw.binary = self.probe
        self.gw = gw.start()
        return gw

    def stop_gateway(self, sig=signal.SIGTERM):
        gw, self.gw = self.gw, None
        status = gw.stop(sig=sig)
        logs = gw.logs()
        gw.close()
        if sig == signal.SIGTERM:
            assert status == 0, f"probe exited with {status}:\n{logs[-4000:]}"
            assert "AddressSanitizer" not in logs and "runtime error" not in logs, logs[-4000:]
        return logs

    def sql(self, q):
        return self.pg.psql(q, db=self.db)

    # runs and pods, as the submitter and watcher would record them

    def new_run(self, ws="alpha", state="Running", attempt=1):
        rid = str(uuid.uuid4())
        self.sql("INSERT INTO runs (id, workspace, name, owner, engine, state, spec_text,"
                 " resolved, manifests, config_hash, attempt) VALUES"
                 f" ('{rid}', '{ws}', 'r-{rid[:8]}', 'alice', 'job', '{state}', 'x', '{{}}',"
                 f" '[]', 'h', {attempt})")
        return rid

    def start_pod(self, rid, ns, scripts, attempt=1, mirror=True):
        """A Pod in kubesim with one container per (name, shell script), recorded
        in run_pods once it runs; a thread mirrors its phase until it ends."""
        self.ks.ensure_namespace(ns)
        name = "p-" + uuid.uuid4().hex[:10]
        self.ks.create({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {"restartPolicy": "Never", "containers": [
                            {"name": c, "image": "busybox:1.36", "command": ["sh", "-c", s]}
                            for c, s in scripts]}})
        pod = self.ks.wait_for(lambda: self.ks.get_obj("v1", "pods", name, ns),
                               cond=lambda p: p and p.get("status", {}).get("phase")
                               in ("Running",) + PHASES_DONE, what="pod started")
        uid = pod["metadata"]["uid"]
        containers = ",".join(c for c, _ in scripts)
        self.sql("INSERT INTO run_pods (run_id, attempt, namespace, pod, uid, phase, containers)"
                 f" VALUES ('{rid}', {attempt}, '{ns}', '{name}', '{uid}', 'Running',"
                 f" '{{{containers}}}')")
        if mirror:
            t = threading.Thread(target=self._mirror, args=(rid, ns, name, uid), daemon=True)
            t.start()
            self.mirrors.append(t)
        return name

    def _mirror(self, rid, ns, name, uid):
        deadline = time.time() + 120
        while time.time() < deadline:
            pod = self.ks.get_obj("v1", "pods", name, ns)
            phase = pod.get("status", {}).get("phase") if pod else "Failed"
            if phase in PHASES_DONE:
                self.sql(f"UPDATE run_pods SET phase = '{phase}', finished_at = now()"
                         f" WHERE uid = '{uid}'")
                self.sql(f"UPDATE runs SET state = 'Succeeded' WHERE id = '{rid}'"
                         " AND state = 'Running' AND NOT EXISTS (SELECT 1 FROM run_pods"
                         f" WHERE run_id = '{rid}' AND phase NOT IN ('Succeeded', 'Failed'))")
                return
            time.sleep(0.1)

    def wait_log_done(self, rid, timeout=60):
        def done():
            return self.sql(f"SELECT count(*) FILTER (WHERE NOT log_done) || '/' || count(*)"
                            f" FROM run_pods WHERE run_id = '{rid}'")
        self.ks.wait_for(done, cond=lambda v: v.startswith("0/") and v != "0/0",
                         timeout=timeout, what="log_done")

    def logs(self, rid, token=None, headers=None, **query):
        q = urllib.parse.urlencode(query)
        kw = {} if token is None else {"token": token}
        r = self.gw.req("GET", f"/v1/runs/{rid}/logs" + ("?" + q if q else ""),
                        headers=headers, **kw)
        return r


@pytest.fixture(scope="module")
def env(pg, db_url, ks, probe):
    e = Env(pg, db_url, ks, probe)
    e.start_gateway()
    for ws in ("alpha", "beta", "old"):
        assert e.gw.req("POST", "/v1/admin/workspaces",
                        body={"name": ws, "namespace": ws}).status == 201
    for ws, who, role in (("alpha", "alice", "researcher"), ("beta", "bob", "viewer")):
        assert e.gw.req("POST", f"/v1/admin/workspaces/{ws}/members",
                        body={"kind": "user", "subject": who, "role": role}).status == 201
    yield e
    if e.gw:
        e.stop_gateway()


def lines_of(text):
    return text.splitlines()


def sse_events(text):
    """Parse an SSE body into [{"id", "event", "data": [lines]}] (comments dropped)."""
    events = []
    for block in text.split("\n\n"):
        ev = {"id": None, "event": "message", "data": []}
        seen = False
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            seen = True
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "id":
                ev["id"] = value
            elif field == "event":
                ev["event"] = value
            elif field == "data":
                ev["data"].append(value)
        if seen:
            events.append(ev)
    return events


# ---- collection -------------------------------------------------------------

def test_lines_are_stored_in_order_and_complete(env):
    rid = env.new_run()
    script = ("i=1; while [ $i -le 3000 ]; do echo \"line $i $(printf '%0100d' 0)\"; "
              "i=$((i+1)); done; printf 'bad \\377 byte\\n'; printf 'no newline at the end'")
    env.start_pod(rid, "alpha", [("main", script)])
    env.wait_log_done(rid)
    r = env.logs(rid)
    assert r.status == 200, r
    assert r.header("Content-Type") == "text/plain; charset=utf-8"
    got = lines_of(r.body.decode())
    want = [f"line {i} {'0' * 100}" for i in range(1, 3001)]
    assert got[:3000] == want
    assert got[3000] == "bad \ufffd byte"
    assert got[3001] == "no newline at the end"
    assert len(got) == 3002
    # several chunks, each consistent, bytes accounted on the pod
    rows = env.sql(f"SELECT count(*), sum(lines), sum(octet_length(content)),"
                   f" bool_and(sha256 = encode(sha256(convert_to(content, 'UTF8')), 'hex')),"
                   f" min(seq), max(seq), bool_and(first_at <= last_at)"
                   f" FROM log_chunks WHERE run_id = '{rid}'").split("|")
    assert int(rows[0]) >= 4 and int(rows[1]) == 3002
    assert rows[3] == "t" and rows[4] == "1" and int(rows[5]) == int(rows[0]) and rows[6] == "t"
    assert env.sql(f"SELECT log_bytes FROM run_pods WHERE run_id = '{rid}'") == rows[2]
    assert env.sql(f"SELECT done FROM log_streams s JOIN run_pods p USING (namespace, pod, uid)"
                   f" WHERE p.run_id = '{rid}'") == "t"


def kube_logs_requests(gw):
    """Log streams the gateway has requested from the cluster so far."""
    prom = gw.req("GET", "/metrics").body.decode()
    return sum(int(line.rsplit(" ", 1)[1]) for line in prom.splitlines()
               if line.startswith('taugate_kube_requests_total{verb="logs",'))


def test_a_container_that_exits_is_streamed_once(env):
    """The stream ends when the container exits, a moment before the pod's end
    is stored: the follower waits for it rather than give the container back
    and request its log from the cluster a second time."""
    before = kube_logs_requests(env.gw)
    rid = env.new_run()
    env.start_pod(rid, "alpha", [("main", "echo one; sleep 2; echo two")])
    env.wait_log_done(rid)
    assert lines_of(env.logs(rid).body.decode()) == ["one", "two"]
    assert kube_logs_requests(env.gw) - before == 1


def test_no_duplicates_after_collector_restarts(env):
    rid = env.new_run()
    script = "i=1; while [ $i -le 160 ]; do echo tick $i; i=$((i+1)); sleep 0.04; done"
    env.start_pod(rid, "alpha", [("main", script)])

    def stored():
        return int(env.sql(f"SELECT coalesce(sum(lines), 0) FROM log_chunks"
                           f" WHERE run_id = '{rid}'"))
    env.ks.wait_for(stored, cond=lambda n: n >= 20, timeout=20, what="first chunks")
    t = time.time()
    env.stop_gateway()  # graceful: followers stop within ~2 s, claims released at once
    assert time.time() - t < 4
    env.start_gateway()
    n = stored()
    env.ks.wait_for(stored, cond=lambda m: m >= n + 20, timeout=20, what="resumed")
    env.stop_gateway(sig=signal.SIGKILL)  # crash: the claim runs out after its lease
    env.start_gateway()
    env.wait_log_done(rid)
    got = lines_of(env.logs(rid).body.decode())
    assert got == [f"tick {i}" for i in range(1, 161)]
    assert stored() == 160


def test_two_replicas_share_the_containers(env):
    env.stop_gateway()
    env.start_gateway(TAUGATE_LOGS_MAX_FOLLOWERS="2", TAUGATE_LOGS_REPLICA_ID="replica-a")
    other = Gateway(BUILD, env.db_url, extra_env={
        "TAUGATE_KUBE_API_URL": env.ks.url, "TAUGATE_LOGS_MAX_FOLLOWERS": "2",
        "TAUGATE_LOGS_LEASE_S": "3", "TAUGATE_LOGS_REPLICA_ID": "replica-b",
        "TAUGATE_DB_POOL_SIZE": "6"})
    other.binary = env.probe
    other.start()
    try:
        runs = []
        for k in range(4):
            rid = env.new_run()
            script = f"i=1; while [ $i -le 60 ]; do echo r{k} $i; i=$((i+1)); sleep 0.05; done"
            env.start_pod(rid, "alpha", [("main", script)])
            runs.append(rid)
        for k, rid in enumerate(runs):
            env.wait_log_done(rid)
            assert lines_of(env.logs(rid).body.decode()) == [f"r{k} {i}" for i in range(1, 61)]

        def chunks(gw):
            prom = gw.req("GET", "/metrics").body.decode()
            return int(re.search(r"^taugate_log_chunks_stored_total (\d+)$", prom, re.M).group(1))
        assert chunks(env.gw) > 0 and chunks(other) > 0  # two followers each, at most
    finally:
        status = other.stop()
        logs = other.logs()
        other.close()
        assert status == 0, logs[-3000:]
        env.stop_gateway()
        env.start_gateway()


def test_logs_outlive_the_pod(env):
    rid = env.new_run()
    name = env.start_pod(rid, "alpha", [("main", "echo one; echo two")])
    env.wait_log_done(rid)
    env.ks.delete(api_path("v1", "pods", "alpha", name))
    env.ks.wait_for(lambda: env.ks.get_obj("v1", "pods", name, "alpha"), cond=lambda p: p is None,
                    what="pod deleted")
    assert env.logs(rid).body == b"one\ntwo\n"


def test_pod_deleted_before_collection_ends_the_follow(env):
    rid = env.new_run()
    name = env.start_pod(rid, "alpha", [("main", "echo early; sleep 30")], mirror=False)
    env.ks.wait_for(lambda: env.logs(rid).body, cond=lambda b: b == b"early\n", timeout=20,
                    what="first line")
    env.ks.delete(api_path("v1", "pods", "alpha", name))
    env.wait_log_done(rid, timeout=30)
    assert env.logs(rid).body == b"early\n"


# ---- reading ----------------------------------------------------------------

def test_follow_streams_lines_as_they_arrive_then_ends(env):
    rid = env.new_run()
    env.start_pod(rid, "alpha",
                  [("main", "i=1; while [ $i -le 12 ]; do echo tick $i; i=$((i+1)); sleep 0.5;"
                            " done")])
    conn = http.client.HTTPConnection("127.0.0.1", env.gw.port, timeout=30)
    conn.request("GET", f"/v1/runs/{rid}/logs?follow=true",
                 headers={"Authorization": "Bearer " + tokens.admin_token()})
    resp = conn.getresponse()
    assert resp.status == 200
    arrivals = []
    while True:
        line = resp.readline()
        if not line:
            break
        arrivals.append((time.time(), line.decode().rstrip("\n")))
    conn.close()
    assert [l for _, l in arrivals] == [f"tick {i}" for i in range(1, 13)]
    # the first ticks came while the pod was still printing (~6 s in all)
    assert arrivals[-1][0] - arrivals[0][0] > 2.5


def test_sse_resumes_after_last_event_id(env):
    rid = env.new_run()
    script = ("for b in 1 2 3 4; do for i in 1 2 3; do echo burst $b line $i; done;"
              " sleep 1.3; done")
    env.start_pod(rid, "alpha", [("main", script)])
    env.wait_log_done(rid)
    r = env.logs(rid, headers={"Accept": "text/event-stream"})
    assert r.status == 200 and r.header("Content-Type").startswith("text/event-stream")
    events = [e for e in sse_events(r.body.decode()) if e["event"] == "message"]
    assert len(events) >= 3
    assert sse_events(r.body.decode())[-1] == {"id": None, "event": "end",
                                               "data": ['{"reason":"complete"}']}
    every = [l for e in events for l in e["data"]]
    assert every == [f"burst {b} line {i}" for b in range(1, 5) for i in range(1, 4)]
    ids = [int(e["id"]) for e in events]
    assert ids == sorted(ids)
    cut = events[1]["id"]
    r2 = env.logs(rid, headers={"Accept": "text/event-stream", "Last-Event-ID": cut})
    rest = [e for e in sse_events(r2.body.decode()) if e["event"] == "message"]
    assert [e["id"] for e in rest] == [e["id"] for e in events[2:]]
    assert [l for e in rest for l in e["data"]] == [l for e in events[2:] for l in e["data"]]
    bad = env.logs(rid, headers={"Accept": "text/event-stream", "Last-Event-ID": "x"})
    assert bad.status == 400


def test_tail_since_container_filters_and_prefix(env):
    rid = env.new_run()
    name = env.start_pod(rid, "alpha", [
        ("main", "for i in 1 2 3 4 5; do echo m$i; sleep 0.05; done"),
        ("side", "for i in 1 2 3; do echo s$i; done")])
    env.wait_log_done(rid)
    both = lines_of(env.logs(rid).body.decode())
    assert sorted(both) == sorted([f"[{name}/main] m{i}" for i in range(1, 6)] +
                                  [f"[{name}/side] s{i}" for i in range(1, 4)])
    assert sorted(lines_of(env.logs(rid, prefix="false").body.decode())) == sorted(
        [f"m{i}" for i in range(1, 6)] + [f"s{i}" for i in range(1, 4)])
    assert env.logs(rid, container="side").body == b"s1\ns2\ns3\n"
    assert env.logs(rid, container="main", tail=2).body == b"m4\nm5\n"
    assert env.logs(rid, container="main", tail=0).body == b""
    assert env.logs(rid, container="main", tail=100).body == b"m1\nm2\nm3\nm4\nm5\n"
    assert env.logs(rid, pod=name, container="side", attempt=1).body == b"s1\ns2\ns3\n"
    assert env.logs(rid, pod="other").body == b""
    assert env.logs(rid, attempt=2).body == b""
    stamped = lines_of(env.logs(rid, container="main", timestamps="true").body.decode())
    assert [l.split(" ", 1)[1] for l in stamped] == [f"m{i}" for i in range(1, 6)]
    third = stamped[2].split(" ", 1)[0]
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$", third)
    assert env.logs(rid, container="main", since=third).body == b"m3\nm4\nm5\n"
    assert env.logs(rid, container="main", since="1h").body == b"m1\nm2\nm3\nm4\nm5\n"
    assert env.logs(rid, container="main", since="2000-01-01T00:00:00Z").body.count(b"\n") == 5
    assert env.logs(rid, container="main", since="2999-01-01T00:00:00Z").body == b""
    r = env.logs(rid, tail="-1", since="yesterday", follow="maybe", attempt="0", pod="a/b")
    assert r.status == 400
    assert r.header("Content-Type") == "application/problem+json"
    assert sorted(e["path"] for e in r.json()["errors"]) == [
        "attempt", "follow", "pod", "since", "tail"]


def test_follow_on_an_idle_run_ends_after_the_idle_timeout(env):
    rid = env.new_run()  # Running, but no pod ever appears
    start = time.time()
    r = env.logs(rid, follow="true", headers={"Accept": "text/event-stream"})
    took = time.time() - start
    assert r.status == 200
    assert 2.5 <= took < 15, took  # the idle timeout is 3 s
    body = r.body.decode()
    assert ": keepalive" in body
    assert sse_events(body)[-1]["data"] == ['{"reason":"idle"}']


def test_followers_are_bounded(env):
    rid = env.new_run()
    results = []

    def follow():
        results.append(env.logs(rid, follow="true").status)
    threads = [threading.Thread(target=follow) for _ in range(6)]
    for t in threads:
        t.start()
    wait_for(lambda: env.gw.req("GET", "/metrics").body.decode(), 30, "6 followers",
             cond=lambda m: "taugate_log_http_followers 6\n" in m)
    r = env.logs(rid, follow="true")
    assert r.status == 503 and r.header("Retry-After")
    assert env.logs(rid).status == 200  # reading without follow is not limited
    metrics = env.gw.req("GET", "/metrics").body.decode()
    assert "taugate_log_http_followers 6" in metrics
    for t in threads:
        t.join(30)
    assert results == [200] * 6


def test_metrics_and_checkpoints(env):
    rid = env.new_run()
    script = "\n".join([
        "echo 'TAU_METRIC {\"_step\": 1, \"loss\": 2.5, \"acc\": 0.1}'",
        "echo 'TAU_METRIC {\"_step\": 2, \"loss\": 1.5, \"acc\": \"NaN\"}'",
        "echo '##tau-metric {\"_step\": 3, \"loss\": Infinity, \"note\": \"x\"}'",
        "echo 'TAU_METRIC {\"_step\": 4, \"loss\": 0.5, \"_timestamp\": 1700000000.25}'",
        "echo 'TAU_METRIC {\"_step\": 4.5, \"loss\": 9}'",          # refused: real step
        "echo 'TAU_METRIC {\"loss\": oops}'",                       # refused: bad JSON
        "echo '(worker pid=7) TAU_METRIC {\"_step\": 5, \"loss\": 0.25}'",
        "echo 'TAU_CHECKPOINT {\"path\": \"/output/ckpt/step-2\", \"step\": 2}'",
        "sleep 0.05",
        "echo 'TAU_CHECKPOINT {\"path\": \"/output/ckpt/step-4\", \"step\": 4}'",
        "sleep 0.05",
        "echo 'TAU_CHECKPOINT {\"path\": \"/output/ckpt/step-2\", \"step\": 3}'",
        "echo 'TAU_CHECKPOINT {\"step\": 9}'",                      # refused: no path
    ])
    env.start_pod(rid, "alpha", [("main", script)])
    env.wait_log_done(rid)
    r = env.gw.req("GET", f"/v1/runs/{rid}/metrics")
    assert r.status == 200, r
    items = {m["name"]: m for m in r.json()["items"]}
    assert sorted(items) == ["acc", "loss"]
    loss = items["loss"]
    assert loss["count"] == 5 and loss["non_finite"] == 1
    assert loss["min"] == 0.25 and loss["max"] == 2.5
    assert loss["min_step"] == 1 and loss["max_step"] == 5
    assert loss["latest"]["step"] == 5 and loss["latest"]["value"] == 0.25
    acc = items["acc"]
    assert acc["count"] == 2 and acc["non_finite"] == 1 and acc["max"] == 0.1
    # points, paged
    p1 = env.gw.req("GET", f"/v1/runs/{rid}/metrics?name=loss&limit=2").json()
    assert [p["step"] for p in p1["items"]] == [1, 2] and p1["next_cursor"]
    p2 = env.gw.req("GET", f"/v1/runs/{rid}/metrics?name=loss&limit=2&cursor="
                    + p1["next_cursor"]).json()
    assert [p["step"] for p in p2["items"]] == [3, 4]
    assert p2["items"][0]["value"] is None and p2["items"][0]["raw"] == "Infinity"
    assert p2["items"][1]["at"] == "2023-11-14T22:13:20.250000Z"
    p3 = env.gw.req("GET", f"/v1/runs/{rid}/metrics?name=loss&limit=2&cursor="
                    + p2["next_cursor"]).json()
    assert [p["step"] for p in p3["items"]] == [5] and p3["next_cursor"] is None
    nan = env.gw.req("GET", f"/v1/runs/{rid}/metrics?name=acc").json()["items"]
    assert nan[1]["raw"] == "NaN" and nan[1]["value"] is None
    assert env.gw.req("GET", f"/v1/runs/{rid}/metrics?name=nope").json()["items"] == []
    assert env.gw.req("GET", f"/v1/runs/{rid}/metrics?attempt=2").json()["items"] == []
    bad = env.gw.req("GET", f"/v1/runs/{rid}/metrics?limit=0&cursor=@@&attempt=x")
    assert bad.status == 400 and len(bad.json()["errors"]) == 3
    # checkpoints: step-2 was reported again (upsert), so it is the newest
    ck = env.gw.req("GET", f"/v1/runs/{rid}/checkpoints").json()
    assert ck["latest"] == {"path": "/output/ckpt/step-2"}
    assert len(ck["items"]) == 1 and ck["items"][0]["attempt"] == 1
    assert [(c["path"], c["step"]) for c in ck["items"][0]["items"]] == [
        ("/output/ckpt/step-2", 3), ("/output/ckpt/step-4", 4)]
    prom = env.gw.req("GET", "/metrics").body.decode()
    invalid = int(re.search(r"^taugate_log_markers_invalid_total (\d+)$", prom, re.M).group(1))
    assert invalid >= 3
    assert re.search(r"^taugate_log_bytes_stored_total [1-9]\d*$", prom, re.M)
    assert re.search(r"^taugate_log_followers \d+$", prom, re.M)
    assert re.search(r"^taugate_log_follow_errors_total \d+$", prom, re.M)


def test_checkpoints_of_a_run_without_any(env):
    rid = env.new_run()
    assert env.gw.req("GET", f"/v1/runs/{rid}/checkpoints").json() == {"latest": None,
                                                                        "items": []}
    assert env.gw.req("GET", f"/v1/runs/{rid}/metrics").json() == {"items": []}


def test_another_tenants_run_is_404(env):
    rid = env.new_run(ws="beta")
    env.start_pod(rid, "beta", [("main", "echo secret; echo 'TAU_METRIC {\"x\": 1}'")])
    env.wait_log_done(rid)
    alice, bob = tokens.mint("alice"), tokens.mint("bob")
    for path in ("logs", "metrics", "checkpoints", "logs?follow=true"):
        r = env.gw.req("GET", f"/v1/runs/{rid}/{path}", token=alice)
        assert r.status == 404, (path, r)
        assert b"secret" not in r.body
        assert env.gw.req("GET", f"/v1/runs/{rid}/{path}", token=None).status == 401
    assert env.gw.req("GET", f"/v1/runs/{rid}/logs", token=bob).body.startswith(b"secret\n")
    assert env.gw.req("GET", f"/v1/runs/{rid}/metrics", token=bob).status == 200
    assert env.gw.req("GET", f"/v1/runs/{uuid.uuid4()}/logs", token=bob).status == 404
    assert env.gw.req("GET", "/v1/runs/not-a-uuid/logs", token=bob).status == 404


def test_revoked_viewer_stops_receiving_an_open_stream(env):
    """Issue #17: a viewer removed from the workspace kept receiving an open
    log stream. The stream re-checks access (every 5 s, from the tenancy
    cache that the membership change voided) and ends with a final event
    saying why, as the run-change stream does."""
    ws = "revoke"
    assert env.gw.req("POST", "/v1/admin/workspaces",
                      body={"name": ws, "namespace": ws}).status == 201
    member = env.gw.req("POST", f"/v1/admin/workspaces/{ws}/members",
                        body={"kind": "user", "subject": "carol", "role": "viewer"}).json()
    rid = env.new_run(ws=ws)
    pod = env.start_pod(rid, ws, [("main", "i=1; while [ $i -le 150 ]; do echo tick $i;"
                                           " i=$((i+1)); sleep 0.2; done")])
    conn = http.client.HTTPConnection("127.0.0.1", env.gw.port, timeout=15)
    conn.request("GET", f"/v1/runs/{rid}/logs?follow=true",
                 headers={"Authorization": "Bearer " + tokens.mint("carol"),
                          "Accept": "text/event-stream"})
    resp = conn.getresponse()
    assert resp.status == 200
    seen = b""
    while seen.count(b"data: tick") < 3:  # the stream is flowing
        seen += resp.read1(65536)
    removed = env.gw.req("DELETE", f"/v1/admin/workspaces/{ws}/members/{member['id']}")
    assert removed.status == 204, removed
    revoked_at = time.time()
    rest = b""
    while True:  # until the server ends the stream (the socket times out otherwise)
        part = resp.read1(65536)
        if not part:
            break
        rest += part
    conn.close()
    assert time.time() - revoked_at < 11.5
    events = sse_events((seen + rest).decode())
    assert events[-1] == {"id": None, "event": "end", "data": ['{"reason":"revoked"}']}
    # new requests were refused already
    assert env.logs(rid, token=tokens.mint("carol")).status == 404
    env.ks.delete(api_path("v1", "pods", ws, pod))  # no need to print on
    env.wait_log_done(rid, timeout=30)


def test_retention_prunes_old_chunks(env):
    env.sql("UPDATE workspaces SET log_retention_days = 1 WHERE name = 'old'")
    rid = env.new_run(ws="old", state="Succeeded")
    env.sql("INSERT INTO run_pods (run_id, attempt, namespace, pod, uid, phase, containers,"
            f" log_done) VALUES ('{rid}', 1, 'old', 'gone', 'u1', 'Succeeded', '{{main}}', true),"
            f" ('{rid}', 1, 'old', 'busy', 'u2', 'Pending', '{{main}}', false)")
    for pod, seq, age in (("gone", 1, "3 days"), ("gone", 2, "1 hour"), ("busy", 1, "3 days")):
        env.sql("INSERT INTO log_chunks (run_id, attempt, pod, container, seq, lines, content,"
                f" sha256, created_at) VALUES ('{rid}', 1, '{pod}', 'main', {seq}, 1,"
                f" 'x\n', 'h', now() - interval '{age}')")
    # 'busy' is Pending (so not collected), and its log is not complete: kept

    def left():
        return env.sql(f"SELECT string_agg(pod || seq, ',' ORDER BY pod, seq) FROM log_chunks"
                       f" WHERE run_id = '{rid}'")
    env.ks.wait_for(left, cond=lambda v: v == "busy1,gone2", timeout=15, what="pruned")
