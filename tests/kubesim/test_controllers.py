"""The change-driven controllers: work that only a timer starts (deadlines,
TTL), quota freed by finished workloads admitting the next ones, no rounds
while nothing changes, and simulated pods' lazily written logs."""
import os
import time

from job_manifests import job_manifest
from kubesim import api_path
from kueue_fixtures import setup_queue

SIM = {"kubesim.io/mode": "simulated"}


def sim_job(name, seconds, queue=None, requests=None, **spec):
    ann = dict(SIM, **{"kubesim.io/duration-seconds": str(seconds)})
    return job_manifest(name, "ignored", queue=queue, requests=requests, annotations=ann, **spec)


def job(ks, name):
    return ks.get_obj("batch/v1", "jobs", name, "default")


def cond(obj, kind):
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind),
                None)


def test_active_deadline_fails_a_running_job_on_time(ks):
    ks.create(sim_job("slow", 60, activeDeadlineSeconds=1))
    t0 = time.time()
    failed = ks.wait_for(lambda: job(ks, "slow"), cond=lambda j: cond(j, "Failed"),
                         timeout=15, what="deadline")
    assert time.time() - t0 < 8  # (startTime has second precision: it may come early)
    assert cond(failed, "Failed")["reason"] == "DeadlineExceeded"
    pods = ks.list("v1", "pods", "default", labelSelector="job-name=slow")
    assert all(p["status"]["phase"] == "Failed" for p in pods)


def test_ttl_after_finished_deletes_the_job(ks):
    created = ks.create(sim_job("short", 0.2, ttlSecondsAfterFinished=1))
    # the Job's changes from its creation on, as a watch replays them: a
    # poll can miss the completed Job on a loaded machine (it is gone a
    # second later)
    seen = []
    for ev in ks.watch(api_path("batch/v1", "jobs", "default"), timeout=20,
                       resourceVersion=created["metadata"]["resourceVersion"],
                       fieldSelector="metadata.name=short"):
        seen.append((time.time(), ev["type"], bool(cond(ev["object"], "Complete"))))
        if ev["type"] == "DELETED":
            break
    kinds = [(t, done) for _, t, done in seen]
    assert ("MODIFIED", True) in kinds and kinds[-1] == ("DELETED", True), kinds
    completed = next(at for at, t, done in seen if done)
    assert seen[-1][0] - completed < 8  # deleted about a second after it completed


def test_freed_quota_admits_the_waiting_jobs(ks):
    setup_queue(ks, cpu=2)
    for i in range(12):
        ks.create(sim_job("w%02d" % i, 0.3, queue="lq", requests={"cpu": "1"}))
    most = 0
    deadline = time.time() + 60
    while time.time() < deadline:
        cq = ks.get_obj("kueue.x-k8s.io/v1beta1", "clusterqueues", "cq")
        most = max(most, cq.get("status", {}).get("reservingWorkloads", 0))
        done = [j for j in ks.list("batch/v1", "jobs", "default") if cond(j, "Complete")]
        if len(done) == 12:
            break
        time.sleep(0.1)
    assert len(done) == 12
    assert most == 2  # never more than the quota holds, and it was used


def test_no_rounds_while_nothing_changes(ks):
    ks.create(sim_job("once", 0.2))
    ks.wait_for(lambda: job(ks, "once"), cond=lambda j: cond(j, "Complete"), what="completion")
    time.sleep(0.5)
    before = ks.stats()["controllerPasses"]
    time.sleep(1.5)
    assert ks.stats()["controllerPasses"] == before


def test_simulated_log_is_written_when_first_read(ks):
    ks.create(sim_job("quiet", 0.2))
    ks.wait_for(lambda: job(ks, "quiet"), cond=lambda j: cond(j, "Complete"), what="completion")
    (pod,) = ks.list("v1", "pods", "default", labelSelector="job-name=quiet")
    name = pod["metadata"]["name"]
    sandbox = os.path.join(ks.state_dir, "pods", "default_%s_%s" % (name, pod["metadata"]["uid"][:8]))
    assert not os.path.exists(sandbox)  # nothing written until the log is read
    text = ks.logs("default", name, timestamps="true")
    stamp, line = text.rstrip("\n").split(" ", 1)
    assert line == "kubesim: simulated container main started"
    assert stamp.startswith(pod["status"]["containerStatuses"][0]["state"]["terminated"]
                            ["startedAt"][:19])
    assert ks.logs("default", name) == line + "\n"
    assert os.path.isfile(os.path.join(sandbox, "main.log"))
