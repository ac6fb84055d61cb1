"""Status objects for bad input: 400, 404, 409, 410, 415, 422."""
from kubesim import api_path


def test_malformed_json_is_400(ks):
    status, _, body = ks.request("POST", api_path("batch/v1", "jobs", "default"), body=b"{not json")
    assert status == 400
    assert body["kind"] == "Status" and body["reason"] == "BadRequest"


def test_unknown_resource_is_404(ks):
    status, _, body = ks.request("GET", "/apis/batch/v1/namespaces/default/cronjobz")
    assert status == 404 and body["reason"] == "NotFound"
    assert body["message"] == "the server could not find the requested resource"
    status, _, body = ks.request("GET", "/nothing/here", raw=True)
    assert status == 404 and body == "404 page not found\n"
    status, _, body = ks.request("GET", api_path("batch/v1", "jobs", "default", "nope"))
    assert status == 404 and body["message"] == 'jobs.batch "nope" not found'
    assert body["details"] == {"name": "nope", "group": "batch", "kind": "jobs"}


def test_invalid_job_is_422_with_causes(ks):
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bad"},
           "spec": {"template": {"spec": {"containers": [{"name": "main"}]}}}}
    status, _, body = ks.request("POST", api_path("batch/v1", "jobs", "default"), body=job)
    assert status == 422 and body["reason"] == "Invalid"
    fields = {c["field"]: c for c in body["details"]["causes"]}
    assert fields["spec.template.spec.containers[0].image"]["reason"] == "FieldValueRequired"
    assert fields["spec.template.spec.restartPolicy"]["reason"] == "FieldValueRequired"
    assert body["details"]["kind"] == "Job"
    assert body["message"].startswith('Job.batch "bad" is invalid: [')


def test_stale_update_is_409_and_duplicate_create_is_409(ks):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "data": {"a": "1"}}
    created = ks.create(cm, namespace="default")
    old_rv = created["metadata"]["resourceVersion"]
    created["data"]["a"] = "2"
    updated = ks.put(api_path("v1", "configmaps", "default", "c1"), created)
    assert int(updated["metadata"]["resourceVersion"]) > int(old_rv)
    created["metadata"]["resourceVersion"] = old_rv
    status, _, body = ks.request("PUT", api_path("v1", "configmaps", "default", "c1"), body=created)
    assert status == 409 and body["reason"] == "Conflict"
    assert "the object has been modified" in body["message"]
    status, _, body = ks.request("POST", api_path("v1", "configmaps", "default"), body=cm)
    assert status == 409 and body["reason"] == "AlreadyExists"


def test_strategic_patch_on_cr_is_415_and_bad_selector_400(ks):
    status, _, body = ks.request("PATCH", api_path("kueue.x-k8s.io/v1beta1", "clusterqueues",
                                                   None, "x"), body={},
                                 content_type="application/strategic-merge-patch+json")
    assert status == 415
    status, _, body = ks.request("GET", api_path("v1", "pods", "default"),
                                 query={"fieldSelector": "spec.foo=bar"})
    assert status == 400 and body["message"] == "field label not supported: spec.foo"


def test_create_in_missing_namespace_is_404(ks):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "nope"}}
    status, _, body = ks.request("POST", api_path("v1", "configmaps", "nope"), body=cm)
    assert status == 404 and body["message"] == 'namespaces "nope" not found'
