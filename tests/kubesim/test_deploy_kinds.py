"""The kinds a deployment manifest holds (Deployment, PodDisruptionBudget,
ServiceAccount, ClusterRole/Role and their bindings): discovery, OpenAPI,
kubectl CRUD, patches, watch, and 404/409/422; the Deployment and
ReplicaSet controllers and the scale subresource. No controller acts on the
other kinds."""
import json
import re

import pytest

from kubesim import api_path

RBAC = "rbac.authorization.k8s.io/v1"


def deployment(name="web", replicas=2, labels=None, image="nginx:1.27"):
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [
                                      {"name": "web", "image": image},
                                      {"name": "sidecar", "image": "busybox:1.36"}]}}}}


def invalid(ks, method, path, body):
    status, _, out = ks.request(method, path, body=body)
    assert status == 422 and out["reason"] == "Invalid", out
    return {c["field"]: c["message"] for c in out["details"]["causes"]}


def test_discovery_lists_the_kinds(ks, kubectl_bin):
    out = ks.kubectl("api-resources", "--no-headers").stdout
    rows = {tuple(line.split()) for line in out.splitlines()}
    for row in [("deployments", "deploy", "apps/v1", "true", "Deployment"),
                ("poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget"),
                ("serviceaccounts", "sa", "v1", "true", "ServiceAccount"),
                ("clusterroles", RBAC, "false", "ClusterRole"),
                ("clusterrolebindings", RBAC, "false", "ClusterRoleBinding"),
                ("roles", RBAC, "true", "Role"),
                ("rolebindings", RBAC, "true", "RoleBinding")]:
        assert row in rows, row
    groups = {g["name"] for g in ks.get("/apis")["groups"]}
    assert {"apps", "policy", "rbac.authorization.k8s.io"} <= groups
    res = {r["name"] for r in ks.get("/apis/apps/v1")["resources"]}
    assert res == {"deployments", "deployments/status", "deployments/scale", "replicasets",
                   "replicasets/status", "replicasets/scale"}


@pytest.mark.parametrize("gv,kind,schema", [
    ("apis/apps/v1", "Deployment", "io.k8s.api.apps.v1.Deployment"),
    ("apis/policy/v1", "PodDisruptionBudget", "io.k8s.api.policy.v1.PodDisruptionBudget"),
    ("apis/rbac.authorization.k8s.io/v1", "ClusterRole", "io.k8s.api.rbac.v1.ClusterRole"),
])
def test_openapi_v3_documents_the_groups(ks, gv, kind, schema):
    root = ks.get("/openapi/v3")["paths"]
    assert gv in root
    doc = ks.get("/" + root[gv]["serverRelativeURL"].split("?")[0].lstrip("/"))
    gvk = doc["components"]["schemas"][schema]["x-kubernetes-group-version-kind"]
    assert gvk[0]["kind"] == kind
    patches = [p["patch"] for p in doc["paths"].values() if "patch" in p]
    assert patches and all(
        any(q["name"] == "fieldValidation" for q in p["parameters"]) for p in patches)


def test_kubectl_deployment_lifecycle(ks, kubectl_bin):
    out = ks.kubectl("apply", "-f", "-", input=json.dumps(deployment())).stdout
    assert out.strip() == "deployment.apps/web created"
    got = ks.get_obj("apps/v1", "deployments", "web", "default")
    assert got["spec"]["replicas"] == 2
    assert got["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {
        "maxUnavailable": "25%", "maxSurge": "25%"}}
    assert got["spec"]["revisionHistoryLimit"] == 10
    assert got["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    assert got["metadata"]["generation"] == 1
    table = ks.kubectl("get", "deploy", "-o", "wide").stdout.splitlines()
    assert table[0].split()[:5] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert re.match(r"web\s+\d/2\s+\d\s+\d\s+\S+\s+web,sidecar\s+nginx:1.27,busybox:1.36\s+"
                    r"app=web", table[1]), table
    # kubectl set image sends a strategic merge patch keyed by container name
    ks.kubectl("set", "image", "deployment/web", "web=nginx:1.28")
    got = ks.get_obj("apps/v1", "deployments", "web", "default")
    images = [c["image"] for c in got["spec"]["template"]["spec"]["containers"]]
    assert images == ["nginx:1.28", "busybox:1.36"] and got["metadata"]["generation"] == 2
    ks.kubectl("patch", "deployment", "web", "--type", "merge", "-p", '{"spec":{"replicas":5}}')
    assert ks.get_obj("apps/v1", "deployments", "web", "default")["spec"]["replicas"] == 5
    # client-side apply of the manifest again reverts what it owns
    out = ks.kubectl("apply", "-f", "-", input=json.dumps(deployment())).stdout
    assert out.strip() == "deployment.apps/web configured"
    got = ks.get_obj("apps/v1", "deployments", "web", "default")
    assert got["spec"]["replicas"] == 2
    assert got["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    out = ks.kubectl("delete", "deployment", "web").stdout
    assert out.strip() == 'deployment.apps "web" deleted'
    assert ks.get_obj("apps/v1", "deployments", "web", "default") is None


def test_deployment_controller_rollout_scale_and_foreground_delete(ks, kubectl_bin):
    ks.kubectl("create", "deployment", "app", "--image=busybox:1.36", "--replicas=2", "--",
               "sleep", "60")
    out = ks.kubectl("rollout", "status", "deployment/app", "--timeout=30s").stdout
    assert out.strip().endswith('deployment "app" successfully rolled out')
    rs = ks.list("apps/v1", "replicasets", "default")
    assert len(rs) == 1 and rs[0]["metadata"]["ownerReferences"][0]["name"] == "app"
    first = rs[0]["metadata"]["name"]
    tmpl_hash = rs[0]["metadata"]["labels"]["pod-template-hash"]
    assert first == "app-" + tmpl_hash
    assert rs[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    pods = ks.list("v1", "pods", "default", labelSelector="pod-template-hash=" + tmpl_hash)
    assert len(pods) == 2 and all(p["metadata"]["ownerReferences"][0]["name"] == first
                                  for p in pods)
    # the scale subresource, through kubectl scale and directly
    assert ks.kubectl("scale", "deployment/app", "--replicas=3").stdout.strip() == (
        "deployment.apps/app scaled")
    ks.kubectl("rollout", "status", "deployment/app", "--timeout=30s")
    scale = ks.get(api_path("apps/v1", "deployments", "default", "app", "scale"))
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"]["replicas"] == 3 and scale["status"]["replicas"] == 3
    assert scale["status"]["selector"] == "app=app"
    # a new template rolls out a new ReplicaSet and scales the old one to 0
    ks.kubectl("set", "image", "deployment/app", "busybox=busybox:1.37")
    ks.kubectl("rollout", "status", "deployment/app", "--timeout=30s")
    by_name = {r["metadata"]["name"]: r for r in ks.list("apps/v1", "replicasets", "default")}
    assert by_name[first]["spec"]["replicas"] == 0 and len(by_name) == 2
    d = ks.get_obj("apps/v1", "deployments", "app", "default")
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    st = d["status"]
    assert st["updatedReplicas"] == st["availableReplicas"] == 3
    assert {c["type"]: c["reason"] for c in st["conditions"]} == {
        "Available": "MinimumReplicasAvailable", "Progressing": "NewReplicaSetAvailable"}
    out = ks.kubectl("rollout", "history", "deployment/app").stdout.split()
    assert out[-4:] == ["1", "<none>", "2", "<none>"]
    ks.kubectl("rollout", "undo", "deployment/app")
    ks.kubectl("rollout", "status", "deployment/app", "--timeout=30s")
    assert ks.get_obj("apps/v1", "replicasets", first, "default")["spec"]["replicas"] == 3
    # foreground deletion waits for the ReplicaSets and their pods
    ks.kubectl("delete", "deployment", "app", "--cascade=foreground", "--timeout=60s")
    assert ks.list("apps/v1", "replicasets", "default") == []
    assert ks.list("v1", "pods", "default") == []


def test_server_side_apply_list_and_label_selector(ks, kubectl_bin):
    d = deployment("api", replicas=1)
    d["metadata"]["labels"] = {"tier": "backend"}
    out = ks.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(d)).stdout
    assert "deployment.apps/api serverside-applied" in out
    ks.create(deployment("front"))
    names = [o["metadata"]["name"] for o in ks.list("apps/v1", "deployments", "default")]
    assert names == ["api", "front"]
    sel = ks.list("apps/v1", "deployments", "default", labelSelector="tier=backend")
    assert [o["metadata"]["name"] for o in sel] == ["api"]
    out = ks.kubectl("get", "deployments", "-A", "-o", "name").stdout.split()
    assert out == ["deployment.apps/api", "deployment.apps/front"]


def test_watch_sees_deployment_events(ks):
    created = ks.create(deployment("w"))
    rv = int(created["metadata"]["resourceVersion"]) - 1
    ks.patch(api_path("apps/v1", "deployments", "default", "w"), {"spec": {"replicas": 4}})
    ks.delete(api_path("apps/v1", "deployments", "default", "w"))
    seen = []
    for ev in ks.watch(api_path("apps/v1", "deployments", "default"), timeout=5,
                       resourceVersion=str(rv), timeoutSeconds="2"):
        seen.append((ev["type"], ev["object"]["spec"]["replicas"]))
    # the controller's status writes are MODIFIED events too
    assert seen[0] == ("ADDED", 2) and seen[-1] == ("DELETED", 4)
    assert ("MODIFIED", 4) in seen and set(seen[1:-1]) <= {("MODIFIED", 2), ("MODIFIED", 4)}


RBAC_YAML = """
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects:
- {kind: ServiceAccount, name: robot, namespace: default}
- {kind: User, name: alice}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cm-editor}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: cm-editor}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-editor}
subjects:
- {kind: Group, name: devs}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 50%
  selector: {matchLabels: {app: web}}
"""


def test_rbac_pdb_and_serviceaccount_via_kubectl(ks, kubectl_bin):
    # (kubectl create <kind> sends protobuf, which kubesim does not speak)
    out = ks.kubectl("apply", "-f", "-", input=RBAC_YAML).stdout
    assert out.count(" created") == 6, out
    role = ks.get_obj(RBAC, "clusterroles", "reader")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]
    binding = ks.get_obj(RBAC, "clusterrolebindings", "reader")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": "reader"}
    assert {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"} in \
        binding["subjects"]
    out = ks.kubectl("get", "clusterrolebinding", "reader", "-o", "wide").stdout.splitlines()
    assert re.match(r"reader\s+ClusterRole/reader\s+\S+\s+alice\s+default/robot$", out[1]), out
    assert ks.get_obj(RBAC, "rolebindings", "cm-editor", "default")["roleRef"]["kind"] == "Role"
    pdb = ks.get_obj("policy/v1", "poddisruptionbudgets", "web", "default")
    assert pdb["spec"] == {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}
    out = ks.kubectl("get", "pdb").stdout.splitlines()
    assert out[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED",
                              "DISRUPTIONS", "AGE"]
    assert re.match(r"web\s+50%\s+N/A\s+0\s", out[1]), out
    out = ks.kubectl("get", "sa", "robot").stdout.splitlines()
    assert re.match(r"robot\s+0\s", out[1]), out
    # cluster-scoped kinds ignore the namespace; deleting them works by name
    out = ks.kubectl("delete", "clusterrolebinding,clusterrole", "reader").stdout
    assert 'clusterrolebinding.rbac.authorization.k8s.io "reader" deleted' in out
    assert ks.get_obj(RBAC, "clusterroles", "reader") is None


def test_missing_is_404_and_duplicate_or_stale_is_409(ks, kubectl_bin):
    cp = ks.kubectl("get", "deployment", "nope", check=False)
    assert cp.returncode == 1
    assert 'Error from server (NotFound): deployments.apps "nope" not found' in cp.stderr
    status, _, out = ks.request("GET", api_path(RBAC, "clusterroles", None, "nope"))
    assert status == 404
    assert out["message"] == 'clusterroles.rbac.authorization.k8s.io "nope" not found'
    ks.create(deployment())
    status, _, out = ks.request("POST", api_path("apps/v1", "deployments", "default"),
                                body=deployment())
    assert status == 409 and out["reason"] == "AlreadyExists"
    assert out["message"] == 'deployments.apps "web" already exists'
    # a stale resourceVersion (a Role: no controller writes it meanwhile)
    role = ks.create({"apiVersion": RBAC, "kind": "Role", "metadata": {"name": "r"},
                      "rules": []}, namespace="default")
    stale = dict(role, rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])
    ks.put(api_path(RBAC, "roles", "default", "r"), stale)
    status, _, out = ks.request("PUT", api_path(RBAC, "roles", "default", "r"), body=stale)
    assert status == 409 and out["reason"] == "Conflict"


def test_invalid_objects_are_422(ks):
    bad = deployment(labels={"app": "other"})
    bad["spec"]["replicas"] = -1
    bad["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    causes = invalid(ks, "POST", api_path("apps/v1", "deployments", "default"), bad)
    assert causes["spec.template.metadata.labels"].endswith(
        "`selector` does not match template `labels`")
    assert causes["spec.replicas"] == "Invalid value: -1: must be greater than or equal to 0"
    assert causes["spec.template.spec.restartPolicy"] == \
        'Unsupported value: "Never": supported values: "Always"'
    ks.create(deployment())
    moved = deployment()
    moved["spec"]["selector"] = {"matchLabels": {"app": "web", "v": "2"}}
    moved["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    causes = invalid(ks, "PUT", api_path("apps/v1", "deployments", "default", "web"), moved)
    assert causes["spec.selector"].endswith("field is immutable")

    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
           "metadata": {"name": "p"}, "spec": {"minAvailable": 1, "maxUnavailable": "x%"}}
    causes = invalid(ks, "POST", api_path("policy/v1", "poddisruptionbudgets", "default"), pdb)
    assert causes["spec"].endswith("minAvailable and maxUnavailable cannot be both set")
    assert "a valid percent string" in causes["spec.maxUnavailable"]

    role = {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": "r"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": []}]}
    causes = invalid(ks, "POST", api_path(RBAC, "clusterroles"), role)
    assert causes == {"rules[0].verbs": "Required value: verbs must contain at least one value"}

    crb = {"apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
           "subjects": [{"kind": "ServiceAccount", "name": "robot"}]}
    causes = invalid(ks, "POST", api_path(RBAC, "clusterrolebindings"), crb)
    assert causes == {"roleRef.kind": 'Unsupported value: "Role": supported values: '
                                      '"ClusterRole"',
                      "subjects[0].namespace": "Required value"}
    crb["roleRef"]["kind"] = "ClusterRole"
    crb["subjects"][0]["namespace"] = "default"
    created = ks.create(crb)
    created["roleRef"]["name"] = "other"
    causes = invalid(ks, "PUT", api_path(RBAC, "clusterrolebindings", None, "b"), created)
    assert causes == {"roleRef": 'Invalid value: "object": cannot change roleRef'}


def test_drain_evicts_and_the_replicaset_replaces(ks, kubectl_bin):
    """kubectl drain evicts through pods/eviction (policy/v1 in discovery);
    with --disable-eviction it deletes with protobuf DeleteOptions. Either
    way the ReplicaSet brings the pods back on other nodes."""
    ks.kubectl("create", "deployment", "dr", "--image=busybox:1.36", "--replicas=2", "--",
               "sleep", "60")
    ks.kubectl("rollout", "status", "deployment/dr", "--timeout=30s")
    for flags in ([], ["--disable-eviction"]):
        node = ks.list("v1", "pods", "default", labelSelector="app=dr")[0]["spec"]["nodeName"]
        out = ks.kubectl("drain", node, "--timeout=30s", *flags).stdout
        assert "node/%s drained" % node in out
        assert ("evicted" in out) == (not flags), out
        ks.wait_for(lambda: [p for p in ks.list("v1", "pods", "default", labelSelector="app=dr")
                             if p["status"].get("phase") == "Running"],
                    cond=lambda ps: len(ps) == 2 and all(p["spec"]["nodeName"] != node
                                                         for p in ps), what="rescheduled")
