"""Rendered manifests against the real Kubernetes / KubeRay schemas.

Every golden manifest in tests/fixtures/golden (kept byte-identical to the
renderer by build/tests/unit/test_render_golden) is validated by
tests/tools/validate-manifests.js, which uses ajv (a third-party JSON Schema
validator, pinned in tests/package-lock.json) on the schema files in
$TAUGATE_SHARED/k8s-schemas, and so is every manifest the accepted cases of
TauGrid's own corpus (tests/conformance/upstream) render to, written by
build/tests/unit/test_submit_pipeline_upstream. A deliberately broken manifest must
fail, so the check is known to be able to fail.
"""
import copy
import glob
import json
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
REPO = os.path.dirname(TESTS)
SHARED = os.environ.get("TAUGATE_SHARED", os.path.join(os.path.dirname(REPO), "shared"))
VALIDATOR = os.path.join(TESTS, "tools", "validate-manifests.js")
GOLDEN = sorted(glob.glob(os.path.join(TESTS, "fixtures", "golden", "*.manifests.json")))


def _node():
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        pytest.fail("node is required (make deps installs nodejs)")
    if not os.path.isdir(os.path.join(TESTS, "node_modules", "ajv")):
        pytest.fail("tests/node_modules is missing; run `make deps` (npm ci in tests/)")
    if not os.path.isdir(os.path.join(SHARED, "k8s-schemas")):
        pytest.fail(f"no k8s-schemas under {SHARED}; set TAUGATE_SHARED")
    return node


def _validate(files):
    env = dict(os.environ, TAUGATE_SHARED=SHARED)
    return subprocess.run([_node(), VALIDATOR, *files], capture_output=True, text=True,
                          env=env, timeout=120)


UPSTREAM = os.path.join(TESTS, "conformance", "upstream", "cases.json")


def test_upstream_corpus_manifests_match_real_schemas(tmp_path):
    """Every accepted upstream case renders manifests the cluster admits:
    managed manifests, run.source, image assets, staged publishing, profile
    pod settings and all."""
    runner = os.path.join(os.environ.get("TAUGATE_BUILD", os.path.join(REPO, "build")),
                          "tests", "unit", "test_submit_pipeline_upstream")
    if not os.access(runner, os.X_OK):
        pytest.fail(f"{runner} is missing; build it (make build/tests/unit/test_submit_pipeline_upstream)")
    run = subprocess.run([runner], cwd=REPO, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TG_UPSTREAM_MANIFESTS=str(tmp_path)))
    assert run.returncode == 0, run.stdout + run.stderr
    with open(UPSTREAM, encoding="utf-8") as f:
        accepted = {c["id"] for c in json.load(f)["cases"] if c["taugate"]["status"] == 200}
    files = sorted(str(p) for p in tmp_path.glob("*.manifests.json"))
    assert {os.path.basename(p).split(".manifests")[0] for p in files} == accepted
    kinds = set()
    for p in files:
        with open(p, encoding="utf-8") as f:
            kinds |= {m["kind"] for m in json.load(f)}
    assert {"Job", "RayJob"} <= kinds, kinds
    res = _validate(files)
    assert res.returncode == 0, res.stdout + res.stderr[-6000:]


def _manifests():
    out = []
    for path in GOLDEN:
        with open(path, encoding="utf-8") as f:
            out.extend(json.load(f))
    return out


def test_golden_set_covers_every_kind():
    kinds = {m["kind"] for m in _manifests()}
    assert {"Job", "RayJob", "Service"} <= kinds, kinds
    assert len(GOLDEN) >= 8


def test_golden_manifests_match_real_schemas():
    res = _validate(GOLDEN)
    assert res.returncode == 0, res.stdout + res.stderr
    total = len(_manifests())
    assert f"{total}/{total} manifests valid" in res.stdout, res.stdout


def _first(kind):
    for m in _manifests():
        if m["kind"] == kind:
            return copy.deepcopy(m)
    pytest.fail(f"no {kind} among the golden manifests")


BREAKAGES = [
    ("Job", lambda m: m["spec"].__setitem__("backoffLimits", 0), "additional properties"),
    ("Job", lambda m: m["spec"]["template"]["spec"]["containers"][0]["resources"]
        .__setitem__("requests", {"cpu": {"cores": 1}}), "must be string"),
    ("Job", lambda m: m["spec"]["template"]["spec"].pop("restartPolicy"), "restartPolicy"),
    ("RayJob", lambda m: m["spec"]["rayClusterSpec"]["headGroupSpec"].__setitem__("replicas", 1),
     "additional properties"),
    ("RayJob", lambda m: m["spec"].__setitem__("shutdownAfterJobFinishes", False),
     "delete the cluster"),
    ("Service", lambda m: m["spec"]["ports"][0].__setitem__("port", "c10d"), "must be integer"),
]


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory):
    """One validator run over one broken manifest per case (schemas compile once)."""
    d = tmp_path_factory.mktemp("broken")
    files = []
    for i, (kind, breakage, _) in enumerate(BREAKAGES):
        m = _first(kind)
        breakage(m)
        f = d / f"broken-{i}.json"
        f.write_text(json.dumps([m]))
        files.append(str(f))
    return files, _validate(files)


@pytest.mark.parametrize("case", range(len(BREAKAGES)))
def test_broken_manifest_fails(broken_run, case):
    files, res = broken_run
    assert res.returncode == 1, res.stdout + res.stderr
    # The FAIL block of this file: its header line and the indented reasons.
    block, inside = [], False
    for line in res.stderr.splitlines():
        if line.startswith("FAIL "):
            inside = line.startswith(f"FAIL {files[case]}:")
        if inside:
            block.append(line)
    text = "\n".join(block)
    assert block, f"{files[case]} was not rejected:\n{res.stdout}{res.stderr}"
    assert BREAKAGES[case][2] in text, text
