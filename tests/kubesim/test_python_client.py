"""The official Python client (Debian's python3-kubernetes) against kubesim:
a typed round trip of every built-in kind kubesim serves (create, read,
list, patch, replace, delete through the generated API classes and models),
the custom resources through CustomObjectsApi, typed watches, log follow,
and nodes read back into V1Node."""

import pytest

from job_manifests import job_manifest
from kubesim import KubeSim

k8s = pytest.importorskip("kubernetes", reason="python3-kubernetes is not installed (make deps)")
from kubernetes import client, config, watch  # noqa: E402

NS = "default"


@pytest.fixture(scope="module")
def sim():
    with KubeSim() as ks:
        yield ks


@pytest.fixture(scope="module")
def api(sim):
    return config.new_client_from_config(config_file=sim.kubeconfig)


def meta(name, **kw):
    return client.V1ObjectMeta(name=name, labels={"sweep": "py"}, **kw)


def container(cmd="sleep 30"):
    return client.V1Container(name="main", image="busybox:1.36", command=["sh", "-c", cmd])


def builtin_kinds():
    """(api class, kind suffix, namespaced, model) for every built-in kind."""
    pod_spec = client.V1PodSpec(restart_policy="Never", containers=[container()])
    tmpl = client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels={"app": "py"}),
                                    spec=client.V1PodSpec(containers=[container()]))
    rule = client.V1PolicyRule(api_groups=[""], resources=["pods"], verbs=["get"])
    subj = client.V1Subject(kind="User", name="alice", api_group="rbac.authorization.k8s.io")
    return [
        (client.CoreV1Api, "namespace", False, client.V1Namespace(metadata=meta("py-ns"))),
        (client.CoreV1Api, "config_map", True,
         client.V1ConfigMap(metadata=meta("py-cm"), data={"k": "v"})),
        (client.CoreV1Api, "secret", True,
         client.V1Secret(metadata=meta("py-secret"), string_data={"pw": "x"})),
        (client.CoreV1Api, "service_account", True, client.V1ServiceAccount(metadata=meta("py-sa"))),
        (client.CoreV1Api, "service", True, client.V1Service(
            metadata=meta("py-svc"), spec=client.V1ServiceSpec(
                selector={"app": "py"}, ports=[client.V1ServicePort(port=80, target_port=8080)]))),
        (client.CoreV1Api, "pod", True, client.V1Pod(metadata=meta("py-pod"), spec=pod_spec)),
        (client.CoreV1Api, "event", True, client.CoreV1Event(
            metadata=meta("py-ev"), reason="Tested", message="from the python client",
            type="Normal", involved_object=client.V1ObjectReference(kind="Pod", name="py-pod",
                                                                    namespace=NS))),
        (client.BatchV1Api, "job", True, client.V1Job(metadata=meta("py-job"), spec=client.V1JobSpec(
            template=client.V1PodTemplateSpec(spec=client.V1PodSpec(
                restart_policy="Never", containers=[container("echo done")]))))),
        (client.AppsV1Api, "deployment", True, client.V1Deployment(
            metadata=meta("py-deploy"), spec=client.V1DeploymentSpec(
                replicas=1, selector=client.V1LabelSelector(match_labels={"app": "py"}),
                template=tmpl))),
        (client.PolicyV1Api, "pod_disruption_budget", True, client.V1PodDisruptionBudget(
            metadata=meta("py-pdb"), spec=client.V1PodDisruptionBudgetSpec(
                min_available=1, selector=client.V1LabelSelector(match_labels={"app": "py"})))),
        (client.RbacAuthorizationV1Api, "cluster_role", False,
         client.V1ClusterRole(metadata=meta("py-cr"), rules=[rule])),
        (client.RbacAuthorizationV1Api, "role", True,
         client.V1Role(metadata=meta("py-role"), rules=[rule])),
        (client.RbacAuthorizationV1Api, "cluster_role_binding", False, client.V1ClusterRoleBinding(
            metadata=meta("py-crb"), subjects=[subj], role_ref=client.V1RoleRef(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="py-cr"))),
        (client.RbacAuthorizationV1Api, "role_binding", True, client.V1RoleBinding(
            metadata=meta("py-rb"), subjects=[subj], role_ref=client.V1RoleRef(
                api_group="rbac.authorization.k8s.io", kind="Role", name="py-role"))),
        (client.CoordinationV1Api, "lease", True, client.V1Lease(
            metadata=meta("py-lease"), spec=client.V1LeaseSpec(holder_identity="py",
                                                               lease_duration_seconds=15))),
    ]


def call(api_obj, verb, suffix, namespaced, *args, **kw):
    name = "%s_%s%s" % (verb, "namespaced_" if namespaced else "", suffix)
    if namespaced:
        kw["namespace"] = NS
    return getattr(api_obj, name)(*args, **kw)


def test_typed_round_trip_of_every_builtin_kind(api):
    for cls, suffix, namespaced, model in builtin_kinds():
        a = cls(api)
        name = model.metadata.name
        created = call(a, "create", suffix, namespaced, body=model)
        assert type(created) is type(model) and created.metadata.uid, suffix
        got = call(a, "read", suffix, namespaced, name)
        assert got.metadata.uid == created.metadata.uid and got.metadata.labels["sweep"] == "py"
        listed = call(a, "list", suffix, namespaced, label_selector="sweep=py")
        assert name in [i.metadata.name for i in listed.items], suffix
        patched = call(a, "patch", suffix, namespaced, name,
                       body={"metadata": {"annotations": {"patched": "yes"}}})
        assert patched.metadata.annotations["patched"] == "yes"
        # replace as clients do: read, change, write; a controller's status
        # write in between is a 409 Conflict, and the client reads again
        for _ in range(20):
            cur = call(a, "read", suffix, namespaced, name)
            cur.metadata.labels["replaced"] = "yes"
            try:
                replaced = call(a, "replace", suffix, namespaced, name, body=cur)
                break
            except client.exceptions.ApiException as e:
                assert e.status == 409, e
        assert int(replaced.metadata.resource_version) > int(patched.metadata.resource_version)
        assert replaced.metadata.labels["replaced"] == "yes"
        call(a, "delete", suffix, namespaced, name, propagation_policy="Background")
        # a namespace goes through Terminating, and a pod that was already
        # scheduled and started terminates gracefully (deletionTimestamp set
        # until its containers stop), as on a real cluster; either may be
        # gone already by the time we read. Everything else is gone at once.
        try:
            left = call(a, "read", suffix, namespaced, name)
        except client.exceptions.ApiException as e:
            assert e.status == 404, (suffix, e)
        else:
            if suffix == "pod":
                assert left.metadata.deletion_timestamp is not None, left
            else:
                assert suffix == "namespace" and left.status.phase == "Terminating", (suffix,
                                                                                       left)


def test_custom_resources_through_custom_objects_api(api):
    co = client.CustomObjectsApi(api)
    kv = ("kueue.x-k8s.io", "v1beta1")
    rf = co.create_cluster_custom_object(*kv, "resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
        "metadata": {"name": "py-rf"}})
    assert rf["metadata"]["uid"]
    cq = co.create_cluster_custom_object(*kv, "clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
        "metadata": {"name": "py-cq"}, "spec": {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu"], "flavors": [{"name": "py-rf", "resources": [
                {"name": "cpu", "nominalQuota": "4"}]}]}]}})
    assert cq["spec"]["queueingStrategy"] == "BestEffortFIFO"  # CRD default
    lq = co.create_namespaced_custom_object(*kv, NS, "localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
        "metadata": {"name": "py-lq"}, "spec": {"clusterQueue": "py-cq"}})
    got = co.get_namespaced_custom_object(*kv, NS, "localqueues", "py-lq")
    assert got["metadata"]["uid"] == lq["metadata"]["uid"]
    patched = co.patch_cluster_custom_object(*kv, "clusterqueues", "py-cq",
                                             {"metadata": {"labels": {"sweep": "py"}}})
    assert patched["metadata"]["labels"] == {"sweep": "py"}
    items = co.list_cluster_custom_object(*kv, "clusterqueues", label_selector="sweep=py")
    assert [i["metadata"]["name"] for i in items["items"]] == ["py-cq"]
    st = co.get_cluster_custom_object_status(*kv, "clusterqueues", "py-cq")
    assert "status" in st
    for plural, name in (("localqueues", "py-lq"),):
        co.delete_namespaced_custom_object(*kv, NS, plural, name)
    co.delete_cluster_custom_object(*kv, "clusterqueues", "py-cq")
    co.delete_cluster_custom_object(*kv, "resourceflavors", "py-rf")


def test_nodes_decode_into_typed_models(api):
    core = client.CoreV1Api(api)
    nodes = core.list_node().items
    assert len(nodes) == 5
    info = core.read_node("cpu-node-1").status.node_info
    for field in ("boot_id", "machine_id", "system_uuid", "kernel_version", "os_image",
                  "container_runtime_version", "kubelet_version", "operating_system",
                  "architecture"):
        assert getattr(info, field), field
    assert info.kube_proxy_version == ""
    lease = client.CoordinationV1Api(api).read_namespaced_lease("cpu-node-1", "kube-node-lease")
    assert lease.spec.holder_identity == "cpu-node-1"


def test_typed_watch_and_log_follow(sim, api):
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    rv = batch.list_namespaced_job(NS).metadata.resource_version
    sim.create(job_manifest("py-follow", "echo first; sleep 1; echo second"))
    phases = []
    w = watch.Watch()
    for ev in w.stream(batch.list_namespaced_job, NS, resource_version=rv, timeout_seconds=30):
        assert isinstance(ev["object"], client.V1Job)
        phases.append(ev["type"])
        if ev["object"].status and ev["object"].status.active:
            w.stop()
    assert phases[0] == "ADDED"
    pod = sim.wait_for(lambda: core.list_namespaced_pod(NS, label_selector="job-name=py-follow")
                       .items, what="pod").pop()
    lines = []
    w = watch.Watch()
    for line in w.stream(core.read_namespaced_pod_log, pod.metadata.name, NS, follow=True,
                         timestamps=True):
        lines.append(line)
    assert [ln.split(" ", 1)[1] for ln in lines] == ["first", "second"]
    assert lines[0][:4].isdigit() and lines[0][10] == "T"


def test_access_review_through_the_typed_client(api):
    auth = client.AuthorizationV1Api(api)
    review = auth.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
            namespace=NS, verb="create", group="batch", resource="jobs"))))
    assert review.status.allowed is True
    sar = auth.create_subject_access_review(client.V1SubjectAccessReview(
        spec=client.V1SubjectAccessReviewSpec(user="nobody", resource_attributes=(
            client.V1ResourceAttributes(namespace=NS, verb="get", resource="pods")))))
    assert sar.status.allowed is False
