"""The engine's queries at 100,000 runs: every statement the gateway runs
while a few runs go from submission to their sealed record, over tables
holding 100,000 runs (their attempts, events, pods and log streams), uses an
index on the big tables: no sequential scan of runs, run_attempts,
run_events, run_pods, log_streams, log_chunks, outbox or evidence_queue.

The plans are PostgreSQL's own (auto_explain logs the plan of every statement
as it runs, as JSON), so the test reads what really executed, with the
generic plans prepared statements end up with, not a hand-written copy of the
SQL."""
import base64
import glob
import json
import os

import pytest

from gateway import Gateway
from kubesim import KubeSim
from paths import BUILD, SHARED
from pg import Postgres
from world import kind_cpu_cluster, kind_cpu_workspace
from wait import wait_for

ROWS = 100_000
BIG = {"runs", "run_attempts", "run_events", "run_pods", "log_streams", "log_chunks", "outbox",
       "evidence_queue"}
SPEC = open(os.path.join(SHARED, "conformance", "taugrid", "01-kind-smoke_tau.yaml")).read()
SCRIPT = base64.b64encode(b"#!/usr/bin/env bash\necho ok\n").decode()

# Runs that came before: 95% ended (with pods, log streams and chunks,
# queued for sealing as their trigger would have, put off by a day), 5%
# accepted with their create not due for a day (so the engine leaves them
# alone). The rows agree with each other by construction, so the seed runs
# without triggers and foreign-key checks (session_replication_role =
# replica): checking 500,000 keys one row at a time and logging 100,000
# run changes took half of the seed's time.
SEED = f"""
SET auto_explain.log_min_duration = -1;
SET session_replication_role = replica;
INSERT INTO runs (id, workspace, name, owner, engine, spec_text, resolved, manifests, config_hash,
                  state, created_at, finished_at)
  SELECT md5('seed' || i)::uuid, 'ray', 'seed', 'seed', 'job', 'name: seed', '{{}}', '[]', 'h',
         CASE WHEN i % 20 = 0 THEN 'Accepted' ELSE 'Succeeded' END, now() - interval '2 days',
         CASE WHEN i % 20 = 0 THEN NULL ELSE now() - interval '1 day' END
  FROM generate_series(1, {ROWS}) i;
INSERT INTO run_attempts (run_id, attempt, state, namespace, object_name, object_kind)
  SELECT md5('seed' || i)::uuid, 1, CASE WHEN i % 20 = 0 THEN 'Accepted' ELSE 'Succeeded' END,
         'ray', 'seed-' || i, 'Job' FROM generate_series(1, {ROWS}) i;
INSERT INTO run_events (run_id, seq, state, source, hash)
  SELECT md5('seed' || i)::uuid, s, 'Accepted', 'seed', md5(i || '-' || s)
  FROM generate_series(1, {ROWS}) i, generate_series(1, 3) s;
INSERT INTO run_pods (run_id, attempt, namespace, pod, uid, phase, containers, started_at,
                      finished_at, log_done)
  SELECT md5('seed' || i)::uuid, 1, 'ray', 'seed-' || i, md5('uid' || i), 'Succeeded', '{{main}}',
         now() - interval '1 day', now() - interval '1 day', true
  FROM generate_series(1, {ROWS}) i WHERE i % 20 <> 0;
INSERT INTO log_streams (namespace, pod, uid, container, done)
  SELECT 'ray', 'seed-' || i, md5('uid' || i), 'main', true
  FROM generate_series(1, {ROWS}) i WHERE i % 20 <> 0;
INSERT INTO log_chunks (run_id, attempt, pod, container, seq, lines, content, sha256)
  SELECT md5('seed' || i)::uuid, 1, 'seed-' || i, 'main', 1, 1, 'ok', md5('c' || i)
  FROM generate_series(1, {ROWS}) i WHERE i % 20 <> 0;
INSERT INTO outbox (run_id, attempt, action, not_before)
  SELECT md5('seed' || i)::uuid, 1, 'create', now() + interval '1 day'
  FROM generate_series(1, {ROWS}) i WHERE i % 20 = 0;
INSERT INTO evidence_queue (run_id, not_before)
  SELECT md5('seed' || i)::uuid, now() + interval '1 day'
  FROM generate_series(1, {ROWS}) i WHERE i % 20 <> 0;
ANALYZE;
"""


def plans(datadir, since):
    """(query, plan) of every statement the gateway ran after `since` (a
    log timestamp: earlier ones ran on tables still small), from the JSON
    log."""
    out = []
    for path in sorted(glob.glob(os.path.join(datadir, "log", "*.json"))):
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                msg = rec.get("message", "")
                if rec.get("application_name") != "taugate" or "plan:" not in msg or \
                        rec.get("timestamp", "") <= since:
                    continue
                doc = json.loads(msg.split("plan:", 1)[1])
                out.append((doc.get("Query Text", ""), doc["Plan"]))
    return out


def seq_scans(plan):
    """The relations a plan reads with a sequential scan."""
    found = []
    if plan.get("Node Type") == "Seq Scan":
        found.append(plan.get("Relation Name"))
    for sub in plan.get("Plans", []):
        found += seq_scans(sub)
    return found


@pytest.fixture(scope="module")
def explained_pg():
    """A PostgreSQL server that logs the plan of every statement."""
    server = Postgres().init()
    with open(os.path.join(server.datadir, "postgresql.conf"), "a") as f:
        f.write("session_preload_libraries = 'auto_explain'\n"
                "auto_explain.log_min_duration = 0\n"
                "auto_explain.log_format = 'json'\n"
                "auto_explain.log_nested_statements = on\n"
                "logging_collector = on\n"
                "log_destination = 'jsonlog'\n")
    server.start()
    server.create_db()
    yield server
    server.destroy()


def test_engine_queries_use_indexes_at_100k_runs(explained_pg):
    pg = explained_pg
    ks = kind_cpu_cluster(KubeSim(simulated=True).start(), cpu="100", memory="1000Gi")
    gw = Gateway(BUILD, pg.url, extra_env={"TAUGATE_KUBE_API_URL": ks.url,
                                           "TAUGATE_ENGINE_RESYNC_S": "1"}).start()
    try:
        kind_cpu_workspace(gw)
        pg.psql(SEED)
        # the log's own clock and format: "2026-01-02 03:04:05.678 UTC"
        since = pg.psql("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC',"
                        " 'YYYY-MM-DD HH24:MI:SS.MS') || ' UTC'")
        item = {"spec": SPEC, "files": {"train.sh": SCRIPT}}
        r = gw.req("POST", "/v1/workspaces/ray/runs:batch", body={"runs": [item] * 3})
        assert r.status == 200, r
        ids = [x["run"]["id"] for x in r.json()["results"]]
        q = "SELECT count(*) FROM evidence WHERE run_id IN (" + ",".join(
            f"'{i}'" for i in ids) + ")"
        wait_for(lambda: pg.psql(q), 90, "the three runs sealed", cond=lambda n: n == "3",
                 detail=lambda: gw.logs()[-3000:])
    finally:
        assert gw.stop() == 0
        gw.close()
        ks.cleanup()
    seen = plans(pg.datadir, since)
    assert len(seen) > 100, "auto_explain logged too little to judge"
    bad = {}
    for query, plan in seen:
        for rel in seq_scans(plan):
            if rel in BIG:
                bad.setdefault(" ".join(query.split())[:300], set()).add(rel)
    assert not bad, "sequential scans of big tables:\n" + "\n".join(
        f"{sorted(rels)}: {q}" for q, rels in bad.items())
