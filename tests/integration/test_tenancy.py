"""Identity and tenancy: tokens, roles, isolation, personal access tokens,
the audit trail and rate limits."""

import pytest

import tokens
from gateway import Gateway
from paths import BUILD
from wait import wait_for


def member(gw, ws, kind, subject, role):
    r = gw.req("POST", f"/v1/admin/workspaces/{ws}/members",
               body={"kind": kind, "subject": subject, "role": role})
    assert r.status == 201, r


@pytest.fixture(scope="module")
def tenants(gateway):
    for ws in ("alpha", "beta"):
        assert gateway.req("POST", "/v1/admin/workspaces",
                           body={"name": ws, "namespace": ws}).status == 201
    member(gateway, "alpha", "user", "alice", "researcher")
    member(gateway, "alpha", "user", "victor", "viewer")
    member(gateway, "beta", "user", "bob", "admin")
    member(gateway, "alpha", "group", "ml-team", "viewer")
    return {
        "alice": tokens.mint("alice"),
        "victor": tokens.mint("victor"),
        "bob": tokens.mint("bob"),
        "carol": tokens.mint("carol", groups=["ml-team"]),
        "nobody": tokens.mint("nobody"),
    }


def test_missing_and_bad_tokens_are_401(gateway, tenants):
    r = gateway.req("GET", "/v1/workspaces", token=None)
    assert r.status == 401 and r.header("WWW-Authenticate").startswith('Bearer realm="taugate"')
    cases = {
        "expired": tokens.mint("alice", ttl=-3600),
        "wrong issuer": tokens.mint("alice", iss="https://evil.example"),
        "wrong audience": tokens.mint("alice", aud="someone-else"),
        "bad signature": tokens.mint("alice", secret="another-secret-another-secret-xx"),
        "alg none": tokens.mint("alice").rsplit(".", 1)[0].replace(
            tokens.b64url(b'{"alg": "HS256", "typ": "JWT"}'),
            tokens.b64url(b'{"alg": "none", "typ": "JWT"}')) + ".",
        "garbage": "not-a-token",
    }
    for what, tok in cases.items():
        r = gateway.req("GET", "/v1/workspaces", token=tok)
        assert r.status == 401, what
        assert 'error="invalid_token"' in r.header("WWW-Authenticate"), what
        assert tok not in r.body.decode()
    metrics = gateway.req("GET", "/metrics").body.decode()
    assert 'taugate_auth_failures_total{reason="expired"} 1' in metrics
    assert 'taugate_auth_failures_total{reason="missing"}' in metrics


def test_admin_routes_need_a_platform_admin(gateway, tenants):
    for who in ("alice", "bob"):
        r = gateway.req("GET", "/v1/admin/workspaces", token=tenants[who])
        assert r.status == 403, who
        r = gateway.req("POST", "/v1/admin/workspaces", body={"name": "x", "namespace": "x"},
                        token=tenants[who])
        assert r.status == 403
    assert gateway.req("GET", "/v1/admin/workspaces").status == 200


def test_researchers_see_only_their_workspaces(gateway, tenants):
    names = lambda tok: [w["name"] for w in gateway.req("GET", "/v1/workspaces",
                                                       token=tok).json()["items"]]
    assert names(tenants["alice"]) == ["alpha"]
    assert names(tenants["bob"]) == ["beta"]
    assert names(tenants["carol"]) == ["alpha"]  # through the group
    assert names(tenants["nobody"]) == []
    mine = gateway.req("GET", "/v1/workspaces/alpha", token=tenants["alice"]).json()
    assert mine["role"] == "researcher"
    assert gateway.req("GET", "/v1/workspaces/alpha", token=tenants["carol"]).json()["role"] == "viewer"


def test_another_tenants_objects_are_404_without_data(gateway, tenants):
    for path in ("/v1/workspaces/beta", "/v1/workspaces/beta/runs",
                 "/v1/workspaces/beta/profiles"):
        r = gateway.req("GET", path, token=tenants["alice"])
        assert r.status == 404, path
        assert r.json()["detail"] == "workspace beta does not exist"
        # indistinguishable from a workspace that really does not exist
        r2 = gateway.req("GET", path.replace("beta", "gamma"), token=tenants["alice"])
        assert r2.status == 404
        assert r2.json()["detail"] == "workspace gamma does not exist"


def test_personal_access_tokens(gateway, tenants):
    r = gateway.req("POST", "/v1/tokens", token=tenants["alice"],
                    body={"name": "ci", "workspace": "alpha", "role": "viewer",
                          "expires_in_days": 30})
    assert r.status == 201, r
    assert r.header("Cache-Control") == "no-store"
    pat = r.json()["token"]
    assert pat.startswith("tgp_")
    token_id = r.json()["id"]
    # cannot hand out more than one holds, nor for someone else's workspace
    assert gateway.req("POST", "/v1/tokens", token=tenants["alice"],
                       body={"name": "x", "workspace": "alpha", "role": "admin"}).status == 403
    assert gateway.req("POST", "/v1/tokens", token=tenants["alice"],
                       body={"name": "x", "workspace": "beta", "role": "viewer"}).status == 404

    assert gateway.req("GET", "/v1/workspaces/alpha/runs", token=pat).status == 200
    assert [w["name"] for w in gateway.req("GET", "/v1/workspaces", token=pat).json()["items"]] == ["alpha"]
    assert gateway.req("GET", "/v1/workspaces/beta/runs", token=pat).status == 404
    assert gateway.req("POST", "/v1/tokens", token=pat,
                       body={"name": "y", "workspace": "alpha", "role": "viewer"}).status == 403
    listed = gateway.req("GET", "/v1/tokens", token=tenants["alice"]).json()["items"]
    assert [t["id"] for t in listed] == [token_id] and "token" not in listed[0]
    assert gateway.req("DELETE", f"/v1/tokens/{token_id}", token=tenants["bob"]).status == 404
    assert gateway.req("DELETE", f"/v1/tokens/{token_id}", token=tenants["alice"]).status == 204
    assert gateway.req("GET", "/v1/workspaces/alpha/runs", token=pat).status == 401


def mint_pat(gw, minter, ws, role):
    r = gw.req("POST", "/v1/tokens", token=minter,
               body={"name": f"{ws}-{role}", "workspace": ws, "role": role})
    assert r.status == 201, r
    return r.json()["token"]


def my_workspaces(gw, tok):
    return [(w["name"], w["role"]) for w in gw.req("GET", "/v1/workspaces",
                                                   token=tok).json()["items"]]


def test_a_group_members_token_works_in_its_workspace_at_most_at_its_role(gateway, tenants):
    r = gateway.req("POST", "/v1/admin/workspaces/alpha/members",
                    body={"kind": "group", "subject": "ml-leads", "role": "researcher"})
    assert r.status == 201, r
    membership = r.json()["id"]
    dana = tokens.mint("dana", groups=["ml-leads"])  # a member only through the group
    viewer, researcher = (mint_pat(gateway, dana, "alpha", role)
                          for role in ("viewer", "researcher"))
    assert gateway.req("POST", "/v1/tokens", token=dana,
                       body={"name": "x", "workspace": "alpha", "role": "admin"}).status == 403

    assert gateway.req("GET", "/v1/workspaces/alpha", token=researcher).json()["role"] == "researcher"
    assert gateway.req("GET", "/v1/workspaces/alpha", token=viewer).json()["role"] == "viewer"
    assert my_workspaces(gateway, viewer) == [("alpha", "viewer")]
    # a researcher's action: the researcher token is answered as alice (a
    # researcher) is, past the role check (alpha has no queue to ask quota of)
    ask = lambda tok: gateway.req("POST", "/v1/workspaces/alpha/quota-requests", token=tok,
                                  body={"resource": "cpu", "amount": "1", "reason": "more"})
    assert ask(viewer).status == 403
    assert ask(researcher).status == ask(tenants["alice"]).status == 422
    assert gateway.req("GET", "/v1/workspaces/beta", token=researcher).status == 404

    # the group's membership is what the token stood on: removing it stops the token
    assert gateway.req("DELETE", f"/v1/admin/workspaces/alpha/members/{membership}").status == 204
    for tok in (viewer, researcher):
        r = gateway.req("GET", "/v1/workspaces/alpha", token=tok)
        assert r.status == 404 and r.json()["detail"] == "workspace alpha does not exist", r
        assert my_workspaces(gateway, tok) == []


def test_a_platform_admins_token_works_only_in_its_workspace_at_its_role(gateway, tenants):
    admin = tokens.admin_token()  # a platform admin, member of no workspace
    researcher = mint_pat(gateway, admin, "beta", "researcher")
    owner = mint_pat(gateway, admin, "beta", "admin")

    assert gateway.req("GET", "/v1/workspaces/beta", token=owner).json()["role"] == "admin"
    mine = gateway.req("GET", "/v1/workspaces/beta", token=researcher)
    assert mine.status == 200 and mine.json()["role"] == "researcher", mine
    assert my_workspaces(gateway, researcher) == [("beta", "researcher")]
    for tok in (researcher, owner):
        assert gateway.req("GET", "/v1/workspaces/alpha", token=tok).status == 404
        assert gateway.req("GET", "/v1/admin/workspaces", token=tok).status == 403


def test_every_change_is_audited(gateway, tenants):
    r = gateway.req("POST", "/v1/admin/workspaces", body={"name": "audited", "namespace": "audited"},
                    headers={"X-Request-Id": "audit-probe-1"})
    assert r.status == 201
    gateway.req("POST", "/v1/admin/workspaces", body={"name": "x", "namespace": "x"},
                token=tenants["bob"], headers={"X-Request-Id": "audit-probe-2"})
    entries = gateway.req("GET", "/v1/admin/audit?limit=200").json()["items"]
    by_id = {e["request_id"]: e for e in entries}
    ok = by_id["audit-probe-1"]
    assert ok["subject"] == "platform-admin@example.com" and ok["status"] == 201
    assert ok["method"] == "POST" and ok["route"] == "/v1/admin/workspaces"
    refused = by_id["audit-probe-2"]
    assert refused["subject"] == "bob" and refused["status"] == 403
    bobs = gateway.req("GET", "/v1/admin/audit?subject=bob").json()["items"]
    assert bobs and all(e["subject"] == "bob" for e in bobs)
    # paging walks the whole trail newest first
    page = gateway.req("GET", "/v1/admin/audit?limit=1").json()
    nxt = gateway.req("GET", f"/v1/admin/audit?limit=1&cursor={page['next_cursor']}").json()
    assert nxt["items"][0]["id"] < page["items"][0]["id"]


def test_rate_limit_answers_429_with_retry_after(db_url):
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_RATE_LIMIT_RPS": "1",
                                           "TAUGATE_RATE_LIMIT_BURST": "3"}).start()
    try:
        tok = tokens.mint("limited")
        statuses = [gw.req("GET", "/v1/workspaces", token=tok).status for _ in range(5)]
        assert statuses[:3] == [200, 200, 200] and 429 in statuses[3:]
        r = gw.req("GET", "/v1/workspaces", token=tok)
        assert r.status == 429 and int(r.header("Retry-After")) >= 1
        # another principal has its own bucket
        assert gw.req("GET", "/v1/workspaces", token=tokens.mint("other")).status == 200
        # the bucket refills (1 token a second): served again
        wait_for(lambda: gw.req("GET", "/v1/workspaces", token=tok).status, 3,
                 "a token back in the principal's bucket", cond=lambda s: s == 200)
    finally:
        assert gw.stop() == 0
        gw.close()


def test_gateway_refuses_to_start_without_auth_config(db_url):
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_AUTH_ISSUER": "",
                                           "TAUGATE_MIGRATE_ON_START": "false"})
    gw.start(wait=False)
    assert gw.proc.wait(timeout=10) == 2
    assert "authentication is not configured" in gw.logs()
    gw.close()
