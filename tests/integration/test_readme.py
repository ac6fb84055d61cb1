"""The README and the docs run as written, against the stack `make run` brings
up: deploy/dev/run.sh in a temporary state folder on free ports (PostgreSQL,
kubesim running pods as processes, the gateway, the demo seed).

A fenced block whose info string is `sh step=NAME` is executed: the blocks of
README.md (from the repository) and then those of the docs (from a scratch
folder), in order, in one bash with `set -eo pipefail`, so variables flow from
one block to the next as they do for a reader; `.run/` is the stack's state
folder. Each step's output is then checked by CHECKS[NAME]; a step without a
check, or a check without a step, fails the test, so the documents cannot
drift from the product; a block whose info string says `file=PATH` must show
that file as it is. The commands run.sh prints are run the same way, and
the stack is stopped as Ctrl-C stops it and started again, which must reuse
everything and serve within 10 s."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from paths import BUILD, REPO
from pg import free_port

DOCUMENTS = ("README.md", "docs/workload-markers.md", "docs/evidence.md")
BLOCK = re.compile(r"^```sh step=([a-z0-9-]+)\n(.*?)^```$", re.M | re.S)
BANNER_END = "Ctrl-C stops everything."
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def blocks(doc):
    with open(os.path.join(REPO, doc)) as f:
        return [(doc, name, body) for name, body in BLOCK.findall(f.read())]


def processes_of(*folders):
    """Pids whose command line or environment names one of the folders (the
    state folder: kubesim, the gateway, pod processes; PostgreSQL's data)."""
    found = []
    markers = [f.encode() for f in folders]
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                text = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                text += f.read()
        except OSError:
            continue
        if any(m in text for m in markers):
            found.append(int(pid))
    return found


class Stack:
    """deploy/dev/run.sh in its own session, as `make run` starts it."""

    def __init__(self, run_dir):
        self.run_dir = run_dir
        self.port = free_port()
        self.env = dict(os.environ, BUILD=BUILD, TAUGATE_DEV_DIR=run_dir,
                        TAUGATE_PORT=str(self.port), TAUGATE_DEV_PGPORT=str(free_port()),
                        TAUGATE_DEV_KUBEPORT=str(free_port()), TAUGATE_DEV_NOSYNC="1")
        self.proc = None
        self.output = ""

    def start(self, timeout=90):
        """Start it and wait until it prints its banner."""
        began = time.monotonic()
        self.proc = subprocess.Popen([os.path.join(REPO, "deploy/dev/run.sh")], env=self.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        lines = []
        deadline = began + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.strip() == BANNER_END:
                self.output = "".join(lines)
                return
        self.stop()
        raise AssertionError("run.sh did not serve:\n" + "".join(lines) + self.logs())

    def logs(self, tail=3000):
        out = ""
        for name in ("gateway.log", "kubesim.log"):
            try:
                with open(os.path.join(self.run_dir, name)) as f:
                    text = f.read()
                out += f"\n--- {name}\n" + (text[-tail:] if tail else text)
            except OSError:
                pass
        return out

    def stop(self, timeout=30):
        """Ctrl-C: SIGINT to the whole foreground group, as a terminal sends
        it. Returns run.sh's exit status and the rest of its output; the
        gateway and kubesim must have run clean (ASan/UBSan builds)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
        rest, _ = self.proc.communicate(timeout=timeout)
        bad = [l for l in self.logs(tail=None).splitlines()
               if "ERROR: AddressSanitizer" in l or "runtime error:" in l]
        assert not bad, "\n".join(bad)
        return self.proc.returncode, rest

    def source(self):
        return f". {self.run_dir}/env\n"

    def processes(self):
        return processes_of(self.run_dir, os.path.realpath(os.path.join(self.run_dir, "pg")))

    def remove(self):
        """Kill what is left, delete its folders (PostgreSQL's data may lie
        outside the state folder: see run.sh)."""
        if self.proc and self.proc.poll() is None:
            self.stop()
        for pid in self.processes():
            os.kill(pid, signal.SIGKILL)
        data = os.path.realpath(os.path.join(self.run_dir, "pg"))
        outside = os.path.dirname(data)  # /var/lib/taugate-dev/<hash>, when there
        shutil.rmtree(outside if outside.startswith("/var/lib/taugate-dev/") else data,
                      ignore_errors=True)
        shutil.rmtree(self.run_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def stack():
    run_dir = tempfile.mkdtemp(prefix="taugate-run-")
    s = Stack(run_dir)
    s.start()
    yield s
    s.remove()


def run_bash(script, cwd, timeout=240):
    """One bash for a script made of steps, each framed by markers; returns
    ({step: output}, the step that failed or None, all output)."""
    cp = subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True,
                        timeout=timeout, stdin=subprocess.DEVNULL)
    out = cp.stdout + cp.stderr
    steps, failed = {}, None
    for m in re.finditer(r"^@@begin (\S+)\n(.*?)(?=^@@(?:begin|end) |\Z)", cp.stdout, re.M | re.S):
        steps[m.group(1)] = m.group(2)
    ended = set(re.findall(r"^@@end (\S+)$", cp.stdout, re.M))
    for name in steps:
        if name not in ended:
            failed = name
            break
    if cp.returncode != 0 and failed is None:
        failed = "(set-up)"
    return steps, failed, out


def step_script(stack, items, scratch):
    """The steps as one bash script: `.run/` is the stack's folder; the docs
    run in a scratch folder (they write files)."""
    lines = ["set -eo pipefail", "exec 2>&1", stack.source().strip()]
    where = None
    for doc, name, body in items:
        cwd = REPO if doc == "README.md" else scratch
        if cwd != where:
            lines.append(f"cd '{cwd}'")
            where = cwd
        lines.append(f"echo '@@begin {name}'")
        lines.append(body.replace(".run/", stack.run_dir + "/"))
        lines.append(f"printf '\\n@@end {name}\\n'")  # the output may not end a line
    return "\n".join(lines) + "\n"


# ---- what each step must show --------------------------------------------


def json_docs(out):
    """The JSON documents printed one after the other (curl adds no newline)."""
    dec, docs, i = json.JSONDecoder(), [], 0
    while True:
        i = out.find("{", i)
        if i < 0:
            return docs
        doc, i = dec.raw_decode(out, i)
        docs.append(doc)


def check_connect(out):
    alive, ready = json_docs(out)[:2]
    assert alive["status"] == "ok" and ready["status"] == "ready", out
    assert re.search(r"^demo\s+demo\s+researcher\s*$", out, re.M), out
    assert re.search(r"^demo-job\s+job\b", out, re.M), out
    assert re.search(r"^demo-ray\s+rayjob\b", out, re.M), out
    assert re.search(r"^demo\s+demo-cq\s+cpu\s+16\s", out, re.M), out


def check_dry_run(out):
    shown = json.loads(out)
    assert shown == {"image": "bash:5.2", "profile": "demo-job", "from": "profile",
                     "kind": "Job"}, out


def check_submit_curl(out):
    assert re.search(r"^HTTP/1.1 201 ", out, re.M), out
    assert re.search(r"^Idempotency-Replayed: true", out, re.M | re.I), out
    assert re.search(rf"^submitted run {UUID}; the retry got the same run$", out, re.M), out


def check_follow(out):
    assert re.search(r"^hello from run " + UUID + r" \(attempt 1\) in workspace demo$", out,
                     re.M), out
    assert re.search(r"\bSucceeded\b", out), out
    history = re.findall(r"^(\d+) (\S+) (\S+) \((\w+)\)$", out, re.M)
    assert history[0][:3] == ("1", "Accepted", "Submitted"), out
    assert history[-1][1] == "Succeeded" and [int(h[0]) for h in history] == list(
        range(1, len(history) + 1)), out


def check_tau_run(out):
    # the run id on stdout; `--wait` exited 0 (set -e), so it succeeded
    assert re.search(r"^" + UUID + "$", out, re.M) and "Succeeded" in out, out


def check_metrics(out):
    rows = {l.split()[0]: l.split() for l in out.splitlines() if l.split()}
    assert rows["loss"][1:4] == ["0.4", "5", "0.4"] and rows["loss"][5] == "5", out
    assert "lr" in rows and "grad_norm" in rows, out
    assert re.search(r"/checkpoints/metrics-demo/step-5$", out, re.M), out


def check_ray(out):
    for name in ("ray-hello", "project-demo"):
        assert re.search(rf"^{UUID}\s+{name}\s+Succeeded\s+\S+\s+rayjob\b", out, re.M), out


def check_evidence(out):
    # `tau evidence --verify` exited 0 (set -e); taugate verify says what it checked
    assert out.rstrip().endswith("\nverified"), out
    assert re.search(r"^ok +signature: Ed25519 signature valid", out, re.M), out
    assert re.search(r"^ok +logs: 1 streams", out, re.M) and not re.search(r"^FAIL", out, re.M)


def check_admin(out):
    assert [json.dumps(j) for j in json_docs(out)] == [
        '{"name": "vision-cq"}', '{"name": "vision"}', '{"name": "vision"}',
        '{"name": "vision-job"}', '{"subject": "bob", "role": "researcher"}'], out


def check_member(out):
    assert re.search(rf"^{UUID}\s+hello\s+Succeeded\s+Completed\s+job\s+bob\b", out, re.M), out


def check_problem(out):
    problem = json.loads(out)
    assert problem["status"] == 422, out
    assert any(e["path"] == "name" for e in problem["errors"]), out


def check_prometheus(out):
    succeeded = re.search(r'^taugate_runs\{state="Succeeded"\} (\d+)', out, re.M)
    assert succeeded and int(succeeded.group(1)) >= 5, out  # the walk-through's, at least
    assert "workspace=" not in out, out  # no tenant named without the operator's opt-in


def check_markers_read_back(out):
    summary, points, checkpoints = json_docs(out)
    loss = {m["name"]: m for m in summary["items"]}["loss"]
    # the keys the document shows
    assert {"name", "count", "non_finite", "min", "max", "min_step", "max_step",
            "latest"} <= set(loss), loss
    assert {"attempt", "step", "at", "value", "raw"} <= set(loss["latest"]), loss
    assert loss["count"] == 5 and loss["max_step"] == 5, loss
    assert points["name"] == "loss" and len(points["items"]) == 5 and "next_cursor" in points
    assert {"id", "attempt", "step", "at", "value", "raw"} <= set(points["items"][0]), points
    assert checkpoints["latest"]["path"].endswith("/checkpoints/metrics-demo/step-5"), out
    first = checkpoints["items"][0]
    assert first["attempt"] == 1 and {"path", "step", "at"} <= set(first["items"][0]), out


def check_evidence_key(out):
    assert "-----BEGIN PUBLIC KEY-----" in out, out


def check_evidence_offline(out):
    digests = re.findall(r"\b[0-9a-f]{64}\b", out)
    assert len(digests) == 2 and digests[0] == digests[1], out
    assert "Signature Verified Successfully" in out, out


def check_evidence_db(out):
    assert out.rstrip().endswith("\nverified") and not re.search(r"^FAIL", out, re.M), out


CHECKS = {
    "connect": check_connect, "dry-run": check_dry_run, "submit-curl": check_submit_curl,
    "follow": check_follow, "tau-run": check_tau_run, "metrics": check_metrics,
    "ray": check_ray, "evidence": check_evidence, "admin": check_admin, "member": check_member,
    "problem": check_problem, "prometheus": check_prometheus,
    "markers-read-back": check_markers_read_back, "evidence-key": check_evidence_key,
    "evidence-offline": check_evidence_offline, "evidence-db": check_evidence_db,
}


def test_every_step_has_a_check_and_every_check_a_step():
    names = [name for doc in DOCUMENTS for _, name, _ in blocks(doc)]
    assert len(names) == len(set(names)), names
    assert set(names) == set(CHECKS), (set(names) ^ set(CHECKS))


def test_files_shown_in_the_documents_are_the_files():
    """A block whose info string says `file=PATH` shows that file as it is."""
    shown = []
    for doc in DOCUMENTS:
        with open(os.path.join(REPO, doc)) as f:
            shown += re.findall(r"^```\w+ file=(\S+)\n(.*?)^```$", f.read(), re.M | re.S)
    assert shown, "no file=PATH block left"
    for path, text in shown:
        with open(os.path.join(REPO, path)) as f:
            assert f.read() == text, path


def test_the_commands_make_run_prints_work(stack):
    banner = stack.output
    assert f"http://127.0.0.1:{stack.port}/ui/" in banner, banner
    lines = banner.split("In another terminal")[1].splitlines()[1:]
    commands = [l.strip() for l in lines[:lines.index(
        "and, once its evidence is sealed (a second later), check it against the database:")]]
    verify = lines[len(commands) + 1].strip()
    assert len(commands) == 4 and commands[0].startswith("cd "), commands
    script = "set -eo pipefail\nexec 2>&1\n" + "\n".join(
        commands + ['echo "@@RUN $RUN"',
                    # the evidence is sealed a moment after the logs are complete
                    'until curl -s -H "Authorization: Bearer $TOKEN" "$TAUGATE/v1/runs/$RUN/evidence"'
                    ' | jq -e .sealed >/dev/null; do sleep 0.2; done', verify])
    cp = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=180,
                        stdin=subprocess.DEVNULL)
    out = cp.stdout
    assert cp.returncode == 0, out + cp.stderr + stack.logs()
    submitted = json.loads(out[out.index("{"):out.index("}") + 1])
    assert re.fullmatch(UUID, submitted["id"]) and submitted["state"] == "Accepted", out
    assert "done: 5 steps, final loss 0.400" in out, out  # the logs, followed
    assert out.rstrip().endswith("\nverified"), out


def test_the_readme_and_the_docs_run_as_written(stack, tmp_path):
    items = [b for doc in DOCUMENTS for b in blocks(doc)]
    steps, failed, out = run_bash(step_script(stack, items, str(tmp_path)), REPO)
    assert failed is None, f"step {failed} failed:\n{out[-6000:]}{stack.logs()}"
    for _, name, body in items:
        try:
            CHECKS[name](steps[name])
        except AssertionError as e:
            raise AssertionError(f"step {name}:\n{body}\nshowed:\n{e}{stack.logs()}") from None


def test_ctrl_c_stops_everything_and_a_second_start_reuses_it(stack):
    log = open(os.path.join(stack.run_dir, "gateway.log")).read()
    # one migration pass, the gateway's own
    assert (stack.output + log).count("database is current") == 1, stack.output + log
    admin = stack.source() + 'curl -s -H "Authorization: Bearer $ADMIN_TOKEN" '
    mark = subprocess.run(["bash", "-c", admin + "-H 'Content-Type: application/json' -d "
                           "'{\"name\": \"kept\", \"value\": 7}' $TAUGATE/v1/admin/priority-classes"],
                          capture_output=True, text=True, timeout=60)
    assert json.loads(mark.stdout)["name"] == "kept", mark.stdout + mark.stderr
    status, rest = stack.stop()
    assert status == 0 and rest.strip() == "run: stopped", rest
    assert stack.processes() == [], "left behind after Ctrl-C"
    stack.start()
    # reused: the cluster, its data (below) and the build (the next test)
    assert "creating a PostgreSQL cluster" not in stack.output
    kept = subprocess.run(["bash", "-c", admin + "$TAUGATE/v1/admin/priority-classes/kept"],
                          capture_output=True, text=True, timeout=60)
    assert json.loads(kept.stdout)["value"] == 7, kept.stdout + kept.stderr
    status, rest = stack.stop()
    assert status == 0 and "run: stopped" in rest and stack.processes() == [], rest
    stack.start()  # the module's other tests use it, whichever order they run in


@pytest.mark.skipif("TAUGATE_MAKE_ARGS" not in os.environ,
                    reason="needs the build's make arguments (make test-integration passes them)")
def test_an_unchanged_tree_rebuilds_and_relinks_nothing():
    """`make run` builds first: a second build of an unchanged tree must be a
    no-op (no binary relinked under a running kubesim)."""
    args = os.environ["TAUGATE_MAKE_ARGS"].split()
    build = dict(a.split("=", 1) for a in args)["BUILD"]
    targets = [os.path.join(build, b) for b in ("taugate", "tau", "kubesim")]
    make = ["make", "--no-print-directory"] + args
    first = subprocess.run(make + targets, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    again = subprocess.run(make + ["-n"] + targets, cwd=REPO, capture_output=True, text=True,
                           timeout=60)
    assert subprocess.run(make + ["-q"] + targets, cwd=REPO, timeout=60).returncode == 0, \
        "an unchanged tree rebuilds: " + again.stdout[-2000:]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands PostgreSQL to another user")
def test_a_checkout_in_a_home_only_root_can_enter_runs_too():
    """As root, initdb runs as an unprivileged user, who cannot enter a mode
    700 home: the data goes where it can, and .run/pg links to it."""
    home = tempfile.mkdtemp(prefix="taugate-home-")  # mode 700, like /root
    s = Stack(os.path.join(home, "checkout", ".run"))
    try:
        s.start()
        pg = os.path.join(s.run_dir, "pg")
        assert os.path.islink(pg), s.output
        assert os.path.realpath(pg).startswith("/var/lib/taugate-dev/"), s.output
        cp = subprocess.run(["bash", "-c", s.source() + "tau workspaces"], capture_output=True,
                            text=True, timeout=60)
        assert re.search(r"^demo\s+demo\s+researcher", cp.stdout, re.M), cp.stdout + cp.stderr
        status, rest = s.stop()
        assert "run: stopped" in rest and s.processes() == [], rest
    finally:
        s.remove()
        shutil.rmtree(home, ignore_errors=True)
