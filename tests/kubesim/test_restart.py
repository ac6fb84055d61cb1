"""kubesim restarted from its state file behaves as a restarted API server:
objects keep their uids and resourceVersions, resourceVersions count on,
watches from before the restart get 410 Gone (clients relist), and what the
restart changed is written as new changes with new resourceVersions."""
import json

import pytest

from job_manifests import job_manifest
from kubesim import ApiError, KubeSim, api_path


@pytest.fixture
def ks_state(tmp_path):
    with KubeSim(state_file=str(tmp_path / "state.json")) as sim:
        yield sim


def test_restore_keeps_versions_and_expires_old_watches(ks_state):
    ks = ks_state
    cm = ks.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"},
                    "data": {"a": "1"}}, namespace="default")
    ks.create(job_manifest("long", "sleep 60"))
    running = ks.wait_for(lambda: ks.list("v1", "pods", "default", labelSelector="job-name=long"),
                          cond=lambda ps: ps and ps[0]["status"].get("phase") == "Running",
                          what="pod running")[0]
    old_rv = int(ks.get(api_path("v1", "pods"))["metadata"]["resourceVersion"])
    cm = ks.put(api_path("v1", "configmaps", "default", "kept"), dict(cm, data={"a": "2"}))
    ks.stop()
    # the last resourceVersion before the restart is the one the state file saved
    with open(ks.state_file) as f:
        last_rv = str(json.load(f)["resourceVersion"])
    assert int(last_rv) > old_rv
    ks.restart()

    # unchanged objects: same identity and resourceVersion
    again = ks.get(api_path("v1", "configmaps", "default", "kept"))
    assert again["metadata"]["uid"] == cm["metadata"]["uid"]
    assert again["metadata"]["resourceVersion"] == cm["metadata"]["resourceVersion"]
    # the pod whose process was lost failed, as a new change
    pod = ks.get(api_path("v1", "pods", "default", running["metadata"]["name"]))
    assert pod["status"]["phase"] == "Failed" and pod["status"]["reason"] == "KubesimRestarted"
    assert int(pod["metadata"]["resourceVersion"]) > int(last_rv)
    # a watch from before the last change is expired (the window starts at
    # the restart): the client must relist
    events = list(ks.watch(api_path("v1", "pods"), timeout=10, resourceVersion=str(old_rv)))
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 410 and events[0]["object"]["reason"] == "Expired"
    # a watch from the last version before the restart sees the restart's
    # changes as events
    for ev in ks.watch(api_path("v1", "pods"), timeout=10, resourceVersion=last_rv):
        assert ev["type"] == "MODIFIED" and ev["object"]["status"]["phase"] == "Failed"
        assert int(ev["object"]["metadata"]["resourceVersion"]) > int(last_rv)
        break
    new_rv = ks.get(api_path("v1", "pods"))["metadata"]["resourceVersion"]
    # a resourceVersion the server never reached is refused, not waited on
    with pytest.raises(ApiError) as exc:
        next(ks.watch(api_path("v1", "pods"), timeout=10,
                      resourceVersion=str(int(new_rv) + 1000)))
    assert exc.value.status == 504 and "Too large resource version" in exc.value.body
    # the Job controller sees the failed pod and replaces it
    ks.wait_for(lambda: ks.get_obj("batch/v1", "jobs", "long", "default"),
                cond=lambda j: j["status"].get("failed") == 1, what="failure counted")
