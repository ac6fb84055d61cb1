"""The REST contract, checked once at the end of the integration session.

Every request tests send through http_client.request() is recorded to
$TAUGATE_CONTRACT_LOG (one JSON line per exchange). ContractSession, a
pytest plugin that tests/conftest.py registers, points that
variable at a file of its own in each test process (each pytest-xdist worker,
or the one process of a serial run), and when the session ends, on the
controller only, joins those files and runs tests/contract/check.js (Ajv,
JSON Schema 2020-12, the official OpenAPI 3.1 schema) over them. The check
fails the session when an exchange does not match openapi.yaml, when
gateway/api/routes.c and openapi.yaml disagree, or, when the whole
integration suite ran and passed, when an operation that is not
`x-taugate-status: planned` was never exercised.

It is a session-end hook rather than a test so that it sees every exchange
whatever the order tests ran in and however they were spread over workers.
Set TAUGATE_CONTRACT_LOG to keep the joined recording at that path; set
TAUGATE_CONTRACT_CHECK=0 to skip the check (e.g. while iterating on one test).
"""
import glob
import os
import shutil
import subprocess
import tempfile

import pytest

from paths import REPO, TESTS

NODE_MODULES = os.path.join(TESTS, "node_modules")
CHECK = os.path.join(TESTS, "contract", "check.js")
INTEGRATION = os.path.realpath(os.path.join(TESTS, "integration"))
NODE_PACKAGES = ("ajv", "js-yaml", "@seriousme/openapi-schema-validator", "@redocly/cli")
# options that run part of the collected suite: coverage cannot be judged then
_FILTERS = ("keyword", "markexpr", "deselect", "lf", "last_failed")


def node_missing():
    """Why the Node validators cannot run (None when they can)."""
    if not shutil.which("node"):
        return "node is not installed (make deps)"
    for mod in NODE_PACKAGES:
        if not os.path.isdir(os.path.join(NODE_MODULES, mod)):
            return f"tests/node_modules/{mod} is missing (make deps)"
    return None


def run_node(args, timeout=120):
    env = dict(os.environ, REDOCLY_TELEMETRY="off", REDOCLY_SUPPRESS_UPDATE_NOTICE="true",
               NO_COLOR="1")
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _filtered(config):
    for name in _FILTERS:
        try:
            if config.getoption(name):
                return True
        except ValueError:
            pass
    return False


class ContractSession:
    """Records each process's exchanges to its own file; checks them all once."""

    def __init__(self, config):
        self.config = config
        self.worker = getattr(config, "workerinput", None)  # set in xdist workers
        self.kept = os.environ.get("TAUGATE_CONTRACT_LOG") if self.worker is None else None
        if self.worker is None:
            self.dir = tempfile.mkdtemp(prefix="taugate-contract-")
            part = "main"
        else:
            self.dir = self.worker["taugate_contract_dir"]
            part = self.worker["workerid"]
        # every integration module present when the session began
        self.modules = sorted(os.path.realpath(p)
                              for p in glob.glob(os.path.join(INTEGRATION, "test_*.py")))
        self.log = os.path.join(self.dir, f"{part}.jsonl")
        os.environ["TAUGATE_CONTRACT_LOG"] = self.log
        self.collected = set()  # modules of the collected items, from every process
        self.result = None      # (ok, text) once checked

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):
        node.workerinput["taugate_contract_dir"] = self.dir

    def pytest_collection_finish(self, session):
        self.collected |= {p for p in (os.path.realpath(str(item.path)) for item in session.items)
                           if os.path.dirname(p) == INTEGRATION}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        out = getattr(node, "workeroutput", {}).get("taugate_contract")
        if out:
            self.collected |= set(out["collected"])

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        if self.worker is not None:
            self.config.workeroutput["taugate_contract"] = {"collected": sorted(self.collected)}
            return
        self.result = self._check(session, exitstatus)
        if self.result and not self.result[0] and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _check(self, session, exitstatus):
        if os.environ.get("TAUGATE_CONTRACT_CHECK") == "0" or self.config.option.collectonly:
            shutil.rmtree(self.dir, ignore_errors=True)
            return None
        parts = sorted(glob.glob(os.path.join(self.dir, "*.jsonl")))
        joined = self.kept or os.path.join(self.dir, "session.jsonl")
        with open(joined, "wb") as out:
            for p in parts:
                if p != joined:
                    with open(p, "rb") as f:
                        shutil.copyfileobj(f, out)
        if not self.collected:
            shutil.rmtree(self.dir, ignore_errors=True)
            return None  # nothing of the integration suite ran
        missing = node_missing()
        if missing:
            return True, f"contract check skipped: {missing}"
        whole = (exitstatus == 0 and not _filtered(self.config)
                 and set(self.modules) <= self.collected)
        report = joined + ".report.json"
        args = ["node", CHECK, "--log", joined, "--report", report]
        if not whole:
            args.append("--no-coverage")
        cp = run_node(args)
        ok = cp.returncode == 0
        text = cp.stdout + cp.stderr
        if not whole:
            text += "(partial or failing session: coverage of operations not enforced)\n"
        if ok:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            text += f"recorded exchanges: {joined}\nreport: {report}\n"
        return ok, text

    def pytest_terminal_summary(self, terminalreporter):
        if not self.result:
            return
        ok, text = self.result
        terminalreporter.write_sep("=", "REST contract (tests/contract/check.js)",
                                   green=ok, red=not ok)
        terminalreporter.write(text if text.endswith("\n") else text + "\n")
        if not ok:
            terminalreporter.write_line("the contract check FAILED", red=True)


def register(config):
    """Register the plugin once per pytest process (not in an xdist worker
    whose controller has none: pytest -n started outside tests/integration)."""
    worker = getattr(config, "workerinput", None)
    if worker is not None and "taugate_contract_dir" not in worker:
        return
    if not config.pluginmanager.has_plugin("taugate-contract"):
        config.pluginmanager.register(ContractSession(config), "taugate-contract")
