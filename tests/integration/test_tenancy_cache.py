"""Roles and workspace settings are cached in each replica's memory
(store/tenancy_cache.c) yet every change is honoured at once: by the replica
that made it immediately, and by other replicas and direct SQL through
PostgreSQL notifications, long before the cache's 10 s TTL."""

import pytest

import tokens
from gateway import Gateway
from paths import BUILD
from wait import wait_for

WAIT_S = 3  # far below the TTL: only a notification can explain a change this fast


def eventually(fn, want, timeout=WAIT_S):
    """fn()'s value once it is `want`, within WAIT_S."""
    return wait_for(fn, timeout, f"the answer {want!r}", cond=lambda got: got == want)


@pytest.fixture(scope="module")
def world(gateway, pg, db_url):
    assert gateway.req("POST", "/v1/admin/workspaces",
                       body={"name": "lab", "namespace": "lab"}).status == 201
    replica = Gateway(BUILD, db_url).start()
    yield {"dbname": db_url.rsplit("/", 1)[1], "replica": replica}
    assert replica.stop() == 0, replica.logs()[-2000:]
    replica.close()


def status_of(gw, who):
    return gw.req("GET", "/v1/workspaces/lab", token=tokens.mint(who)).status


def add_member(gw, subject, role="researcher"):
    r = gw.req("POST", "/v1/admin/workspaces/lab/members",
               body={"kind": "user", "subject": subject, "role": role})
    assert r.status == 201, r
    return r.json()["id"]


def test_a_change_through_this_replica_is_seen_by_the_next_request(gateway, world):
    member = add_member(gateway, "ana")
    assert status_of(gateway, "ana") == 200
    assert status_of(gateway, "ana") == 200  # now served from memory
    assert gateway.req("DELETE", f"/v1/admin/workspaces/lab/members/{member}").status == 204
    assert status_of(gateway, "ana") == 404  # no wait at all


def test_another_replica_hears_of_the_change(gateway, world):
    replica = world["replica"]
    member = add_member(gateway, "ben")
    assert eventually(lambda: status_of(replica, "ben"), 200) == 200
    assert status_of(replica, "ben") == 200
    assert gateway.req("DELETE", f"/v1/admin/workspaces/lab/members/{member}").status == 204
    assert eventually(lambda: status_of(replica, "ben"), 404) == 404


def test_a_change_made_with_sql_is_heard_too(gateway, pg, world):
    add_member(gateway, "cem", role="viewer")
    run = {"spec": "name: x\nengine: job\nentrypoint: train.py\nimage: python:3.12\n",
           "files": {"train.py": "cHJpbnQoMSkK"}}
    cem = tokens.mint("cem")
    assert gateway.req("POST", "/v1/workspaces/lab/runs:validate", body=run,
                       token=cem).status == 403  # a viewer may not
    pg.psql("UPDATE workspace_members SET role = 'researcher' WHERE subject = 'cem'",
            db=world["dbname"])
    assert eventually(lambda: gateway.req("POST", "/v1/workspaces/lab/runs:validate", body=run,
                                          token=cem).status, 200) == 200
    pg.psql("DELETE FROM workspace_members WHERE subject = 'cem'", db=world["dbname"])
    assert eventually(lambda: status_of(gateway, "cem"), 404) == 404


def test_workspace_settings_changed_with_sql_reach_resolution(gateway, pg, world):
    spec = {"spec": "name: y\nengine: job\nentrypoint: train.py\nimage: python:3.12\n",
            "files": {"train.py": "cHJpbnQoMSkK"}}
    first = gateway.req("POST", "/v1/workspaces/lab/runs:validate", body=spec)
    assert first.status == 200, first
    assert first.json()["resolved"]["storage"]["output"] != "/results/changed/y"
    pg.psql("UPDATE workspaces SET output_root = '/results/changed' WHERE name = 'lab'",
            db=world["dbname"])

    def resolved_output_root():
        r = gateway.req("POST", "/v1/workspaces/lab/runs:validate", body=spec)
        return r.json()["resolved"]["storage"]["output"] == "/results/changed/y"
    assert eventually(resolved_output_root, True) is True
