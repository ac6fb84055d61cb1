"""The read side a browser client builds on: the runs list (filters,
updated_since, the four stable orders and their cursors), run counts checked
against the list and answered from an index, experiments, run comparison,
metric series reduced on the server, conditional GETs, and the bundled
contract. One gateway without a cluster for the module (runs stay Accepted
until cancelled); metric points are written into its database with SQL, as
the log collector would."""
import json
import re
from urllib.parse import quote

import pytest
import yaml

import tokens
from gateway import Gateway
from paths import BUILD, REPO
from wait import wait_for
from world import kind_cpu_workspace, smoke_body

WS = "ray"
STATES = ["Accepted", "Queued", "Admitted", "Running", "Recovering", "Succeeded", "Failed",
          "Cancelled"]
PEOPLE = {"alice": tokens.mint("alice@example.com"), "bob": tokens.mint("bob@example.com")}


@pytest.fixture(scope="module")
def env(pg, db_url):
    gw = Gateway(BUILD, db_url).start()
    kind_cpu_workspace(gw, extra=[
        (f"/v1/admin/workspaces/{WS}/members",
         {"kind": "user", "subject": f"{who}@example.com", "role": "researcher"})
        for who in PEOPLE])
    db = db_url.rsplit("/", 1)[1]

    class Env:
        pass
    e = Env()
    e.gw, e.sql = gw, lambda q: pg.psql(q, db=db)
    e.runs = seed(gw)
    yield e
    status = gw.stop()
    logs = gw.logs()
    gw.close()
    assert status == 0, logs[-3000:]


def spec_with(name, project=None, experiment=None, group=None, gpus=0):
    body = smoke_body()
    head, _, _ = body["spec"].partition("experiment:\n")
    head = head.replace("name: tau-kind-smoke", f"name: {name}")
    head = head.replace("cpu_request: 10m", f"cpu_request: {10 + gpus}m")
    exp = "".join(f"  {k}: {v}\n" for k, v in (("project", project), ("name", experiment),
                                               ("group", group)) if v)
    body["spec"] = head + (f"experiment:\n{exp}" if exp else "")
    return body


def seed(gw):
    """Runs of two owners in two experiments (one with groups), a run
    without a project and one without an experiment; some cancelled."""
    plan = [
        ("alice", "sweep-a", "vision", "resnet", "lr-1", False),
        ("alice", "sweep-b", "vision", "resnet", "lr-1", True),
        ("bob", "sweep-c", "vision", "resnet", "lr-2", False),
        ("bob", "sweep-d", "vision", "resnet", None, False),
        ("alice", "solo", None, "scratch", None, True),
        ("bob", "loose", "vision", None, None, False),
        ("alice", "nlp-1", "text", "bert", "base", False),
    ]
    runs = {}
    for who, name, project, experiment, group, cancel in plan:
        r = gw.req("POST", f"/v1/workspaces/{WS}/runs", token=PEOPLE[who],
                   body=spec_with(name, project, experiment, group, gpus=len(runs)))
        assert r.status == 201, r
        runs[name] = r.json()["id"]
        if cancel:
            assert gw.req("POST", f"/v1/runs/{runs[name]}:cancel").status == 200
    return runs


def page_all(gw, path):
    items, cursor = [], None
    while True:
        sep = "&" if "?" in path else "?"
        r = gw.req("GET", f"{path}{sep}limit=2" + (f"&cursor={cursor}" if cursor else ""))
        assert r.status == 200, r
        body = r.json()
        items += body["items"]
        cursor = body["next_cursor"]
        if not cursor:
            return items


def test_orders_are_total_and_cursors_keep_them(env):
    gw = env.gw
    for sort, key, rev in (("-created_at", "created_at", True), ("created_at", "created_at", False),
                           ("-updated_at", "updated_at", True), ("updated_at", "updated_at", False)):
        got = page_all(gw, f"/v1/workspaces/{WS}/runs?sort={sort}")
        assert len(got) == len(env.runs) == len({r["id"] for r in got}), sort
        assert got == sorted(got, key=lambda r: (r[key], r["id"]), reverse=rev), sort
    # a cursor belongs to its order
    first = gw.req("GET", f"/v1/workspaces/{WS}/runs?limit=1&sort=updated_at").json()
    r = gw.req("GET", f"/v1/workspaces/{WS}/runs?limit=1&cursor={first['next_cursor']}")
    assert r.status == 400 and r.json()["errors"][0]["path"] == "cursor", r
    r = gw.req("GET", f"/v1/workspaces/{WS}/runs?sort=name")
    assert r.status == 400 and r.json()["errors"][0]["path"] == "sort", r


def test_updated_since_catches_up_on_changes(env):
    gw = env.gw
    everything = gw.req("GET", f"/v1/workspaces/{WS}/runs?sort=updated_at&limit=200").json()
    mark = everything["items"][-1]["updated_at"]
    changed = env.runs["sweep-c"]
    assert gw.req("POST", f"/v1/runs/{changed}:cancel").status == 200
    got = page_all(gw, f"/v1/workspaces/{WS}/runs?sort=updated_at&updated_since={quote(mark)}")
    ids = [r["id"] for r in got]
    assert changed in ids and ids[-1] == changed
    assert all(r["updated_at"] >= mark for r in got)
    assert gw.req("GET", f"/v1/runs/{changed}").json()["state"] == "Cancelled"


def test_filters_and_every_bad_one_named(env):
    gw = env.gw
    sweep = page_all(gw, f"/v1/workspaces/{WS}/runs?project=vision&experiment=resnet")
    assert {r["name"] for r in sweep} == {"sweep-a", "sweep-b", "sweep-c", "sweep-d"}
    grp = page_all(gw, f"/v1/workspaces/{WS}/runs?project=vision&experiment=resnet&group=lr-1")
    assert {r["name"] for r in grp} == {"sweep-a", "sweep-b"}
    mine = page_all(gw, f"/v1/workspaces/{WS}/runs?owner=bob@example.com&state=Accepted")
    assert {r["name"] for r in mine} <= {"sweep-c", "sweep-d", "loose"}
    r = gw.req("GET", f"/v1/workspaces/{WS}/runs?since=yesterday&updated_since=2026-13&"
                      f"state=Sleeping&engine=spark&project=")
    assert r.status == 400, r
    paths = {e["path"] for e in r.json()["errors"]}
    assert paths == {"since", "updated_since", "state", "engine", "project"}, r.json()


def counts(gw, query=""):
    r = gw.req("GET", f"/v1/workspaces/{WS}/run-counts{query}")
    assert r.status == 200, r
    return r.json()


@pytest.mark.parametrize("query", ["", "?owner=alice@example.com", "?engine=job",
                                   "?project=vision&experiment=resnet", "?state=Cancelled",
                                   "?since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z"])
def test_counts_match_the_list(env, query):
    gw = env.gw
    c = counts(gw, query)
    listed = page_all(gw, f"/v1/workspaces/{WS}/runs{query}")
    assert c["total"] == len(listed)
    assert c["by_state"] == {s: sum(r["state"] == s for r in listed) for s in STATES}
    assert c["by_engine"] == {e: sum(r["engine"] == e for r in listed) for e in ("job", "rayjob")}
    owners = {}
    for r in listed:
        owners[r["owner"]] = owners.get(r["owner"], 0) + 1
    assert {o["owner"]: o["count"] for o in c["by_owner"]} == owners
    assert [o["count"] for o in c["by_owner"]] == sorted(owners.values(), reverse=True)
    for o in c["by_owner"]:
        assert sum(o["by_state"].values()) == o["count"]
        assert o["by_state"] == {s: sum(r["state"] == s and r["owner"] == o["owner"]
                                        for r in listed) for s in STATES}
    assert c["by_owner_truncated"] is False


def test_counts_come_from_an_index(env):
    """Four workspaces of 5,000 runs each (rows the size of real ones: the
    spec text, resolved config and manifests take a few KiB) and statistics
    up to date: the counts' plan reads the covering index only, never the
    runs themselves."""
    sql = env.sql
    for i in range(4):
        sql(f"INSERT INTO workspaces (name, namespace) VALUES ('bulk{i}', 'bulk{i}')")
    # a synchronous commit: VACUUM marks a page all-visible only once the
    # commit is flushed, and the test server runs synchronous_commit=off
    sql("SET synchronous_commit = on; INSERT INTO runs (id, workspace, name, owner, engine,"
        " state, spec_text, resolved,"
        " manifests, config_hash) SELECT gen_random_uuid(), 'bulk' || (i % 4), 'r' || i,"
        " 'o' || (i % 50), 'job', (ARRAY['Accepted','Running','Succeeded','Failed'])[1 + i / 4 % 4],"
        " array_to_string(ARRAY(SELECT gen_random_uuid()::text FROM generate_series(1, 40 + 0 * i)),"
        " ''), '{}', '[]', 'sha256:x' FROM generate_series(0, 19999) i")
    # every page all-visible (what makes an index-only scan cheap): VACUUM
    # cannot mark a page while a transaction that might still see its old
    # rows is open (the gateway's own, on a loaded machine), so again until
    # it has
    def vacuumed():
        sql("VACUUM ANALYZE runs")
        return sql("SELECT relallvisible >= relpages FROM pg_class WHERE relname = 'runs'")
    wait_for(vacuumed, 60, "every page of runs all-visible", cond=lambda v: v.strip() == "t")
    plan = sql("EXPLAIN (FORMAT JSON) SELECT state, owner, engine, count(*) FROM runs"
               " WHERE workspace = 'bulk1' AND created_at >= '2000-01-01' GROUP BY 1, 2, 3")
    nodes = json.dumps(json.loads(plan))
    assert "Index Only Scan" in nodes and "runs_workspace_counts" in nodes, plan
    assert "Seq Scan" not in nodes and '"Sort"' not in nodes, plan  # grouped in index order
    c = env.gw.req("GET", "/v1/workspaces/bulk1/run-counts").json()
    assert c["total"] == 5000 and c["by_state"]["Running"] == 1250 and len(c["by_owner"]) == 25


def test_experiments_with_groups_counts_and_activity(env):
    gw = env.gw
    items = page_all(gw, f"/v1/workspaces/{WS}/experiments")
    keys = [(e["project"], e["name"]) for e in items]
    assert keys == [("text", "bert"), ("vision", "resnet"), (None, "scratch")]
    resnet = items[1]
    assert resnet["runs"] == 4
    assert resnet["by_state"]["Cancelled"] >= 1 and sum(resnet["by_state"].values()) == 4
    assert [(g["name"], g["runs"]) for g in resnet["groups"]] == [("lr-1", 2), ("lr-2", 1),
                                                                  (None, 1)]
    listed = page_all(gw, f"/v1/workspaces/{WS}/runs?project=vision&experiment=resnet")
    assert resnet["last_activity_at"] == max(r["updated_at"] for r in listed)
    assert resnet["first_at"] == min(r["created_at"] for r in listed)
    only = gw.req("GET", f"/v1/workspaces/{WS}/experiments?project=text").json()["items"]
    assert [(e["project"], e["name"], e["runs"]) for e in only] == [("text", "bert", 1)]
    r = gw.req("GET", f"/v1/workspaces/{WS}/experiments?cursor=bm90IGpzb24")
    assert r.status == 400 and r.json()["errors"][0]["path"] == "cursor"


def test_compare_runs(env):
    gw = env.gw
    a, b, c = env.runs["sweep-a"], env.runs["sweep-c"], env.runs["nlp-1"]
    r = gw.req("GET", f"/v1/workspaces/{WS}/runs:compare?ids={b},{a},{c}")
    assert r.status == 200, r
    out = r.json()
    assert [x["id"] for x in out["runs"]] == [b, a, c]
    assert out["runs"][0]["experiment"] == {"project": "vision", "name": "resnet", "group": "lr-2"}
    assert out["runs"][2]["experiment"]["name"] == "bert"
    assert out["runs"][1]["attempts"][0]["attempt"] == 1 and out["runs"][1]["metrics"] == []
    assert out["same_config"] is False and "resolved" not in out["runs"][0]
    diff = {d["path"]: d["values"] for d in out["config_differences"]}
    assert diff["name"] == ["sweep-c", "sweep-a", "nlp-1"]
    assert diff["experiment.group"] == ["lr-2", "lr-1", "base"]
    assert "engine" not in diff and "runtime.image" not in diff
    assert [d["path"] for d in out["config_differences"]] == sorted(diff)
    # errors: too few, a repeat, not a UUID, a run of nobody here
    for ids, status in ((a, 400), (f"{a},{a}", 400), (f"{a},nope", 400),
                        (f"{a},00000000-0000-4000-8000-000000000000", 404)):
        r = gw.req("GET", f"/v1/workspaces/{WS}/runs:compare?ids={ids}")
        assert r.status == status, (ids, r)
    eleven = ",".join([a] + [f"00000000-0000-4000-8000-0000000000{i:02d}" for i in range(10)])
    assert gw.req("GET", f"/v1/workspaces/{WS}/runs:compare?ids={eleven}").status == 400


def test_a_long_series_is_reduced_keeping_extremes_and_non_finite_points(env):
    gw, sql = env.gw, env.sql
    rid = env.runs["sweep-b"]  # not one test_compare_runs reads (it sees no metrics)
    # 100,000 points of a slow sine; a spike, a dip and three non-finite values
    sql(f"INSERT INTO run_metrics (run_id, attempt, name, step, at, value, raw)"
        f" SELECT '{rid}', 1, 'loss', i, now() + i * interval '1 ms',"
        f"  CASE WHEN i IN (4000, 50001, 99999) THEN NULL WHEN i = 31337 THEN 1000"
        f"   WHEN i = 77777 THEN -1000 ELSE sin(i / 5000.0) END,"
        f"  CASE WHEN i = 4000 THEN 'NaN' WHEN i = 50001 THEN 'inf' WHEN i = 99999 THEN '-inf'"
        f"   END FROM generate_series(0, 99999) i")
    r = gw.req("GET", f"/v1/runs/{rid}/metrics?name=loss&max_points=400")
    assert r.status == 200, r
    out = r.json()
    pts = out["items"]
    assert out["reduced"] is True and out["total_points"] == 100000 and out["next_cursor"] is None
    assert 100 < len(pts) <= 400
    steps = [p["step"] for p in pts]
    assert steps == sorted(steps) and steps[0] == 0 and steps[-1] == 99999
    assert {p["step"]: p["raw"] for p in pts if p["value"] is None} == {
        4000: "NaN", 50001: "inf", 99999: "-inf"}
    values = [p["value"] for p in pts if p["value"] is not None]
    assert max(values) == 1000 and min(values) == -1000
    # the shape survives: every bucket's extremes are there
    assert max(v for v in values if v < 1000) > 0.999 and min(v for v in values if v > -1000) < -0.999
    # a short series comes whole, marked as such
    small = gw.req("GET", f"/v1/runs/{rid}/metrics?name=loss&max_points=10000&attempt=2").json()
    assert small == {"name": "loss", "items": [], "next_cursor": None, "reduced": False,
                     "total_points": 0}
    sql(f"INSERT INTO run_metrics (run_id, attempt, name, step, at, value)"
        f" SELECT '{rid}', 1, 'acc', i, now(), i FROM generate_series(1, 7) i")
    whole = gw.req("GET", f"/v1/runs/{rid}/metrics?name=acc&max_points=8").json()
    assert [p["value"] for p in whole["items"]] == [1, 2, 3, 4, 5, 6, 7]
    assert whole["reduced"] is False and whole["total_points"] == 7
    for q, param in (("max_points=3&name=loss", "max_points"), ("max_points=400", "max_points")):
        r = gw.req("GET", f"/v1/runs/{rid}/metrics?{q}")
        assert r.status == 400 and r.json()["errors"][0]["path"] == param, r


def test_conditional_gets(env):
    gw = env.gw
    rid = env.runs["sweep-d"]
    for path in (f"/v1/runs/{rid}", f"/v1/runs/{rid}/events", "/v1/evidence/public-key",
                 "/v1/openapi.yaml", "/v1/openapi.json"):
        token = {} if "runs" in path else {"token": None}
        r = gw.req("GET", path, **token)
        assert r.status == 200, (path, r)
        tag = r.header("ETag")
        assert re.fullmatch(r'"sha256:[0-9a-f]{64}"', tag), (path, tag)
        again = gw.req("GET", path, headers={"If-None-Match": f'W/"other", {tag}'}, **token)
        assert again.status == 304 and again.body == b"" and again.header("ETag") == tag, path
        other = gw.req("GET", path, headers={"If-None-Match": '"sha256:0"'}, **token)
        assert other.status == 200 and other.body == r.body, path
    # the run view's tag moves with the run
    tag = gw.req("GET", f"/v1/runs/{rid}").header("ETag")
    assert gw.req("POST", f"/v1/runs/{rid}:cancel").status == 200
    r = gw.req("GET", f"/v1/runs/{rid}", headers={"If-None-Match": tag})
    assert r.status == 200 and r.json()["state"] == "Cancelled" and r.header("ETag") != tag


def test_the_contract_is_served_bundled(env):
    gw = env.gw
    y = gw.req("GET", "/v1/openapi.yaml", token=None)
    j = gw.req("GET", "/v1/openapi.json", token=None)
    assert y.status == j.status == 200
    assert y.header("Content-Type").startswith("application/yaml")
    assert j.header("Content-Type").startswith("application/json")
    served = j.json()
    assert yaml.safe_load(y.body) == served
    refs = re.findall(r'"\$ref": ?"([^"]*)"', j.body.decode())
    assert refs and all(ref.startswith("#/") for ref in refs), [
        x for x in refs if not x.startswith("#/")][:5]
    # every local reference resolves
    for ref in set(refs):
        node = served
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
    # the repository's document is the source: same paths and operations,
    # its schemas plus the bundled files'
    with open(f"{REPO}/openapi.yaml") as f:
        source = yaml.safe_load(f)
    assert served["paths"].keys() == source["paths"].keys()
    assert set(source["components"]["schemas"]) < set(served["components"]["schemas"])
    tau = served["components"]["schemas"]["TauSchema"]
    assert "$id" not in tau and "$defs" not in tau
    with open(f"{REPO}/schema/tau.schema.json") as f:
        assert tau["properties"].keys() == json.load(f)["properties"].keys()
