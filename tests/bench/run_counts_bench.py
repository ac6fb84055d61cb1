#!/usr/bin/env python3
"""Benchmark: the numbers behind a grouped view of a workspace's runs.

  counts: GET /v1/workspaces/{ws}/run-counts (by state, engine and owner,
          answered from the covering index of migration 0021)
  reference: what a client had to do before it: page through
          GET /v1/workspaces/{ws}/runs (limit 200) and count itself

Both against the same gateway and database, in interleaved rounds, medians;
BENCH_RUNS runs in the workspace (default 10,000) among three times as many
in other workspaces, rows the size of real ones. Prints both times and the
ratio (reference / counts). Not a test: it asserts nothing."""
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))

from gateway import Gateway  # noqa: E402
from paths import BUILD  # noqa: E402
from pg import Postgres  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "10000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))


def seed(pg):
    for ws in ("big", "w1", "w2", "w3"):
        pg.psql(f"INSERT INTO workspaces (name, namespace) VALUES ('{ws}', '{ws}')")
    pg.psql(
        "SET synchronous_commit = on; INSERT INTO runs (id, workspace, name, owner, engine, state,"
        " spec_text, resolved, manifests, config_hash, created_at, updated_at)"
        " SELECT gen_random_uuid(), (ARRAY['big','w1','w2','w3'])[1 + i % 4], 'run-' || i,"
        " 'user' || (i % 40) || '@example.com', CASE WHEN i % 5 = 0 THEN 'rayjob' ELSE 'job' END,"
        " (ARRAY['Accepted','Queued','Running','Succeeded','Failed','Cancelled'])[1 + i / 4 % 6],"
        " array_to_string(ARRAY(SELECT md5(random()::text || j) FROM generate_series(1, 40 + 0 * i) j),"
        " ''), '{}', '[]', 'sha256:x', now() - i * interval '1 s', now() - i * interval '1 s'"
        f" FROM generate_series(0, {4 * RUNS - 1}) i")
    pg.psql("VACUUM ANALYZE runs")


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    pg = Postgres().init().start().create_db()
    gw = Gateway(BUILD, pg.url).start()
    try:
        seed(pg)

        def counts():
            r = gw.req("GET", "/v1/workspaces/big/run-counts")
            assert r.status == 200 and r.json()["total"] == RUNS, r

        def paging():
            by_state, cursor, n = {}, None, 0
            while True:
                q = "limit=200" + (f"&cursor={cursor}" if cursor else "")
                page = gw.req("GET", f"/v1/workspaces/big/runs?{q}").json()
                for run in page["items"]:
                    by_state[run["state"]] = by_state.get(run["state"], 0) + 1
                n += len(page["items"])
                cursor = page["next_cursor"]
                if not cursor:
                    break
            assert n == RUNS

        counts(), paging()  # warm up
        c, p = [], []
        for _ in range(ROUNDS):
            c.append(timed(counts))
            p.append(timed(paging))
        mc, mp = statistics.median(c), statistics.median(p)
        print(f"run counts of a workspace with {RUNS} runs ({4 * RUNS} in all), median of {ROUNDS}:")
        print(f"  GET .../run-counts          {mc * 1000:8.1f} ms")
        print(f"  paging .../runs (reference) {mp * 1000:8.1f} ms")
        print(f"  ratio (reference / counts)  {mp / mc:8.1f}")
    finally:
        gw.stop()
        gw.close()
        pg.destroy()


if __name__ == "__main__":
    main()
