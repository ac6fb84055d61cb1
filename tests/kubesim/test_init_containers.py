"""Init containers run in order before a pod's containers (process mode), and
a RayJob's runtime_env working_dir (a file:// zip) is unpacked for the driver,
as Ray's job manager does: together they let a KubeRay RayJob that ships its
code through an init container (as taugate renders them) run for real."""
import base64
import io
import os
import zipfile

from job_manifests import job_manifest

RV = "ray.io/v1"


def pod_of(ks, job):
    pods = ks.list("v1", "pods", "default", labelSelector="job-name=" + job)
    return pods[0] if pods else None


def with_init(job, *inits, volume="work"):
    """Give the Job's pod init containers (name, shell command) and an
    emptyDir mounted at /work in every container."""
    spec = job["spec"]["template"]["spec"]
    mount = [{"name": volume, "mountPath": "/work"}]
    spec["volumes"] = [{"name": volume, "emptyDir": {}}]
    spec["containers"][0]["volumeMounts"] = mount
    spec["initContainers"] = [{"name": n, "image": "busybox:1.36", "command": ["sh", "-c", c],
                               "volumeMounts": mount} for n, c in inits]
    return job


def test_init_containers_run_in_order_before_the_main_container(ks):
    ks.create(with_init(job_manifest("inits", "cat /work/steps; echo main"),
                        ("first", "echo one > /work/steps; echo first ran"),
                        ("second", "echo two >> /work/steps")))
    ks.wait_for(lambda: ks.get_obj("batch/v1", "jobs", "inits", "default"),
                cond=lambda j: j.get("status", {}).get("succeeded") == 1, what="job done")
    pod = pod_of(ks, "inits")
    name = pod["metadata"]["name"]
    assert ks.logs("default", name) == "one\ntwo\nmain\n"
    assert ks.logs("default", name, container="first") == "first ran\n"
    inits = pod["status"]["initContainerStatuses"]
    assert [s["name"] for s in inits] == ["first", "second"]
    for s in inits:
        assert s["state"]["terminated"]["exitCode"] == 0 and s["ready"]
    initialized = [c for c in pod["status"]["conditions"] if c["type"] == "Initialized"][0]
    assert initialized["status"] == "True"


def test_the_pod_is_pending_while_an_init_container_runs(ks):
    ks.create(with_init(job_manifest("waits", "echo main"),
                        ("gate", "while [ ! -e /work/go ]; do sleep 0.05; done")))
    pod = ks.wait_for(lambda: pod_of(ks, "waits"),
                      cond=lambda p: p and "running" in p.get("status", {}).get(
                          "initContainerStatuses", [{}])[0].get("state", {}),
                      what="init container running")
    st = pod["status"]
    assert st["phase"] == "Pending"
    assert st["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
    initialized = [c for c in st["conditions"] if c["type"] == "Initialized"][0]
    assert initialized["status"] == "False" and initialized["reason"] == "ContainersNotInitialized"
    sandbox = os.path.join(ks.state_dir, "pods", "default_%s_%s" % (
        pod["metadata"]["name"], pod["metadata"]["uid"][:8]))
    open(os.path.join(sandbox, "volumes", "work", "go"), "w").close()
    ks.wait_for(lambda: ks.get_obj("batch/v1", "jobs", "waits", "default"),
                cond=lambda j: j.get("status", {}).get("succeeded") == 1, what="job done")


def test_a_failed_init_container_fails_the_pod_without_starting_it(ks):
    ks.create(with_init(job_manifest("badinit", "echo never"), ("setup", "echo broken; exit 4")))
    ks.wait_for(lambda: ks.get_obj("batch/v1", "jobs", "badinit", "default"),
                cond=lambda j: any(c["type"] == "Failed" for c in j.get("status", {}).get(
                    "conditions", [])), what="job failed")
    pod = pod_of(ks, "badinit")
    st = pod["status"]
    assert st["phase"] == "Failed"
    term = st["initContainerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 4 and term["reason"] == "Error"
    assert st["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert ks.logs("default", pod["metadata"]["name"], container="setup") == "broken\n"


def project_zip():
    """A project under one top-level folder, as `tau run` packs run.working_dir."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("proj/app/__init__.py", "")
        z.writestr("proj/app/main.py", "from app.util import greet\nprint(greet(), flush=True)\n")
        z.writestr("proj/app/util.py", "import os\n\ndef greet():\n"
                   "    return 'hello from ' + os.path.basename(os.getcwd())\n")
    return base64.b64encode(buf.getvalue()).decode()


def test_a_rayjob_working_dir_zip_is_unpacked_for_the_driver(ks):
    payload = ("import base64, os\n"
               "open('/script/project.zip', 'wb').write("
               "base64.b64decode(os.environ['PAYLOAD']))\n")
    script = [{"name": "script", "emptyDir": {}}]
    mount = [{"name": "script", "mountPath": "/script"}]
    head = {"initContainers": [{"name": "payload", "image": "rayproject/ray:2.54.0",
                                "command": ["python3", "-c", payload], "volumeMounts": mount,
                                "env": [{"name": "PAYLOAD", "value": project_zip()}]}],
            "containers": [{"name": "ray-head", "image": "rayproject/ray:2.54.0",
                            "volumeMounts": mount}],
            "volumes": script}
    ks.create({"apiVersion": RV, "kind": "RayJob",
               "metadata": {"name": "wd", "namespace": "default"},
               "spec": {"entrypoint": "python3 -m app.main",
                        "runtimeEnvYAML": 'working_dir: "file:///script/project.zip"\n',
                        "rayClusterSpec": {"headGroupSpec": {"rayStartParams": {},
                                                             "template": {"spec": head}}}}})
    rj = ks.wait_for(lambda: ks.get_obj(RV, "rayjobs", "wd", "default"),
                     cond=lambda r: r.get("status", {}).get("jobDeploymentStatus") in (
                         "Complete", "Failed"), timeout=30, what="rayjob ended")
    pods = ks.list("v1", "pods", "default", labelSelector="batch.kubernetes.io/job-name=wd")
    driver = ks.logs("default", pods[0]["metadata"]["name"])
    assert rj["status"]["jobStatus"] == "SUCCEEDED", (rj["status"], driver)
    # the one top-level folder is stripped, as Ray does
    assert driver == "hello from proj\n"
