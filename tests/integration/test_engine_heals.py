"""The engine heals itself (issue #16): whatever was missed while the
database, the pool or the cluster was away is repaired without a gateway
restart; the gateway starts before its database; leader loops move to another
replica within 5 s; evidence keys outlive the process that used them.

Every wait here is on a fact (a state in the database or the cluster, a
metric) with a deadline, never on the clock."""
import base64
import contextlib
import os
import re
import signal
import subprocess
import time

import pytest

from gateway import Gateway
from kubesim import KubeSim
from paths import BUILD, SHARED
from pg import Postgres, free_port
from wait import wait_for
from world import kind_cpu_cluster, kind_cpu_workspace

SPEC = open(os.path.join(SHARED, "conformance", "taugrid", "01-kind-smoke_tau.yaml")).read()
SCRIPT = base64.b64encode(b"#!/usr/bin/env bash\necho ok\n").decode()
ENDED = ("Succeeded", "Failed", "Cancelled")


def engine_env(ks, **more):
    env = {"TAUGATE_KUBE_API_URL": ks.url, "TAUGATE_ENGINE_RESYNC_S": "2",
           "TAUGATE_KUBE_MAX_RETRIES": "1", "TAUGATE_KUBE_TIMEOUT_MS": "3000"}
    env.update(more)
    return env


def batch(gw, n, name="heal"):
    """Submit n runs in one runs:batch request; their ids."""
    item = {"spec": SPEC.replace("name: tau-kind-smoke", f"name: {name}"),
            "files": {"train.sh": SCRIPT}}
    r = gw.req("POST", "/v1/workspaces/ray/runs:batch", body={"runs": [item] * n})
    assert r.status == 200, r
    ids = [x["run"]["id"] for x in r.json()["results"]]
    assert len(ids) == n
    return ids


def sql(pg, db_url, q):
    return pg.psql(q, db=db_url.rsplit("/", 1)[1])


def in_list(ids):
    return ",".join(f"'{i}'" for i in ids)


def count(pg, db_url, q):
    return int(sql(pg, db_url, q) or 0)


def jobs_complete(ks, ids):
    """How many of the runs' Jobs the cluster shows finished."""
    done = 0
    for j in ks.list("batch/v1", "jobs", "ray"):
        if j["metadata"]["labels"].get("taugate.io/run-id") in ids:
            conds = {c["type"]: c["status"] for c in j.get("status", {}).get("conditions", [])}
            done += conds.get("Complete") == "True" or conds.get("Failed") == "True"
    return done


def metric(gw, name):
    text = gw.req("GET", "/metrics").body.decode()
    m = re.search(r"^" + re.escape(name) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


@pytest.fixture(scope="module")
def ks():
    k = KubeSim(simulated=True, extra_args=["--sim-duration", "2"]).start()
    kind_cpu_cluster(k, cpu="100", memory="1000Gi")
    yield k
    k.cleanup()


# ---- the database -------------------------------------------------------------------------


def test_gateway_started_before_postgres_becomes_ready_without_restart():
    db = Postgres().init()  # initialised, not running: the gateway finds nobody there
    gw = Gateway(BUILD, db.url)
    try:
        gw.start(probe="/healthz")
        r = gw.req("GET", "/readyz")
        assert r.status == 503 and r.header("Retry-After"), r
        problem = r.json()
        assert problem["type"].endswith("/not-ready")
        missing = {e["path"] for e in problem["errors"]}
        assert {"database", "migrations"} <= missing, problem
        assert "cluster not configured" in problem["detail"], problem
        # requests that need the database answer 503, naming why
        r = gw.req("GET", "/v1/workspaces")
        assert r.status == 503 and "starting" in r.json()["detail"], r
        db.start()
        db.create_db()
        r = wait_for(lambda: gw.req("GET", "/readyz"), 30, "readiness",
                     cond=lambda x: x.status == 200)
        assert r.json() == {"status": "ready", "database": "ok", "migrations": "current",
                            "policy": "loaded", "cluster": "not configured"}
        assert gw.proc.poll() is None  # the same process
        assert gw.req("GET", "/v1/workspaces").status == 200
    finally:
        assert gw.stop() == 0, gw.logs()[-3000:]
        gw.close()
        db.destroy()


def test_postgres_down_while_runs_finish_every_run_ends_and_is_sealed(pg, db_url, ks):
    gw = Gateway(BUILD, db_url, extra_env=engine_env(ks)).start()
    try:
        kind_cpu_workspace(gw, ok=(201, 409))
        ids = batch(gw, 12, "pg-down")
        # every run has reached the cluster (on a loaded machine the first may
        # already have finished when the last gets there)
        wait_for(lambda: count(
            pg, db_url, f"SELECT count(*) FROM runs WHERE id IN ({in_list(ids)})"
                        " AND state IN ('Queued', 'Admitted', 'Running', 'Succeeded')")
                 == len(ids), 60, "the runs in the cluster")
        pid = gw.proc.pid
        pg.stop()
        try:
            # what was asked meanwhile gets a clean 503
            r = gw.req("POST", "/v1/workspaces/ray/runs:batch",
                       body={"runs": [{"spec": SPEC, "files": {"train.sh": SCRIPT}}]})
            assert r.status == 503, r
            # every run ends in the cluster while the gateway cannot record it
            wait_for(lambda: jobs_complete(ks, set(ids)) == len(ids), 60, "the Jobs to finish")
        finally:
            pg.start()
        wait_for(lambda: count(
            pg, db_url, f"SELECT count(*) FROM runs WHERE id IN ({in_list(ids)})"
                        " AND state IN ('Succeeded', 'Failed', 'Cancelled')") == len(ids),
                 60, "every run to end")
        wait_for(lambda: count(
            pg, db_url, f"SELECT count(*) FROM evidence WHERE run_id IN ({in_list(ids)})")
                 == len(ids), 60, "every run sealed")
        assert sql(pg, db_url, f"SELECT DISTINCT state FROM runs WHERE id IN ({in_list(ids)})") \
            == "Succeeded"
        assert gw.proc.pid == pid and gw.proc.poll() is None  # no restart
    finally:
        assert gw.stop() == 0, gw.logs()[-3000:]
        gw.close()


def test_pool_exhausted_while_watch_events_arrive_no_transition_is_lost(pg, db_url, ks):
    # two connections, four workers: while a lock holds two of them in their
    # statements, the others find no connection for the events that arrive
    gw = Gateway(BUILD, db_url, extra_env=engine_env(
        ks, TAUGATE_DB_POOL_SIZE="2", TAUGATE_ENGINE_WORKERS="4",
        TAUGATE_ENGINE_RESYNC_S="30")).start()
    nodes = [n["metadata"]["name"] for n in ks.list("v1", "nodes")]
    held = contextlib.ExitStack()
    try:
        kind_cpu_workspace(gw, ok=(201, 409))
        # no node takes a pod until the lock is held: every run is admitted
        # by Kueue, and its Running and Succeeded both happen during the hold
        for node in nodes:
            ks.control(f"nodes/{node}/cordon")
        ids = batch(gw, 8, "pool-out")
        wait_for(lambda: count(
            pg, db_url, f"SELECT count(*) FROM runs WHERE id IN ({in_list(ids)})"
                        " AND state = 'Admitted'") == len(ids), 60, "the runs admitted")
        errors_before = metric(gw, 'taugate_engine_apply_total{result="error"}')
        dbname = db_url.rsplit("/", 1)[1]
        release = held.enter_context(pg.table_locked(dbname, "run_events", mode="EXCLUSIVE"))
        for node in nodes:
            ks.control(f"nodes/{node}/uncordon")
        wait_for(lambda: jobs_complete(ks, set(ids)) == len(ids), 60, "the Jobs to finish")
        # the applies that found no connection failed, and were not dropped
        wait_for(lambda: metric(gw, 'taugate_engine_apply_total{result="error"}') > errors_before,
                 60, "applies refused by the exhausted pool")
        assert count(pg, db_url, f"SELECT count(*) FROM runs WHERE id IN ({in_list(ids)})"
                                 " AND state = 'Admitted'") == len(ids)
        release()
        wait_for(lambda: count(
            pg, db_url, f"SELECT count(*) FROM runs WHERE id IN ({in_list(ids)})"
                        " AND state = 'Succeeded'") == len(ids), 60, "every run to succeed")
        # each went through Running to Succeeded in its history
        assert count(pg, db_url, "SELECT count(DISTINCT run_id) FROM run_events WHERE run_id IN"
                                 f" ({in_list(ids)}) AND state = 'Running'") == len(ids)
    finally:
        held.close()
        for node in nodes:
            ks.control(f"nodes/{node}/uncordon")
        assert gw.stop() == 0, gw.logs()[-3000:]
        gw.close()


def test_objects_applied_out_of_order_still_record_kueues_admission(pg, db_url, ks):
    # the workspace and the runs first, through a gateway without an engine
    # (the starved one below answers most requests 503, as it should)
    setup = Gateway(BUILD, db_url, extra_env=engine_env(ks, TAUGATE_ENGINE="false")).start()
    try:
        kind_cpu_workspace(setup, ok=(201, 409))
        ids = batch(setup, 20, "out-of-order")
    finally:
        assert setup.stop() == 0, setup.logs()[-3000:]
        setup.close()
    # one connection for four workers: applies that find none are put back
    # with a delay, so Jobs and pods are applied before their Workloads
    gw = Gateway(BUILD, db_url, extra_env=engine_env(
        ks, TAUGATE_DB_POOL_SIZE="1", TAUGATE_DB_CHECKOUT_TIMEOUT_MS="20",
        TAUGATE_ENGINE_WORKERS="4")).start()
    try:
        wait_for(lambda: count(
            pg, db_url, f"SELECT count(*) FROM runs WHERE id IN ({in_list(ids)})"
                        " AND state = 'Succeeded'") == len(ids), 90, "every run to succeed")
        # each admission is Kueue's, with the ClusterQueue that admitted it
        assert sql(pg, db_url, "SELECT DISTINCT source || '/' || reason FROM run_events"
                               f" WHERE run_id IN ({in_list(ids)}) AND state = 'Admitted'") \
            == "kueue/Admitted"
        assert count(pg, db_url, "SELECT count(*) FROM run_attempts WHERE run_id IN"
                                 f" ({in_list(ids)}) AND queue_info->>'cluster_queue' <> ''") \
            == len(ids)
    finally:
        assert gw.stop() == 0, gw.logs()[-3000:]
        gw.close()


def test_runs_waiting_to_be_sealed_show_in_the_sealing_backlog(pg, db_url, ks):
    # no log collector and an hour of log grace: ended runs wait for logs
    # that never come, as behind a sealer that cannot work
    env = engine_env(ks, TAUGATE_LOGS_COLLECTOR="false", TAUGATE_EVIDENCE_LOG_GRACE_S="3600",
                     TAUGATE_PLATFORM_METRICS_CACHE_MS="0")
    gw = Gateway(BUILD, db_url, extra_env=env).start()
    try:
        kind_cpu_workspace(gw, ok=(201, 409))
        ids = batch(gw, 3, "backlog")
        wait_for(lambda: count(
            pg, db_url, f"SELECT count(*) FROM runs WHERE id IN ({in_list(ids)})"
                        " AND state = 'Succeeded'") == len(ids), 60, "the runs to succeed")
        pending = count(pg, db_url, "SELECT count(*) FROM evidence_queue")
        assert pending >= len(ids)
        assert metric(gw, "taugate_evidence_pending_runs") == pending
        wait_for(lambda: metric(
            gw, "taugate_evidence_oldest_pending_age_seconds") > 0, 60, "the backlog to age")
    finally:
        assert gw.stop() == 0, gw.logs()[-3000:]
        gw.close()
    # with the log collector back, the logs are collected and the runs sealed
    gw = Gateway(BUILD, db_url,
                 extra_env=engine_env(ks, TAUGATE_PLATFORM_METRICS_CACHE_MS="0")).start()
    try:
        wait_for(lambda: count(
            pg, db_url, f"SELECT count(*) FROM evidence WHERE run_id IN ({in_list(ids)})")
                 == len(ids), 60, "the backlog to drain")
        gauge = re.compile(r"^taugate_evidence_pending_runs 0$", re.M)
        wait_for(lambda: gauge.search(
            gw.req("GET", "/metrics").body.decode()), 60, "the gauge to say so")
    finally:
        assert gw.stop() == 0, gw.logs()[-3000:]
        gw.close()


# ---- the cluster --------------------------------------------------------------------------


def test_cluster_restarted_with_runs_in_flight_every_run_ends(pg, db_url, tmp_path):
    k = KubeSim(simulated=True, port=free_port(), state_file=str(tmp_path / "state.json"),
                extra_args=["--sim-duration", "8"]).start()
    gw = None
    try:
        kind_cpu_cluster(k, cpu="100", memory="1000Gi")
        gw = Gateway(BUILD, db_url, extra_env=engine_env(k)).start()
        kind_cpu_workspace(gw, ok=(201, 409))
        ids = batch(gw, 10, "ks-restart")
        # half of them started and some still running (under load they start
        # over several seconds: some may end before the last one runs)
        wait_for(lambda: sql(
            pg, db_url, "SELECT count(*) FILTER (WHERE state IN ('Running', 'Succeeded',"
                        " 'Failed')) >= 5 AND count(*) FILTER (WHERE state = 'Running') >= 1"
                        f" FROM runs WHERE id IN ({in_list(ids)})"), 60, "runs in flight",
                 cond=lambda v: v == "t")
        k.stop()  # saves its state file; what runs is lost with it
        k.start()
        wait_for(lambda: count(
            pg, db_url, f"SELECT count(*) FROM runs WHERE id IN ({in_list(ids)})"
                        " AND state IN ('Succeeded', 'Failed', 'Cancelled')") == len(ids),
                 90, "every run to end")
        assert gw.proc.poll() is None  # no gateway restart
        wait_for(lambda: count(
            pg, db_url, f"SELECT count(*) FROM evidence WHERE run_id IN ({in_list(ids)})")
                 == len(ids), 60, "every run sealed")
    finally:
        if gw:
            assert gw.stop() == 0, gw.logs()[-3000:]
            gw.close()
        k.cleanup()


def test_a_transition_in_progress_leaves_its_runs_foreign_keys_free(pg, db_url, ks):
    # A transition holds its run while it writes the run's attempt. A pod
    # upsert writes that attempt too, then checks its pod's foreign key to
    # the run (FOR KEY SHARE). With the run held FOR UPDATE the check waited
    # for the transition, which waited for the attempt: a deadlock, broken by
    # PostgreSQL after a second (a dozen in 2,000 runs of the engine bench).
    gw = Gateway(BUILD, db_url, extra_env=engine_env(ks)).start()
    nodes = [n["metadata"]["name"] for n in ks.list("v1", "nodes")]
    dbname = db_url.rsplit("/", 1)[1]
    try:
        kind_cpu_workspace(gw, ok=(201, 409))
        for node in nodes:
            ks.control(f"nodes/{node}/cordon")
        [run] = batch(gw, 1, "key-share")
        wait_for(lambda: sql(pg, db_url, f"SELECT state FROM runs WHERE id = '{run}'"), 60,
                 "the run admitted", cond=lambda s: s == "Admitted")
        # the attempt's row held, as a pod upsert holds it within its statement
        with pg.transaction_open(dbname, "SELECT 1 FROM run_attempts WHERE run_id ="
                                         f" '{run}' FOR UPDATE"):
            for node in nodes:
                ks.control(f"nodes/{node}/uncordon")
            wait_for(lambda: count(pg, db_url, "SELECT count(*) FROM pg_stat_activity WHERE"
                                               " application_name = 'taugate' AND"
                                               " wait_event_type = 'Lock' AND query ~"
                                               " '^WITH run AS \\(UPDATE runs'"), 60,
                     "the transition to Running waiting for the attempt")
            # what the foreign key of a pod or event inserted now checks
            assert sql(pg, db_url, f"SELECT 1 FROM runs WHERE id = '{run}'"
                                   " FOR KEY SHARE NOWAIT") == "1"
        wait_for(lambda: sql(pg, db_url, f"SELECT state FROM runs WHERE id = '{run}'"), 60,
                 "the run to succeed", cond=lambda s: s == "Succeeded")
    finally:
        for node in nodes:
            ks.control(f"nodes/{node}/uncordon")
        assert gw.stop() == 0, gw.logs()[-3000:]
        gw.close()


def test_an_event_appended_after_waiting_for_its_run_follows_what_was_committed_meanwhile(
        pg, db_url):
    # The submitter records "Created" after it created the Job. An operator
    # (or another replica) holds the run and appends an event meanwhile. The
    # submitter's append waited for the run and then read the chain's end
    # with the snapshot taken before its wait: it took the same seq again,
    # failed on the unique key, and the Job's creation was tried once more.
    k = KubeSim(simulated=True).start()
    gw = None
    dbname = db_url.rsplit("/", 1)[1]
    try:
        kind_cpu_cluster(k, cpu="100", memory="1000Gi")
        # no watch event reaches the gateway: the submitter alone writes
        k.control("watches/stall", {"seconds": 600})
        setup = Gateway(BUILD, db_url, extra_env=engine_env(k, TAUGATE_ENGINE="false")).start()
        try:
            kind_cpu_workspace(setup, ok=(201, 409))
            [run] = batch(setup, 1, "chain-wait")
        finally:
            assert setup.stop() == 0, setup.logs()[-3000:]
            setup.close()
        with pg.transaction_open(
                dbname, f"SELECT 1 FROM runs WHERE id = '{run}' FOR UPDATE;"
                        " INSERT INTO run_events (run_id, seq, at, reason, message, source,"
                        " data, prev_hash, hash) SELECT run_id, 2, now(), 'Note', 'held',"
                        f" 'user', '{{}}', hash, repeat('0', 64) FROM run_events"
                        f" WHERE run_id = '{run}' AND seq = 1") as commit:
            gw = Gateway(BUILD, db_url, extra_env=engine_env(k)).start()
            wait_for(lambda: k.list("batch/v1", "jobs", "ray"), 60, "the Job created")
            wait_for(lambda: pg.lock_waiters(dbname), 60, "the submitter waiting for the run")
            commit()
        wait_for(lambda: sql(pg, db_url, "SELECT string_agg(seq || ':' || coalesce(reason, ''),"
                                         f" ' ' ORDER BY seq) FROM run_events"
                                         f" WHERE run_id = '{run}'"), 60,
                 "the Created event", cond=lambda s: "Created" in s) == \
            "1:Submitted 2:Note 3:Created"
        with open(pg.logfile) as f:
            assert f"Key (run_id, seq)=({run}," not in f.read()
    finally:
        if gw:
            assert gw.stop() == 0, gw.logs()[-3000:]
            gw.close()
        k.cleanup()


def test_submitter_waits_for_a_namespace_being_created(pg, db_url, ks):
    # no reconciler: the workspace's namespace does not exist until we make it
    gw = Gateway(BUILD, db_url, extra_env=engine_env(ks, TAUGATE_RECONCILE="false")).start()
    try:
        kind_cpu_workspace(gw, ok=(201, 409))
        for path, body in (("/v1/admin/workspaces", {"name": "late", "namespace": "late-ns",
                                                     "default_queue": "kind-cpu"}),
                           ("/v1/admin/workspaces/late/queues",
                            {"name": "kind-cpu", "cluster_queue": "kind-cpu-cq"})):
            assert gw.req("POST", path, body=body).status in (201, 409)
        assert gw.req("PATCH", "/v1/admin/profiles/kind-cpu-job",
                      body={"allowed_workspaces": ["ray", "late"]}).status == 200
        spec = SPEC.replace("namespace: ray", "namespace: late-ns")
        r = gw.req("POST", "/v1/workspaces/late/runs",
                   body={"spec": spec, "files": {"train.sh": SCRIPT}})
        assert r.status == 201, r
        run_id = r.json()["id"]
        run = wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}").json(), 60, "the reason",
                       cond=lambda x: x.get("reason") == "WaitingForCluster")
        assert run["state"] == "Accepted" and "not found" in run["message"], run
        ks.ensure_namespace("late-ns")
        ks.create({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                   "metadata": {"name": "kind-cpu", "namespace": "late-ns"},
                   "spec": {"clusterQueue": "kind-cpu-cq"}})
        run = wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}").json(), 90,
                       "the run to succeed", cond=lambda x: x["state"] in ENDED)
        assert run["state"] == "Succeeded", run
    finally:
        assert gw.stop() == 0, gw.logs()[-3000:]
        gw.close()


# ---- leadership ---------------------------------------------------------------------------


LEADER = ("taugate_kueue_reconcile_leader", "taugate_nodes_leader")


def leads(gw):
    try:
        return {m: metric(gw, m) == 1 for m in LEADER}
    except OSError:
        return {m: False for m in LEADER}


def test_leader_killed_the_other_replica_holds_every_leader_loop_within_5s(db_url, ks):
    env = engine_env(ks)
    a = Gateway(BUILD, db_url, extra_env=env).start()
    b = Gateway(BUILD, db_url, extra_env=env).start()
    try:
        kind_cpu_workspace(a, ok=(201, 409))
        # every loop has one holder
        wait_for(lambda: all(leads(a)[m] + leads(b)[m] == 1 for m in LEADER), 30,
                 "one holder per loop")
        victim = a if any(leads(a).values()) else b
        other = b if victim is a else a
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait()
        t0 = time.monotonic()
        wait_for(lambda: all(leads(other).values()), 5,
                 "the other replica to hold every leader loop")
        took = time.monotonic() - t0
        assert took <= 5, took
        # and a clean shutdown hands them back at once
        victim.start()
        victim.proc.send_signal(signal.SIGTERM)  # not the leader: nothing to hand over
        assert victim.proc.wait(20) == 0
        victim.start()
        other.proc.send_signal(signal.SIGTERM)
        assert other.proc.wait(20) == 0
        wait_for(lambda: all(leads(victim).values()), 5, "the restarted replica to take over")
    finally:
        for g in (a, b):
            if g.proc and g.proc.poll() is None:
                g.stop()
            g.close()


def test_a_clean_stop_ends_the_idle_watches_at_once(db_url, ks):
    """SIGTERM ends the informers' idle watches at once: the kube client shuts
    their sockets down when their stop flag is raised. libcurl looks at a stop
    flag only about once a second on an idle transfer, and the nodes loop and
    the observer stop one after the other, so a stop used to take 2 s."""
    gw = Gateway(BUILD, db_url, extra_env=engine_env(ks)).start()
    try:
        # the nodes loop leads and both its informers have listed: every
        # informer is in its watch, idle
        wait_for(lambda: leads(gw)["taugate_nodes_leader"], 30, "the nodes loop to lead")
        wait_for(lambda: gw.req("GET", "/v1/admin/nodes").json()["items"], 30,
                 "the fleet to be listed")
        t0 = time.monotonic()
        gw.proc.send_signal(signal.SIGTERM)
        assert gw.proc.wait(20) == 0
        took = time.monotonic() - t0
        assert took < 1.0, f"the stop took {took:.2f} s"
    finally:
        if gw.proc and gw.proc.poll() is None:
            gw.stop()
        gw.close()


# ---- evidence keys, and sealing without a cluster -----------------------------------------


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("rotation")
    out = []
    for name in ("old.pem", "new.pem"):
        path = str(d / name)
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", path], check=True)
        os.chmod(path, 0o600)
        out.append(path)
    return out


def cancelled_and_sealed(gw, pg, db_url):
    """A run cancelled before any cluster took it, sealed: (id, envelope)."""
    r = gw.req("POST", "/v1/workspaces/ray/runs", body={"spec": SPEC, "files": {"train.sh": SCRIPT}})
    assert r.status == 201, r
    run_id = r.json()["id"]
    run = wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}").json(), 30, "the waiting reason",
                   cond=lambda x: x.get("reason") == "WaitingForCluster")
    assert run["state"] == "Accepted" and "no" in run["message"] and "cluster" in run["message"]
    assert gw.req("POST", f"/v1/runs/{run_id}:cancel").status == 200
    ev = wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}/evidence").json(), 30, "the seal",
                  cond=lambda x: x.get("sealed"))
    return run_id, ev


def openssl_verifies(ev, pem, tmp):
    rec, sig, pub = (os.path.join(tmp, n) for n in ("record.json", "record.sig", "pub.pem"))
    with open(rec, "w") as f:
        f.write(ev["canonical"])
    with open(sig, "wb") as f:
        f.write(base64.b64decode(ev["signature"]))
    with open(pub, "w") as f:
        f.write(pem)
    return subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", pub, "-rawin",
                           "-in", rec, "-sigfile", sig], capture_output=True).returncode == 0


def test_record_sealed_before_a_key_rotation_still_verifies(pg, db_url, keys, tmp_path):
    old, new = keys
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_EVIDENCE_SIGNING_KEY": old}).start()
    try:
        kind_cpu_workspace(gw, ok=(201, 409))
        run_id, ev = cancelled_and_sealed(gw, pg, db_url)  # no cluster: sealed all the same
        old_id = ev["key_id"]
        assert "ephemeral" not in ev["record"]["seal"]
    finally:
        assert gw.stop() == 0
        gw.close()
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_EVIDENCE_SIGNING_KEY": new}).start()
    try:
        pk = gw.req("GET", "/v1/evidence/public-key", token=None).json()
        assert pk["key_id"] != old_id and not pk["ephemeral"]
        history = {k["key_id"]: k for k in pk["keys"]}
        assert {old_id, pk["key_id"]} <= set(history)
        # the old record verifies with the old key, served from the history ...
        one = gw.req("GET", f"/v1/evidence/public-key?key_id={old_id}", token=None)
        assert one.status == 200 and one.json()["public_key_pem"] == history[old_id][
            "public_key_pem"]
        assert gw.req("GET", "/v1/evidence/public-key?key_id=0000000000000000",
                      token=None).status == 404
        ev = gw.req("GET", f"/v1/runs/{run_id}/evidence").json()
        assert ev["key_id"] == old_id
        assert openssl_verifies(ev, history[old_id]["public_key_pem"], str(tmp_path))
        assert not openssl_verifies(ev, pk["public_key_pem"], str(tmp_path))
        # ... and `taugate verify` with the new key configured finds it there
        env = dict(gw.env(), TAUGATE_EVIDENCE_SIGNING_KEY=new)
        out = subprocess.run([os.path.join(BUILD, "taugate"), "verify", run_id], env=env,
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        assert f"key {old_id}" in out.stdout and "key history" in out.stdout
        assert out.stdout.rstrip().endswith("verified")
    finally:
        assert gw.stop() == 0
        gw.close()
    # a gateway without a key seals with an ephemeral one, and says so
    gw = Gateway(BUILD, db_url).start()
    try:
        run_id, ev = cancelled_and_sealed(gw, pg, db_url)
        assert ev["record"]["seal"]["ephemeral"] is True
        pk = gw.req("GET", "/v1/evidence/public-key", token=None).json()
        assert pk["ephemeral"] and pk["key_id"] == ev["key_id"]
        out = subprocess.run([os.path.join(BUILD, "taugate"), "verify", run_id],
                             env=gw.env(), capture_output=True, text=True)
        assert out.returncode == 0 and "ephemeral" in out.stdout, out.stdout + out.stderr
    finally:
        assert gw.stop() == 0
        gw.close()
