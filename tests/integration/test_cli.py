"""The tau CLI end to end: build/tau against the real gateway (PostgreSQL +
kubesim), run as a subprocess with TAU_GATEWAY/TAU_TOKEN and a private
XDG_CONFIG_HOME.

Endpoints that other work is still building (logs, evidence, metrics, quota,
resume, usage, quota requests) are probed first; their tests skip while the
gateway answers "no resource" (404) or 405 for the route, and run as soon as
it serves it."""
import base64
import email.parser
import email.policy
import io
import json
import os
import pty
import re
import stat
import subprocess
import zipfile

import pytest

import tokens
from gateway import Gateway
from kubesim import KubeSim
from tau_cli import (ADMIN, TAU, UUID, Stub, Tau, canonical, load_yaml, project,
                     route_missing, skip_unless_route, submit, wait_state)
from world import kind_cpu_cluster, kind_cpu_workspace
from paths import BUILD
from wait import wait_for


# ---- fixtures ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    ks = kind_cpu_cluster(KubeSim().start())
    yield ks
    ks.stop()


@pytest.fixture(scope="module")
def gw(db_url, cluster):
    g = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": cluster.url}).start()
    kind_cpu_workspace(g, [
        ("/v1/admin/profiles", {"name": "kind-cpu-ray", "engine": "rayjob",
                                "allowed_workspaces": ["ray"]}),
        ("/v1/admin/workspaces/ray/members", {"kind": "user", "subject": "alice",
                                              "role": "researcher"}),
        ("/v1/admin/workspaces/ray/members", {"kind": "user", "subject": "victor",
                                              "role": "viewer"}),
    ])
    yield g
    status = g.stop()
    logs = g.logs()
    g.close()
    assert status == 0, logs[-3000:]


@pytest.fixture
def home(tmp_path):
    d = tmp_path / "xdg"
    d.mkdir()
    return d


@pytest.fixture
def tau(gw, home):
    return Tau(gw.url, home)


# ---- help, usage, exit codes ----------------------------------------------------------------

COMMANDS = [
    [], ["login"], ["logout"], ["workspaces"], ["validate"], ["run"], ["runs"], ["status"],
    ["logs"], ["cancel"], ["resume"], ["events"], ["metrics"], ["evidence"], ["quota"],
    ["queues"], ["profiles"], ["version"], ["token"], ["token", "create"], ["token", "list"],
    ["token", "revoke"], ["admin"], ["admin", "audit"], ["admin", "usage"],
    ["admin", "members"], ["admin", "members", "add"], ["admin", "members", "list"],
    ["admin", "members", "update"], ["admin", "members", "remove"],
    ["admin", "queues", "create"], ["admin", "quota-requests"],
    ["admin", "quota-requests", "approve"], ["admin", "quota-requests", "reject"],
    ["checkpoints"], ["api"], ["completion"], ["admin", "fleet"], ["admin", "drift"],
] + [["admin", res, verb]
     for res in ("workspaces", "profiles", "flavors", "cluster-queues", "priority-classes")
     for verb in ("", "list", "get", "create", "apply", "delete")] + [
    ["admin", "policies", verb] for verb in ("", "list", "get", "create", "apply", "enable",
                                             "disable", "delete", "versions", "effective",
                                             "reload")] + [
    ["admin", "nodes", verb] for verb in ("", "list", "get", "cordon", "uncordon", "drain")]


def test_help_on_every_command_and_usage_errors(home):
    t = Tau("http://127.0.0.1:9", home)
    for words in COMMANDS:
        words = [w for w in words if w]
        r = t(*words, "--help", gateway=False, token=None)
        assert r.returncode == 0, (words, r.stderr)
        assert "Usage:\n  tau " in r.stdout and "Global options:" in r.stdout, words
    assert "Exit codes" in t("--help").stdout
    assert t("help", "run").stdout == t("run", "--help").stdout
    r = t(gateway=False)
    assert r.returncode == 2 and "Commands:" in r.stderr
    r = t("frobnicate")
    assert r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr
    r = t("runs", "--bogus")
    assert r.returncode == 2 and "unknown option --bogus" in r.stderr
    assert "See 'tau runs --help'." in r.stderr
    r = t("status")
    assert r.returncode == 2 and "missing argument" in r.stderr
    r = t("runs", "--limit", "0", "-w", "x")
    assert r.returncode == 2 and "--limit must be an integer from 1 to 200" in r.stderr
    r = t("runs", "-o", "xml", "-w", "x")
    assert r.returncode == 2 and "unknown output format" in r.stderr
    r = t("workspaces", gateway=False)
    assert r.returncode == 2 and "tau login" in r.stderr
    r = t("runs", env={"TAU_GATEWAY": "ftp://x"})
    assert r.returncode == 2 and "http:// or https://" in r.stderr


def test_version_reports_client_and_server(tau):
    r = tau("version")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("tau ") and lines[1].startswith(f"gateway {tau.url}: taugate ")
    out = json.loads(tau("version", "-o", "json").stdout)
    assert out["client"]["version"] and out["server"]["name"] == "taugate"
    assert tau("version", gateway=False).stdout.startswith("tau ")


def test_exit_codes_by_failure_kind(tau, home):
    r = tau("workspaces", token="not-a-token")
    assert r.returncode == 4 and "HTTP 401" in r.stderr and "tau login" in r.stderr
    r = tau("admin", "workspaces", "list", token=tokens.mint("alice"))
    assert r.returncode == 4 and "HTTP 403" in r.stderr
    r = tau("status", "00000000-0000-4000-8000-000000000000")
    assert r.returncode == 3 and "does not exist (HTTP 404" in r.stderr
    r = tau("runs", "-w", "nope", token=tokens.mint("alice"))
    assert r.returncode == 3
    down = Tau("http://127.0.0.1:9", home)
    r = down("workspaces")
    assert r.returncode == 5 and "cannot reach the gateway" in r.stderr


# ---- login, config, tokens ---------------------------------------------------------------------

def test_login_stores_a_private_config_and_logout_forgets_the_token(tau, home):
    alice = tokens.mint("alice")
    r = tau("login", "--gateway", tau.url + "/", "--token", alice, gateway=False, token=None)
    assert r.returncode == 0, r.stderr
    assert alice not in r.stdout + r.stderr
    cfg = home / "tau" / "config"
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(home / "tau").st_mode) == 0o700
    text = cfg.read_text()
    assert f"gateway = {tau.url}\n" in text and f"token = {alice}\n" in text
    # the config alone is enough now
    r = tau("workspaces", gateway=False, token=None)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^ray\s+ray\s+researcher$", r.stdout, re.M), r.stdout
    # the environment overrides the stored token
    r = tau("admin", "workspaces", "list", gateway=False, token=ADMIN)
    assert r.returncode == 0 and "ray" in r.stdout
    # -v shows requests but never the token
    r = tau("-v", "workspaces", gateway=False, token=None)
    assert r.returncode == 0 and "GET " + tau.url + "/v1/workspaces -> 200" in r.stderr
    assert alice not in r.stdout + r.stderr
    r = tau("logout", gateway=False, token=None)
    assert r.returncode == 0 and "Logged out" in r.stdout
    assert "token" not in cfg.read_text().replace("bearer token", "")
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o600
    r = tau("workspaces", gateway=False, token=None)
    assert r.returncode == 4
    assert tau("logout", gateway=False, token=None).stdout == "Not logged in.\n"


def test_login_reads_the_token_from_stdin_and_refuses_a_bad_one(tau, home):
    r = tau("login", "--gateway", tau.url, gateway=False, token=None, stdin="garbage\n")
    assert r.returncode == 4 and "nothing was stored" in r.stderr
    assert not (home / "tau" / "config").exists()
    r = tau("login", "--gateway", tau.url, "-w", "ray", gateway=False, token=None,
            stdin=tokens.mint("alice") + "\n")
    assert r.returncode == 0, r.stderr
    assert "workspace = ray" in (home / "tau" / "config").read_text()
    # the stored default workspace is used when -w is absent
    r = tau("runs", gateway=False, token=None)
    assert r.returncode == 0, r.stderr
    r = tau("login", "--gateway", "http://127.0.0.1:9", "--token", "x", gateway=False, token=None)
    assert r.returncode == 5
    r = tau("login", "--gateway", "http://127.0.0.1:9", "--token", "x", "--no-verify",
            gateway=False, token=None)
    assert r.returncode == 0


def test_personal_access_tokens(tau):
    alice = tokens.mint("alice")
    r = tau("token", "create", "--name", "ci", "-w", "ray", "--role", "viewer", token=alice)
    assert r.returncode == 0, r.stderr
    secret = r.stdout.strip()
    assert secret and "\n" not in secret and "not shown again" in r.stderr
    r = tau("token", "list", "-o", "json", token=alice)
    items = json.loads(r.stdout)["items"]
    mine = [t for t in items if t["name"] == "ci"]
    assert len(mine) == 1 and mine[0]["role"] == "viewer"
    r = tau("token", "list", token=alice)
    assert r.stdout.splitlines()[0].split()[:4] == ["ID", "NAME", "WORKSPACE", "ROLE"]
    assert secret not in r.stdout
    assert tau("runs", "-w", "ray", token=secret).returncode == 0
    r = tau("token", "revoke", mine[0]["id"], token=alice)
    assert r.returncode == 0 and "revoked" in r.stdout
    assert tau("runs", "-w", "ray", token=secret).returncode == 4


# ---- admin -------------------------------------------------------------------------------------

def test_admin_catalogue_create_apply_get_list_delete(tau, tmp_path):
    f = tmp_path / "pc.json"
    f.write_text(json.dumps({"name": "cli-high", "value": 5000, "description": "from the CLI"}))
    r = tau("admin", "priority-classes", "create", "-f", str(f))
    assert r.returncode == 0 and r.stdout == "priority class cli-high created\n", r.stderr
    assert tau("admin", "priority-classes", "create", "-f", str(f)).returncode == 3  # 409
    y = tmp_path / "pcs.yaml"
    y.write_text("- name: cli-high\n  value: 6000\n  description: from the CLI\n"
                 "- name: cli-low\n  value: 10\n")
    r = tau("admin", "priority-classes", "apply", "-f", str(y))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "priority class cli-high configured\npriority class cli-low created\n"
    r = tau("admin", "priority-classes", "apply", "-f", str(y))
    assert "cli-high unchanged" in r.stdout and "cli-low unchanged" in r.stdout
    r = tau("admin", "priority-classes", "get", "cli-high", "-o", "json")
    assert json.loads(r.stdout)["value"] == 6000
    r = tau("admin", "priority-classes", "get", "cli-high", "-o", "yaml")
    assert load_yaml(r.stdout)["value"] == 6000
    r = tau("admin", "priority-classes", "list")
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "VALUE", "DESCRIPTION", "AGE"]
    # columns are aligned: every row's VALUE starts where the header's does
    col = lines[0].index("VALUE")
    row = next(l for l in lines if l.startswith("cli-high "))
    assert row[col:].startswith("6000") and row[col - 3:col] == "   "
    r = tau("admin", "priority-classes", "list", "--limit", "1", "--all", "-o", "json")
    names = {i["name"] for i in json.loads(r.stdout)["items"]}
    assert {"cli-high", "cli-low", "taugrid-default"} <= names
    r = tau("admin", "priority-classes", "list", "--limit", "1")
    assert len(r.stdout.splitlines()) == 2 and "--all" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "Bad_Name", "value": "x"}))
    r = tau("admin", "priority-classes", "create", "-f", str(bad))
    assert r.returncode == 3 and re.search(r"^  (name|value): ", r.stderr, re.M), r.stderr
    assert tau("admin", "priority-classes", "delete", "cli-low").stdout == \
        "priority class cli-low deleted\n"
    assert tau("admin", "priority-classes", "get", "cli-low").returncode == 3
    r = tau("admin", "workspaces", "list", "-o", "yaml")
    assert any(w["name"] == "ray" for w in load_yaml(r.stdout)["items"])


def test_admin_members_queues_and_audit(tau):
    r = tau("admin", "members", "-w", "ray", "add", "--group", "ml-team", "--role", "viewer")
    assert r.returncode == 0, r.stderr
    member_id = re.match(r"member (\S+) added \(group ml-team as viewer\)", r.stdout).group(1)
    r = tau("admin", "members", "-w", "ray", "update", member_id, "--role", "researcher")
    assert r.returncode == 0 and "researcher" in r.stdout, r.stderr
    r = tau("admin", "members", "list", "-w", "ray")
    assert re.search(rf"^{member_id}\s+group\s+ml-team\s+researcher\s", r.stdout, re.M)
    assert tau("admin", "members", "-w", "ray", "remove", member_id).returncode == 0
    assert member_id not in tau("admin", "members", "-w", "ray", "list").stdout
    r = tau("admin", "members", "-w", "ray", "add", "--user", "x", "--group", "y", "--role", "a")
    assert r.returncode == 2
    r = tau("admin", "queues", "-w", "ray", "create", "cli-q", "--cluster-queue", "kind-cpu-cq")
    assert r.returncode == 0 and "queue cli-q created" in r.stdout, r.stderr
    r = tau("admin", "queues", "-w", "ray", "list", "-o", "json")
    assert {"cli-q", "kind-cpu"} <= {q["name"] for q in json.loads(r.stdout)["items"]}
    assert tau("admin", "queues", "-w", "ray", "delete", "cli-q").returncode == 0
    r = tau("admin", "audit", "--workspace", "ray", "--all", "-o", "json")
    targets = [e["target"] for e in json.loads(r.stdout)["items"]]
    assert "/v1/admin/workspaces/ray/queues/cli-q" in targets
    r = tau("admin", "audit", "--subject", "platform-admin@example.com", "--limit", "5")
    assert r.returncode == 0 and r.stdout.startswith("TIME ")


def test_researcher_views(tau):
    alice = tokens.mint("alice")
    r = tau("workspaces", "-o", "json", token=alice)
    assert [w["name"] for w in json.loads(r.stdout)["items"]] == ["ray"]
    r = tau("profiles", "-w", "ray", token=alice)
    assert r.returncode == 0 and re.search(r"^kind-cpu-job\s+job\s", r.stdout, re.M), r.stdout


# ---- packing -----------------------------------------------------------------------------------

def ray_project(tmp_path, working_dir=".", excludes=None):
    d = tmp_path / "rayproj"
    (d / "src" / "pkg").mkdir(parents=True)
    (d / "data").mkdir()
    (d / ".git").mkdir()
    (d / "src" / "__pycache__").mkdir()
    spec = ("engine: rayjob\nentrypoint: train.py\nname: ray-proj\nrun:\n"
            f"  working_dir: {working_dir}\n")
    if excludes is not None:
        spec += f"  working_dir_excludes: {json.dumps(excludes)}\n"
    spec += "runtime:\n  pip: [-r requirements.txt]\n"
    (d / "tau.yaml").write_text(spec)
    (d / "requirements.txt").write_text("numpy==2.1.0\n")
    (d / "src" / "train.py").write_text("print('train')\n")
    (d / "src" / "pkg" / "util.py").write_text("X = 1\n")
    (d / "src" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(d / "src" / "run.sh", 0o755)
    (d / "src" / "model.ckpt").write_bytes(b"\0" * 100)
    (d / "src" / "__pycache__" / "train.cpython-312.pyc").write_bytes(b"\0" * 10)
    (d / "data" / "big.bin").write_bytes(b"\1" * 2000)
    (d / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return d


def test_dry_pack_builds_a_stored_zip_with_excludes(home, tmp_path):
    t = Tau("http://127.0.0.1:9", home)
    d = ray_project(tmp_path, ".", ["*.ckpt", "data/", "/tau.yaml"])
    out = tmp_path / "body.json"
    r = t("run", "--dry-pack", str(out), "--encoding", "json", cwd=str(d), gateway=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "application/json\n"
    body = json.loads(out.read_text())
    assert body["spec"] == (d / "tau.yaml").read_text()
    assert set(body["files"]) == {"_tau_project.zip", "requirements.txt"}
    assert base64.b64decode(body["files"]["requirements.txt"]) == b"numpy==2.1.0\n"
    raw = base64.b64decode(body["files"]["_tau_project.zip"])
    z = zipfile.ZipFile(io.BytesIO(raw))
    assert z.testzip() is None
    # one top-level folder, which Ray strips when it unpacks the working_dir
    assert z.namelist() == ["project/requirements.txt", "project/src/pkg/util.py",
                            "project/src/run.sh", "project/src/train.py"]
    assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
    assert z.read("project/src/train.py") == b"print('train')\n"
    assert (z.getinfo("project/src/run.sh").external_attr >> 16) & 0o777 == 0o755
    assert (z.getinfo("project/src/train.py").external_attr >> 16) & 0o777 == 0o644
    # the same folder packs to the same bytes (stable digests)
    out2 = tmp_path / "body2.json"
    t("run", "--dry-pack", str(out2), "--encoding", "json", cwd=str(d), gateway=False)
    assert json.loads(out2.read_text())["files"]["_tau_project.zip"] == \
        body["files"]["_tau_project.zip"]


def test_dry_pack_multipart_and_a_nested_working_dir(home, tmp_path):
    t = Tau("http://127.0.0.1:9", home)
    d = ray_project(tmp_path, "src", ["pkg/"])
    out = tmp_path / "body.bin"
    r = t("run", str(d / "tau.yaml"), "--dry-pack", str(out), gateway=False)
    assert r.returncode == 0, r.stderr
    ctype = r.stdout.strip()
    assert ctype.startswith("multipart/form-data; boundary=")
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + out.read_bytes())
    parts = {p.get_param("name", header="content-disposition") + ":" + p.get_filename(): p
             for p in msg.iter_parts()}
    assert set(parts) == {"spec:tau.yaml", "files:_tau_project.zip", "files:requirements.txt"}
    assert parts["spec:tau.yaml"].get_content().startswith(b"engine: rayjob")
    z = zipfile.ZipFile(io.BytesIO(parts["files:_tau_project.zip"].get_payload(decode=True)))
    # entries sit under the working_dir, so the server finds src/train.py
    assert z.namelist() == ["src/model.ckpt", "src/run.sh", "src/train.py"]


def test_job_entrypoint_is_sent_under_its_spec_name(home, tmp_path):
    t = Tau("http://127.0.0.1:9", home)
    d = tmp_path / "job"
    (d / "scripts").mkdir(parents=True)
    (d / "scripts" / "train.sh").write_text("#!/bin/sh\necho hi\n")
    (d / "tau.yaml").write_text("name: j\nengine: job\nentrypoint: scripts/train.sh\n")
    out = tmp_path / "b.json"
    r = t("run", str(d / "tau.yaml"), "--dry-pack", str(out), "--encoding", "json",
          gateway=False)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["files"] == {
        "scripts/train.sh": base64.b64encode(b"#!/bin/sh\necho hi\n").decode()}


def test_local_problems_point_at_file_line_and_column(home, tmp_path):
    t = Tau("http://127.0.0.1:9", home)
    d = tmp_path / "p"
    d.mkdir()
    (d / "my.yaml").write_text("name: x\nengine: job\nentrypoint: missing.sh\n")
    r = t("run", str(d / "my.yaml"), "-w", "ray")
    assert r.returncode == 2
    assert re.search(rf"^{re.escape(str(d / 'my.yaml'))}:3:13: entrypoint: cannot read ",
                     r.stderr, re.M), r.stderr
    (d / "bad.yaml").write_text("name: x\nengine: [job\n")
    r = t("validate", str(d / "bad.yaml"), "-w", "ray")
    assert r.returncode == 2 and re.search(r"bad\.yaml:\d+:\d+: ", r.stderr), r.stderr
    (d / "esc.yaml").write_text("name: x\nengine: job\nentrypoint: ../../etc/passwd\n")
    r = t("run", str(d / "esc.yaml"), "-w", "ray")
    assert r.returncode == 2 and "esc.yaml:3:13: entrypoint: " in r.stderr
    (d / "pip.yaml").write_text("name: x\nengine: job\nruntime:\n  pip: [-r requirements.txt]\n")
    r = t("run", str(d / "pip.yaml"), "-w", "ray")
    assert r.returncode == 2 and "pip.yaml:4:9: runtime.pip: names requirements.txt" in r.stderr
    r = t("run", str(d / "nope.yaml"), "-w", "ray")
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_project_over_the_limit_names_the_largest_files(home, tmp_path):
    t = Tau("http://127.0.0.1:9", home)
    d = ray_project(tmp_path, ".", [])
    (d / "data" / "huge.bin").write_bytes(b"\2" * 50000)
    r = t("run", "--dry-pack", str(tmp_path / "x"), cwd=str(d), gateway=False)
    assert r.returncode == 2
    assert "tau.yaml:" in r.stderr and "the limit is 46080" in r.stderr
    assert "largest: data/huge.bin (48.8 KiB)" in r.stderr
    r = t("run", "--dry-pack", str(tmp_path / "x"), cwd=str(d), gateway=False,
          env={"TAU_MAX_PROJECT_BYTES": "200000"})
    assert r.returncode == 0, r.stderr


# ---- runs ----------------------------------------------------------------------------------------

def test_validate_reports_server_problems_as_file_line_column(gw, tau, tmp_path):
    skip_unless_route(gw, "POST", "/v1/workspaces/ray/runs:validate", body={"spec": "x: 1"})
    d = project(tmp_path)
    r = tau("validate", "-w", "ray", cwd=str(d))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("tau.yaml is valid (engine job).")
    assert json.loads(tau("validate", "-w", "ray", "-o", "json", cwd=str(d)).stdout)["resolved"]
    text = (d / "tau.yaml").read_text().replace("gpus: 0", "gpus: -1").replace(
        "lane: training", "lane: bogus")
    (d / "broken.yaml").write_text(text)
    r = tau("validate", "broken.yaml", "-w", "ray", cwd=str(d))
    assert r.returncode == 3, r.stderr
    assert "HTTP 422" in r.stderr and r.stdout == ""
    lines = [l for l in r.stderr.splitlines() if l.startswith("broken.yaml:")]
    assert any(re.match(r"broken\.yaml:5:\d+: compute\.gpus", l) for l in lines), r.stderr
    assert any(re.match(r"broken\.yaml:14:\d+: policy\.lane", l) for l in lines), r.stderr
    # -o json: the problem document itself on stdout, the same exit code
    r = tau("validate", "broken.yaml", "-w", "ray", "-o", "json", cwd=str(d))
    assert r.returncode == 3, r.stderr
    problem = json.loads(r.stdout)
    assert problem["status"] == 422 and problem["type"].startswith("https://taugate.dev/problems/")
    paths = {e["path"] for e in problem["errors"]}
    assert {"compute.gpus", "policy.lane"} <= paths, problem
    r = tau("validate", "broken.yaml", "-w", "ray", "-o", "jsonpath={.errors[*].path}",
            cwd=str(d))
    assert r.returncode == 3 and "policy.lane" in r.stdout.split()
    # found before sending: exit 2 as the help says, a problem document with -o json
    (d / "syntax.yaml").write_text("name: x\nengine: job\n\tentrypoint: train.sh\n")
    r = tau("validate", "syntax.yaml", "-w", "ray", cwd=str(d))
    assert r.returncode == 2 and re.search(r"^syntax\.yaml:3:1: .*tab", r.stderr, re.M), r.stderr
    r = tau("validate", "syntax.yaml", "-w", "ray", "-o", "json", cwd=str(d))
    assert r.returncode == 2
    local = json.loads(r.stdout)
    assert local["type"] == "https://taugate.dev/problems/validation-failed"
    assert local["errors"][0]["line"] == 3 and "tab" in local["errors"][0]["message"]
    assert "2 when the file" in tau("validate", "--help").stdout
    r = tau("validate", "missing.yaml", "-w", "ray", "-o", "json", cwd=str(d))
    assert r.returncode == 2 and "cannot read missing.yaml" in json.loads(r.stdout)["detail"]
    # a viewer may not submit
    r = tau("validate", "-w", "ray", cwd=str(d), token=tokens.mint("victor"))
    assert r.returncode == 4


def test_the_gateway_accepts_packed_projects(gw, tau, tmp_path):
    skip_unless_route(gw, "POST", "/v1/workspaces/ray/runs:validate", body={"spec": "x: 1"})
    for wd, entry in ((".", "src/train.py"), ("src", "train.py")):
        d = tmp_path / f"wd-{wd.strip('.') or 'root'}"
        (d / "src" / "pkg").mkdir(parents=True)
        (d / "src" / "train.py").write_text("print('train')\n")
        (d / "src" / "pkg" / "util.py").write_text("X = 1\n")
        (d / "requirements.txt").write_text("numpy\n")
        (d / "tau.yaml").write_text(
            f"name: cli-ray\nengine: rayjob\nentrypoint: {entry}\n"
            "compute:\n  workers: 1\n  gpus_per_worker: 0\n"
            "policy:\n  namespace: ray\n  profile: kind-cpu-ray\n  queue: kind-cpu\n"
            f"run:\n  working_dir: {wd}\n  working_dir_excludes: ['pkg/']\n")
        for enc in ("multipart", "json"):
            r = tau("validate", "-w", "ray", "--encoding", enc, cwd=str(d))
            assert r.returncode == 0, (wd, enc, r.stderr)
        out = json.loads(tau("validate", "-w", "ray", "-o", "json", cwd=str(d)).stdout)
        assert out["resolved"]["engine"] == "rayjob"


def test_run_wait_follows_to_success_then_status_events_and_lists(gw, tau, tmp_path):
    d = project(tmp_path, name="cli-ok")
    r = tau("run", "-w", "ray", "--wait", "--interval", "1", "--timeout", "50s", cwd=str(d))
    assert r.returncode == 0, r.stderr
    run_id = r.stdout.strip()
    assert UUID.match(run_id)
    assert "Submitted run cli-ok to workspace ray" in r.stderr
    assert re.search(r"Running\s.*\n(.*\n)*.*Succeeded", r.stderr), r.stderr
    assert "\r" not in r.stderr and "\x1b[" not in r.stderr  # no progress or colour: not a tty
    r = tau("status", run_id)
    assert r.returncode == 0
    assert re.search(r"^State:\s+Succeeded$", r.stdout, re.M) and "Attempt:      1" in r.stdout
    assert json.loads(tau("status", run_id, "-o", "json").stdout)["state"] == "Succeeded"
    assert load_yaml(tau("status", run_id, "-o", "yaml").stdout)["id"] == run_id
    r = tau("status", run_id, "--watch")  # already ended: prints and returns
    assert r.returncode == 0 and "Succeeded" in r.stdout
    r = tau("events", run_id)
    assert r.stdout.splitlines()[0].split() == ["SEQ", "TIME", "STATE", "REASON", "SOURCE",
                                                "MESSAGE"]
    assert "Accepted" in r.stdout and "Succeeded" in r.stdout
    r = tau("runs", "-w", "ray", "--state", "Succeeded", "-o", "json")
    assert run_id in [x["id"] for x in json.loads(r.stdout)["items"]]
    r = tau("runs", "-w", "ray", "--name", "cli-ok")
    header, row = r.stdout.splitlines()[:2]
    assert header.split() == ["ID", "NAME", "STATE", "REASON", "ENGINE", "OWNER", "ATTEMPT",
                              "AGE"]
    assert row.split()[:3] == [run_id, "cli-ok", "Succeeded"]
    # logs, once the endpoint exists
    if not route_missing(gw, "GET", f"/v1/runs/{run_id}/logs"):
        r = tau("logs", run_id)
        assert r.returncode == 0 and "hello from taugate" in r.stdout, r.stderr
        r = tau("logs", run_id, "--tail", "1", "-f")
        assert r.returncode == 0, r.stderr


def test_run_wait_exits_1_when_the_run_fails(gw, tau, tmp_path):
    d = project(tmp_path, script="#!/usr/bin/env bash\necho about to fail\nexit 3\n",
                name="cli-fail")
    r = tau("run", "-w", "ray", "--wait", "--interval", "1", cwd=str(d))
    assert r.returncode == 1, r.stderr
    assert re.search(r"Run \S+ Failed: \S+ \(exit code 3\)\.$", r.stderr, re.M), r.stderr


def test_json_encoding_idempotency_key_and_cancel(gw, tau, tmp_path):
    d = project(tmp_path, script="#!/usr/bin/env bash\nsleep 60\n", name="cli-long")
    r = tau("run", "-w", "ray", "--encoding", "json", "--idempotency-key", "cli-key-1",
            cwd=str(d))
    assert r.returncode == 0 and "Submitted run cli-long" in r.stderr, r.stderr
    first = r.stdout.strip()
    r = tau("run", "-w", "ray", "--encoding", "json", "--idempotency-key", "cli-key-1",
            cwd=str(d))
    assert r.returncode == 0 and r.stdout.strip() == first
    # a replay says so, and is not announced as a new submission
    assert "Replayed: idempotency key cli-key-1 was already used for run " + first in r.stderr
    assert "Submitted" not in r.stderr
    # the same key with another body is a conflict
    (d / "train.sh").write_text("#!/usr/bin/env bash\nsleep 61\n")
    r = tau("run", "-w", "ray", "--idempotency-key", "cli-key-1", cwd=str(d))
    assert r.returncode == 3 and "HTTP 409" in r.stderr
    wait_state(gw, first, {"Running", "Admitted", "Queued"})
    r = tau("cancel", first)
    assert r.returncode == 0 and r.stdout == f"Run {first} cancelled (state Cancelled).\n"
    r = tau("cancel", first)
    assert r.returncode == 3 and "already ended" in r.stderr
    # researchers other than the owner may not cancel; viewers may read
    assert tau("status", first, token=tokens.mint("victor")).returncode == 0
    assert tau("cancel", first, token=tokens.mint("victor")).returncode == 4


def test_runs_pages_with_all(gw, tau, tmp_path):
    d = project(tmp_path, name="cli-page")
    ids = {submit(tau, d) for _ in range(3)}
    r = tau("runs", "-w", "ray", "--name", "cli-page", "--limit", "1", "--all", "-o", "json")
    out = json.loads(r.stdout)
    assert {x["id"] for x in out["items"]} == ids and out["next_cursor"] is None
    r = tau("runs", "-w", "ray", "--name", "cli-page", "--limit", "2", "-o", "json")
    assert len(json.loads(r.stdout)["items"]) == 2 and json.loads(r.stdout)["next_cursor"]
    r = tau("runs", "-w", "ray", "--name", "cli-page", "--limit", "2")
    assert len(r.stdout.splitlines()) == 3 and "--all" in r.stderr
    for i in ids:
        wait_state(gw, i, {"Succeeded", "Failed"})


def test_colour_only_on_a_terminal_and_never_with_no_color(gw, tau, tmp_path):
    # a run to list (with none, `tau runs` prints no table to colour)
    finished_run(gw, tau, tmp_path, "colour")

    def on_tty(extra_env):
        master, slave = pty.openpty()
        p = subprocess.Popen([TAU, "runs", "-w", "ray"], stdout=slave, stderr=subprocess.PIPE,
                             env=tau.env(extra=extra_env))
        os.close(slave)
        chunks = []
        while True:
            try:
                b = os.read(master, 65536)
            except OSError:
                break
            if not b:
                break
            chunks.append(b)
        p.wait(timeout=30)
        p.stderr.close()
        os.close(master)
        return b"".join(chunks).decode()

    assert "\x1b[" in on_tty({"TERM": "xterm"})
    assert "\x1b[" not in on_tty({"TERM": "xterm", "NO_COLOR": "1"})
    assert "\x1b[" not in tau("runs", "-w", "ray").stdout


# ---- endpoints being built: enabled as soon as the gateway serves them -------------------------

def finished_run(gw, tau, tmp_path, name):
    d = project(tmp_path, name=name)
    run_id = submit(tau, d)
    wait_state(gw, run_id, {"Succeeded", "Failed"})
    return run_id


def test_metrics_quota_usage_and_quota_requests_when_served(gw, tau, tmp_path):
    checked = 0
    if not route_missing(gw, "GET", "/v1/workspaces/ray/quota"):
        for cmd in ("quota", "queues"):
            r = tau(cmd, "-w", "ray")
            assert r.returncode == 0, r.stderr
            assert tau(cmd, "-w", "ray", "-o", "json").stdout.strip().startswith(("{", "["))
        checked += 1
    if not route_missing(gw, "GET", "/v1/admin/usage"):
        assert tau("admin", "usage").returncode == 0
        assert tau("admin", "usage", token=tokens.mint("alice")).returncode == 4
        checked += 1
    if not route_missing(gw, "GET", "/v1/admin/quota-requests"):
        assert tau("admin", "quota-requests", "list").returncode == 0
        checked += 1
    run_id = None
    probe = "00000000-0000-4000-8000-000000000000"
    if not route_missing(gw, "GET", f"/v1/runs/{probe}/metrics"):
        run_id = finished_run(gw, tau, tmp_path, "cli-metrics")
        assert tau("metrics", run_id).returncode == 0
        json.loads(tau("metrics", run_id, "-o", "json").stdout)
        checked += 1
    if not checked:
        pytest.skip("endpoints not built yet: quota, usage, quota-requests, metrics")


def test_resume_when_served(gw, tau, tmp_path):
    probe = "00000000-0000-4000-8000-000000000000"
    skip_unless_route(gw, "POST", f"/v1/runs/{probe}:resume", body={})
    d = project(tmp_path, script="#!/usr/bin/env bash\nexit 3\n", name="cli-resume")
    run_id = submit(tau, d)
    wait_state(gw, run_id, {"Failed"})
    r = tau("resume", run_id, "--force")
    assert r.returncode == 0 and "resumed" in r.stdout, r.stderr


def test_evidence_verify_against_the_gateway_when_served(gw, tau, tmp_path):
    probe = "00000000-0000-4000-8000-000000000000"
    skip_unless_route(gw, "GET", f"/v1/runs/{probe}/evidence")
    skip_unless_route(gw, "GET", "/v1/evidence/public-key")
    run_id = finished_run(gw, tau, tmp_path, "cli-evidence")
    # sealed by the engine once the run's logs are in
    wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}/evidence"), 40,
             f"run {run_id}'s evidence sealed",
             cond=lambda r: r.status == 200 and r.json().get("sealed") is True)
    out = tmp_path / "ev.json"
    r = tau("evidence", run_id, "--verify", "--out-file", str(out))
    assert r.returncode == 0, r.stderr
    assert "verified" in r.stdout and json.loads(out.read_text())
    # the event hash chain is checked, as docs/evidence.md says
    events = len(json.loads(out.read_text())["record"]["history"])
    assert re.search(rf"^ok   history: {events} events form an intact chain", r.stdout, re.M)
    assert re.search(r"^ok   seal: run \S+ sealed at \S+ with key \S+$", r.stdout, re.M)
    # -o is the output format here too (it used to write a file named json)
    r = tau("evidence", run_id, "-o", "json", cwd=str(tmp_path))
    assert r.returncode == 0 and json.loads(r.stdout)["run_id"] == run_id
    assert not (tmp_path / "json").exists()
    r = tau("evidence", run_id, "-o", "jsonpath={.record.chain.events}")
    assert r.stdout == str(events)


# ---- evidence verification against a stand-in server ------------------------------------------

UNAVAILABLE = (503, {"title": "Service Unavailable", "status": 503, "detail": "database down"})


def test_safe_requests_are_retried_with_the_same_idempotency_key(home, tmp_path):
    d = project(tmp_path)
    run = {"id": "11111111-1111-4111-8111-111111111111", "state": "Accepted"}
    answers = {"/v1/workspaces": [UNAVAILABLE, UNAVAILABLE, (200, {"items": []})],
               "/v1/workspaces/ray/runs": [UNAVAILABLE, (201, run)]}
    with Stub(answers) as s:
        t = Tau(s.url, home)
        r = t("workspaces", env={"TAU_RETRIES": "2"})
        assert r.returncode == 0, r.stderr
        r = t("run", "-w", "ray", cwd=str(d), env={"TAU_RETRIES": "1"})
        assert r.returncode == 0 and r.stdout.strip() == run["id"], r.stderr
        posts = [(h, b) for m, p, h, b in s.requests if m == "POST"]
    assert len(posts) == 2 and posts[0][1] == posts[1][1]
    keys = {h.get("Idempotency-Key") for h, _ in posts}
    assert len(keys) == 1 and UUID.match(keys.pop())
    assert all(h["Authorization"] == f"Bearer {ADMIN}" for h, _ in posts)
    with Stub({"/v1/workspaces": [UNAVAILABLE]}) as s:
        r = Tau(s.url, home)("workspaces")  # TAU_RETRIES=0
    assert r.returncode == 5 and "database down (HTTP 503" in r.stderr


def test_logs_stream_to_stdout_with_follow_and_tail(home):
    text = "step 1 loss=0.9\nstep 2 loss=0.5\n\u00e9t\u00e9\n".encode()
    with Stub({"/v1/runs/r1/logs": text}) as s:
        t = Tau(s.url, home)
        r = t("logs", "r1", "-f", "--tail", "5")
        assert r.returncode == 0 and r.stdout.encode() == text, r.stderr
        assert t("logs", "r1").returncode == 0
        paths = [p for _, p, _, _ in s.requests]
    assert paths == ["/v1/runs/r1/logs?follow=true&tail=5", "/v1/runs/r1/logs"]
    with Stub({}) as s:
        r = Tau(s.url, home)("logs", "r1")
    assert r.returncode == 3 and r.stdout == ""


def test_views_of_quota_metrics_and_queue_facts_against_a_stand_in(home):
    quota = {"workspace": "ray", "namespace": "ray", "default_queue": "kind-cpu",
             "source": "cluster", "queues": [{
                 "name": "kind-cpu", "cluster_queue": "kind-cpu-cq", "default": True,
                 "resources": [{"resource": "cpu", "nominal": "4", "borrowable": "0",
                                "in_use": "500m", "reserved": "1", "available": "3",
                                "pending": "0"}]}]}
    metrics = {"items": [{"name": "loss", "count": 3, "non_finite": 0, "min": 0.25, "max": 0.9,
                          "min_step": 1, "max_step": 3,
                          "latest": {"attempt": 1, "step": 3, "at": "2026-12-02T10:00:00Z",
                                     "value": 0.25, "raw": "0.25"}}]}
    points = {"name": "loss", "next_cursor": None, "items": [
        {"id": 1, "attempt": 1, "step": 1, "at": "2026-12-02T10:00:00Z", "value": 0.9,
         "raw": "0.9"}]}
    run = {"id": "r1", "name": "blocked", "workspace": "ray", "owner": "alice", "engine": "job",
           "state": "Queued", "reason": "Pending", "message": "insufficient cpu", "attempt": 1,
           "created_at": "2026-12-02T10:00:00.5+00:00",
           "queue": {"local_queue": "tiny", "cluster_queue": "tiny-cq", "position": 2,
                     "pending": 3},
           "attempts": [{"attempt": 1, "state": "Queued", "reason": "Pending",
                         "retry_reason": None, "exit_code": None, "node_names": None,
                         "started_at": None}]}
    answers = {"/v1/workspaces/ray/quota": quota, "/v1/runs/r1/metrics": metrics,
               "/v1/runs/r1": run}
    with Stub(answers) as s:
        t = Tau(s.url, home)
        r = t("quota", "-w", "ray")
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[0].split()[:5] == ["QUEUE", "CLUSTER-QUEUE", "RESOURCE",
                                                         "NOMINAL", "IN-USE"]
        assert r.stdout.splitlines()[1].split() == ["kind-cpu", "kind-cpu-cq", "cpu", "4",
                                                    "500m", "1", "3", "0", "0"]
        assert "numbers from the cluster" in r.stderr
        r = t("metrics", "r1")
        assert r.stdout.splitlines()[1].split()[:6] == ["loss", "0.25", "3", "0.25", "0.9", "3"]
        r = t("status", "r1")
        assert "Queue:        tiny (ClusterQueue tiny-cq), position 2 of 3" in r.stdout
        assert "Message:      insufficient cpu" in r.stdout and "Attempts:" in r.stdout
    with Stub({"/v1/runs/r1/metrics": points}) as s:
        r = Tau(s.url, home)("metrics", "r1", "--name", "loss")
        assert r.stdout.splitlines()[0].split() == ["STEP", "VALUE", "ATTEMPT", "TIME"]
        assert r.stdout.splitlines()[1].split()[:3] == ["1", "0.9", "1"]
        assert s.requests[0][1] == "/v1/runs/r1/metrics?name=loss"


def chained(run_id, events):
    """A history as docs/evidence.md defines it: each event's hash is
    sha256(prev_hash + "\\n" + compact sorted-key JSON of its fields)."""
    import hashlib
    out, prev = [], ""
    for seq, (state, reason, message) in enumerate(events, 1):
        fields = {"run_id": run_id, "seq": seq, "at": f"2026-12-02T10:00:0{seq}.000000Z",
                  "state": state, "reason": reason, "message": message, "source": "engine",
                  "data": {"n": seq}}
        h = hashlib.sha256((prev + "\n").encode() + canonical(fields)).hexdigest()
        ev = {k: v for k, v in fields.items() if k != "run_id"}
        out.append(dict(ev, prev_hash=prev or None, hash=h))
        prev = h
    return out, {"events": len(out), "head": prev}


def test_evidence_verification_logic(home, tmp_path):
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    import hashlib

    key = Ed25519PrivateKey.generate()
    pub_raw = key.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    history, chain = chained("r1", [("Accepted", None, "naïve/run accepted"),
                                    ("Running", "Started", None), ("Succeeded", None, None)])
    record = {"run": {"id": "r1", "state": "Succeeded", "attempt": 2}, "name": "naïve/run",
              "history": history, "chain": chain, "ok": True, "zeta": "last", "alpha": "first"}
    canon = canonical(record)
    digest = hashlib.sha256(canon).hexdigest()

    def evidence(rec=record, sig_over=None, dig=None, kid="k1", signer=key):
        text = canonical(rec)
        return {"record": rec, "sha256": dig or hashlib.sha256(text).hexdigest(), "key_id": kid,
                "signature": base64.b64encode(signer.sign(sig_over or text)).decode()}

    def run(ev, keydoc, *extra):
        answers = {"/v1/runs/r1/evidence": ev, "/v1/evidence/public-key": keydoc}
        with Stub(answers) as s:
            return Tau(s.url, home)("evidence", "r1", "--verify", *extra)

    good_key = {"key_id": "k1", "algorithm": "Ed25519",
                "public_key": base64.b64encode(pub_raw).decode()}
    r = run(evidence(), good_key)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["sha256"] == digest
    assert f"ok   record: sha256 {digest} matches the canonical text" in r.stderr
    assert "ok   signature: Ed25519 over the canonical JSON, key k1" in r.stderr
    assert "ok   history: 3 events form an intact chain (head " + chain["head"][:16] in r.stderr
    assert "Evidence for run r1 verified." in r.stderr
    # other key documents: PEM text, JWK set; signatures over the digest
    assert run(evidence(), pem.encode()).returncode == 0
    jwks = {"keys": [{"kid": "old", "kty": "OKP", "crv": "Ed25519",
                      "x": base64.urlsafe_b64encode(b"\1" * 32).decode().rstrip("=")},
                     {"kid": "k1", "kty": "OKP", "crv": "Ed25519",
                      "x": base64.urlsafe_b64encode(pub_raw).decode().rstrip("=")}]}
    assert run(evidence(), jwks).returncode == 0
    r = run(evidence(sig_over=digest.encode()), good_key)
    assert r.returncode == 0 and "over the hex digest" in r.stderr
    # the gateway's own shape: the signed canonical text travels with the record
    sealed_at = "2026-12-02T11:47:06.275208Z"
    srec = dict(record, seal={"algorithm": "Ed25519", "key_id": "k1", "sealed_at": sealed_at})
    sealed = dict(evidence(srec), canonical=canonical(srec).decode(), sealed=True, run_id="r1",
                  algorithm="Ed25519", sealed_at=sealed_at)
    gateway_key = {"key_id": "k1", "algorithm": "Ed25519", "public_key_pem": pem,
                   "public_key_b64": base64.b64encode(pub_raw).decode()}
    r = run(sealed, gateway_key)
    assert r.returncode == 0, r.stderr
    assert f"ok   seal: run r1 sealed at {sealed_at} with key k1" in r.stderr
    edited = json.loads(json.dumps(sealed))
    edited["record"]["ok"] = False
    r = run(edited, gateway_key)
    assert r.returncode == 1 and "record does not match the signed canonical text" in r.stderr
    # the envelope and the signed record must agree on the seal
    r = run(dict(sealed, sealed_at="2026-12-02T12:00:00.000000Z"), gateway_key)
    assert r.returncode == 1 and "FAIL seal: the envelope says sealed_at" in r.stderr
    r = run({"run_id": "r1", "sealed": False, "detail": "logs still being collected",
             "record": record}, gateway_key)
    assert r.returncode == 1 and "not sealed yet: logs still being collected" in r.stderr
    # tampering is caught
    tampered = json.loads(json.dumps(evidence()))
    tampered["record"]["run"]["state"] = "Failed"
    r = run(tampered, good_key)
    assert r.returncode == 1 and "sha256 mismatch" in r.stderr
    other = Ed25519PrivateKey.generate()
    r = run(evidence(signer=other), good_key)
    assert r.returncode == 1 and "signature does not verify" in r.stderr
    r = run(evidence(kid="k2"), good_key)
    assert r.returncode == 1 and "signed by key k2" in r.stderr
    # a broken chain fails although digest and signature are good: an edited
    # event, a missing one, a head that does not match, no history at all
    bad = json.loads(json.dumps(record))
    bad["history"][1]["message"] = "rewritten"
    r = run(evidence(bad), good_key)
    assert r.returncode == 1 and "ok   signature" in r.stderr
    assert "FAIL history: seq 2 (Running): its fields hash to" in r.stderr
    assert "(the event was edited)" in r.stderr
    gap = json.loads(json.dumps(record))
    del gap["history"][1]
    r = run(evidence(gap), good_key)
    assert r.returncode == 1 and "event 2 has seq 3: events are missing" in r.stderr
    head = json.loads(json.dumps(record))
    head["chain"]["events"] = 4
    r = run(evidence(head), good_key)
    assert r.returncode == 1 and "FAIL history: chain says 4 events" in r.stderr
    bare = {k: v for k, v in record.items() if k not in ("history", "chain")}
    r = run(evidence(bare), good_key)
    assert r.returncode == 1 and "the record has no event history" in r.stderr
    # another run's genuine record is not this run's evidence
    r2_hist, r2_chain = chained("r2", [("Accepted", None, None)])
    r2 = dict(record, run={"id": "r2", "state": "Succeeded"}, history=r2_hist, chain=r2_chain)
    r = run(evidence(r2), good_key)
    assert r.returncode == 1 and "the record is about run r2, not r1" in r.stderr
    # a pinned key file overrides the gateway's key; --out-file writes the record
    kf = tmp_path / "pub.pem"
    kf.write_text(pem)
    out = tmp_path / "ev.json"
    other_pub = {"key_id": "k1", "public_key": base64.b64encode(
        other.public_key().public_bytes(serialization.Encoding.Raw,
                                        serialization.PublicFormat.Raw)).decode()}
    r = run(evidence(), other_pub, "--key", str(kf), "--out-file", str(out))
    assert r.returncode == 0, r.stderr
    assert "verified" in r.stdout and json.loads(out.read_text())["record"] == record
    with Stub({}) as s:
        r = Tau(s.url, home)("evidence", "r1")
    assert r.returncode == 3 and "does not serve this endpoint" in r.stderr
