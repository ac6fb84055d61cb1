"""Admin catalogue: compute profiles, flavors, ClusterQueues, LocalQueues,
priority classes and members, with their validation and references."""


def post(gw, path, body):
    return gw.req("POST", path, body=body)


def errors_of(r):
    return {e["path"]: e["message"] for e in r.json().get("errors", [])}


def test_profile_lifecycle_and_settings_checks(gateway):
    good = {"name": "a100-job", "engine": "job", "description": "one A100",
            "settings": {"gpu_class": "a100-80gb", "gpu_resource": "nvidia.com/gpu",
                         "node_selector": {"gpu": "a100"},
                         "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                          "effect": "NoSchedule"}],
                         "resources": {"cpu": "8", "memory": "64Gi"}},
            "allowed_workspaces": ["vision"]}
    r = post(gateway, "/v1/admin/profiles", good)
    assert r.status == 201, r
    assert r.header("Location") == "/v1/admin/profiles/a100-job"
    assert r.json()["settings"]["resources"]["memory"] == "64Gi"

    bad = {"name": "bad", "engine": "spark",
           "settings": {"resources": {"cpu": "eight"}, "colour": "red",
                        "tolerations": [{"operator": "Sometimes"}]}}
    r = post(gateway, "/v1/admin/profiles", bad)
    assert r.status == 422
    assert "job" in errors_of(r)["engine"]
    # semantic checks run once the shape is right
    bad["engine"] = "job"
    r = post(gateway, "/v1/admin/profiles", bad)
    errs = errors_of(r)
    assert "quantity" in errs["settings.resources.cpu"]
    assert errs["settings.colour"].startswith("unknown setting")
    assert errs["settings.tolerations[0].operator"] == "must be Equal or Exists"

    r = gateway.req("PATCH", "/v1/admin/profiles/a100-job", body={"engine": "rayjob"})
    assert r.status == 200 and r.json()["engine"] == "rayjob"
    assert r.json()["settings"]["gpu_class"] == "a100-80gb"
    assert gateway.req("PATCH", "/v1/admin/profiles/a100-job",
                       body={"name": "x"}).status == 422
    assert gateway.req("DELETE", "/v1/admin/profiles/a100-job").status == 204


def test_cluster_queue_and_local_queue_references(gateway):
    assert post(gateway, "/v1/admin/flavors",
                {"name": "h100", "node_labels": {"gpu": "h100"},
                 "node_taints": [{"key": "gpu", "value": "h100", "effect": "NoSchedule"}]}
                ).status == 201
    cq = {"name": "team-a", "cohort": "research", "queueing_strategy": "StrictFIFO",
          "preemption": {"within_cluster_queue": "LowerPriority",
                         "reclaim_within_cohort": "Any"},
          "resource_groups": [{"covered_resources": ["cpu", "nvidia.com/gpu"],
                               "flavors": [{"name": "h100", "resources": [
                                   {"name": "cpu", "nominal_quota": "64"},
                                   {"name": "nvidia.com/gpu", "nominal_quota": "8",
                                    "borrowing_limit": "4"}]}]}]}
    r = post(gateway, "/v1/admin/cluster-queues", cq)
    assert r.status == 201, r
    assert r.json()["resource_groups"][0]["flavors"][0]["resources"][1]["borrowing_limit"] == "4"

    broken = dict(cq, name="team-b", queueing_strategy="LIFO",
                  preemption={"within_cluster_queue": "Always"},
                  resource_groups=[{"covered_resources": ["cpu"], "flavors": [
                      {"name": "h100", "resources": [{"name": "memory", "nominal_quota": "x"}]}]}])
    r = post(gateway, "/v1/admin/cluster-queues", broken)
    assert r.status == 422 and "queueing_strategy" in errors_of(r)
    broken["queueing_strategy"] = "BestEffortFIFO"
    errs = errors_of(post(gateway, "/v1/admin/cluster-queues", broken))
    assert "preemption.within_cluster_queue" in errs
    assert "quantity" in errs["resource_groups[0].flavors[0].resources[0].nominal_quota"]
    assert "covered_resources" in errs["resource_groups[0].flavors[0].resources[0]"]

    assert post(gateway, "/v1/admin/workspaces", {"name": "qa", "namespace": "qa"}).status == 201
    r = post(gateway, "/v1/admin/workspaces/qa/queues", {"name": "gpu", "cluster_queue": "team-a"})
    assert r.status == 201 and r.header("Location") == "/v1/admin/workspaces/qa/queues/gpu"
    r = post(gateway, "/v1/admin/workspaces/qa/queues", {"name": "x", "cluster_queue": "nope"})
    assert r.status == 422 and "ClusterQueue" in r.json()["detail"]
    r = post(gateway, "/v1/admin/workspaces/missing/queues", {"name": "x", "cluster_queue": "team-a"})
    assert r.status == 404 and "workspace missing" in r.json()["detail"]
    # a ClusterQueue that LocalQueues use cannot go
    r = gateway.req("DELETE", "/v1/admin/cluster-queues/team-a")
    assert r.status == 409 and "LocalQueues" in r.json()["detail"]
    assert [q["name"] for q in gateway.req("GET", "/v1/admin/workspaces/qa/queues").json()["items"]] == ["gpu"]
    assert gateway.req("DELETE", "/v1/admin/workspaces/qa/queues/gpu").status == 204
    assert gateway.req("DELETE", "/v1/admin/cluster-queues/team-a").status == 204


def test_priority_classes(gateway):
    r = post(gateway, "/v1/admin/priority-classes", {"name": "taugrid-default", "value": 1000})
    assert r.status == 201 and r.json()["description"] == ""
    assert post(gateway, "/v1/admin/priority-classes",
                {"name": "taugrid-default", "value": 1}).status == 409
    assert post(gateway, "/v1/admin/priority-classes", {"name": "x"}).status == 422


def test_members(gateway):
    assert post(gateway, "/v1/admin/workspaces", {"name": "mem", "namespace": "mem"}).status == 201
    r = post(gateway, "/v1/admin/workspaces/mem/members",
             {"kind": "user", "subject": "alice@example.com", "role": "researcher"})
    assert r.status == 201, r
    member_id = r.json()["id"]
    assert r.header("Location") == f"/v1/admin/workspaces/mem/members/{member_id}"
    assert post(gateway, "/v1/admin/workspaces/mem/members",
                {"kind": "user", "subject": "alice@example.com", "role": "viewer"}).status == 409
    assert post(gateway, "/v1/admin/workspaces/mem/members",
                {"kind": "robot", "subject": "x", "role": "owner"}).status == 422
    r = gateway.req("PATCH", f"/v1/admin/workspaces/mem/members/{member_id}", body={"role": "admin"})
    assert r.status == 200 and r.json()["role"] == "admin"
    assert gateway.req("PATCH", f"/v1/admin/workspaces/mem/members/{member_id}",
                       body={"subject": "bob"}).status == 422
    assert gateway.req("GET", "/v1/admin/workspaces/mem/members/not-a-uuid").status == 404
    assert gateway.req("DELETE", f"/v1/admin/workspaces/mem/members/{member_id}").status == 204
