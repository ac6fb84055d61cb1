#!/usr/bin/env python3
"""Benchmark: run submissions and run reads against PostgreSQL doing the same
work directly, measured in the same run on the same durable database.

  submissions/s: wrk POSTing tau.yaml (16 connections) vs pgbench running the
                 same two-insert transaction (run row + outbox row), 16 clients
  GET /v1/runs/{id}: wrk vs pgbench's primary-key select of the run row

Targets: submissions >= 0.8 of pgbench, reads >= 0.6.

The question is what the gateway costs the database's throughput, so both
sides get the same database: PostgreSQL runs on its own cores (the first
half of this machine's), and the client side (wrk and the gateway, or
pgbench) on the rest, as in any deployment where the database is not on the
gateway's host. On a shared two-core machine the cores of each half are
otherwise idle, so the gateway never starves the database it is measured
against. The same pair is then run once with every process free to use every
core ("shared cores"), for comparison; that figure also charges the gateway's
own CPU against the database's.

Both sides are warmed up first (the gateway's connection pool fills and
its backends plan the statements). The machine is noisy (a small VM), so the
pairs run in interleaved rounds
(taugate, then its reference, BENCH_ROUNDS times) and the figures are
medians. Not a test: it asserts nothing. BENCH_DURATION sets the seconds of
each side of a round (default 5)."""
import base64
import json
import os
import re
import statistics
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

DURATION = int(os.environ.get("BENCH_DURATION", "5"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
CONNS = 16


def cpu_split():
    """(database cpus, client cpus) as taskset lists, or None on one core."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    half = len(cpus) // 2
    return ",".join(map(str, cpus[:half])), ",".join(map(str, cpus[half:]))


def all_cpus():
    return ",".join(map(str, sorted(os.sched_getaffinity(0))))


def pin(pid, cpus):
    """Every thread of pid onto cpus."""
    subprocess.run(["taskset", "-a", "-p", "-c", cpus, str(pid)], check=True,
                   capture_output=True)


def pin_postgres(pg, cpus):
    """The postmaster and every process it started (children inherit it)."""
    with open(os.path.join(pg.datadir, "postmaster.pid")) as f:
        postmaster = int(f.readline())
    children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True,
                              text=True).stdout.split()
    for pid in [postmaster] + [int(c) for c in children]:
        pin(pid, cpus)


def wrk(url, script, seconds, cpus):
    out = subprocess.run(["taskset", "-c", cpus, "wrk", "-t2", f"-c{CONNS}", f"-d{seconds}s",
                          "--latency", "-s", script, url],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, float(p99.group(1)) * scale, int(non2xx.group(1)) if non2xx else 0


def pgbench(pg, script, seconds, cpus):
    """(tps, p99 ms) from pgbench's per-transaction log."""
    logs = tempfile.mkdtemp(prefix="taugate-pgbench-")
    cmd = ["taskset", "-c", cpus, os.path.join(pg_bindir(), "pgbench"), "-n", "-c", str(CONNS),
           "-j", "2", "-T", str(seconds), "-f", script, "-l", "--log-prefix",
           os.path.join(logs, "tx"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", pg.user,
           pg.dbname]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    lat = []  # each line: client, transaction, latency in µs, ...
    for name in os.listdir(logs):
        with open(os.path.join(logs, name)) as f:
            lat.extend(int(line.split()[2]) for line in f)
        os.unlink(os.path.join(logs, name))
    os.rmdir(logs)
    lat.sort()
    return tps, lat[int(0.99 * (len(lat) - 1))] / 1000.0


def pairs(run_ours, run_ref, rounds):
    """Interleaved rounds; per-round (ours, ref) results."""
    out = []
    for _ in range(rounds):
        out.append((run_ours(), run_ref()))
    return out


def report(label, ref_label, results, target):
    ours = [o for o, _ in results]
    refs = [r for _, r in results]
    ratios = [o[0] / r[0] for o, r in results]
    print(f"{label}: taugate {statistics.median(o[0] for o in ours):.0f}/s "
          f"(p99 {statistics.median(o[1] for o in ours):.1f} ms, "
          f"non-2xx {sum(o[2] for o in ours)}); "
          f"{ref_label} {statistics.median(r[0] for r in refs):.0f}/s "
          f"(p99 {statistics.median(r[1] for r in refs):.1f} ms); "
          f"ratio {statistics.median(ratios):.2f} (rounds {' '.join(f'{x:.2f}' for x in ratios)}; "
          f"target >= {target:.2f})")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    spec = open(os.path.join(SHARED, "conformance", "taugrid", "01-kind-smoke_tau.yaml")).read()
    body = json.dumps({"spec": spec, "files": {
        "train.sh": base64.b64encode(b"#!/usr/bin/env bash\necho hi\n").decode()}})
    work = tempfile.mkdtemp(prefix="taugate-bench-")
    split = cpu_split()
    if os.environ.get("BENCH_PIN", "1") == "0":
        split = None
    with Postgres(fast=False) as pg:  # durable commits on both sides
        # the production defaults for threads and pool (the test harness runs
        # smaller ones): 16 each, as many as wrk's connections
        gw = Gateway(BUILD, pg.url, extra_env={"TAUGATE_ACCESS_LOG": "false",
                                              "TAUGATE_THREADS": "16",
                                              "TAUGATE_DB_POOL_SIZE": "16"}).start()
        try:
            kind_cpu_workspace(gw)
            token = tokens.mint("bench", groups=[tokens.ADMIN_GROUP], ttl=3600)
            post_lua = write(os.path.join(work, "post.lua"),
                             'wrk.method = "POST"\n'
                             f'wrk.body = {json.dumps(body)}\n'
                             'wrk.headers["Content-Type"] = "application/json"\n'
                             f'wrk.headers["Authorization"] = "Bearer {token}"\n')
            run_id = gw.req("POST", "/v1/workspaces/ray/runs", body=json.loads(body)).json()["id"]
            get_lua = write(os.path.join(work, "get.lua"),
                            f'wrk.headers["Authorization"] = "Bearer {token}"\n')
            # the same run row taugate stored: its spec, resolved config,
            # manifests, config hash and policy decisions
            resolved, manifests, hash_, decisions, digest = pg.psql(
                "SELECT resolved::text || chr(10) || manifests::text || chr(10) || config_hash"
                " || chr(10) || policy_decisions::text || chr(10) || policy_digest FROM runs "
                f"WHERE id = '{run_id}'").split("\n")
            insert_sql = write(os.path.join(work, "insert.sql"),
                               "WITH r AS (INSERT INTO runs (id, workspace, name, owner, engine, "
                               "spec_text, resolved, manifests, config_hash, policy_decisions, "
                               "policy_digest) VALUES "
                               "(gen_random_uuid(), 'ray', 'tau-kind-smoke', 'bench', 'job', "
                               f"{pg_literal(spec)}, {pg_literal(resolved)}, "
                               f"{pg_literal(manifests)}, {pg_literal(hash_)}, "
                               f"{pg_literal(decisions)}, {pg_literal(digest)}) RETURNING id) "
                               "INSERT INTO outbox (run_id, attempt, action) "
                               "SELECT id, 1, 'create' FROM r;\n")
            select_sql = write(os.path.join(work, "select.sql"),
                               f"SELECT * FROM runs WHERE id = '{run_id}';\n")

            def warm_up(clients):
                """An untimed second of each: the gateway's pool opens its
                connections and their backends plan the statements once."""
                wrk(gw.url + "/v1/workspaces/ray/runs", post_lua, 2, clients)
                wrk(gw.url + f"/v1/runs/{run_id}", get_lua, 1, clients)
                pgbench(pg, insert_sql, 1, clients)

            def measure(clients, rounds):
                warm_up(clients)
                sub = pairs(lambda: wrk(gw.url + "/v1/workspaces/ray/runs", post_lua, DURATION,
                                        clients),
                            lambda: pgbench(pg, insert_sql, DURATION, clients), rounds)
                get = pairs(lambda: wrk(gw.url + f"/v1/runs/{run_id}", get_lua, DURATION,
                                        clients),
                            lambda: pgbench(pg, select_sql, DURATION, clients), rounds)
                return sub, get

            if split:
                db_cpus, client_cpus = split
                pin_postgres(pg, db_cpus)
                pin(gw.proc.pid, client_cpus)
                print(f"database on cpus {db_cpus}; gateway, wrk and pgbench on cpus "
                      f"{client_cpus}; {ROUNDS} rounds of {DURATION} s each side")
                sub, get = measure(client_cpus, ROUNDS)
                report("submissions", "pgbench two-insert", sub, 0.8)
                report("GET /v1/runs/{id}", "pgbench pk select", get, 0.6)
                pin_postgres(pg, all_cpus())
                pin(gw.proc.pid, all_cpus())
            # one round when it is the comparison, every round when it is all there is
            print(f"shared cores (every process on cpus {all_cpus()}):")
            sub, get = measure(all_cpus(), 1 if split else ROUNDS)
            report("  submissions", "pgbench two-insert", sub, 0.8)
            report("  GET /v1/runs/{id}", "pgbench pk select", get, 0.6)
        finally:
            gw.stop()
            gw.close()


def pg_literal(text):
    return "'" + text.replace("'", "''").replace("\n", "' || E'\\n' || '") + "'"


if __name__ == "__main__":
    main()
