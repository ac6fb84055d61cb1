#!/usr/bin/env python3
"""Benchmark: the engine end to end, at two sizes in the same run.

For each N (BENCH_ENGINE_SIZES, default "1000 10000"): a fresh database, a
fresh simulated kubesim (pods are 1 s timers) and a fresh gateway wired to
it; N runs of TauGrid's kind smoke test go through POST .../runs:batch (100
per request, 4 clients); the figure is runs sealed per second from the first
submit to the last seal (the sealed_at of the last evidence record), every
run having gone Accepted → Queued → Admitted → Running → Succeeded and had
its log collected on the way. The peak RSS (VmHWM) of the gateway and of
kubesim is read when the last run is sealed.

The reference is the same pipeline at the smaller size: the ratio
throughput(largest N) / throughput(smallest N) says whether a run costs the
same when there are many. Targets on a 2-core machine: ratio >= 0.9, 10,000
runs in <= 120 s, gateway <= 128 MiB, kubesim <= 300 MiB.

The gateway runs with production settings except its HTTP threads and pool
(4 and 8, as this machine has 2 cores) and the rate limits (off). Not a
test: it asserts nothing; a size that does not finish within
BENCH_ENGINE_TIMEOUT_S (default 900) is reported with how far it got.

It also prints the errors PostgreSQL logged while the runs went through
(a deadlock or a unique-key violation is work thrown away and done again)
and what kubesim holds at the end. BENCH_KUBESIM_ARGS adds arguments to
kubesim's command line (e.g. "--no-events"); BENCH_TAUGATE_X=v sets the
gateway's TAUGATE_X (e.g. BENCH_TAUGATE_LOGS_MAX_FOLLOWERS=8)."""
import base64
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))

from gateway import Gateway  # noqa: E402
from kubesim import KubeSim  # noqa: E402
from paths import BUILD, SHARED  # noqa: E402
from pg import Postgres  # noqa: E402
from world import kind_cpu_cluster, kind_cpu_workspace  # noqa: E402

SIZES = [int(x) for x in os.environ.get("BENCH_ENGINE_SIZES", "1000 10000").split()]
TIMEOUT_S = float(os.environ.get("BENCH_ENGINE_TIMEOUT_S", "900"))
TRACE = os.environ.get("BENCH_ENGINE_TRACE") == "1"  # print progress every half second
# print the statements that took PostgreSQL the most time (pg_stat_statements)
PGSTAT = os.environ.get("BENCH_ENGINE_PGSTAT") == "1"
# record the gateway with `perf record` into this file while it works
PERF = os.environ.get("BENCH_ENGINE_PERF")
BATCH = 100
CLIENTS = 4
# room for every run at once: 10,000 pods of 10m cpu / 32Mi
NODES = [{"namePrefix": "bench-node-", "count": 8,
          "capacity": {"cpu": "64", "memory": "512Gi", "pods": "2000"},
          "allocatable": {"cpu": "64", "memory": "512Gi", "pods": "2000"}}]


def vm_hwm_mib(pid):
    """Peak resident set of a process, MiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def cpu_s(pid):
    """User + system CPU seconds a process has used (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def thread_cpu_s(pid):
    """CPU seconds per thread name of a live process ({comm: seconds}); a
    thread that has exited is no longer counted."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                head, tail = f.read().rsplit(")", 1)
        except OSError:
            continue
        name, fields = head.split("(", 1)[1], tail.split()
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / os.sysconf(
            "SC_CLK_TCK")
    return out


def postgres_cpu_s(datadir):
    """CPU seconds of the PostgreSQL cluster in datadir: the postmaster, its
    live children (backends, walwriter, checkpointer...) and, through the
    postmaster's cutime/cstime, the children that have exited."""
    stats, postmaster = {}, None
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stats[int(pid)] = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if datadir.encode() in f.read().split(b"\0"):
                    postmaster = int(pid)
        except OSError:
            pass
    if postmaster not in stats:
        return 0.0
    total = sum(int(x) for x in stats[postmaster][11:15])  # utime stime cutime cstime
    total += sum(int(v[11]) + int(v[12]) for v in stats.values() if int(v[1]) == postmaster)
    return total / os.sysconf("SC_CLK_TCK")


def client_cpu_s():
    """CPU seconds of this bench: its own threads and the psql it has waited for."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def machine_busy_s():
    """CPU seconds the whole machine spent busy (all cores)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def committed_xacts(pg, db):
    """Transactions PostgreSQL has committed in db (its statistics lag by up
    to a second, which the bench's seconds-long spans absorb)."""
    pg.psql("SELECT pg_stat_force_next_flush()", db=db)
    return int(pg.psql(f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{db}'",
                       db=db))


def pg_log_errors(pg, offset):
    """The ERRORs PostgreSQL logged after `offset` in its log, counted by
    message (a deadlock or a unique-key violation is work done twice)."""
    counts = {}
    with open(pg.logfile, errors="replace") as f:
        f.seek(offset)
        for line in f:
            m = re.search(r"\bERROR:\s+(.*?)(\s+\(|$)", line)
            if m:
                msg = re.sub(r'"[^"]*"', '"…"', m.group(1))
                counts[msg] = counts.get(msg, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def batch_bodies(n):
    spec = open(os.path.join(SHARED, "conformance", "taugrid", "01-kind-smoke_tau.yaml")).read()
    files = {"train.sh": base64.b64encode(b"#!/usr/bin/env bash\necho hi\n").decode()}
    item = {"spec": spec, "files": files}
    return [{"runs": [item] * min(BATCH, n - i)} for i in range(0, n, BATCH)]


def submit_all(gw, bodies):
    """POST every batch with CLIENTS threads; returns the run ids."""
    ids, errors = [], []
    lock = threading.Lock()

    def client(mine):
        for body in mine:
            for _ in range(50):
                r = gw.req("POST", "/v1/workspaces/ray/runs:batch", body=body, timeout=120)
                if r.status == 200:
                    got = [x["run"]["id"] for x in r.json()["results"] if x["status"] == 201]
                    with lock:
                        ids.extend(got)
                    break
                time.sleep(0.2)
            else:
                with lock:
                    errors.append(r.status)

    threads = [threading.Thread(target=client, args=(bodies[i::CLIENTS],))
               for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"batches refused: {errors[:5]}")
    return ids


def one_size(pg, n):
    db = f"bench_engine_{n}"
    pg.psql(f"DROP DATABASE IF EXISTS {db}", db="postgres")
    pg.psql(f"CREATE DATABASE {db}", db="postgres")
    url = f"postgresql://{pg.user}@127.0.0.1:{pg.port}/{db}"
    ks = KubeSim(simulated=True, nodes=NODES,
                 extra_args=os.environ.get("BENCH_KUBESIM_ARGS", "").split()).start()
    gw = None
    try:
        kind_cpu_cluster(ks, cpu="1000", memory="100000Gi")
        gw = Gateway(BUILD, url, extra_env={
            "TAUGATE_KUBE_API_URL": ks.url, "TAUGATE_ACCESS_LOG": "false",
            "TAUGATE_THREADS": "4", "TAUGATE_DB_POOL_SIZE": "8",
            "TAUGATE_DB_CHECKOUT_TIMEOUT_MS": "2000", "TAUGATE_ENGINE_POLL_MS": "500",
            "TAUGATE_EVIDENCE_LOG_GRACE_S": "60", "TAUGATE_LOG_LEVEL": "warn",
            **{k[6:]: v for k, v in os.environ.items() if k.startswith("BENCH_TAUGATE_")}}).start()
        kind_cpu_workspace(gw)
        if PGSTAT:
            pg.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements;"
                    " SELECT pg_stat_statements_reset()", db=db)
        bodies = batch_bodies(n)
        log_from = os.path.getsize(pg.logfile)
        xacts0 = committed_xacts(pg, db)
        threads0 = thread_cpu_s(gw.proc.pid)
        ks_threads0 = thread_cpu_s(ks.proc.pid)
        cpu0 = (cpu_s(gw.proc.pid), cpu_s(ks.proc.pid), postgres_cpu_s(pg.datadir),
                client_cpu_s(), machine_busy_s())
        perf = subprocess.Popen(["perf", "record", "-F", "499", "-p", str(gw.proc.pid), "-o",
                                 f"{PERF}.{n}"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL) if PERF else None
        t0 = time.time()
        ids = submit_all(gw, bodies)
        submitted = time.time() - t0
        assert len(ids) == n, (len(ids), n)
        deadline = t0 + TIMEOUT_S
        def ended_and_sealed():
            row = pg.psql("SELECT (SELECT count(*) FROM runs WHERE state NOT IN"
                          "  ('Succeeded', 'Failed', 'Cancelled')) || ' ' ||"
                          " (SELECT count(*) FROM evidence_queue)", db=db)
            unfinished, queued = map(int, row.split())
            return n - unfinished, n - unfinished - queued

        sealed = ended = 0
        while time.time() < deadline:
            # The span is read from the records' sealed_at at the end, so
            # this loop only has to notice the end, and must not load the
            # database under test: counting the unfinished runs cost 170 ms
            # of PostgreSQL CPU a poll at 10,000 runs (5% of its time). The
            # statistics' insert counter of evidence costs nothing; the
            # exact counts are read once it says every run is sealed.
            if int(pg.psql("SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables"
                           " WHERE relname = 'evidence'", db=db)) >= n:
                ended, sealed = ended_and_sealed()
                if sealed >= n:
                    break
            if TRACE:
                ended, sealed = ended_and_sealed()
                print(f"  {time.time() - t0:6.1f} s: " + pg.psql(
                    "SELECT string_agg(state || '=' || c, ' ') FROM (SELECT state, count(*) c"
                    " FROM runs GROUP BY 1 ORDER BY 1) s", db=db) +
                    f" sealed={sealed} logs_done=" + pg.psql(
                    "SELECT count(*) FILTER (WHERE log_done) || '/' || count(*) FROM run_pods",
                    db=db), flush=True)
                if ended >= n:
                    print("    waiting: " + pg.psql(
                        "SELECT string_agg(left(run_id::text, 8) || ' in ' ||"
                        " round(extract(epoch FROM not_before - now()))::text || 's tries ' ||"
                        " tries || coalesce(' ' || last_error, ''), '; ')"
                        " FROM (SELECT * FROM evidence_queue ORDER BY not_before LIMIT 3) q",
                        db=db), flush=True)
            time.sleep(2)
        if sealed < n:
            ended, sealed = ended_and_sealed()
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(60)
        gw_mib, ks_mib = vm_hwm_mib(gw.proc.pid), vm_hwm_mib(ks.proc.pid)
        ks_stats = ks.get("/kubesim/stats")
        ks_objects = ks_stats["objects"]
        kube_calls = {}
        for line in gw.req("GET", "/metrics").body.decode().splitlines():
            if line.startswith("taugate_kube_requests_total{"):
                labels, value = line[len("taugate_kube_requests_total"):].rsplit(" ", 1)
                kube_calls[labels] = float(value) / n
        pg_errors = pg_log_errors(pg, log_from)
        cpu = (cpu_s(gw.proc.pid) - cpu0[0], cpu_s(ks.proc.pid) - cpu0[1],
               postgres_cpu_s(pg.datadir) - cpu0[2], client_cpu_s() - cpu0[3],
               machine_busy_s() - cpu0[4])
        threads = thread_cpu_s(gw.proc.pid)
        ks_threads = thread_cpu_s(ks.proc.pid)
        stats = {"commits_per_run": (committed_xacts(pg, db) - xacts0) / n,
                 # request threads live as long as their connection: those
                 # still alive at the end are mostly the gateway's watches
                 "cpu_kubesim_live_threads_s": {
                     k: round(v - ks_threads0.get(k, 0.0), 1) for k, v in ks_threads.items()},
                 "cpu_gateway_threads_s": dict(sorted(
                     ((k, round(v - threads0.get(k, 0.0), 1)) for k, v in threads.items()),
                     key=lambda kv: -kv[1]))}
        if PGSTAT:
            stats["statements_per_run"] = int(pg.psql(
                "SELECT sum(calls) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid"
                f" WHERE d.datname = '{db}'", db=db)) / n
            print(pg.psql("SELECT round(total_exec_time)::int || ' ms, ' ||"
                          f" round(calls::numeric / {n}, 2) || ' calls/run: ' ||"
                          " left(regexp_replace(query, '\\s+', ' ', 'g'), 150)"
                          " FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 30",
                          db=db))
        states = pg.psql("SELECT string_agg(state || '=' || c, ' ') FROM"
                         " (SELECT state, count(*) c FROM runs GROUP BY 1 ORDER BY 1) s", db=db)
        span = float(pg.psql("SELECT extract(epoch FROM max(sealed_at)) FROM evidence", db=db)
                     or 0) - t0
        done = sealed >= n
        return {"n": n, "done": done, "submit_s": submitted, "span_s": span if done else None,
                "sealed": sealed, "ended": ended, "states": states,
                "rate": n / span if done and span > 0 else sealed / (time.time() - t0),
                "gw_mib": gw_mib, "ks_mib": ks_mib, "cpu_gateway_s": cpu[0],
                "cpu_kubesim_s": cpu[1], "cpu_postgres_s": cpu[2], "cpu_bench_s": cpu[3],
                "cpu_machine_s": cpu[4], "ks_objects": ks_objects,
                "ks_heap_mib": ks_stats["heapInUseKiB"] / 1024, "pg_errors": pg_errors,
                "kube_calls_per_run": kube_calls, **stats}
    finally:
        if gw:
            gw.stop()
            gw.close()
        ks.cleanup()


def main():
    # stopped (timeout, Ctrl-C): still stop the gateway, kubesim and PostgreSQL
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    results = []
    with Postgres() as pg:
        if PGSTAT:
            pg.psql("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'",
                    db="postgres")
            pg.restart()
            # the statements of triggers and foreign-key checks too
            pg.psql("ALTER SYSTEM SET pg_stat_statements.track = 'all'", db="postgres")
            pg.restart()
        for n in SIZES:
            r = one_size(pg, n)
            results.append(r)
            took = f"{r['span_s']:.1f} s" if r["done"] else \
                f"NOT DONE after {TIMEOUT_S:.0f} s ({r['sealed']} sealed, {r['ended']} ended)"
            print(f"N={n:>6}: submitted in {r['submit_s']:.1f} s; first submit to last seal "
                  f"{took}; {r['rate']:.1f} runs sealed/s; peak RSS gateway "
                  f"{r['gw_mib']:.0f} MiB, kubesim {r['ks_mib']:.0f} MiB; CPU s gateway "
                  f"{r['cpu_gateway_s']:.1f}, kubesim {r['cpu_kubesim_s']:.1f}, PostgreSQL "
                  f"{r['cpu_postgres_s']:.1f}, bench {r['cpu_bench_s']:.1f}, whole machine "
                  f"{r['cpu_machine_s']:.0f}; per run: {r['commits_per_run']:.1f} commits"
                  + (f", {r['statements_per_run']:.1f} statements" if PGSTAT else "")
                  + f"; runs: {r['states']}", flush=True)
            print("  PostgreSQL errors: " + (", ".join(
                f"{c} {m}" for m, c in r["pg_errors"].items()) or "none"), flush=True)
            print("  cluster requests per run: " + ", ".join(
                f"{k} {v:.2f}" for k, v in sorted(r["kube_calls_per_run"].items(),
                                                  key=lambda kv: -kv[1]) if v >= 0.01),
                flush=True)
            print("  kubesim objects: " + ", ".join(
                f"{k} {v}" for k, v in sorted(r["ks_objects"].items()) if v)
                + f"; its heap in use at the end {r['ks_heap_mib']:.0f} MiB", flush=True)
            print("  kubesim CPU s of the threads alive at the end: " + ", ".join(
                f"{k} {v:.1f}" for k, v in r["cpu_kubesim_live_threads_s"].items() if v >= 0.1),
                flush=True)
            print("  gateway CPU s by thread: " + ", ".join(
                f"{k} {v:.1f}" for k, v in r["cpu_gateway_threads_s"].items() if v >= 0.1),
                flush=True)
    if len(results) >= 2:
        small, large = results[0], results[-1]
        print(f"ratio sealed/s N={large['n']} / N={small['n']}: "
              f"{large['rate'] / small['rate']:.2f} (target >= 0.90); "
              f"N={large['n']} in {large['span_s'] or float('nan'):.1f} s (target <= 120 s); "
              f"gateway {large['gw_mib']:.0f} MiB (target <= 128), "
              f"kubesim {large['ks_mib']:.0f} MiB (target <= 300)")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
