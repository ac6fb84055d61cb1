#!/usr/bin/env python3
"""Benchmark: run submissions and run reads against PostgreSQL doing the same
work directly, measured in the same run on the same durable database.

  submissions/s: wrk POSTing tau.yaml (16 connections) vs pgbench running the
                 same two-insert transaction (run row + outbox row), 16 clients
  GET /v1/runs/{id}: wrk vs pgbench's primary-key select of the run row

Prints throughputs, p99 latencies and ratios (targets: submissions >= 0.8 of
pgbench, reads >= 0.6). Not a test: it asserts nothing."""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))

import tokens  # noqa: E402
from gateway import Gateway  # noqa: E402
from paths import BUILD, SHARED  # noqa: E402
from pg import Postgres, pg_bindir  # noqa: E402
from world import kind_cpu_workspace  # noqa: E402

DURATION = int(os.environ.get("BENCH_DURATION", "10"))
CONNS = 16


def wrk(url, script, seconds):
    out = subprocess.run(["wrk", "-t2", f"-c{CONNS}", f"-d{seconds}s", "--latency", "-s", script,
                          url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, float(p99.group(1)) * scale, int(non2xx.group(1)) if non2xx else 0


def pgbench(pg, script, seconds):
    cmd = [os.path.join(pg_bindir(), "pgbench"), "-n", "-c", str(CONNS), "-j", "2", "-T",
           str(seconds), "-r", "-f", script, "-h", "127.0.0.1", "-p", str(pg.port), "-U", pg.user,
           pg.dbname]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    lat = float(re.search(r"latency average = ([\d.]+) ms", out).group(1))
    return tps, lat


def main():
    spec = open(os.path.join(SHARED, "conformance", "taugrid", "01-kind-smoke_tau.yaml")).read()
    body = json.dumps({"spec": spec, "files": {
        "train.sh": base64.b64encode(b"#!/usr/bin/env bash\necho hi\n").decode()}})
    work = tempfile.mkdtemp(prefix="taugate-bench-")
    with Postgres(fast=False) as pg:  # durable commits on both sides
        # the production defaults for threads and pool (the test harness runs
        # smaller ones): 16 each, as many as wrk's connections
        gw = Gateway(BUILD, pg.url, extra_env={"TAUGATE_ACCESS_LOG": "false",
                                              "TAUGATE_THREADS": "16",
                                              "TAUGATE_DB_POOL_SIZE": "16"}).start()
        try:
            kind_cpu_workspace(gw)
            token = tokens.mint("bench", groups=[tokens.ADMIN_GROUP], ttl=3600)
            post_lua = os.path.join(work, "post.lua")
            with open(post_lua, "w") as f:
                f.write('wrk.method = "POST"\n'
                        f'wrk.body = {json.dumps(body)}\n'
                        'wrk.headers["Content-Type"] = "application/json"\n'
                        f'wrk.headers["Authorization"] = "Bearer {token}"\n')
            sub = wrk(gw.url + "/v1/workspaces/ray/runs", post_lua, DURATION)
            run_id = gw.req("POST", "/v1/workspaces/ray/runs", body=json.loads(body)).json()["id"]
            get_lua = os.path.join(work, "get.lua")
            with open(get_lua, "w") as f:
                f.write(f'wrk.headers["Authorization"] = "Bearer {token}"\n')
            get = wrk(gw.url + f"/v1/runs/{run_id}", get_lua, DURATION)

            # the same run row taugate stored: its spec, resolved config and manifests
            resolved, manifests = pg.psql(
                f"SELECT resolved::text || chr(10) || manifests::text FROM runs "
                f"WHERE id = '{run_id}'").split("\n")
            insert_sql = os.path.join(work, "insert.sql")
            with open(insert_sql, "w") as f:
                f.write("WITH r AS (INSERT INTO runs (id, workspace, name, owner, engine, "
                        "spec_text, resolved, manifests, config_hash) VALUES "
                        "(gen_random_uuid(), 'ray', 'tau-kind-smoke', 'bench', 'job', "
                        f"{pg_literal(spec)}, {pg_literal(resolved)}, {pg_literal(manifests)}, "
                        "'sha256:x') RETURNING id) "
                        "INSERT INTO outbox (run_id, attempt, action) "
                        "SELECT id, 1, 'create' FROM r;\n")
            ref_sub = pgbench(pg, insert_sql, DURATION)
            select_sql = os.path.join(work, "select.sql")
            with open(select_sql, "w") as f:
                f.write(f"SELECT * FROM runs WHERE id = '{run_id}';\n")
            ref_get = pgbench(pg, select_sql, DURATION)
        finally:
            gw.stop()
            gw.close()
    print(f"submissions: taugate {sub[0]:.0f}/s (p99 {sub[1]:.1f} ms, non-2xx {sub[2]}); "
          f"pgbench two-insert {ref_sub[0]:.0f}/s (avg {ref_sub[1]:.1f} ms); "
          f"ratio {sub[0] / ref_sub[0]:.2f} (target >= 0.80)")
    print(f"GET /v1/runs/{{id}}: taugate {get[0]:.0f}/s (p99 {get[1]:.2f} ms, non-2xx {get[2]}); "
          f"pgbench pk select {ref_get[0]:.0f}/s (avg {ref_get[1]:.2f} ms); "
          f"ratio {get[0] / ref_get[0]:.2f} (target >= 0.60)")


def pg_literal(text):
    return "'" + text.replace("'", "''").replace("\n", "' || E'\\n' || '") + "'"


if __name__ == "__main__":
    main()
