"""The tau CLI for operators, end to end against the real gateway
(PostgreSQL + kubesim): shell completion sourced in bash, -o wide and
-o jsonpath=, tau api, and the admin commands for policies, nodes, fleet,
drift, audit, quota requests and checkpoints. Every request each command
sends is recorded (tau -v), and the last test checks that every
platform-admin operation of the contract (openapi.yaml) is reached by some
command."""
import json
import os
import re
import shutil
import subprocess
import time

import pytest
import yaml

import tokens
from gateway import Gateway
from kubesim import KubeSim
from paths import BUILD, REPO
from tau_cli import TAU, Stub, Tau, project, route_missing, submit, wait_state
from world import kind_cpu_cluster, kind_cpu_workspace

# (method, path) of every request a command of this module sent
SENT = set()
REQUEST_LINE = re.compile(r"^\* (GET|POST|PUT|PATCH|DELETE|HEAD) https?://[^/ ]+(/\S*) -> ")


class Recorded(Tau):
    """Tau with -v: keeps each request line in SENT and hands the test the
    stderr without them."""

    def __call__(self, *args, **kw):
        r = super().__call__("-v", *args, **kw)
        kept = []
        for line in r.stderr.splitlines(True):
            m = REQUEST_LINE.match(line)
            if m:
                SENT.add((m.group(1), m.group(2).split("?")[0]))
            elif not line.startswith("* retrying"):
                kept.append(line)
        r.stderr = "".join(kept)
        return r


@pytest.fixture(scope="module")
def cluster():
    ks = kind_cpu_cluster(KubeSim().start())
    yield ks
    ks.stop()


@pytest.fixture(scope="module")
def gw(db_url, cluster):
    g = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": cluster.url}).start()
    kind_cpu_workspace(g, [("/v1/admin/workspaces/ray/members",
                            {"kind": "user", "subject": "alice", "role": "researcher"}),
                           ("/v1/admin/flavors", {"name": "default-flavor"})])
    quota = [{"name": "cpu", "nominal_quota": "4"}, {"name": "memory", "nominal_quota": "12Gi"}]
    r = g.req("PATCH", "/v1/admin/cluster-queues/kind-cpu-cq", body={"resource_groups": [{
        "covered_resources": ["cpu", "memory"],
        "flavors": [{"name": "default-flavor", "resources": quota}]}]})
    assert r.status == 200, r
    yield g
    status = g.stop()
    logs = g.logs()
    g.close()
    assert status == 0, logs[-3000:]


@pytest.fixture
def tau(gw, tmp_path):
    home = tmp_path / "xdg"
    home.mkdir()
    return Recorded(gw.url, home)


def table(text):
    """Rows of a table (split on runs of blanks), the header first."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.splitlines() if line.strip()]


# ---- completion -------------------------------------------------------------------------------


def complete(home, *words):
    """What bash completes after `tau WORDS` (the last word being typed), with
    the script `tau completion bash` prints sourced into a fresh bash."""
    script = f"""
set -euo pipefail
PATH={os.path.dirname(TAU)}:$PATH
source <(tau completion bash)
complete -p tau >/dev/null
COMP_WORDS=(tau {' '.join(repr(w) if w else "''" for w in words)})
COMP_CWORD={len(words)}
_tau_complete
printf '%s\\n' "${{COMPREPLY[@]:-}}"
"""
    cp = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30,
                        env=dict(os.environ, XDG_CONFIG_HOME=str(home)))
    assert cp.returncode == 0, cp.stderr
    return [line for line in cp.stdout.splitlines() if line]


def test_bash_completion_completes_commands_flags_and_values(tmp_path):
    assert complete(tmp_path, "ru") == ["run", "runs"]
    assert "admin" in complete(tmp_path, "")
    assert complete(tmp_path, "admin", "no") == ["nodes"]
    assert complete(tmp_path, "admin", "nodes", "") == ["list", "get", "cordon", "uncordon",
                                                        "drain"]
    assert complete(tmp_path, "run", "--wa") == ["--wait"]
    assert complete(tmp_path, "admin", "nodes", "drain", "n1", "--gr") == ["--grace-period"]
    # global options, not shadowed ones
    flags = complete(tmp_path, "runs", "--")
    assert {"--output", "--workspace", "--all", "--gateway"} <= set(flags)
    assert len(flags) == len(set(flags))
    # values: output formats after -o, shells after completion, nothing for a run id
    assert complete(tmp_path, "runs", "-o", "") == ["table", "wide", "json", "yaml",
                                                     "jsonpath="]
    assert complete(tmp_path, "runs", "-o", "j") == ["json", "jsonpath="]
    assert complete(tmp_path, "completion", "") == ["bash", "zsh", "fish"]
    assert complete(tmp_path, "status", "") == []
    # an option's value is not taken for a command word
    assert complete(tmp_path, "runs", "-w", "admin", "--st") == ["--state"]


def test_completion_scripts_for_each_shell(tmp_path):
    t = Tau("http://127.0.0.1:9", tmp_path)
    for shell, marker in (("bash", "complete -F _tau_complete tau"),
                          ("zsh", "#compdef tau"), ("fish", "complete -c tau")):
        r = t("completion", shell, gateway=False, token=None)
        assert r.returncode == 0 and marker in r.stdout
        assert "__complete" in r.stdout
    r = t("completion", "tcsh", gateway=False, token=None)
    assert r.returncode == 2 and "bash, zsh or fish" in r.stderr


def shell_or_skip(name):
    exe = shutil.which(name)
    if not exe:
        pytest.skip(f"{name} is not installed (deploy/dev/deps.sh installs it)")
    return exe


def test_zsh_completion_offers_commands_flags_and_files(tmp_path):
    zsh = shell_or_skip("zsh")
    # the completion system's helpers stand in for an interactive zsh: they
    # print what _tau hands them
    script = f"""
_describe() {{ print -l -- "${{(@P)${{@[-1]}}}}" }}
_files() {{ print FILES }}
compdef() {{ : }}
path=({os.path.dirname(TAU)} $path)
source <(tau completion zsh)
words=(tau admin no); CURRENT=3; _tau; print -r -- ---
words=(tau run --wa); CURRENT=3; _tau; print -r -- ---
words=(tau run ''); CURRENT=3; _tau
"""
    cp = subprocess.run([zsh, "-f", "-c", script], capture_output=True, text=True, timeout=30,
                        env=dict(os.environ, XDG_CONFIG_HOME=str(tmp_path)))
    assert cp.returncode == 0, cp.stderr
    nodes, wait, files = cp.stdout.split("---\n")
    assert "nodes:Cluster nodes: GPUs, health, cordon, drain" in nodes.splitlines()
    assert "--wait:follow the run until it ends; exit 1 when it fails or is cancelled" in \
        wait.splitlines()
    assert files == "FILES\n"  # a tau.yaml to run: file names


def test_fish_completion_offers_commands_flags_and_values(tmp_path):
    fish = shell_or_skip("fish")
    script = (f"set -x PATH {os.path.dirname(TAU)} $PATH; source (tau completion fish | psub); "
              "complete -C 'tau admin nodes dr'; echo ---; complete -C 'tau run --wa'; "
              "echo ---; complete -C 'tau runs -o j'")
    cp = subprocess.run([fish, "--no-config", "-c", script], capture_output=True, text=True,
                        timeout=30, env=dict(os.environ, XDG_CONFIG_HOME=str(tmp_path)))
    assert cp.returncode == 0, cp.stderr
    drain, wait, fmt = cp.stdout.split("---\n")
    assert drain == "drain\tCordon a node and evict its pods\n"
    assert wait.startswith("--wait\t")
    assert [l.split("\t")[0] for l in fmt.splitlines()] == ["json", "jsonpath="]


# ---- output formats ------------------------------------------------------------------------------


def test_wide_adds_columns_and_jsonpath_selects(tau):
    narrow = table(tau("admin", "workspaces", "list").stdout)
    wide = table(tau("admin", "workspaces", "list", "-o", "wide").stdout)
    assert wide[0][:len(narrow[0])] == narrow[0]
    assert {"OUTPUT-ROOT", "LOG-DAYS"} <= set(wide[0]) - set(narrow[0])
    assert len(wide) == len(narrow)
    r = tau("admin", "workspaces", "list", "-o", "jsonpath={.items[*].name}")
    assert r.returncode == 0 and r.stdout == "ray"
    r = tau("admin", "workspaces", "list", "-o",
            'jsonpath={range .items[*]}{.name}={.namespace}{"\\n"}{end}')
    assert r.stdout == "ray=ray\n"
    r = tau("admin", "profiles", "list", "-o",
            'jsonpath={.items[?(@.engine=="job")].name}')
    assert r.stdout == "kind-cpu-job"
    r = tau("admin", "priority-classes", "list", "-o", "jsonpath=items[0].value")
    assert r.stdout == "1000"  # without braces, as kubectl
    r = tau("admin", "workspaces", "list", "-o", "jsonpath={.items[")
    assert r.returncode == 2 and "jsonpath" in r.stderr
    r = tau("admin", "workspaces", "list", "-o", "xml")
    assert r.returncode == 2 and "table, wide, json, yaml or jsonpath=TEMPLATE" in r.stderr


def test_jsonpath_follows_kubectls_syntax(tmp_path):
    doc = {"items": [{"name": "a", "n": 1, "tags": ["x", "y"], "meta": {"k/v": "s1"}},
                     {"name": "b", "n": 2.5, "tags": [], "meta": {"k/v": "s2"}},
                     {"name": "c", "n": 3, "done": True}], "next_cursor": None}
    cases = {
        "{.items[-1].name}": "c",
        "{.items[0:2].name}": "a b",
        "{.items[1:].n}": "2.5 3",
        "{..name}": "a b c",
        "{.items[*].meta['k/v']}": "s1 s2",
        '{.items[?(@.n>=2)].name}': "b c",
        "{.items[?(@.done)].name}": "c",
        '{.items[?(@.name!="a")].name}': "b c",
        "{.items[0].tags}": '["x","y"]',
        "{.items[0].tags[*]}": "x y",
        "{.next_cursor}": "null",
        "{.missing.deeper}": "",
        '{range .items[*]}[{.name}:{.n}]{end}': "[a:1][b:2.5][c:3]",
        '{range .items[*]}{range .tags[*]}{@}{"\\t"}{end}{end}': "x\ty\t",
        "n={$.items[0].n}": "n=1",
    }
    with Stub({"/v1/doc": doc}) as s:
        t = Tau(s.url, tmp_path)
        for tmpl, want in cases.items():
            r = t("api", "/v1/doc", "-o", "jsonpath=" + tmpl)
            assert r.returncode == 0 and r.stdout == want, (tmpl, r.stdout, r.stderr)
        for bad in ("{range .items[*]}", "{end}", "{.items[?(@.n=)]}", "{.a", "{}"):
            r = t("api", "/v1/doc", "-o", "jsonpath=" + bad)
            assert r.returncode == 2 and "jsonpath" in r.stderr, bad


# ---- tau api ----------------------------------------------------------------------------------


def test_api_sends_any_request_with_the_configured_credentials(tau, gw):
    r = tau("api", "/v1/admin/fleet")
    assert r.returncode == 0, r.stderr
    assert "totals" in json.loads(r.stdout)
    # fields: the query of a GET, a typed JSON body otherwise
    r = tau("api", "PATCH", "/v1/admin/workspaces/ray", "-F", "ttl_seconds=3600")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ttl_seconds"] == 3600
    r = tau("api", "GET", "/v1/admin/audit", "-f", "subject=platform-admin@example.com",
            "-f", "limit=1")
    assert r.returncode == 0 and len(json.loads(r.stdout)["items"]) == 1
    r = tau("api", "-X", "GET", "/v1/admin/audit", "-f", "limit=1", "--paginate", "-o",
            "jsonpath={.next_cursor}")
    assert r.returncode == 0 and r.stdout == "null"
    # a POST without a body, headers shown with -i
    r = tau("api", "POST", "/v1/admin/policies:reload", "-i")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("HTTP/1.1 200") and "X-Request-Id:" in r.stdout
    # a body from a file (- for stdin): the method defaults to POST
    r = tau("api", "/v1/admin/priority-classes", "--input", "-",
            stdin=json.dumps({"name": "api-pc", "value": 7}))
    assert r.returncode == 0 and json.loads(r.stdout)["value"] == 7
    assert tau("api", "DELETE", "/v1/admin/priority-classes/api-pc").returncode == 0
    # an error: the problem document on stdout, the exit code by status
    r = tau("api", "/v1/admin/workspaces/nope")
    assert r.returncode == 3 and json.loads(r.stdout)["status"] == 404
    assert "HTTP 404" in r.stderr
    r = tau("api", "/v1/admin/fleet", token=tokens.mint("alice"))
    assert r.returncode == 4
    # usage errors
    assert tau("api", "GET").returncode == 2
    assert tau("api", "FETCH", "/v1/x").returncode == 2
    assert tau("api", "v1/admin/fleet").returncode == 2
    r = tau("api", "/v1/admin/fleet", "-H", "bogus")
    assert r.returncode == 2 and "Name: value" in r.stderr


# ---- admin policies ---------------------------------------------------------------------------


def test_admin_policies_lifecycle(tau, tmp_path):
    f = tmp_path / "rules.yaml"
    f.write_text("rules:\n"
                 "  - id: cli-gpus\n    description: at most 4 GPUs\n    action: deny\n"
                 "    max_gpus_per_run: 4\n"
                 "  - id: cli-retries\n    description: few retries\n    action: warn\n"
                 "    max_retries: 3\n    message: too many retries\n")
    r = tau("admin", "policies", "create", "-f", str(f))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "policy cli-gpus created\npolicy cli-retries created\n"
    rows = table(tau("admin", "policies", "list").stdout)
    assert rows[0][:5] == ["ID", "VERSION", "ENABLED", "ACTION", "DESCRIPTION"]
    assert ["cli-gpus", "1", "true", "deny", "at most 4 GPUs"] in [x[:5] for x in rows]
    assert "CREATED-BY" in table(tau("admin", "policies", "list", "-o", "wide").stdout)[0]
    r = tau("admin", "policies", "get", "cli-retries", "-o", "json")
    assert json.loads(r.stdout)["rule"]["message"] == "too many retries"
    # apply: unchanged, a changed field, and a field the file leaves out is removed
    r = tau("admin", "policies", "apply", "-f", str(f))
    assert r.stdout == "policy cli-gpus unchanged\npolicy cli-retries unchanged\n", r.stderr
    f.write_text("- id: cli-retries\n  description: few retries\n  action: warn\n"
                 "  max_retries: 2\n")
    r = tau("admin", "policies", "apply", "-f", str(f))
    assert r.returncode == 0 and r.stdout == "policy cli-retries configured\n", r.stderr
    rule = json.loads(tau("admin", "policies", "get", "cli-retries", "-o", "json").stdout)
    assert rule["version"] == 2 and rule["rule"]["max_retries"] == 2
    assert "message" not in rule["rule"]
    r = tau("admin", "policies", "disable", "cli-gpus")
    assert r.returncode == 0 and r.stdout == "policy cli-gpus disabled (version 2)\n"
    assert tau("admin", "policies", "enable", "cli-gpus").returncode == 0
    rows = table(tau("admin", "policies", "versions", "cli-gpus").stdout)
    assert [x[:3] for x in rows[1:]] == [["3", "update", "true"], ["2", "update", "false"],
                                         ["1", "create", "true"]]
    r = tau("admin", "policies", "effective")
    assert r.returncode == 0 and re.search(r"^Digest:\s+\S+", r.stdout, re.M)
    assert any(x[:2] == ["cli-gpus", "deny"] for x in table(r.stdout.split("Rules:")[1]))
    r = tau("admin", "policies", "reload")
    assert r.returncode == 0 and r.stdout.startswith("policy reloaded: generation ")
    # a rule the schema refuses: the gateway's problems, exit 3
    f.write_text("- id: cli-bad\n  description: x\n  action: deny\n  max_gpus_per_run: -1\n")
    r = tau("admin", "policies", "create", "-f", str(f))
    assert r.returncode == 3 and "max_gpus_per_run" in r.stderr
    for rid in ("cli-gpus", "cli-retries"):
        r = tau("admin", "policies", "delete", rid)
        assert r.returncode == 0 and r.stdout == f"policy {rid} deleted\n"
    assert tau("admin", "policies", "get", "cli-gpus").returncode == 3


# ---- nodes, fleet, drift ------------------------------------------------------------------------


def test_admin_nodes_fleet_and_drift(tau, gw):
    def nodes():
        return json.loads(tau("admin", "nodes", "list", "--all", "-o", "json").stdout)["items"]

    gpu = wait_for(lambda: [n for n in nodes() if n["gpus"]["allocatable"] > 0])
    rows = table(tau("admin", "nodes", "list").stdout)
    assert rows[0] == ["NAME", "GPU-CLASS", "GPUS", "ALLOCATED", "FREE", "HEALTH", "READY",
                       "CORDONED"]
    assert "CORDONED-BY" in table(tau("admin", "nodes", "list", "-o", "wide").stdout)[0]
    r = tau("admin", "nodes", "list", "--gpu", "-o", "jsonpath={.items[*].name}")
    assert set(r.stdout.split()) == {n["name"] for n in gpu}
    r = tau("admin", "nodes", "get", gpu[0]["name"])
    assert r.returncode == 0 and re.search(r"^GPUs:\s+8 allocatable", r.stdout, re.M), r.stdout
    assert tau("admin", "nodes", "get", "no-such-node").returncode == 3
    r = tau("admin", "fleet")
    assert r.returncode == 0, r.stderr
    rows = table(r.stdout)
    assert rows[0][:3] == ["GROUP", "NODES", "UNHEALTHY"]
    assert rows[1][0] == "all nodes" and any(x[0].startswith("class ") for x in rows)
    r = tau("admin", "drift", "--state", "all")
    assert r.returncode == 0, r.stderr
    assert json.loads(tau("admin", "drift", "-o", "json").stdout)["items"] is not None
    # the write side, once the gateway serves it
    name = gpu[0]["name"]
    if route_missing(gw, "POST", f"/v1/admin/nodes/{name}:cordon", body={"reason": "x"}):
        return
    r = tau("admin", "nodes", "cordon", name, "--reason", "cli test")
    assert r.returncode == 0 and r.stdout == f"node {name} cordoned\n", r.stderr
    assert tau("admin", "nodes", "get", name, "-o", "json").stdout.count("cli test")
    assert tau("admin", "nodes", "uncordon", name).returncode == 0


def wait_for(fn, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError("condition not met")


def test_node_write_commands_send_the_contracts_requests(tmp_path):
    """cordon, uncordon and drain against a stand-in speaking the contract."""
    node = {"name": "gpu-1", "unschedulable": True, "cordon": {"by": "admin", "reason": "r"}}
    drained = {"node": node, "pods": [
        {"namespace": "ray", "pod": "a", "run_id": None, "outcome": "evicted", "message": None},
        {"namespace": "ray", "pod": "b", "run_id": None, "outcome": "blocked",
         "message": "disruption budget"}]}
    answers = {"/v1/admin/nodes/gpu-1:cordon": node, "/v1/admin/nodes/gpu-1:uncordon": node,
               "/v1/admin/nodes/gpu-1:drain": drained}
    with Stub(answers) as s:
        t = Recorded(s.url, tmp_path)
        r = t("admin", "nodes", "cordon", "gpu-1")
        assert r.returncode == 2 and "--reason" in r.stderr
        r = t("admin", "nodes", "cordon", "gpu-1", "--reason", "NVLink bridge (OPS-1432)")
        assert r.returncode == 0 and r.stdout == "node gpu-1 cordoned\n"
        assert t("admin", "nodes", "uncordon", "gpu-1").returncode == 0
        r = t("admin", "nodes", "drain", "gpu-1", "--reason", "kernel", "--grace-period", "60")
        assert r.returncode == 3 and "1 pod could not be evicted yet" in r.stderr
        assert [x[3] for x in table(r.stdout)[1:3]] == ["evicted", "blocked"]
        bodies = [(p, json.loads(b or b"null")) for m, p, h, b in s.requests]
    assert bodies == [
        ("/v1/admin/nodes/gpu-1:cordon", {"reason": "NVLink bridge (OPS-1432)"}),
        ("/v1/admin/nodes/gpu-1:uncordon", {}),
        ("/v1/admin/nodes/gpu-1:drain", {"reason": "kernel", "grace_period_seconds": 60})]


# ---- quota requests, audit, usage, checkpoints ---------------------------------------------------


def test_quota_requests_are_approved_and_rejected(tau, gw):
    alice = tokens.mint("alice")
    ids = []
    for amount in ("2", "3"):
        r = gw.req("POST", "/v1/workspaces/ray/quota-requests", token=alice,
                   body={"resource": "cpu", "amount": amount, "reason": "a sweep"})
        assert r.status == 201, r
        ids.append(r.json()["id"])
    r = tau("admin", "quota-requests", "list", "--state", "pending")
    assert r.returncode == 0 and all(i in r.stdout for i in ids)
    assert tau("admin", "quota-requests", "get", ids[0]).returncode == 0
    r = tau("admin", "quota-requests", "approve", ids[0], "--decision", "granted for March")
    assert r.returncode == 0 and r.stdout == f"quota request {ids[0]} approved\n", r.stderr
    r = tau("admin", "quota-requests", "reject", ids[1], "--decision", "not now")
    assert r.returncode == 0 and r.stdout == f"quota request {ids[1]} rejected\n", r.stderr
    got = json.loads(tau("admin", "quota-requests", "get", ids[1], "-o", "json").stdout)
    assert got["state"] == "rejected" and "not now" in json.dumps(got)
    r = tau("admin", "quota-requests", "reject", ids[1])
    assert r.returncode == 3


def test_audit_and_usage(tau):
    r = tau("admin", "audit", "--limit", "5", "-o", "wide")
    assert r.returncode == 0 and table(r.stdout)[0][:3] == ["TIME", "SUBJECT", "METHOD"]
    assert tau("admin", "usage").returncode == 0


def test_checkpoints_of_a_run(tau, gw, tmp_path):
    d = project(tmp_path, name="cli-ckpt", script=(
        "#!/usr/bin/env bash\n"
        "echo 'TAU_CHECKPOINT {\"path\": \"/data/ckpt/step-10\", \"step\": 10}'\n"
        "echo 'TAU_CHECKPOINT {\"path\": \"/data/ckpt/step-20\", \"step\": 20}'\n"))
    run_id = submit(tau, d)
    wait_state(gw, run_id, {"Succeeded"})
    r = wait_for(lambda: (lambda r: r if r.stdout.count("/data/ckpt/") == 2 else None)(
        tau("checkpoints", run_id)))
    rows = table(r.stdout)
    assert rows[0] == ["ATTEMPT", "STEP", "PATH", "TIME"]
    assert {(x[0], x[1], x[2]) for x in rows[1:]} == {("1", "10", "/data/ckpt/step-10"),
                                                      ("1", "20", "/data/ckpt/step-20")}
    assert "A resume starts from /data/ckpt/step-20." in r.stderr
    r = tau("checkpoints", run_id, "-o", "jsonpath={.latest.path}")
    assert r.stdout == "/data/ckpt/step-20"


# ---- the catalogue, members and queues: every verb, for the coverage below --------------------


def test_every_catalogue_verb(tau, tmp_path):
    objs = [("workspaces", {"name": "cov", "namespace": "cov"}, "cov"),
            ("profiles", {"name": "cov-p", "engine": "job"}, "cov-p"),
            ("flavors", {"name": "cov-f"}, "cov-f"),
            ("cluster-queues", {"name": "cov-cq"}, "cov-cq"),
            ("priority-classes", {"name": "cov-pc", "value": 1}, "cov-pc")]
    for res, obj, name in objs:
        f = tmp_path / f"{res}.json"
        f.write_text(json.dumps(obj))
        assert tau("admin", res, "create", "-f", str(f)).returncode == 0, res
        assert tau("admin", res, "get", name).returncode == 0, res
        assert tau("admin", res, "list").returncode == 0, res
        obj = dict(obj, description="changed") if res != "workspaces" else dict(obj, ttl_seconds=60)
        if res == "flavors":
            obj = {"name": name, "node_labels": {"pool": "x"}}
        if res == "cluster-queues":
            obj = {"name": name, "cohort": "c"}
        f.write_text(json.dumps(obj))
        r = tau("admin", res, "apply", "-f", str(f))
        assert r.returncode == 0 and "configured" in r.stdout, (res, r.stdout, r.stderr)
    r = tau("admin", "queues", "-w", "cov", "create", "cov-q", "--cluster-queue", "cov-cq")
    assert r.returncode == 0, r.stderr
    assert tau("admin", "queues", "-w", "cov", "get", "cov-q").returncode == 0
    assert tau("admin", "queues", "-w", "cov", "list").returncode == 0
    f = tmp_path / "q.json"
    f.write_text(json.dumps({"name": "cov-q", "cluster_queue": "kind-cpu-cq"}))
    r = tau("admin", "queues", "-w", "cov", "apply", "-f", str(f))
    assert r.returncode == 0 and "configured" in r.stdout, r.stderr
    r = tau("admin", "members", "-w", "cov", "add", "--user", "bob", "--role", "viewer", "-o",
            "json")
    assert r.returncode == 0, r.stderr
    mid = json.loads(r.stdout)["id"]
    assert tau("admin", "members", "-w", "cov", "get", str(mid)).returncode == 0
    assert tau("admin", "members", "-w", "cov", "list").returncode == 0
    assert tau("admin", "members", "-w", "cov", "update", str(mid), "--role",
               "researcher").returncode == 0
    assert tau("admin", "members", "-w", "cov", "remove", str(mid)).returncode == 0
    assert tau("admin", "queues", "-w", "cov", "delete", "cov-q").returncode == 0
    for res, _, name in reversed(objs):
        r = tau("admin", res, "delete", name)
        assert r.returncode == 0, (res, r.stderr)


# ---- every admin operation has a command (keep last: it reads what the tests above sent) ------


def test_every_admin_operation_of_the_contract_has_a_command():
    if not SENT:
        pytest.skip("reads what this module's other tests sent: run the whole module")
    with open(os.path.join(REPO, "openapi.yaml")) as f:
        contract = yaml.safe_load(f)
    ops = [(m.upper(), path, op["operationId"]) for path, item in contract["paths"].items()
           for m, op in item.items()
           if isinstance(op, dict) and op.get("x-taugate-role") == "platform-admin"]
    assert len(ops) > 50
    missing = []
    for method, path, op_id in ops:
        pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/:]+", re.escape(path)) + "$")
        if not any(m == method and pattern.match(p) for m, p in SENT):
            missing.append(f"{op_id} ({method} {path})")
    assert not missing, "admin operations no tau command sends:\n" + "\n".join(missing)
