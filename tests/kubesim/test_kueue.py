"""Kueue scenarios: quota, cohorts, priority preemption, queueing strategies."""
import hashlib

from job_manifests import job_manifest
from kueue_fixtures import KV, cond, priority_class, setup_queue, workload_of


def wait_wl(ks, job, predicate, what, timeout=20):
    return ks.wait_for(lambda: workload_of(ks, job), cond=lambda w: w is not None and predicate(w),
                       timeout=timeout, what=what)


def admitted(w):
    c = cond(w, "Admitted")
    return c is not None and c["status"] == "True"


def pending_msg(w):
    c = cond(w, "QuotaReserved")
    return c["message"] if c and c["status"] == "False" else None


def test_workload_shape_and_admission_unsuspends(ks):
    setup_queue(ks, cpu=2)
    job = ks.create(job_manifest("q1", "echo queued-ok", queue="lq", requests={"cpu": "1"}))
    assert job["spec"]["suspend"] is True  # Kueue's webhook
    w = wait_wl(ks, "q1", admitted, "admission")
    digest = hashlib.sha1(("Job\nbatch\nq1\n" + job["metadata"]["uid"]).encode()).hexdigest()[:5]
    assert w["metadata"]["name"] == "job-q1-" + digest
    assert w["metadata"]["labels"]["kueue.x-k8s.io/job-uid"] == job["metadata"]["uid"]
    assert w["metadata"]["ownerReferences"][0]["kind"] == "Job"
    assert w["spec"]["podSets"][0]["name"] == "main" and w["spec"]["podSets"][0]["count"] == 1
    psa = w["status"]["admission"]["podSetAssignments"][0]
    assert psa["flavors"] == {"cpu": "default-flavor"} and psa["resourceUsage"] == {"cpu": "1"}
    assert cond(w, "QuotaReserved")["message"] == "Quota reserved in ClusterQueue cq"
    ks.wait_for(lambda: workload_of(ks, "q1"), cond=lambda w: cond(w, "Finished") is not None,
                what="finished")
    w = workload_of(ks, "q1")
    assert cond(w, "Finished")["reason"] == "Succeeded"
    assert "kueue.x-k8s.io/resource-in-use" not in w["metadata"].get("finalizers", [])
    cq = ks.get_obj(KV, "clusterqueues", "cq")
    assert cq["status"]["admittedWorkloads"] == 0


def test_quota_exhaustion_keeps_next_pending_with_message(ks):
    setup_queue(ks, cpu=2)
    ks.create(job_manifest("big", "sleep 30", queue="lq", requests={"cpu": "2"}))
    wait_wl(ks, "big", admitted, "first admitted")
    ks.create(job_manifest("next", "sleep 1", queue="lq", requests={"cpu": "1"}))
    w = wait_wl(ks, "next", lambda w: pending_msg(w) is not None, "pending message")
    assert pending_msg(w) == ("couldn't assign flavors to pod set main: insufficient unused "
                              "quota for cpu in flavor default-flavor, 1 more needed")
    assert cond(w, "QuotaReserved")["reason"] == "Pending"
    job = ks.get_obj("batch/v1", "jobs", "next", "default")
    assert job["spec"]["suspend"] is True
    cq = ks.wait_for(lambda: ks.get_obj(KV, "clusterqueues", "cq"),
                     cond=lambda c: c.get("status", {}).get("pendingWorkloads") == 1)
    assert cq["status"]["admittedWorkloads"] == 1
    assert cq["status"]["flavorsUsage"][0]["resources"][0] == {"name": "cpu", "total": "2", "borrowed": "0"}
    pend = ks.get("/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/cq/pendingworkloads")
    assert [i["positionInClusterQueue"] for i in pend["items"]] == [0]
    assert pend["items"][0]["metadata"]["name"] == w["metadata"]["name"]
    # too big for the queue at all: "maximum capacity" wording
    ks.create(job_manifest("huge", "sleep 1", queue="lq", requests={"cpu": "5"}))
    w = wait_wl(ks, "huge", lambda w: pending_msg(w) is not None, "pending huge")
    assert "insufficient quota for cpu in flavor default-flavor" in pending_msg(w)
    assert "> maximum capacity (2)" in pending_msg(w)


def test_missing_local_queue_is_inadmissible(ks):
    ks.create(job_manifest("lost", "true", queue="nosuch", requests={"cpu": "1"}))
    w = wait_wl(ks, "lost", lambda w: pending_msg(w) is not None, "inadmissible")
    assert cond(w, "QuotaReserved")["reason"] == "Inadmissible"
    assert pending_msg(w) == "LocalQueue nosuch doesn't exist"


def test_cohort_borrowing(ks):
    setup_queue(ks, "cq-a", "lq-a", cpu=2, cohort="team", borrowing_limit=2)
    setup_queue(ks, "cq-b", "lq-b", cpu=2, cohort="team")
    ks.create(job_manifest("borrow", "sleep 30", queue="lq-a", requests={"cpu": "4"}))
    wait_wl(ks, "borrow", admitted, "admitted by borrowing")
    cq = ks.wait_for(lambda: ks.get_obj(KV, "clusterqueues", "cq-a"),
                     cond=lambda c: c.get("status", {}).get("admittedWorkloads") == 1)
    res = cq["status"]["flavorsUsage"][0]["resources"][0]
    assert res["total"] == "4" and res["borrowed"] == "2"
    # cq-b's quota is lent out now: its own 1-cpu job must wait
    ks.create(job_manifest("lender", "sleep 1", queue="lq-b", requests={"cpu": "1"}))
    w = wait_wl(ks, "lender", lambda w: pending_msg(w) is not None, "lender pending")
    assert "insufficient unused quota for cpu" in pending_msg(w)
    # beyond borrowingLimit: not admissible even though the cohort has room
    ks.create(job_manifest("over", "sleep 1", queue="lq-a", requests={"cpu": "5"}))
    w = wait_wl(ks, "over", lambda w: pending_msg(w) is not None, "over limit")
    assert "maximum capacity (4)" in pending_msg(w)


def test_higher_priority_preempts_lower(ks):
    ks.create(priority_class("low", 10))
    ks.create(priority_class("high", 1000))
    setup_queue(ks, cpu=2, within="LowerPriority")
    ks.create(job_manifest("low-job", "sleep 60", queue="lq", requests={"cpu": "2"},
                           labels={"kueue.x-k8s.io/priority-class": "low"}))
    wait_wl(ks, "low-job", admitted, "low admitted")
    ks.wait_for(lambda: ks.get_obj("batch/v1", "jobs", "low-job", "default"),
                cond=lambda j: j["status"].get("active") == 1, what="low running")
    ks.create(job_manifest("high-job", "sleep 3", queue="lq", requests={"cpu": "2"},
                           labels={"kueue.x-k8s.io/priority-class": "high"}))
    high = wait_wl(ks, "high-job", admitted, "high admitted", timeout=30)
    assert high["spec"]["priority"] == 1000
    assert high["spec"]["priorityClassSource"] == "kueue.x-k8s.io/workloadpriorityclass"
    low = workload_of(ks, "low-job")
    assert cond(low, "Evicted")["reason"] == "Preempted"
    assert cond(low, "Preempted")["reason"] == "InClusterQueue"
    assert "due to prioritization in the ClusterQueue" in cond(low, "Preempted")["message"]
    assert cond(low, "Requeued")["status"] == "True"
    assert cond(low, "QuotaReserved")["status"] == "False"
    job = ks.get_obj("batch/v1", "jobs", "low-job", "default")
    assert job["spec"]["suspend"] is True and "startTime" not in job["status"]
    # once the high job finishes the low one is admitted again
    wait_wl(ks, "low-job", admitted, "low readmitted", timeout=30)
    low = workload_of(ks, "low-job")
    assert cond(low, "Evicted")["status"] == "False"
    assert cond(low, "Evicted")["message"].startswith("Previously: ")


def test_strict_fifo_blocks_best_effort_does_not(ks):
    for strat, name in (("StrictFIFO", "s"), ("BestEffortFIFO", "b")):
        setup_queue(ks, "cq-" + name, "lq-" + name, cpu=2, strategy=strat)
        ks.create(job_manifest(name + "-running", "sleep 60", queue="lq-" + name,
                               requests={"cpu": "1"}))
        wait_wl(ks, name + "-running", admitted, "first")
        ks.create(job_manifest(name + "-big", "sleep 1", queue="lq-" + name,
                               requests={"cpu": "2"}))
        wait_wl(ks, name + "-big", lambda w: pending_msg(w) is not None, "big pending")
        ks.create(job_manifest(name + "-small", "sleep 1", queue="lq-" + name,
                               requests={"cpu": "1"}))
    # BestEffortFIFO lets the small one past the big one ...
    wait_wl(ks, "b-small", admitted, "best effort admits the small job")
    # ... StrictFIFO keeps it behind the head: the pass that admitted b-small
    # (created after s-small) looked at s-small too
    w = workload_of(ks, "s-small")
    assert not admitted(w)
    pend = ks.get("/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/default/localqueues/"
                  "lq-s/pendingworkloads")
    names = [i["metadata"]["name"] for i in pend["items"]]
    assert len(names) == 2 and names[1] == w["metadata"]["name"]
    assert [i["positionInLocalQueue"] for i in pend["items"]] == [0, 1]
