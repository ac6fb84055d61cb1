"""The audit trail under concurrency: requests share commits (group commit
in store/audit_writer.c), yet each mutating request is on the record, once
and in full, before it is answered. A run submission stores its audit row in
the statement that stores the run."""
from concurrent.futures import ThreadPoolExecutor

N = 48


def audit_rows(pg, dbname, where):
    out = pg.psql("SELECT request_id || '|' || method || '|' || route || '|' || status || '|' ||"
                  f" coalesce(subject, '') FROM audit_log WHERE {where} ORDER BY id", db=dbname)
    return [line.split("|") for line in out.splitlines() if line]


def test_each_answer_comes_after_its_audit_row(gateway, pg, db_url):
    dbname = db_url.rsplit("/", 1)[1]
    r = gateway.req("POST", "/v1/admin/flavors", body={"name": "solo"})
    assert r.status == 201
    rid = r.header("X-Request-Id")
    rows = audit_rows(pg, dbname, f"request_id = '{rid}'")
    assert len(rows) == 1 and rows[0][:4] == [rid, "POST", "/v1/admin/flavors", "201"], rows
    assert rows[0][4]  # who did it


def test_concurrent_requests_are_each_recorded_once(gateway, pg, db_url):
    dbname = db_url.rsplit("/", 1)[1]

    def create(i):
        r = gateway.req("POST", "/v1/admin/flavors", body={"name": f"flavor-{i}"})
        # the row is there the moment the answer is
        rid = r.header("X-Request-Id")
        rows = audit_rows(pg, dbname, f"request_id = '{rid}'")
        return r.status, rid, rows

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(create, range(N)))
    assert all(status == 201 for status, _, _ in results)
    for status, rid, rows in results:
        assert len(rows) == 1 and rows[0][:4] == [rid, "POST", "/v1/admin/flavors", "201"], rows
    ids = {rid for _, rid, _ in results}
    recorded = audit_rows(pg, dbname, "route = '/v1/admin/flavors' AND request_id <> ''")
    assert {row[0] for row in recorded} >= ids
    assert len([row for row in recorded if row[0] in ids]) == N  # none twice


def test_a_submission_is_recorded_with_its_run_and_a_replay_on_its_own(gateway, pg, db_url):
    from world import kind_cpu_workspace
    dbname = db_url.rsplit("/", 1)[1]
    kind_cpu_workspace(gateway)
    body = {"spec": "name: audited\nengine: job\nentrypoint: train.py\nimage: python:3.12\n",
            "files": {"train.py": "cHJpbnQoMSkK"}}
    first = gateway.req("POST", "/v1/workspaces/ray/runs", body=body,
                        headers={"Idempotency-Key": "audit-1"})
    assert first.status == 201, first
    replay = gateway.req("POST", "/v1/workspaces/ray/runs", body=body,
                         headers={"Idempotency-Key": "audit-1"})
    assert replay.status == 201 and replay.header("Idempotency-Replayed") == "true"
    for r in (first, replay):
        rid = r.header("X-Request-Id")
        rows = audit_rows(pg, dbname, f"request_id = '{rid}'")
        assert len(rows) == 1, rows
        assert rows[0][:4] == [rid, "POST", "/v1/workspaces/{ws}/runs", "201"], rows
    refused = gateway.req("POST", "/v1/workspaces/ray/runs", body={"spec": "name: [\n"})
    assert refused.status in (400, 422)
    rid = refused.header("X-Request-Id")
    assert audit_rows(pg, dbname, f"request_id = '{rid}'")[0][3] == str(refused.status)
