"""The real stack for the console's browser suite: PostgreSQL, kubesim and
the gateway (serving the built console from console/dist), started with the
project's test harness (tests/harness). Prints one JSON line saying where
everything is, then answers JSON commands, one per stdin line, until stdin
closes; then stops everything it started.

Commands: {"op": "sql", "sql": ...} -> {"out": text};
{"op": "seed_runs", "workspace": ..., "n": ...} -> {"n": n};
{"op": "logs"} -> {"out": gateway log tail}."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "harness"))

import tokens  # noqa: E402
from gateway import Gateway  # noqa: E402
from kubesim import KubeSim  # noqa: E402
from paths import BUILD  # noqa: E402
from pg import Postgres  # noqa: E402
from world import admin_posts, kind_cpu_cluster, kind_cpu_workspace  # noqa: E402

RESEARCHER = "alice@example.com"

# Finished runs (the engine leaves them alone), spread over a day, every
# state of the end and both engines; evidence triggers are off for the seed.
SEED_SQL = """
SET session_replication_role = replica;
INSERT INTO runs (id, workspace, name, owner, engine, state, reason, spec_text, resolved,
                  manifests, config_hash, attempt, created_at, updated_at, started_at, finished_at)
SELECT gen_random_uuid(), '{ws}', 'seed-' || lpad(i::text, 5, '0'),
       CASE WHEN i % 3 = 0 THEN 'bob@example.com' ELSE '{owner}' END,
       CASE WHEN i % 4 = 0 THEN 'rayjob' ELSE 'job' END,
       (ARRAY['Succeeded', 'Failed', 'Cancelled'])[1 + i % 3],
       (ARRAY['Completed', 'BackoffLimitExceeded', 'CancelledByUser'])[1 + i % 3],
       'name: seed', '{{}}'::jsonb, '[]'::jsonb, 'sha256:' || md5(i::text), 1 + i % 2,
       now() - (i || ' seconds')::interval * 8, now() - (i || ' seconds')::interval * 8,
       now() - (i || ' seconds')::interval * 8 + interval '2 seconds',
       now() - (i || ' seconds')::interval * 8 + interval '7 seconds'
FROM generate_series(1, {n}) AS i;
"""


def main():
    pg = Postgres().init().start()
    pg.psql("CREATE DATABASE console", db="postgres")
    db_url = f"postgresql://{pg.user}@127.0.0.1:{pg.port}/console"
    ks = kind_cpu_cluster(KubeSim().start())
    gw = Gateway(BUILD, db_url, extra_env={
        "TAUGATE_KUBE_API_URL": ks.url,
        "TAUGATE_CONSOLE_DIR": os.path.join(REPO, "console", "dist"),
        "TAUGATE_EVIDENCE_LOG_GRACE_S": "2",
    })
    try:
        gw.start()
        kind_cpu_workspace(gw, extra=[
            ("/v1/admin/workspaces/ray/members", {"kind": "user", "subject": RESEARCHER,
                                                  "role": "researcher"}),
            ("/v1/admin/workspaces", {"name": "bulk", "namespace": "bulk",
                                      "default_queue": "kind-cpu"}),
            ("/v1/admin/workspaces/bulk/members", {"kind": "user", "subject": RESEARCHER,
                                                   "role": "researcher"}),
            ("/v1/admin/flavors", {"name": "default-flavor"}),
        ])
        # The ClusterQueue's quota as kubesim has it, so quota views and
        # requests have resources to speak of.
        r = gw.req("PATCH", "/v1/admin/cluster-queues/kind-cpu-cq", body={"resource_groups": [{
            "covered_resources": ["cpu", "memory"],
            "flavors": [{"name": "default-flavor", "resources": [
                {"name": "cpu", "nominal_quota": "4"}, {"name": "memory", "nominal_quota": "12Gi"}]}]}]})
        assert r.status == 200, r
        print(json.dumps({
            "url": gw.url, "db": db_url, "kubesim": ks.url,
            "admin": tokens.admin_token(),
            "researcher": tokens.mint(RESEARCHER, ttl=7200),
            "admin_long": tokens.mint("platform-admin@example.com", groups=[tokens.ADMIN_GROUP],
                                      ttl=7200),
        }), flush=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            cmd = json.loads(line)
            try:
                if cmd["op"] == "sql":
                    out = {"out": pg.psql(cmd["sql"], db="console")}
                elif cmd["op"] == "seed_runs":
                    pg.psql(SEED_SQL.format(ws=cmd["workspace"], owner=RESEARCHER,
                                            n=int(cmd["n"])), db="console")
                    out = {"n": int(cmd["n"])}
                elif cmd["op"] == "logs":
                    out = {"out": gw.logs()[-20000:]}
                elif cmd["op"] == "admin_posts":
                    admin_posts(gw, [tuple(p) for p in cmd["posts"]], ok=(201, 409))
                    out = {}
                else:
                    out = {"error": f"unknown op {cmd['op']}"}
            except Exception as e:  # the caller reports it with the command
                out = {"error": str(e)}
            print(json.dumps(out), flush=True)
    finally:
        gw.stop()
        gw.close()
        ks.stop()
        pg.destroy()


if __name__ == "__main__":
    main()
