"""The in-cluster manifests (deploy/): they render with kustomize, validate
against the real Kubernetes, Kueue and KubeRay schemas, apply to kubesim
with real kubectl 1.32, and agree with the gateway they deploy (its config
keys, the Kubernetes resources it uses, the files the image holds)."""
import glob
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from kubesim import KubeSim, kubectl_binary
from paths import BUILD, REPO

DEPLOY = os.path.join(REPO, "deploy")
VALIDATOR = os.path.join(REPO, "tests", "tools", "validate-k8s.js")
NODE_MODULES = os.path.join(REPO, "tests", "node_modules")

def kubectl():
    k = kubectl_binary()
    if not k:
        pytest.skip("kubectl 1.32 is not installed")
    return k


def kustomize(path):
    cp = subprocess.run([kubectl(), "kustomize", path], capture_output=True, text=True,
                        timeout=60)
    assert cp.returncode == 0, cp.stderr
    return cp.stdout


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    d = tmp_path_factory.mktemp("deploy")
    out = {}
    for name, path in (("base", DEPLOY), ("kueue", os.path.join(DEPLOY, "kueue-sample"))):
        text = kustomize(path)
        f = d / f"{name}.yaml"
        f.write_text(text)
        out[name] = (str(f), [o for o in yaml.safe_load_all(text) if o])
    return out


def objects(rendered, name, kind=None):
    return [o for o in rendered[name][1] if kind is None or o["kind"] == kind]


def one(rendered, kind):
    found = objects(rendered, "base", kind)
    assert len(found) == 1, kind
    return found[0]


def test_kustomize_renders_the_expected_objects(rendered):
    kinds = sorted(o["kind"] for o in objects(rendered, "base"))
    assert kinds == sorted(["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                            "ConfigMap", "Secret", "Service", "Deployment", "PodDisruptionBudget",
                            "Job"])
    for o in objects(rendered, "base"):
        if o["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            assert o["metadata"]["namespace"] == "taugate-system", o["kind"]
    kinds = {o["kind"] for o in objects(rendered, "kueue")}
    assert {"ResourceFlavor", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass"} <= kinds


def test_objects_validate_against_the_real_schemas(rendered):
    node = shutil.which("node")
    if not node or not os.path.isdir(os.path.join(NODE_MODULES, "ajv")):
        pytest.skip("node or tests/node_modules is missing (make deps)")
    cp = subprocess.run([node, VALIDATOR, rendered["base"][0], rendered["kueue"][0]],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_the_deployment_is_hardened(rendered):
    dep = one(rendered, "Deployment")
    assert dep["spec"]["replicas"] == 2
    pod = dep["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["serviceAccountName"] == "taugate"
    (c,) = pod["containers"]
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["resources"]["requests"] and c["resources"]["limits"]
    # the PodDisruptionBudget and Service select the Deployment's pods
    labels = dep["spec"]["template"]["metadata"]["labels"]
    for kind, sel in (("PodDisruptionBudget", one(rendered, "PodDisruptionBudget")["spec"]
                       ["selector"]["matchLabels"]),
                      ("Service", one(rendered, "Service")["spec"]["selector"])):
        assert all(labels.get(k) == v for k, v in sel.items()), kind
    # the database URL comes from the Secret, never the ConfigMap
    secret_keys = set(one(rendered, "Secret")["stringData"])
    for o in (dep, one(rendered, "Job")):
        env = o["spec"]["template"]["spec"]["containers"][0]["env"]
        refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in env if "valueFrom" in e}
        assert refs["TAUGATE_DATABASE_URL"]["name"] == "taugate-secrets"
        assert refs["TAUGATE_DATABASE_URL"]["key"] in secret_keys
    assert one(rendered, "Job")["spec"]["template"]["spec"]["containers"][0]["args"] == ["migrate"]
    # files the ConfigMap points into the secret mount are mounted there
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    files = set()
    for vol in pod["volumes"]:
        if "secret" in vol:
            assert vol["secret"]["secretName"] == "taugate-secrets"
            for item in vol["secret"]["items"]:
                assert item["key"] in secret_keys
                files.add(os.path.join(mounts[vol["name"]], item["path"]))
    for key, value in one(rendered, "ConfigMap")["data"].items():
        if value.startswith("/var/run/secrets/taugate/"):
            assert value in files, (key, value)


def test_config_keys_are_the_gateways(rendered):
    binary = os.path.join(BUILD, "taugate")
    if not os.access(binary, os.X_OK):
        pytest.skip(f"{binary} is not built")
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=10)
    known = set(re.findall(r"env (TAUGATE_[A-Z0-9_]+)", out.stdout + out.stderr))
    assert known, out.stdout
    cm = one(rendered, "ConfigMap")["data"]
    assert set(cm) <= known, sorted(set(cm) - known)
    assert "TAUGATE_DATABASE_URL" not in cm and "TAUGATE_DATABASE_URL" in known


def test_the_cluster_role_covers_what_the_gateway_uses(rendered):
    rules = one(rendered, "ClusterRole")["rules"]
    granted = {(g, r): set(rule["verbs"]) for rule in rules
               for g in rule["apiGroups"] for r in rule["resources"]}
    src = ""
    for f in glob.glob(os.path.join(REPO, "gateway", "**", "*.c"), recursive=True):
        with open(f) as fh:
            src += fh.read()
    used = set(re.findall(r'tg_kube_gvr_t\s+\w+\s*=\s*\{\s*"([^"]*)"\s*,\s*"[^"]*"\s*,\s*'
                          r'"([^"]+)"', src))
    assert ("batch", "jobs") in used and ("", "pods") in used
    for group, resource in used:
        if group.startswith("visibility."):
            resource += "/pendingworkloads"
        assert (group, resource) in granted, f"no rule grants {group or 'core'}/{resource}"
    assert {"create", "delete"} <= granted[("batch", "jobs")]
    assert {"create", "delete"} <= granted[("ray.io", "rayjobs")]
    assert "patch" in granted[("", "nodes")]
    assert granted[("", "pods/log")] == {"get"}
    for kueue in ("resourceflavors", "clusterqueues", "localqueues", "workloadpriorityclasses"):
        assert {"create", "update", "delete"} <= granted[("kueue.x-k8s.io", kueue)]
    # nothing cluster-wide beyond that: no wildcards, no secrets
    for rule in rules:
        assert "*" not in rule["verbs"] and "*" not in rule["resources"]
        assert "secrets" not in rule["resources"]
    binding = one(rendered, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == "taugate"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "taugate",
                                    "namespace": "taugate-system"}]


def test_the_containerfile_builds_what_the_manifests_expect(rendered):
    with open(os.path.join(DEPLOY, "Containerfile")) as f:
        text = f.read()
    stages = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert stages == ["debian:12-slim", "debian:12-slim"], stages
    user = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert user and not user[-1].startswith(("0", "root"))
    pod = one(rendered, "Deployment")["spec"]["template"]["spec"]
    assert user[-1].split(":")[0] == str(pod["securityContext"]["runAsUser"])
    # every repository path the image copies exists
    for src in re.findall(r"^COPY\s+(?!--from)(\S+)\s", text, re.M):
        assert os.path.exists(os.path.join(REPO, src.rstrip("/"))), src
    # the ConfigMap's paths are where the image puts the files
    cm = one(rendered, "ConfigMap")["data"]
    for key in ("TAUGATE_MIGRATIONS_DIR", "TAUGATE_SCHEMA_FILE"):
        dest = cm[key]
        assert any(dest == d.rstrip("/") or dest.startswith(d) for d in
                   re.findall(r"^COPY\s+\S+\s+(\S+)", text, re.M)), (key, dest)
    # the runtime stage installs the library packages the binary links against
    binary = os.path.join(BUILD, "taugate")
    if not os.access(binary, os.X_OK) or not shutil.which("objdump") or not shutil.which("dpkg"):
        return
    runtime = text[text.rindex("FROM"):]
    dump = subprocess.run(["objdump", "-p", binary], capture_output=True, text=True).stdout
    for lib in re.findall(r"NEEDED\s+(\S+)", dump):
        if lib.startswith(("libc.so", "libm.so", "ld-linux", "libpthread", "libdl")):
            continue
        found = subprocess.run(["dpkg", "-S", f"*/{lib}"], capture_output=True, text=True)
        pkgs = {line.split(":")[0] for line in found.stdout.splitlines()}
        assert pkgs, lib
        assert any(re.search(rf"\b{re.escape(p)}\b", runtime) for p in pkgs), (lib, pkgs)


def served_kinds(ks):
    out = ks.kubectl("api-resources", "--no-headers").stdout
    return {(line.split()[-3], line.split()[-1]) for line in out.splitlines() if line.strip()}


def contains(have, want, path="."):
    """Every field of `want` is in `have` with the same value (the server may add more)."""
    if isinstance(want, dict):
        assert isinstance(have, dict), path
        for k, v in want.items():
            assert k in have, f"{path}{k} is missing"
            contains(have[k], v, f"{path}{k}.")
    elif isinstance(want, list):
        assert isinstance(have, list) and len(have) == len(want), path
        for i, (h, w) in enumerate(zip(have, want)):
            contains(h, w, f"{path}[{i}].")
    else:
        assert have == want, (path, have, want)


def test_kubectl_applies_the_manifests_to_kubesim(rendered):
    kubectl()
    with KubeSim(simulated=True) as ks:
        base = objects(rendered, "base")
        unserved = {(o["apiVersion"], o["kind"]) for o in base} - served_kinds(ks)
        assert not unserved
        path = rendered["base"][0]
        out = ks.kubectl("apply", "-f", path).stdout
        assert out.count(" created") == len(base), out
        first = json.loads(ks.kubectl("get", "-f", path, "-o", "json").stdout)["items"]
        again = ks.kubectl("apply", "-f", path).stdout
        # A PodDisruptionBudget's selector has patchStrategy "replace", so kubectl
        # always sends it and says "configured"; the server finds nothing changed.
        assert "poddisruptionbudget.policy/taugate configured" in again, again
        assert again.count(" unchanged") == len(base) - 1, again
        got = json.loads(ks.kubectl("get", "-f", path, "-o", "json").stdout)["items"]
        # nothing was written again (the Job's and the Deployment's status move on
        # as their controllers run the pods)
        moving = ("Job", "Deployment")
        assert [o["metadata"]["resourceVersion"] for o in got if o["kind"] not in moving] == \
            [o["metadata"]["resourceVersion"] for o in first if o["kind"] not in moving]
        assert [(o["kind"], o["metadata"]["name"]) for o in got] == \
            [(o["kind"], o["metadata"]["name"]) for o in base]
        for have, want in zip(got, base):
            contains(have, want)
        by_kind = {o["kind"]: o for o in got}
        assert by_kind["Deployment"]["spec"]["replicas"] == 2
        assert by_kind["ClusterRole"]["rules"] == one(rendered, "ClusterRole")["rules"]
        assert by_kind["ClusterRoleBinding"]["roleRef"]["name"] == "taugate"
        assert by_kind["PodDisruptionBudget"]["spec"]["minAvailable"] == 1
        out = ks.kubectl("get", "deployment,pdb,serviceaccount", "-n", "taugate-system").stdout
        assert re.search(r"deployment.apps/taugate\s+\d/2\s+\d\s+\d\s", out), out
        assert re.search(r"poddisruptionbudget.policy/taugate\s+1\s+N/A\s+0\s", out), out
        assert re.search(r"serviceaccount/taugate\s+0\s", out), out
        out = ks.kubectl("apply", "-f", rendered["kueue"][0]).stdout
        assert out.count("created") == len(objects(rendered, "kueue")), out
        cqs = ks.kubectl("get", "clusterqueues", "-o", "name").stdout.split()
        assert sorted(cqs) == ["clusterqueue.kueue.x-k8s.io/nlp",
                               "clusterqueue.kueue.x-k8s.io/vision"]
