"""Admin workspaces: create, read, list with cursors, change, delete."""


def ws(name, namespace=None, **extra):
    body = {"name": name, "namespace": namespace or name}
    body.update(extra)
    return body


def test_create_get_patch_delete(gateway):
    r = gateway.req("POST", "/v1/admin/workspaces",
                    body=ws("vision", default_queue="gpu-a", ttl_seconds=3600,
                            pvcs=["data-pvc"]))
    assert r.status == 201, r
    assert r.header("Location") == "/v1/admin/workspaces/vision"
    created = r.json()
    assert created["namespace"] == "vision" and created["log_retention_days"] == 30
    assert created["pvcs"] == ["data-pvc"] and created["ttl_seconds"] == 3600

    assert gateway.req("GET", "/v1/admin/workspaces/vision").json()["default_queue"] == "gpu-a"

    r = gateway.req("PATCH", "/v1/admin/workspaces/vision",
                    body={"default_queue": None, "log_retention_days": 7})
    assert r.status == 200, r
    assert r.json()["default_queue"] is None and r.json()["log_retention_days"] == 7
    assert r.json()["ttl_seconds"] == 3600  # untouched

    assert gateway.req("DELETE", "/v1/admin/workspaces/vision").status == 204
    assert gateway.req("GET", "/v1/admin/workspaces/vision").status == 404
    assert gateway.req("DELETE", "/v1/admin/workspaces/vision").status == 404


def test_duplicate_name_or_namespace_is_409(gateway):
    assert gateway.req("POST", "/v1/admin/workspaces", body=ws("nlp")).status == 201
    assert gateway.req("POST", "/v1/admin/workspaces", body=ws("nlp", "other")).status == 409
    r = gateway.req("POST", "/v1/admin/workspaces", body=ws("nlp2", "nlp"))
    assert r.status == 409 and "nlp" in r.json()["detail"]


def test_invalid_workspace_lists_every_problem(gateway):
    r = gateway.req("POST", "/v1/admin/workspaces",
                    body={"name": "Bad_Name", "ttl_seconds": -1, "colour": "red",
                          "pvcs": ["ok", 3]})
    assert r.status == 422
    errors = {e["path"]: e["message"] for e in r.json()["errors"]}
    assert "DNS-1123" in errors["name"]
    assert errors["namespace"] == "is required"
    assert "between" in errors["ttl_seconds"]
    assert errors["colour"] == "unknown field"
    assert errors["pvcs[1]"] == "must be a string"
    r = gateway.req("PATCH", "/v1/admin/workspaces/nlp", body={"name": "x"})
    assert r.status == 422 and r.json()["errors"][0]["path"] == "name"


def test_list_pages_with_cursor(gateway):
    for i in range(5):
        assert gateway.req("POST", "/v1/admin/workspaces",
                           body=ws(f"page-{i}")).status == 201
    seen, cursor = [], None
    while True:
        path = "/v1/admin/workspaces?limit=2" + (f"&cursor={cursor}" if cursor else "")
        r = gateway.req("GET", path)
        assert r.status == 200
        page = r.json()
        assert len(page["items"]) <= 2
        seen += [w["name"] for w in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert [n for n in seen if n.startswith("page-")] == [f"page-{i}" for i in range(5)]
    assert seen == sorted(seen)
    assert gateway.req("GET", "/v1/admin/workspaces?limit=0").status == 400
    assert gateway.req("GET", "/v1/admin/workspaces?cursor=***").status == 400
