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
    assert kinds == sorted(["Namespace", "ServiceAccount", "ClusterRole", "ClusterRole",
                            "ClusterRoleBinding", "ConfigMap", "Service", "Deployment",
                            "PodDisruptionBudget", "Job", "NetworkPolicy"])
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
    # the database URL comes from the Secret, never the ConfigMap; the Secret
    # is made from outside (deploy/README.md names its keys)
    with open(os.path.join(DEPLOY, "README.md")) as f:
        readme = f.read()
    secret_keys = {"database-url", "evidence-signing-key.pem"}
    for key in secret_keys:
        assert f"--from-literal={key}=" in readme or f"--from-file={key}" in readme, key
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


def test_secrets_and_values_live_outside_the_base():
    """No Secret in the tree (a re-apply would overwrite the real one with a
    placeholder), no floating image tag, and every value a deployment sets in
    the top kustomization."""
    for path in glob.glob(os.path.join(DEPLOY, "base", "*.yaml")):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                assert not doc or doc.get("kind") != "Secret", path
                assert "images" not in (doc or {}) or path.endswith("kustomization.yaml")
    with open(os.path.join(DEPLOY, "kustomization.yaml")) as f:
        top = yaml.safe_load(f)
    (image,) = top["images"]
    assert image.get("digest") or (image.get("newTag") and image["newTag"] != "latest")
    with open(os.path.join(DEPLOY, "base", "kustomization.yaml")) as f:
        assert "images" not in yaml.safe_load(f)
    patched = {p["target"]["kind"] for p in top["patches"]}
    assert patched == {"ConfigMap", "NetworkPolicy"}
    assert top["replicas"][0]["name"] == "taugate"


def test_the_image_is_pinned_everywhere(rendered):
    images = [c["image"] for o in objects(rendered, "base") if o["kind"] in ("Deployment", "Job")
              for c in o["spec"]["template"]["spec"]["containers"]]
    assert len(images) == 2 and len(set(images)) == 1
    assert re.search(r"(:[0-9][\w.-]*|@sha256:[0-9a-f]{64})$", images[0]), images[0]
    assert not images[0].endswith(":latest")


def test_the_network_policy_admits_the_api_and_reaches_only_its_dependencies(rendered):
    np = one(rendered, "NetworkPolicy")
    spec = np["spec"]
    assert set(spec["policyTypes"]) == {"Ingress", "Egress"}
    # it selects the gateway's pods and the migration Job's
    sel = spec["podSelector"]["matchLabels"]
    for kind in ("Deployment", "Job"):
        labels = one(rendered, kind)["spec"]["template"]["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in sel.items()), kind
    # in: the API port (the container's named port), from labelled namespaces
    (rule,) = spec["ingress"]
    ports = one(rendered, "Deployment")["spec"]["template"]["spec"]["containers"][0]["ports"]
    assert [p["port"] for p in rule["ports"]] == [ports[0]["name"]]
    assert all(set(peer) == {"namespaceSelector"} for peer in rule["from"])
    # out: PostgreSQL, the API server, DNS, the identity provider, by port
    out = [sorted((p["protocol"], p["port"]) for p in r["ports"]) for r in spec["egress"]]
    assert out == [[("TCP", 5432)], [("TCP", 443), ("TCP", 6443)],
                   [("TCP", 53), ("UDP", 53)], [("TCP", 443)]]
    for r in spec["egress"]:
        assert r["to"], "an egress rule without peers allows every destination"
    dns = spec["egress"][2]["to"][0]
    assert dns["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "kube-system"}
    # the addresses are the top kustomization's values, not the base's placeholders
    for r in (spec["egress"][0], spec["egress"][1]):
        assert not r["to"][0]["ipBlock"]["cidr"].startswith("192.0.2."), r


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
        if lib.startswith(("libasan.so", "libubsan.so")):  # make sanitize's build, never shipped
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


# Kinds of the tree kubesim does not serve (yet): validated against the real
# schemas (test_objects_validate_against_the_real_schemas), not applied.
NOT_SERVED_BY_KUBESIM = {("networking.k8s.io/v1", "NetworkPolicy")}


def test_kubectl_applies_the_manifests_to_kubesim(rendered, tmp_path):
    kubectl()
    with KubeSim(simulated=True) as ks:
        served = served_kinds(ks)
        skipped = {(o["apiVersion"], o["kind"]) for o in objects(rendered, "base")} - served
        assert skipped <= NOT_SERVED_BY_KUBESIM, skipped
        base = [o for o in objects(rendered, "base") if (o["apiVersion"], o["kind"]) in served]
        path = str(tmp_path / "served.yaml")
        with open(path, "w") as f:
            yaml.safe_dump_all(base, f)
        # the Secret made from outside, as deploy/README.md says, before the first apply
        ks.kubectl("apply", "-f", "-", input=yaml.safe_dump({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "taugate-system"}}))
        secret = {"apiVersion": "v1", "kind": "Secret",
                  "metadata": {"name": "taugate-secrets", "namespace": "taugate-system"},
                  "stringData": {"database-url": "postgresql://real@db/taugate",
                                 "evidence-signing-key.pem": "REAL KEY"}}
        ks.kubectl("apply", "-f", "-", input=yaml.safe_dump(secret))
        before = json.loads(ks.kubectl("get", "secret", "taugate-secrets", "-n",
                                       "taugate-system", "-o", "json").stdout)
        out = ks.kubectl("apply", "-f", path).stdout
        assert out.count(" created") == len(base) - 1, out  # the namespace existed
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
        roles = {o["metadata"]["name"]: o["rules"] for o in got if o["kind"] == "ClusterRole"}
        assert roles == {o["metadata"]["name"]: o["rules"]
                         for o in objects(rendered, "base", "ClusterRole")}
        assert by_kind["ClusterRoleBinding"]["roleRef"]["name"] == "taugate"
        assert by_kind["PodDisruptionBudget"]["spec"]["minAvailable"] == 1
        # applying twice never touched the Secret
        after = json.loads(ks.kubectl("get", "secret", "taugate-secrets", "-n",
                                      "taugate-system", "-o", "json").stdout)
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        assert after.get("stringData", after.get("data")) == \
            before.get("stringData", before.get("data"))
        out = ks.kubectl("get", "deployment,pdb,serviceaccount", "-n", "taugate-system").stdout
        assert re.search(r"deployment.apps/taugate\s+\d/2\s+\d\s+\d\s", out), out
        assert re.search(r"poddisruptionbudget.policy/taugate\s+1\s+N/A\s+0\s", out), out
        assert re.search(r"serviceaccount/taugate\s+0\s", out), out
        out = ks.kubectl("apply", "-f", rendered["kueue"][0]).stdout
        assert out.count("created") == len(objects(rendered, "kueue")), out
        cqs = ks.kubectl("get", "clusterqueues", "-o", "name").stdout.split()
        assert sorted(cqs) == ["clusterqueue.kueue.x-k8s.io/nlp",
                               "clusterqueue.kueue.x-k8s.io/vision"]
