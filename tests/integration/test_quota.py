"""Quotas: what a workspace sees of its queues, quota requests and their
decision (which grows the ClusterQueue in the database and the cluster, and
is audited), queues that cannot be deleted while work is admitted, and
GPU usage from run records."""
import datetime
import os
import uuid

import pytest

from gateway import Gateway
from kubesim import KubeSim
from paths import BUILD, REPO
from tokens import mint
from wait import wait_for

# Until the routes are wired into gateway/api/routes.c these tests cannot run.
with open(os.path.join(REPO, "gateway", "api", "routes.c")) as _f:
    if "tg_api_quota_view" not in _f.read():
        pytest.skip("the quota and Kueue sync routes are not in routes.c yet",
                    allow_module_level=True)

KV = "kueue.x-k8s.io/v1beta1"
ALICE, BOB, CAROL = "alice@example.com", "bob@example.com", "carol@example.com"


def post(gw, path, body, token=None):
    kw = {"token": token} if token else {}
    r = gw.req("POST", path, body=body, **kw)
    assert r.status == 201, (path, r)
    return r.json()


def errors_of(r):
    return {e["path"]: e["message"] for e in r.json().get("errors", [])}


@pytest.fixture(scope="module")
def cluster():
    ks = KubeSim().start()
    yield ks
    ks.stop()


@pytest.fixture(scope="module")
def gw(db_url, cluster):
    g = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": cluster.url,
                                          "TAUGATE_RECONCILE_INTERVAL_S": "1"}).start()
    post(g, "/v1/admin/flavors", {"name": "default-flavor"})
    post(g, "/v1/admin/cluster-queues", {
        "name": "ml-cq", "resource_groups": [{
            "covered_resources": ["cpu", "memory", "nvidia.com/gpu"],
            "flavors": [{"name": "default-flavor", "resources": [
                {"name": "cpu", "nominal_quota": "4"},
                {"name": "memory", "nominal_quota": "16Gi"},
                {"name": "nvidia.com/gpu", "nominal_quota": "2"}]}]}]})
    post(g, "/v1/admin/workspaces", {"name": "ml", "namespace": "ml", "default_queue": "main"})
    post(g, "/v1/admin/workspaces", {"name": "other", "namespace": "other"})
    post(g, "/v1/admin/workspaces/ml/queues", {"name": "main", "cluster_queue": "ml-cq"})
    for subject, role in [(ALICE, "researcher"), (BOB, "viewer")]:
        post(g, "/v1/admin/workspaces/ml/members",
             {"kind": "user", "subject": subject, "role": role})
    wait_for(lambda: cluster.get_obj(KV, "localqueues", "main", "ml"), 20, "queue in cluster")
    yield g
    status = g.stop()
    logs = g.logs()
    g.close()
    assert status == 0, logs[-3000:]


def job(name, queue, cpu, seconds=60, ns="ml"):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kueue.x-k8s.io/queue-name": queue}},
            "spec": {"template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox",
                                "command": ["sleep", str(seconds)],
                                "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}}}}


def lq_status(ks, name, ns="ml"):
    return (ks.get_obj(KV, "localqueues", name, ns) or {}).get("status", {})


def cq_quota(ks, name, resource):
    cq = ks.get_obj(KV, "clusterqueues", name)
    for r in cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
        if r["name"] == resource:
            return r["nominalQuota"]
    return None


def test_quota_view_shows_nominal_usage_and_pending(gw, cluster):
    ks = cluster
    ks.create(job("admitted-one", "main", "1"))
    ks.create(job("too-big", "main", "10"))
    wait_for(lambda: lq_status(ks, "main").get("admittedWorkloads") == 1 and
             lq_status(ks, "main").get("pendingWorkloads") == 1, 20, "one admitted, one pending")
    r = gw.req("GET", "/v1/workspaces/ml/quota", token=mint(BOB))
    assert r.status == 200, r
    view = r.json()
    assert view["source"] == "cluster" and view["namespace"] == "ml"
    (q,) = view["queues"]
    assert q["name"] == "main" and q["cluster_queue"] == "ml-cq" and q["default"] is True
    assert q["in_cluster"] is True and q["cohort"] is None
    assert q["workloads"] == {"pending": 1, "reserving": 1, "admitted": 1}
    assert q["active"]["status"] == "True"
    res = {x["resource"]: x for x in q["resources"]}
    assert res["cpu"]["nominal"] == "4"
    assert res["cpu"]["in_use"] == "1" and res["cpu"]["reserved"] == "1"
    assert res["cpu"]["available"] == "3"
    assert res["cpu"]["pending"] == "10"
    assert res["cpu"]["borrowable"] == "0"  # no cohort, nothing to borrow
    assert res["memory"]["nominal"] == "16Gi" and res["memory"]["in_use"] == "1Gi"
    assert res["nvidia.com/gpu"]["in_use"] == "0"
    fl = {x["resource"]: x for x in q["flavors"]}
    assert fl["cpu"]["flavor"] == "default-flavor"
    assert fl["cpu"]["desired"] is None  # the cluster has what the database wants
    assert fl["cpu"]["in_cluster"] is True
    for name in ("admitted-one", "too-big"):
        ks.delete(f"/apis/batch/v1/namespaces/ml/jobs/{name}")


def test_quota_view_is_for_members(gw):
    assert gw.req("GET", "/v1/workspaces/ml/quota", token=mint(ALICE)).status == 200
    assert gw.req("GET", "/v1/workspaces/ml/quota", token=mint(CAROL)).status == 404


def test_quota_view_without_a_cluster_shows_the_database(gw, db_url):
    # the module's gateway made the workspace; a second one has no cluster
    g = Gateway(BUILD, db_url).start()
    try:
        r = g.req("GET", "/v1/workspaces/ml/quota", token=mint(BOB))
        assert r.status == 200, r
        view = r.json()
        assert view["source"] == "database" and "cluster_error" not in view
        (q,) = view["queues"]
        assert q["in_cluster"] is False and q["workloads"] == {} and q["active"] is None
        res = {x["resource"]: x for x in q["resources"]}
        assert res["cpu"]["nominal"] == "4" and res["cpu"]["in_use"] is None
        assert res["cpu"]["pending"] is None
        fl = {x["resource"]: x for x in q["flavors"]}
        assert fl["memory"]["in_cluster"] is False and fl["memory"]["desired"]["nominal"] == "16Gi"
    finally:
        assert g.stop() == 0
        g.close()


def test_request_approve_grows_the_cluster_queue_and_is_audited(gw, cluster):
    body = {"resource": "nvidia.com/gpu", "amount": "2", "reason": "paper deadline"}
    assert gw.req("POST", "/v1/workspaces/ml/quota-requests", body=body,
                  token=mint(BOB)).status == 403
    assert gw.req("POST", "/v1/workspaces/ml/quota-requests", body=body,
                  token=mint(CAROL)).status == 404
    r = gw.req("POST", "/v1/workspaces/ml/quota-requests", body=body, token=mint(ALICE))
    assert r.status == 201, r
    req = r.json()
    assert req["state"] == "pending" and req["requester"] == ALICE
    assert req["queue"] == "main" and req["cluster_queue"] == "ml-cq"
    assert r.header("Location") == f"/v1/workspaces/ml/quota-requests/{req['id']}"

    mine = gw.req("GET", "/v1/workspaces/ml/quota-requests", token=mint(BOB)).json()["items"]
    assert req["id"] in [x["id"] for x in mine]
    one = gw.req("GET", f"/v1/workspaces/ml/quota-requests/{req['id']}", token=mint(BOB))
    assert one.status == 200 and one.json()["reason"] == "paper deadline"
    pending = gw.req("GET", "/v1/admin/quota-requests?state=pending").json()["items"]
    assert req["id"] in [x["id"] for x in pending]
    seen = gw.req("GET", f"/v1/admin/quota-requests/{req['id']}")
    assert seen.status == 200 and seen.json()["requester"] == ALICE
    assert gw.req("GET", f"/v1/admin/quota-requests/{uuid.uuid4()}").status == 404
    # researchers do not decide
    assert gw.req("POST", f"/v1/admin/quota-requests/{req['id']}:approve",
                  token=mint(ALICE)).status == 403

    r = gw.req("POST", f"/v1/admin/quota-requests/{req['id']}:approve",
               body={"decision": "ok for Q3"})
    assert r.status == 200, r
    done = r.json()
    assert done["state"] == "approved" and done["decision"] == "ok for Q3"
    assert done["decided_by"] and done["decided_at"]
    assert done["flavor"] == "default-flavor"
    assert done["applied"]["nominal_before"] == "2" and done["applied"]["nominal_after"] == "4"

    cq = gw.req("GET", "/v1/admin/cluster-queues/ml-cq").json()
    gpu = [x for x in cq["resource_groups"][0]["flavors"][0]["resources"]
           if x["name"] == "nvidia.com/gpu"][0]
    assert gpu["nominal_quota"] == "4"
    wait_for(lambda: cq_quota(cluster, "ml-cq", "nvidia.com/gpu") == "4", 20, "quota in cluster")

    audit = gw.req("GET", "/v1/admin/audit?workspace=ml").json()["items"]
    grown = [a for a in audit if a["target"] == "/v1/admin/cluster-queues/ml-cq"]
    assert grown, audit
    assert grown[0]["detail"]["nominal_after"] == "4"
    assert grown[0]["detail"]["quota_request"] == req["id"]
    assert grown[0]["detail"]["resource"] == "nvidia.com/gpu"

    # decided once
    again = gw.req("POST", f"/v1/admin/quota-requests/{req['id']}:approve")
    assert again.status == 409 and "already approved" in again.json()["detail"]
    assert gw.req("POST", f"/v1/admin/quota-requests/{req['id']}:reject").status == 409
    # the change was made by taugate, not by hand: no drift
    items = gw.req("GET", "/v1/admin/drift?state=all&name=ml-cq").json()["items"]
    assert [i for i in items if i["problem"] == "edited"] == []


def test_reject_leaves_the_quota_alone(gw):
    r = post(gw, "/v1/workspaces/ml/quota-requests",
             {"resource": "cpu", "amount": "8", "reason": "more please"}, token=mint(ALICE))
    assert r["amount"] == "8"
    done = gw.req("POST", f"/v1/admin/quota-requests/{r['id']}:reject",
                  body={"decision": "not this quarter"})
    assert done.status == 200 and done.json()["state"] == "rejected"
    assert done.json()["applied"] is None
    cq = gw.req("GET", "/v1/admin/cluster-queues/ml-cq").json()
    cpu = cq["resource_groups"][0]["flavors"][0]["resources"][0]
    assert cpu["nominal_quota"] == "4"
    rejected = gw.req("GET", "/v1/admin/quota-requests?state=rejected&workspace=ml").json()
    assert r["id"] in [x["id"] for x in rejected["items"]]
    assert all(x["state"] == "rejected" for x in rejected["items"])
    assert gw.req("POST", f"/v1/admin/quota-requests/{r['id']}:approve").status == 409


def test_memory_is_added_exactly_in_its_notation(gw, cluster):
    # a workspace and cluster queue of its own: the quota views read ml-cq's 16Gi
    post(gw, "/v1/admin/cluster-queues", {
        "name": "mem-cq", "resource_groups": [{
            "covered_resources": ["cpu", "memory"],
            "flavors": [{"name": "default-flavor", "resources": [
                {"name": "cpu", "nominal_quota": "1"},
                {"name": "memory", "nominal_quota": "16Gi"}]}]}]})
    post(gw, "/v1/admin/workspaces", {"name": "mem", "namespace": "mem", "default_queue": "main"})
    post(gw, "/v1/admin/workspaces/mem/queues", {"name": "main", "cluster_queue": "mem-cq"})
    post(gw, "/v1/admin/workspaces/mem/members",
         {"kind": "user", "subject": ALICE, "role": "researcher"})
    wait_for(lambda: cluster.get_obj(KV, "clusterqueues", "mem-cq"), 20, "mem-cq in cluster")
    r = post(gw, "/v1/workspaces/mem/quota-requests",
             {"resource": "memory", "amount": "1.5Gi", "reason": "bigger batches",
              "queue": "main", "flavor": "default-flavor"}, token=mint(ALICE))
    done = gw.req("POST", f"/v1/admin/quota-requests/{r['id']}:approve").json()
    assert done["applied"]["nominal_before"] == "16Gi"
    assert done["applied"]["nominal_after"] == "17920Mi"
    wait_for(lambda: cq_quota(cluster, "mem-cq", "memory") == "17920Mi", 20, "memory quota")


def test_request_validation(gw):
    def bad(body, token=mint(ALICE)):
        r = gw.req("POST", "/v1/workspaces/ml/quota-requests", body=body, token=token)
        assert r.status == 422, r
        return errors_of(r)
    assert "amount" in bad({"resource": "cpu", "amount": "lots", "reason": "x"})
    assert "amount" in bad({"resource": "cpu", "amount": "-2", "reason": "x"})
    assert "amount" in bad({"resource": "cpu", "amount": 2, "reason": "x"})  # a string, as in k8s
    assert "reason" in bad({"resource": "cpu", "amount": "1"})
    assert "resource" in bad({"resource": "example.com/fpga", "amount": "1", "reason": "x"})
    assert "queue" in bad({"resource": "cpu", "amount": "1", "reason": "x", "queue": "nope"})
    assert "flavor" in bad({"resource": "cpu", "amount": "1", "reason": "x", "flavor": "other"})
    assert "colour" in bad({"resource": "cpu", "amount": "1", "reason": "x", "colour": "red"})
    # a workspace without a default queue must name one
    post(gw, "/v1/admin/workspaces/other/members", {"kind": "user", "subject": ALICE,
                                                    "role": "researcher"})
    r = gw.req("POST", "/v1/workspaces/other/quota-requests",
               body={"resource": "cpu", "amount": "1", "reason": "x"}, token=mint(ALICE))
    assert r.status == 422 and "default queue" in errors_of(r)["queue"]
    assert gw.req("GET", "/v1/admin/quota-requests?state=maybe").status == 400
    assert gw.req("GET", "/v1/admin/quota-requests?cursor=bm9wZQ").status == 400
    assert gw.req("POST", f"/v1/admin/quota-requests/{uuid.uuid4()}:approve").status == 404
    assert gw.req("POST", "/v1/admin/quota-requests/not-a-uuid:approve").status == 404
    assert gw.req("GET", f"/v1/workspaces/ml/quota-requests/{uuid.uuid4()}",
                  token=mint(BOB)).status == 404


def test_idempotent_request(gw):
    body = {"resource": "cpu", "amount": "1", "reason": "retry me"}
    key = {"Idempotency-Key": "qr-1"}
    first = gw.req("POST", "/v1/workspaces/ml/quota-requests", body=body, headers=key,
                   token=mint(ALICE))
    again = gw.req("POST", "/v1/workspaces/ml/quota-requests", body=body, headers=key,
                   token=mint(ALICE))
    assert first.status == 201 and again.status == 201
    assert again.header("Idempotency-Replayed") == "true"
    assert again.json()["id"] == first.json()["id"]
    other = gw.req("POST", "/v1/workspaces/ml/quota-requests", body=dict(body, amount="2"),
                   headers=key, token=mint(ALICE))
    assert other.status == 409


def test_paging_requests(gw):
    mine = {post(gw, "/v1/workspaces/ml/quota-requests",
                 {"resource": "cpu", "amount": "1", "reason": f"page {i}"}, token=mint(ALICE))["id"]
            for i in range(3)}
    page = gw.req("GET", "/v1/admin/quota-requests?limit=2").json()
    assert len(page["items"]) == 2 and page["next_cursor"]
    rest = gw.req("GET", f"/v1/admin/quota-requests?limit=200&cursor={page['next_cursor']}")
    ids = [x["id"] for x in page["items"]] + [x["id"] for x in rest.json()["items"]]
    assert len(ids) == len(set(ids)) and mine <= set(ids)


def test_admins_see_pending_requests_first_come_first_served(gw):
    first = post(gw, "/v1/workspaces/ml/quota-requests",
                 {"resource": "cpu", "amount": "1", "reason": "first"}, token=mint(ALICE))
    second = post(gw, "/v1/workspaces/ml/quota-requests",
                  {"resource": "cpu", "amount": "1", "reason": "second"}, token=mint(ALICE))
    pending = [x["id"] for x in
               gw.req("GET", "/v1/admin/quota-requests?state=pending").json()["items"]]
    assert pending.index(first["id"]) < pending.index(second["id"])
    # a page boundary keeps the order
    page = gw.req("GET", "/v1/admin/quota-requests?state=pending&limit=1").json()
    rest = gw.req("GET", "/v1/admin/quota-requests?state=pending&limit=200&cursor="
                  + page["next_cursor"]).json()
    assert [x["id"] for x in page["items"] + rest["items"]] == pending
    # the workspace's own list is newest first
    mine = [x["id"] for x in
            gw.req("GET", "/v1/workspaces/ml/quota-requests", token=mint(BOB)).json()["items"]]
    assert mine.index(second["id"]) < mine.index(first["id"])
    for r in (first, second):
        assert gw.req("POST", f"/v1/admin/quota-requests/{r['id']}:reject").status == 200


def test_deleting_a_queue_with_admitted_work_is_refused(gw, cluster):
    ks = cluster
    post(gw, "/v1/admin/workspaces/ml/queues", {"name": "busy", "cluster_queue": "ml-cq"})
    wait_for(lambda: ks.get_obj(KV, "localqueues", "busy", "ml"), 20, "busy queue")
    ks.create(job("holder", "busy", "1"))
    wait_for(lambda: lq_status(ks, "busy").get("admittedWorkloads") == 1, 20, "admission")
    r = gw.req("DELETE", "/v1/admin/workspaces/ml/queues/busy")
    assert r.status == 409, r
    assert "admitted" in r.json()["detail"]
    r = gw.req("DELETE", "/v1/admin/cluster-queues/ml-cq")
    assert r.status == 409 and "admitted" in r.json()["detail"], r
    assert gw.req("GET", "/v1/admin/workspaces/ml/queues/busy").status == 200
    ks.delete("/apis/batch/v1/namespaces/ml/jobs/holder")
    wait_for(lambda: lq_status(ks, "busy").get("admittedWorkloads", 0) == 0, 30, "the work gone")
    assert gw.req("DELETE", "/v1/admin/workspaces/ml/queues/busy").status == 204
    wait_for(lambda: ks.get_obj(KV, "localqueues", "busy", "ml") is None, 20, "deleted")


def test_deleting_a_queue_that_running_runs_use_is_refused(gw, pg, db_url):
    db = db_url.rsplit("/", 1)[1]
    post(gw, "/v1/admin/workspaces/ml/queues", {"name": "dbq", "cluster_queue": "ml-cq"})
    run_id = str(uuid.uuid4())
    pg.psql("INSERT INTO runs (id, workspace, name, owner, engine, state, spec_text, resolved,"
            " manifests, config_hash) VALUES ('%s', 'ml', 'r', '%s', 'job', 'Running', '',"
            " '{\"policy\": {\"queue\": \"dbq\"}}', '[]', 'x')" % (run_id, ALICE), db=db)
    r = gw.req("DELETE", "/v1/admin/workspaces/ml/queues/dbq")
    assert r.status == 409 and run_id in r.json()["detail"], r
    pg.psql(f"UPDATE runs SET state = 'Succeeded' WHERE id = '{run_id}'", db=db)
    assert gw.req("DELETE", "/v1/admin/workspaces/ml/queues/dbq").status == 204


def test_usage_counts_gpu_hours_per_workspace_and_user(gw, pg, db_url):
    db = db_url.rsplit("/", 1)[1]
    base = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    t = base.isoformat()

    def run(ws, owner, state, created_h, attempts):
        rid = str(uuid.uuid4())
        pg.psql("INSERT INTO runs (id, workspace, name, owner, engine, state, spec_text,"
                " resolved, manifests, config_hash, created_at) VALUES"
                f" ('{rid}', '{ws}', 'u', '{owner}', 'job', '{state}', '', '{{}}', '[]', 'x',"
                f" '{t}'::timestamptz - interval '{created_h} hours')", db=db)
        for n, (gpus, start_h, end_h) in enumerate(attempts, 1):
            end = "NULL" if end_h is None else f"'{t}'::timestamptz - interval '{end_h} hours'"
            pg.psql("INSERT INTO run_attempts (run_id, attempt, state, gpu_count, created_at,"
                    f" started_at, finished_at) VALUES ('{rid}', {n}, '{state}', {gpus},"
                    f" '{t}'::timestamptz - interval '{start_h} hours',"
                    f" '{t}'::timestamptz - interval '{start_h} hours', {end})", db=db)
    run("ml", "u1@example.com", "Succeeded", 3, [(4, 3, 2)])      # 4 GPUs, 1 h
    run("ml", "u2@example.com", "Running", 1, [(2, 1, None)])     # 2 GPUs, still running
    run("other", "u1@example.com", "Failed", 30, [(1, 30, 28)])  # outside the window below
    # a retried run: attempt 1 has no finish time; it ends where attempt 2 starts
    run("ml", "u1@example.com", "Succeeded", 2, [(1, 2, None), (1, 1.5, 1)])

    since = (base - datetime.timedelta(hours=2.5)).isoformat().replace("+00:00", "Z")
    until = (base - datetime.timedelta(hours=0.5)).isoformat().replace("+00:00", "Z")
    r = gw.req("GET", f"/v1/admin/usage?since={since}&until={until}")
    assert r.status == 200, r
    u = r.json()
    users = {(x["workspace"], x["user"]): x for x in u["users"]}
    # u1 in ml: 4 GPUs x 0.5 h (clipped at since) + retried run 0.5 h + 0.5 h
    assert users[("ml", "u1@example.com")]["gpu_hours"] == pytest.approx(3.0, abs=1e-3)
    assert users[("ml", "u1@example.com")]["runs"] == 1  # created within the window
    assert users[("ml", "u1@example.com")]["attempts"] == 3
    # u2: 2 GPUs from -1 h to until (-0.5 h)
    assert users[("ml", "u2@example.com")]["gpu_hours"] == pytest.approx(1.0, abs=1e-3)
    assert users[("ml", "u2@example.com")]["active"] == 1
    assert ("other", "u1@example.com") not in users
    ws = {x["workspace"]: x for x in u["workspaces"]}
    assert ws["ml"]["gpu_hours"] == pytest.approx(4.0, abs=1e-3)
    assert ws["ml"]["gpu_seconds"] == 14400
    assert u["totals"]["gpu_hours"] == pytest.approx(4.0, abs=1e-3)

    wide = gw.req("GET", "/v1/admin/usage?workspace=other").json()
    assert wide["workspaces"][0]["gpu_hours"] == pytest.approx(2.0, abs=1e-3)
    assert wide["workspaces"][0]["failed"] == 1
    assert gw.req("GET", "/v1/admin/usage?since=not-a-time").status == 400
    assert gw.req("GET", f"/v1/admin/usage?since={until}&until={since}").status == 400
    assert gw.req("GET", "/v1/admin/usage", token=mint(ALICE)).status == 403
