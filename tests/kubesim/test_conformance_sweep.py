"""Conformance sweep: every verb and output form real kubectl 1.32 offers, for
every kind kubesim serves, each expected to behave as the Kubernetes
documentation says a 1.32 API server makes it behave. Where kubesim stops
short on purpose (tests/kubesim/README.md, "What it does not simulate"),
the sweep asserts the documented refusal.

One kubesim for the module; kubectl calls are batched (one call for many
objects where kubectl takes several) and run a few at a time."""
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml

from kubesim import KubeSim, kubectl_binary

NS = "default"
KV = "kueue.x-k8s.io/v1beta1"

# (kubectl resource "kind.group", manifest); the order is creation order.
OBJECTS = [
    ("namespace", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "sw-ns"}}),
    ("configmap", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sw-cm"},
                   "data": {"k": "v"}}),
    ("secret", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sw-secret"},
                "stringData": {"pw": "x"}}),
    ("serviceaccount", {"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": "sw-sa"}}),
    ("service", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "sw-svc"},
                 "spec": {"selector": {"app": "sw"}, "ports": [{"port": 80, "targetPort": 8080}]}}),
    ("pod", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sw-pod"},
             "spec": {"restartPolicy": "Never", "containers": [{
                 "name": "main", "image": "busybox:1.36",
                 "command": ["sh", "-c", "echo sweep-log; sleep 3600"]}]}}),
    ("event", {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "sw-ev"},
               "involvedObject": {"kind": "Pod", "name": "sw-pod", "namespace": NS},
               "reason": "Swept", "message": "sweep", "type": "Normal"}),
    ("job.batch", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "sw-job"},
                   "spec": {"backoffLimit": 0, "template": {"spec": {
                       "restartPolicy": "Never", "containers": [{
                           "name": "main", "image": "busybox:1.36",
                           "command": ["sh", "-c", "echo job-done"]}]}}}}),
    ("deployment.apps", {"apiVersion": "apps/v1", "kind": "Deployment",
                         "metadata": {"name": "sw-deploy"},
                         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "sw"}},
                                  "template": {"metadata": {"labels": {"app": "sw"}},
                                               "spec": {"containers": [{
                                                   "name": "web", "image": "busybox:1.36",
                                                   "command": ["sleep", "120"]}]}}}}),
    ("poddisruptionbudget.policy", {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                    "metadata": {"name": "sw-pdb"},
                                    "spec": {"minAvailable": 1,
                                             "selector": {"matchLabels": {"app": "sw"}}}}),
    ("clusterrole.rbac.authorization.k8s.io", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "sw-cr"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}),
    ("clusterrolebinding.rbac.authorization.k8s.io", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "sw-crb"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "sw-cr"},
        "subjects": [{"kind": "User", "name": "sweeper",
                      "apiGroup": "rbac.authorization.k8s.io"}]}),
    ("role.rbac.authorization.k8s.io", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "sw-role"},
        "rules": [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create"]}]}),
    ("rolebinding.rbac.authorization.k8s.io", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "sw-rb"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "sw-role"},
        "subjects": [{"kind": "User", "name": "sweeper",
                      "apiGroup": "rbac.authorization.k8s.io"}]}),
    ("lease.coordination.k8s.io", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                   "metadata": {"name": "sw-lease"},
                                   "spec": {"holderIdentity": "sweeper",
                                            "leaseDurationSeconds": 15}}),
    ("resourceflavor.kueue.x-k8s.io", {"apiVersion": KV, "kind": "ResourceFlavor",
                                       "metadata": {"name": "sw-rf"}}),
    ("clusterqueue.kueue.x-k8s.io", {
        "apiVersion": KV, "kind": "ClusterQueue", "metadata": {"name": "sw-cq"},
        "spec": {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu"], "flavors": [{"name": "sw-rf", "resources": [
                {"name": "cpu", "nominalQuota": "8"}]}]}]}}),
    ("localqueue.kueue.x-k8s.io", {"apiVersion": KV, "kind": "LocalQueue",
                                   "metadata": {"name": "sw-lq"},
                                   "spec": {"clusterQueue": "sw-cq"}}),
    ("workloadpriorityclass.kueue.x-k8s.io", {"apiVersion": KV, "kind": "WorkloadPriorityClass",
                                              "metadata": {"name": "sw-wpc"}, "value": 100}),
    ("workload.kueue.x-k8s.io", {
        "apiVersion": KV, "kind": "Workload", "metadata": {"name": "sw-wl"},
        "spec": {"queueName": "sw-lq", "podSets": [{"name": "main", "count": 1, "template": {
            "spec": {"restartPolicy": "Never", "containers": [{
                "name": "main", "image": "busybox:1.36",
                "resources": {"requests": {"cpu": "1"}}}]}}}]}}),
    ("raycluster.ray.io", {
        "apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "sw-rc"},
        "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [
            {"name": "ray-head", "image": "rayproject/ray:2.9.0"}]}}}}}),
    ("rayjob.ray.io", {
        "apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "sw-rj"},
        "spec": {"entrypoint": "echo ray-done", "shutdownAfterJobFinishes": False,
                 "rayClusterSpec": {"headGroupSpec": {"rayStartParams": {}, "template": {
                     "spec": {"containers": [{"name": "ray-head",
                                              "image": "rayproject/ray:2.9.0"}]}}}}}}),
]
CRDS = {r for r, _ in OBJECTS if r.endswith((".kueue.x-k8s.io", ".ray.io"))}
CLUSTER = {"namespace", "clusterrole.rbac.authorization.k8s.io",
           "clusterrolebinding.rbac.authorization.k8s.io", "resourceflavor.kueue.x-k8s.io",
           "clusterqueue.kueue.x-k8s.io", "workloadpriorityclass.kueue.x-k8s.io"}


def ref(res, obj):
    return "%s/%s" % (res, obj["metadata"]["name"])


REFS = [ref(r, o) for r, o in OBJECTS]
NAMES = {ref(r, o): o["metadata"]["name"] for r, o in OBJECTS}


def multi_doc(objs):
    return "---\n".join(yaml.safe_dump(o) for o in objs)


@pytest.fixture(scope="module")
def sim():
    if not kubectl_binary():
        pytest.skip("kubectl 1.32 is not installed")
    with KubeSim() as ks:
        yield ks


@pytest.fixture(scope="module")
def kc(sim):
    """kubectl against the module's kubesim; returns CompletedProcess."""
    def run(*args, input=None, ok=True):
        return sim.kubectl(*args, input=input, check=ok)
    return run


def parallel(fn, items):
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(fn, items))


@pytest.fixture(scope="module")
def created(sim, kc):
    """Every object, created with `kubectl create -f` (client-side)."""
    out = kc("create", "-f", "-", input=multi_doc([o for _, o in OBJECTS])).stdout
    assert out.splitlines() == ["%s created" % r for r in REFS]
    return True


def test_create_each_builtin_kind_imperatively(sim, kc):
    """The typed `kubectl create <kind>` generators (protobuf bodies)."""
    cmds = [
        (["create", "namespace", "imp-ns"], "namespace/imp-ns created"),
        (["create", "configmap", "imp-cm", "--from-literal=a=b"], "configmap/imp-cm created"),
        (["create", "secret", "generic", "imp-s", "--from-literal=pw=x"], "secret/imp-s created"),
        (["create", "secret", "tls", "imp-tls", "--cert=/dev/null", "--key=/dev/null"], None),
        (["create", "serviceaccount", "imp-sa"], "serviceaccount/imp-sa created"),
        (["create", "service", "clusterip", "imp-svc", "--tcp=80:8080"],
         "service/imp-svc created"),
        (["create", "job", "imp-job", "--image=busybox", "--", "echo", "hi"],
         "job.batch/imp-job created"),
        (["create", "deployment", "imp-deploy", "--image=busybox", "--", "sleep", "60"],
         "deployment.apps/imp-deploy created"),
        (["create", "poddisruptionbudget", "imp-pdb", "--selector=app=imp", "--min-available=1"],
         "poddisruptionbudget.policy/imp-pdb created"),
        (["create", "role", "imp-role", "--verb=get", "--resource=pods"],
         "role.rbac.authorization.k8s.io/imp-role created"),
        (["create", "clusterrole", "imp-cr", "--verb=get", "--resource=nodes"],
         "clusterrole.rbac.authorization.k8s.io/imp-cr created"),
        (["create", "rolebinding", "imp-rb", "--role=imp-role", "--user=u"],
         "rolebinding.rbac.authorization.k8s.io/imp-rb created"),
        (["create", "clusterrolebinding", "imp-crb", "--clusterrole=imp-cr", "--group=g"],
         "clusterrolebinding.rbac.authorization.k8s.io/imp-crb created"),
        (["run", "imp-pod", "--image=busybox", "--restart=Never", "--", "echo", "hi"],
         "pod/imp-pod created"),
    ]

    def one(c):
        args, want = c
        cp = sim.kubectl(*args, check=want is not None)
        return args, want, cp
    for args, want, cp in parallel(one, cmds):
        if want is None:  # empty PEM: kubectl refuses before sending anything
            assert cp.returncode != 0
            continue
        assert cp.stdout.strip() == want, (args, cp.stderr)
    # what the protobuf bodies carried arrived intact
    cm = json.loads(kc("get", "configmap", "imp-cm", "-o", "json").stdout)
    assert cm["data"] == {"a": "b"}
    job = json.loads(kc("get", "job", "imp-job", "-o", "json").stdout)
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["echo", "hi"]
    # kinds kubesim does not serve are refused as a server without them does
    cp = kc("create", "cronjob", "imp-cron", "--image=busybox", "--schedule=* * * * *", ok=False)
    assert cp.returncode != 0 and "the server could not find the requested resource" in cp.stderr
    cp = kc("create", "token", "imp-sa", ok=False)
    assert cp.returncode != 0 and "the server could not find the requested resource" in cp.stderr


def test_get_in_every_output_form(created, kc):
    lst = json.loads(kc("get", *REFS, "-o", "json").stdout)
    assert lst["kind"] == "List" and len(lst["items"]) == len(OBJECTS)
    assert [(i["kind"], i["metadata"]["name"]) for i in lst["items"]] == [
        (o["kind"], o["metadata"]["name"]) for _, o in OBJECTS]
    docs = yaml.safe_load(kc("get", *REFS, "-o", "yaml").stdout)
    assert [i["metadata"]["uid"] for i in docs["items"]] == [
        i["metadata"]["uid"] for i in lst["items"]]
    assert kc("get", *REFS, "-o", "name").stdout.splitlines() == REFS
    names = [o["metadata"]["name"] for _, o in OBJECTS]
    out = kc("get", *REFS, "-o", "custom-columns=NAME:.metadata.name,KIND:.kind",
             "--no-headers").stdout.split()
    assert out[0::2] == names and out[1::2] == [o["kind"] for _, o in OBJECTS]
    out = kc("get", *REFS, "-o", "jsonpath={range .items[*]}{.metadata.name} {end}").stdout
    assert out.split() == names
    out = kc("get", *REFS, "-o",
             "go-template={{range .items}}{{.metadata.name}} {{end}}").stdout
    assert out.split() == names
    # server-side Table printing, default and wide, one table per kind
    for flags in ([], ["-o", "wide"]):
        out = kc("get", *REFS, *flags).stdout
        for r in REFS:
            # the Event printer has no name column: its reason stands for it
            assert r in out or NAMES[r] in out or (r == "event/sw-ev" and "Swept" in out), r
    assert "NAME" in out and "AGE" in out
    # --show-labels, -L, field and label selectors
    out = kc("get", "pods", "--field-selector=metadata.name=sw-pod", "--show-labels").stdout
    assert "sw-pod" in out and "LABELS" in out


def test_describe_every_kind(created, kc):
    out = kc("describe", *REFS).stdout
    for r in REFS:
        assert "Name:         %s" % NAMES[r] in out or "Name:  " in out, r
    assert out.count("\nName:") + out.startswith("Name:") >= len(REFS)


def test_apply_client_side_then_server_side(created, kc):
    objs = [o for _, o in OBJECTS]
    again = kc("apply", "-f", "-", input=multi_doc(objs)).stdout.splitlines()
    # created with `create`: the first apply adds the last-applied annotation
    assert all(line.endswith((" configured", " unchanged")) for line in again), again
    # kubectl always re-sends a PodDisruptionBudget's selector (its
    # patchStrategy is "replace"), so a 1.32 server reports it configured
    assert kc("apply", "-f", "-", input=multi_doc(objs)).stdout.splitlines() == [
        "%s %s" % (r, "configured" if r.startswith("poddisruptionbudget") else "unchanged")
        for r in REFS]
    changed = [dict(o, metadata=dict(o["metadata"], labels={"sweep": "apply"})) for o in objs]
    assert kc("apply", "-f", "-", input=multi_doc(changed)).stdout.splitlines() == [
        "%s configured" % r for r in REFS]
    ssa = [dict(o, metadata=dict(o["metadata"], labels={"sweep": "ssa"})) for o in objs]
    out = kc("apply", "--server-side", "--force-conflicts", "-f", "-",
             input=multi_doc(ssa)).stdout.splitlines()
    assert out == ["%s serverside-applied" % r for r in REFS]
    labels = json.loads(kc("get", *REFS, "-o", "json").stdout)["items"]
    assert all(i["metadata"]["labels"]["sweep"] == "ssa" for i in labels)
    # dry runs change nothing
    kc("apply", "--dry-run=server", "-f", "-", input=multi_doc(changed))
    kc("apply", "--dry-run=client", "-f", "-", input=multi_doc(changed))
    assert kc("diff", "-f", "-", input=multi_doc(ssa), ok=False).returncode in (0, 1)


def test_patch_of_each_type(created, kc, tmp_path):
    path = tmp_path / "all.yaml"
    path.write_text(multi_doc([o for _, o in OBJECTS]))
    out = kc("patch", "-f", str(path), "--type=merge",
             "-p", '{"metadata":{"annotations":{"merge":"1"}}}').stdout.splitlines()
    assert out == ["%s patched" % r for r in REFS]
    out = kc("patch", "-f", str(path), "--type=json", "-p",
             '[{"op":"add","path":"/metadata/annotations/json","value":"1"}]').stdout
    assert out.splitlines() == ["%s patched" % r for r in REFS]
    # strategic merge patch: built-ins only; custom resources refuse it
    cp = kc("patch", "-f", str(path), "-p", '{"metadata":{"annotations":{"smp":"1"}}}', ok=False)
    assert cp.returncode == 1
    assert cp.stdout.splitlines() == ["%s patched" % r for r in REFS if r.split("/")[0]
                                      not in CRDS]
    assert cp.stderr.count("application/strategic-merge-patch+json is not supported") == len(CRDS)
    items = json.loads(kc("get", *REFS, "-o", "json").stdout)["items"]
    for r, i in zip(REFS, items):
        ann = i["metadata"]["annotations"]
        assert ann["merge"] == "1" and ann["json"] == "1", r
        assert ("smp" in ann) == (r.split("/")[0] not in CRDS), r
    # label and annotate are patches too
    assert kc("label", *REFS, "swept=yes").stdout.splitlines() == [
        "%s labeled" % r for r in REFS]
    assert kc("annotate", *REFS, "note=x").stdout.splitlines() == [
        "%s annotated" % r for r in REFS]


def test_replace_every_kind(created, kc):
    items = json.loads(kc("get", *REFS, "-o", "json").stdout)["items"]
    for i in items:
        i["metadata"].setdefault("labels", {})["replaced"] = "yes"
    out = kc("replace", "-f", "-", input=multi_doc(items)).stdout
    assert out.splitlines() == ["%s replaced" % r for r in REFS]
    # A v1 List is validated on the client with /openapi/v2, which kubesim
    # does not serve (README): refused unless validation is left to the server.
    as_list = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    cp = kc("replace", "-f", "-", input=as_list, ok=False)
    assert cp.returncode == 1 and "error validating data" in cp.stderr
    fresh = json.loads(kc("get", *REFS, "-o", "json").stdout)
    out = kc("replace", "--validate=false", "-f", "-", input=json.dumps(fresh)).stdout
    assert out.splitlines() == ["%s replaced" % r for r in REFS]
    # a stale resourceVersion conflicts
    cp = kc("replace", "-f", "-", input=json.dumps(items[1]), ok=False)
    assert cp.returncode == 1 and "the object has been modified" in cp.stderr


def test_wait_for_conditions_and_fields(created, kc):
    kc("wait", "--for=condition=Complete", "job/sw-job", "--timeout=30s")
    kc("wait", "--for=jsonpath={.status.phase}=Running", "pod/sw-pod", "--timeout=30s")
    kc("wait", "--for=create", *REFS, "--timeout=10s")
    kc("wait", "--for=jsonpath={.status.jobDeploymentStatus}=Complete", "rayjob/sw-rj",
       "--timeout=60s")
    kc("wait", "--for=condition=QuotaReserved", "workload/sw-wl", "--timeout=30s")


def test_watch_each_kind(created, sim, kc):
    """`kubectl get KIND NAME -w --output-watch-events`: the current state,
    then the change made after the watch started."""
    def one(r):
        res, name = r.split("/", 1)
        p = sim.kubectl_popen("get", res, name, "-w", "--output-watch-events", "-o",
                              "go-template={{.type}} {{.object.kind}}/{{.object.metadata.name}}\n")
        try:
            first = p.stdout.readline().strip()
            sim.kubectl("annotate", r, "watched=%d" % time.time_ns(), "--overwrite")
            second = p.stdout.readline().strip()
        finally:
            p.terminate()
            p.wait(10)
        return r, first, second
    for r, first, second in parallel(one, REFS):
        kind = dict(OBJECTS)[r.split("/")[0]]["kind"]
        assert first == "ADDED %s/%s" % (kind, NAMES[r]), (r, first)
        assert second == "MODIFIED %s/%s" % (kind, NAMES[r]), (r, second)


def test_logs(created, sim, kc):
    kc("wait", "--for=condition=Complete", "job/sw-job", "--timeout=30s")
    assert kc("logs", "job/sw-job").stdout == "job-done\n"
    assert kc("logs", "sw-pod", "-c", "main").stdout.startswith("sweep-log")
    stamped = kc("logs", "sw-pod", "--timestamps").stdout
    assert stamped.split(" ", 1)[1] == "sweep-log\n" and stamped[10] == "T"
    assert kc("logs", "sw-pod", "--tail=1").stdout == "sweep-log\n"
    assert kc("logs", "sw-pod", "--since=1h").stdout == "sweep-log\n"
    assert kc("logs", "-l", "batch.kubernetes.io/job-name=sw-job").stdout == "job-done\n"
    cp = kc("logs", "sw-pod", "--previous", ok=False)
    assert cp.returncode == 1 and "previous terminated container" in cp.stderr
    p = sim.kubectl_popen("logs", "-f", "sw-pod")
    try:
        assert p.stdout.readline() == "sweep-log\n"
    finally:
        p.terminate()
        p.wait(10)
    assert "ray-done" in kc("logs", "-l", "batch.kubernetes.io/job-name=sw-rj").stdout


def test_explain_each_kind(created, kc):
    def one(r):
        res = r.split("/")[0].split(".")[0]
        return res, kc("explain", res, ok=False)
    for res, cp in parallel(one, sorted({r.split("/")[0] for r in REFS})):
        assert cp.returncode == 0, (res, cp.stderr)
        assert cp.stdout.startswith(("KIND:", "GROUP:")), (res, cp.stdout[:200])
    out = kc("explain", "jobs.spec.backoffLimit").stdout
    assert "FIELD: backoffLimit <integer>" in out
    out = kc("explain", "clusterqueues.spec.queueingStrategy").stdout
    assert "queueingStrategy" in out


def test_auth_can_i_for_each_kind(created, kc):
    def one(r):
        res = r.split("/")[0]
        return res, kc("auth", "can-i", "create", res).stdout.strip(), kc(
            "auth", "can-i", "delete", res, "--as=sweeper", ok=False).stdout.strip()
    for res, admin, sweeper in parallel(one, sorted({r.split("/")[0] for r in REFS})):
        assert admin == "yes", res
        assert sweeper == "no", res
    assert kc("auth", "can-i", "list", "configmaps", "--as=sweeper").stdout.strip() == "yes"
    assert kc("auth", "can-i", "create", "jobs.batch", "--as=sweeper").stdout.strip() == "yes"
    assert kc("auth", "can-i", "create", "jobs.batch", "-n", "sw-ns", "--as=sweeper",
              ok=False).stdout.strip() == "no"
    cp = kc("get", "secrets", "--as=sweeper", ok=False)
    assert cp.returncode == 1 and ('User "sweeper" cannot list resource "secrets" in API group '
                                   '"" in the namespace "default"') in cp.stderr
    assert "sw-cm" in kc("get", "configmaps", "--as=sweeper").stdout


def test_documented_refusals(created, kc):
    """What kubesim does not serve (README) fails as on a server without it."""
    for args, needle in [
        (["exec", "sw-pod", "--", "true"], "the server could not find the requested resource"),
        (["port-forward", "pod/sw-pod", "18080:80"],
         "the server could not find the requested resource"),
        (["top", "pods"], "Metrics API not available"),
        (["get", "cronjobs"], "the server doesn't have a resource type"),
        (["get", "statefulsets"], "the server doesn't have a resource type"),
    ]:
        cp = kc(*args, ok=False)
        assert cp.returncode != 0 and needle in cp.stderr, (args, cp.stderr)


@pytest.fixture
def own_kc():
    """kubectl against a kubesim of the test's own holding every object, for
    a test that deletes them (the module's objects stay for the others)."""
    if not kubectl_binary():
        pytest.skip("kubectl 1.32 is not installed")
    with KubeSim() as ks:
        def run(*args, input=None, ok=True):
            return ks.kubectl(*args, input=input, check=ok)
        out = run("create", "-f", "-", input=multi_doc([o for _, o in OBJECTS])).stdout
        assert out.splitlines() == ["%s created" % r for r in REFS]
        yield run


def test_delete_with_each_cascade(own_kc):
    """Delete everything, split over the three propagation policies."""
    kc = own_kc
    kinds = list(zip(REFS, [r for r, _ in OBJECTS]))
    groups = {"background": [], "foreground": [], "orphan": []}
    for i, (r, _) in enumerate(kinds):
        if r == "namespace/sw-ns":
            continue
        groups[("background", "foreground", "orphan")[i % 3]].append(r)
    for cascade, refs in groups.items():
        out = kc("delete", *refs, "--cascade=" + cascade, "--timeout=60s").stdout
        want = ['%s "%s" deleted' % (r.split("/")[0], NAMES[r]) for r in refs]
        assert out.splitlines() == want, cascade
    cp = kc("get", *[r for refs in groups.values() for r in refs], ok=False)
    assert cp.returncode == 1 and cp.stderr.count("NotFound") == sum(
        len(v) for v in groups.values())
    out = kc("delete", "namespace", "sw-ns", "--wait=false").stdout
    assert out.strip() == 'namespace "sw-ns" deleted'
    kc("wait", "--for=delete", "namespace/sw-ns", "--timeout=30s")
