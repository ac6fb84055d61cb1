"""A submission answers the run exactly as a read of it does: the gateway
builds that answer itself (store/runs.c) rather than asking PostgreSQL to
serialise the row it just wrote, so this pins the two together, key order and
timestamp text included. No cluster here: the run stays Accepted."""
import json

import pytest

from world import kind_cpu_gateway, smoke_body

BODY = smoke_body()


@pytest.fixture(scope="module")
def gw(db_url):
    with kind_cpu_gateway(db_url) as g:
        yield g


def read(gw, run_id):
    r = gw.req("GET", f"/v1/runs/{run_id}")
    assert r.status == 200
    return r.json()


def same_text(a, b):
    """Equal values with keys in the same order, at every level."""
    return json.dumps(a) == json.dumps(b)


def test_submit_answer_is_the_stored_view(gw):
    r = gw.req("POST", "/v1/workspaces/ray/runs", body=BODY)
    assert r.status == 201
    sub = r.json()
    assert isinstance(sub.pop("warnings"), list)
    got = read(gw, sub["id"])
    assert same_text(sub, got), (sub, got)
    assert sub["state"] == "Accepted" and sub["attempt"] == 1
    assert sub["created_at"] == sub["updated_at"] == sub["attempts"][0]["created_at"]
    assert sub["created_at"].endswith("+00:00")
    first = gw.req("GET", f"/v1/runs/{sub['id']}/events").json()["items"][0]
    assert first["state"] == "Accepted"


def test_idempotent_replay_answers_the_same_view(gw):
    key = {"Idempotency-Key": "view-1"}
    first = gw.req("POST", "/v1/workspaces/ray/runs", body=BODY, headers=key)
    again = gw.req("POST", "/v1/workspaces/ray/runs", body=BODY, headers=key)
    assert first.status == again.status == 201
    assert again.header("Idempotency-Replayed") == "true"
    a = first.json()
    a.pop("warnings")
    assert same_text(a, again.json())
    assert same_text(a, read(gw, a["id"]))


def test_batch_results_are_the_stored_views(gw):
    r = gw.req("POST", "/v1/workspaces/ray/runs:batch", body={"runs": [BODY, BODY]})
    assert r.status == 200
    runs = [x["run"] for x in r.json()["results"]]
    assert len({x["id"] for x in runs}) == 2
    for run in runs:
        assert same_text(run, read(gw, run["id"]))


def test_deleting_a_run_by_hand_removes_what_it_owns(gw, pg, db_url):
    """The run's files, attempts and events have no foreign key (migration
    0012: the key checks cost a fifth of a submission's database time); a
    trigger still removes them with the run, as the keys' cascade did."""
    db = db_url.rsplit("/", 1)[1]
    run_id = gw.req("POST", "/v1/workspaces/ray/runs", body=BODY).json()["id"]
    other = gw.req("POST", "/v1/workspaces/ray/runs", body=BODY).json()["id"]
    count = ("SELECT (SELECT count(*) FROM run_files WHERE run_id = '{0}') || ','"
             " || (SELECT count(*) FROM run_attempts WHERE run_id = '{0}') || ','"
             " || (SELECT count(*) FROM run_events WHERE run_id = '{0}')")
    assert pg.psql(count.format(run_id), db=db) == "1,1,1"
    pg.psql(f"DELETE FROM runs WHERE id = '{run_id}'", db=db)
    assert pg.psql(count.format(run_id), db=db) == "0,0,0"
    assert pg.psql(count.format(other), db=db) == "1,1,1"
