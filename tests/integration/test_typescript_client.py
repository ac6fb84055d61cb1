"""A typed client compiles against the SERVED contract and behaves as it
says: openapi-typescript generates types from GET /v1/openapi.json of a live
gateway, tests/contract/client/client.ts (openapi-fetch) compiles under tsc
--strict, then runs against the same gateway. A contract change that breaks
such a client fails here; so does one the control below simulates."""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

import tokens
from gateway import Gateway
from paths import BUILD, TESTS
from world import kind_cpu_workspace, smoke_body

NODE_MODULES = os.path.join(TESTS, "node_modules")
CLIENT = os.path.join(TESTS, "contract", "client", "client.ts")
TSCONFIG = {
    "compilerOptions": {
        "strict": True, "noUncheckedIndexedAccess": False, "noImplicitReturns": True,
        "target": "ES2022", "module": "ES2022", "moduleResolution": "Bundler",
        "lib": ["ES2022", "DOM"], "outDir": "out", "skipLibCheck": True,
        "noEmitOnError": True,
    },
    "files": ["client.ts", "schema.d.ts"],
}


def node_or_skip():
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed (make deps)")
    for mod in ("openapi-typescript", "typescript", "openapi-fetch"):
        if not os.path.isdir(os.path.join(NODE_MODULES, mod)):
            pytest.skip(f"tests/node_modules/{mod} is missing (make deps)")
    return node


@pytest.fixture(scope="module")
def gw(db_url):
    g = Gateway(BUILD, db_url).start()
    kind_cpu_workspace(g)
    for name in ("ts-a", "ts-b"):
        body = smoke_body()
        body["spec"] = body["spec"].replace("name: tau-kind-smoke", f"name: {name}")
        assert g.req("POST", "/v1/workspaces/ray/runs", body=body).status == 201
    yield g
    status = g.stop()
    g.close()
    assert status == 0


def build(node, doc, workdir):
    """Generate the types from `doc`, compile the client. RET: tsc's result."""
    with open(os.path.join(workdir, "openapi.json"), "w") as f:
        json.dump(doc, f)
    gen = subprocess.run([node, os.path.join(NODE_MODULES, "openapi-typescript", "bin", "cli.js"),
                          "openapi.json", "-o", "schema.d.ts"], cwd=workdir,
                         capture_output=True, text=True, timeout=120)
    assert gen.returncode == 0, gen.stdout + gen.stderr
    shutil.copy(CLIENT, os.path.join(workdir, "client.ts"))
    with open(os.path.join(workdir, "tsconfig.json"), "w") as f:
        json.dump(TSCONFIG, f)
    link = os.path.join(workdir, "node_modules")
    if not os.path.exists(link):
        os.symlink(NODE_MODULES, link)
    with open(os.path.join(workdir, "package.json"), "w") as f:
        json.dump({"type": "module", "private": True}, f)
    return subprocess.run([node, os.path.join(NODE_MODULES, "typescript", "bin", "tsc"), "-p",
                           "."], cwd=workdir, capture_output=True, text=True, timeout=180)


def test_a_typed_client_compiles_and_runs(gw):
    node = node_or_skip()
    doc = gw.req("GET", "/v1/openapi.json", token=None).json()
    with tempfile.TemporaryDirectory(prefix="taugate-ts-") as d:
        tsc = build(node, doc, d)
        assert tsc.returncode == 0, tsc.stdout + tsc.stderr
        run = subprocess.run([node, os.path.join(d, "out", "client.js")], capture_output=True,
                             text=True, timeout=60,
                             env=dict(os.environ, TAUGATE_URL=gw.url, TAUGATE_WS="ray",
                                      TAUGATE_TOKEN=tokens.admin_token()))
        assert run.returncode == 0, run.stdout + run.stderr
        assert "typed calls behaved as documented" in run.stdout


def test_a_breaking_contract_change_fails_the_compile(gw):
    """The control: the same contract without RunCounts.by_state (as a
    careless edit would leave it) must not compile."""
    node = node_or_skip()
    doc = gw.req("GET", "/v1/openapi.json", token=None).json()
    counts = doc["components"]["schemas"]["RunCounts"]
    del counts["properties"]["by_state"]
    counts["required"].remove("by_state")
    with tempfile.TemporaryDirectory(prefix="taugate-ts-") as d:
        tsc = build(node, doc, d)
        assert tsc.returncode != 0 and "by_state" in tsc.stdout, tsc.stdout + tsc.stderr
