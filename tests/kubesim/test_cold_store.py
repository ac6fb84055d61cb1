"""kubesim keeps objects nobody uses as text (--cool-after): a finished Job,
its pod and Workload, and Events take a tenth of their parsed size so. What
clients see must not change: gets, lists (selectors, pages), watches,
updates and deletes of a cold object answer as they did while it was warm;
lists leave it cold, a read by name warms it."""
import pytest

from job_manifests import job_manifest
from kubesim import KubeSim, api_path

JOBS = {"cold-a1": "a", "cold-a2": "a", "cold-b1": "b"}


@pytest.fixture
def ks_cool():
    # a sweep every 50 ms: an object is cold 50 to 100 ms after its last use
    with KubeSim(simulated=True, extra_args=[
            "--cool-after", "0.05", "--sim-duration", "0.2"]) as sim:
        yield sim


def cold(ks, resource):
    return ks.stats()["coldObjects"][resource]


def names(items):
    return [i["metadata"]["name"] for i in items]


def finished_and_cold(ks):
    """Run the three Jobs to completion, read what they left while it is
    warm, and wait until every Job and pod is cold."""
    for name, team in JOBS.items():
        ks.create(job_manifest(name, "true", labels={"team": team}))
    ks.wait_for(lambda: ks.list("batch/v1", "jobs", "default"),
                cond=lambda js: len(js) == 3 and all(
                    j.get("status", {}).get("succeeded") == 1 for j in js), what="jobs succeeded")
    warm = {"jobs": ks.get(api_path("batch/v1", "jobs", "default")),
            "pods": ks.get(api_path("v1", "pods", "default"))}
    ks.wait_for(lambda: (cold(ks, "jobs"), cold(ks, "pods")), cond=lambda c: c == (3, 3),
                what="finished jobs and pods cold")
    return warm


def test_cold_objects_list_and_watch_as_they_did_while_warm(ks_cool):
    ks = ks_cool
    warm = finished_and_cold(ks)
    jobs = ks.get(api_path("batch/v1", "jobs", "default"))
    assert jobs["items"] == warm["jobs"]["items"]
    assert ks.get(api_path("v1", "pods", "default"))["items"] == warm["pods"]["items"]
    # label and field selectors match cold objects without changing them
    assert names(ks.list("batch/v1", "jobs", "default", labelSelector="team=a")) == [
        "cold-a1", "cold-a2"]
    assert names(ks.list("batch/v1", "jobs", "default", labelSelector="team notin (a)")) == [
        "cold-b1"]
    pods = ks.list("v1", "pods", "default", fieldSelector="status.phase=Succeeded",
                   labelSelector="job-name=cold-b1")
    assert [p["metadata"]["labels"]["job-name"] for p in pods] == ["cold-b1"]
    assert ks.list("v1", "pods", "default", fieldSelector="status.phase=Running") == []
    # pages: without selectors the rest is counted; with them, Kubernetes
    # leaves remainingItemCount out (ListMeta: "the number of remaining
    # items is unknown")
    page = ks.get(api_path("batch/v1", "jobs", "default"), limit=1)
    assert names(page["items"]) == ["cold-a1"]
    assert page["metadata"]["remainingItemCount"] == 2
    page = ks.get(api_path("batch/v1", "jobs", "default"), limit=1,
                  **{"continue": page["metadata"]["continue"]})
    assert names(page["items"]) == ["cold-a2"]
    page = ks.get(api_path("batch/v1", "jobs", "default"), limit=1, labelSelector="team")
    assert names(page["items"]) == ["cold-a1"] and page["metadata"]["continue"]
    assert "remainingItemCount" not in page["metadata"]
    page = ks.get(api_path("batch/v1", "jobs", "default"), limit=2, labelSelector="team=a")
    assert names(page["items"]) == ["cold-a1", "cold-a2"]
    assert "continue" not in page["metadata"]
    # a watch from no version starts with the cold objects as ADDED events
    rv = jobs["metadata"]["resourceVersion"]
    added = []
    for ev in ks.watch(api_path("batch/v1", "jobs", "default"), timeout=10,
                       labelSelector="team=a", resourceVersion="0"):
        added.append(ev)
        if len(added) == 2:
            break
    assert [e["type"] for e in added] == ["ADDED", "ADDED"]
    assert [e["object"] for e in added] == [j for j in warm["jobs"]["items"]
                                            if j["metadata"]["labels"]["team"] == "a"]
    # lists and watches parse cold objects for themselves: they stay cold
    assert (cold(ks, "jobs"), cold(ks, "pods")) == (3, 3)
    assert ks.get(api_path("batch/v1", "jobs", "default"))["metadata"]["resourceVersion"] == rv


def test_a_cold_object_read_written_and_deleted_by_name(ks_cool):
    ks = ks_cool
    warm = {j["metadata"]["name"]: j for j in finished_and_cold(ks)["jobs"]["items"]}
    # a read by name answers the object as it was, and warms it
    assert ks.get(api_path("batch/v1", "jobs", "default", "cold-a1")) == warm["cold-a1"]
    assert cold(ks, "jobs") == 2
    # a write to a cold object is a new version of it
    patched = ks.patch(api_path("batch/v1", "jobs", "default", "cold-a2"),
                       {"metadata": {"labels": {"kept": "yes"}}})
    assert int(patched["metadata"]["resourceVersion"]) > int(
        warm["cold-a2"]["metadata"]["resourceVersion"])
    assert patched["metadata"]["uid"] == warm["cold-a2"]["metadata"]["uid"]
    assert patched["status"] == warm["cold-a2"]["status"]
    ks.wait_for(lambda: cold(ks, "jobs"), cond=lambda c: c == 3, what="all jobs cold again")
    assert names(ks.list("batch/v1", "jobs", "default", labelSelector="kept=yes")) == ["cold-a2"]
    # deleting a cold object: the watch sees its last state go
    rv = ks.get(api_path("batch/v1", "jobs", "default"))["metadata"]["resourceVersion"]
    ks.delete(api_path("batch/v1", "jobs", "default", "cold-b1"))
    for ev in ks.watch(api_path("batch/v1", "jobs", "default"), timeout=10, resourceVersion=rv):
        assert ev["type"] == "DELETED"
        assert ev["object"]["metadata"]["uid"] == warm["cold-b1"]["metadata"]["uid"]
        assert ev["object"]["status"] == warm["cold-b1"]["status"]
        break
    assert ks.get_obj("batch/v1", "jobs", "cold-b1", "default") is None
    # its pod goes with it (the garbage collector reads the cold pod's owner)
    ks.wait_for(lambda: ks.list("v1", "pods", "default", labelSelector="job-name=cold-b1"),
                cond=lambda ps: ps == [], what="the deleted job's pod collected")


def test_a_watch_from_no_version_frees_what_it_sent(ks_cool):
    """Each ADDED event of a watch's starting list held its object for good,
    so every `kubectl get -w` or informer start leaked the objects it was
    sent: with cold objects, parsed for each watch, all of them."""
    ks = ks_cool
    finished_and_cold(ks)

    def watch_all():
        added = 0
        # the server ends the watch a second later (it would otherwise see
        # the closed stream only when it next has something to send)
        for ev in ks.watch(api_path("batch/v1", "jobs", "default"), timeout=10,
                           resourceVersion="0", timeoutSeconds="1"):
            added += ev["type"] == "ADDED"
            if added == len(JOBS):
                return

    def heap_once_every_watch_ended():
        return ks.wait_for(ks.stats, cond=lambda s: s["watches"] == 0,
                           what="the watches ended")["heapInUseKiB"]

    watch_all()  # first-use allocations (zlib's streams, buffers) out of the way
    before = heap_once_every_watch_ended()
    for _ in range(30):
        watch_all()
    # 30 watches of 3 Jobs kept about 1.2 MiB before the fix; now what is
    # left is noise (a few KiB at most)
    assert heap_once_every_watch_ended() - before < 512
