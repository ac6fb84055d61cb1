"""Faults: the gateway killed during a burst of submissions, the cluster API
down while submissions back off, PostgreSQL restarted. Nothing accepted is
lost or doubled."""
import base64
import collections
import os
import signal
import threading
import time
import uuid

from gateway import Gateway
from kubesim import KubeSim
from paths import BUILD, SHARED
from pg import free_port
from wait import wait_for
from world import kind_cpu_cluster, kind_cpu_workspace

SPEC = open(os.path.join(SHARED, "conformance", "taugrid",
                         "01-kind-smoke_tau.yaml")).read()
SCRIPT = base64.b64encode(b"#!/usr/bin/env bash\necho ok\n").decode()


def setup_cluster(ks):
    # room for every burst: the kind-cpu layout with a larger quota
    kind_cpu_cluster(ks, cpu="100", memory="1000Gi")


def submit(gw, key, name="burst"):
    return gw.req("POST", "/v1/workspaces/ray/runs", timeout=10,
                  headers={"Idempotency-Key": key},
                  body={"spec": SPEC.replace("name: tau-kind-smoke", f"name: {name}"),
                        "files": {"train.sh": SCRIPT}})


def jobs_by_run(ks):
    count = collections.Counter()
    for j in ks.list("batch/v1", "jobs", "ray"):
        count[j["metadata"]["labels"].get("taugate.io/run-id")] += 1
    return count


def test_kill_9_during_a_burst_loses_and_doubles_nothing(pg, db_url):
    ks = KubeSim(simulated=True).start()
    setup_cluster(ks)
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": ks.url,
                                           "TAUGATE_THREADS": "4",
                                           "TAUGATE_DB_POOL_SIZE": "8"}).start()
    try:
        kind_cpu_workspace(gw, ok=(201, 409))
        keys = [f"burst-{i}-{uuid.uuid4()}" for i in range(500)]
        accepted = {}
        refused = []  # submissions the dead gateway did not answer
        lock = threading.Lock()

        def client(mine):
            for key in mine:
                for _ in range(200):  # retry until the gateway takes it
                    try:
                        r = submit(gw, key)
                        if r.status == 201:
                            with lock:
                                accepted[key] = r.json()["id"]
                            break
                    except OSError:
                        with lock:
                            refused.append(key)
                    time.sleep(0.05)

        threads = [threading.Thread(target=client, args=(keys[i::8],)) for i in range(8)]
        for t in threads:
            t.start()
        wait_for(lambda: len(accepted) >= 150, 60, "150 accepted submissions")
        gw.proc.send_signal(signal.SIGKILL)
        gw.proc.wait()
        down = len(refused)
        wait_for(lambda: len(refused) >= down + 8, 20, "clients refused by the killed gateway")
        gw.start()
        for t in threads:
            t.join(timeout=180)
        assert len(accepted) == 500
        # every key maps to one run, and retries replayed the same run (the
        # module's other tests store runs of their own keys)
        db = db_url.rsplit("/", 1)[1]
        burst = "FROM runs WHERE idempotency_key LIKE 'burst-%'"
        rows = pg.psql(f"SELECT idempotency_key, count(*) {burst} GROUP BY 1 HAVING count(*) > 1",
                       db=db)
        assert rows == ""
        assert pg.psql(f"SELECT count(*), count(DISTINCT id) {burst}", db=db) == "500|500"
        assert set(accepted.values()) == set(pg.psql(f"SELECT id {burst}", db=db).split())
        # and every run reached the cluster exactly once
        wait_for(lambda: len(jobs_by_run(ks)) >= 500, 240, "500 Jobs in the cluster")
        per_run = jobs_by_run(ks)
        assert set(per_run) == set(accepted.values())
        assert max(per_run.values()) == 1
    finally:
        assert gw.stop() == 0
        gw.close()
        ks.cleanup()


def test_cluster_down_through_retries_then_back(pg, db_url, tmp_path):
    # same port and a state file: the cluster comes back as it was
    ks = KubeSim(port=free_port(), state_file=str(tmp_path / "kubesim-state.json")).start()
    setup_cluster(ks)
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": ks.url,
                                           "TAUGATE_KUBE_MAX_RETRIES": "0"}).start()
    try:
        # the module's database has the workspace when another test ran first
        kind_cpu_workspace(gw, ok=(201, 409))
        ks.stop()
        ids = [submit(gw, f"down-{i}", name="while-down").json()["id"] for i in range(5)]
        # the submitter fails against the dead API and backs off (0.5 s, 1 s,
        # 2 s, ...); once a submission has failed three times in a row, every
        # run is still waiting in the outbox and none has failed
        db = db_url.rsplit("/", 1)[1]
        listed = ", ".join(f"'{i}'" for i in ids)
        wait_for(lambda: pg.psql("SELECT max(tries) FROM outbox WHERE last_error IS NOT NULL"
                                 f" AND run_id IN ({listed})", db=db),
                 60, "a submission failing three times while the cluster is down",
                 cond=lambda v: v and int(v) >= 3)
        assert pg.psql(f"SELECT count(DISTINCT run_id) FROM outbox WHERE run_id IN ({listed})",
                       db=db) == "5"
        for i in ids:
            assert gw.req("GET", f"/v1/runs/{i}").json()["state"] != "Failed"
        ks.start()
        wait_for(lambda: all(jobs_by_run(ks).get(i) == 1 for i in ids), 120,
                 "every run submitted while the cluster was down")
        for i in ids:
            run = gw.req("GET", f"/v1/runs/{i}").json()
            assert run["state"] != "Failed", run
    finally:
        assert gw.stop() == 0
        gw.close()
        ks.cleanup()


def test_postgres_restart_engine_resumes(pg, db_url):
    ks = KubeSim().start()
    setup_cluster(ks)
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": ks.url}).start()
    try:
        kind_cpu_workspace(gw, ok=(201, 409))
        pg.stop()
        assert submit(gw, "pg-down").status == 503
        pg.start()
        wait_for(lambda: gw.req("GET", "/readyz").status == 200, 20, "readiness")
        r = submit(gw, "pg-back")
        assert r.status == 201
        run_id = r.json()["id"]
        wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}").json().get("state") == "Succeeded",
                 60, "the run submitted after the restart to succeed")
    finally:
        try:
            pg.psql("SELECT 1", db="postgres")
        except RuntimeError:
            pg.start()
        assert gw.stop() == 0
        gw.close()
        ks.cleanup()
