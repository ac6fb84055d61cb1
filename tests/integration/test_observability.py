"""What an operator watches: the standard process_* metrics on a live
gateway, every alert rule linked to its runbook and unit-tested by promtool
(a firing and a quiet case), and every metric family taugate exports either
on the dashboard or in an alert."""
import glob
import json
import os
import re
import shutil
import subprocess
import time

import pytest
import yaml

from paths import REPO

OBS = os.path.join(REPO, "deploy", "observability")
RUNBOOKS = os.path.join(REPO, "docs", "runbooks")
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(not PROMTOOL, reason="promtool (Debian's prometheus) missing")
# a family in a PromQL expression (a histogram's _bucket/_sum/_count belong to it)
FAMILY = re.compile(r"\b((?:taugate|process)_[a-z_]*?[a-z])(?:_bucket|_sum|_count)?\b")
# families exported that no operator acts on, and why
NOT_ACTED_ON = {
    "taugate_start_time_seconds": "the same fact as process_start_time_seconds",
}


def rules():
    with open(os.path.join(OBS, "alerts.yaml")) as f:
        doc = yaml.safe_load(f)
    return [r for g in doc["groups"] for r in g["rules"]]


def scrape(gw):
    r = gw.req("GET", "/metrics", token=None)
    assert r.status == 200
    return r.body.decode()


def values(text):
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def exported_families():
    """Every family the gateway's code can export: "# TYPE name" lines and the
    quoted names the collectors format (platform metrics build their TYPE
    lines from a name argument)."""
    names = set()
    for path in glob.glob(os.path.join(REPO, "gateway", "**", "*.c"), recursive=True):
        with open(path) as f:
            text = f.read()
        names |= set(re.findall(r"# TYPE ((?:taugate|process)_[a-z_]+) ", text))
        names |= {n for n in re.findall(r'"((?:taugate|process)_[a-z_]*[a-z])', text)}
    return {re.sub(r"_(bucket|sum|count)$", "", n) for n in names}


def test_process_metrics_describe_the_gateway(gateway):
    text = scrape(gateway)
    m = values(text)
    for family, kind in (("process_cpu_seconds_total", "counter"),
                         ("process_resident_memory_bytes", "gauge"),
                         ("process_virtual_memory_bytes", "gauge"),
                         ("process_open_fds", "gauge"), ("process_max_fds", "gauge"),
                         ("process_start_time_seconds", "gauge")):
        assert f"# TYPE {family} {kind}\n" in text, family
        assert family in m, family
    # the gateway's own process: it started within the last hour, after boot
    assert time.time() - 3600 < m["process_start_time_seconds"] <= time.time() + 1
    assert abs(m["process_start_time_seconds"] - m["taugate_start_time_seconds"]) < 5
    assert m["process_resident_memory_bytes"] > 1 << 20
    assert m["process_virtual_memory_bytes"] >= m["process_resident_memory_bytes"]
    # a listening socket, the database pool and the scrape's own connection
    assert 3 <= m["process_open_fds"] <= m["process_max_fds"]
    # CPU time only grows
    before = m["process_cpu_seconds_total"]
    for _ in range(20):
        gateway.req("GET", "/v1/openapi.yaml", token=None)
    assert values(scrape(gateway))["process_cpu_seconds_total"] >= before


def test_every_rule_links_a_runbook_that_exists():
    names = []
    for r in rules():
        url = r["annotations"].get("runbook_url", "")
        assert url.startswith("https://taugate.dev/runbooks/"), r["alert"]
        name = url.rsplit("/", 1)[1]
        page = os.path.join(RUNBOOKS, name + ".md")
        assert os.path.isfile(page), (r["alert"], page)
        with open(page) as f:
            text = f.read()
        assert text.startswith(f"# {r['alert']}\n"), page
        for part in ("## Meaning", "## Impact", "## Diagnosis", "## Mitigation"):
            assert part in text, (page, part)
        names.append(name)
    assert len(set(names)) == len(names), "two rules share a runbook"
    pages = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(RUNBOOKS, "*.md"))}
    assert pages - {"README"} == set(names), "a runbook without a rule"
    with open(os.path.join(RUNBOOKS, "README.md")) as f:
        index = f.read()
    for r in rules():
        assert f"| {r['alert']} |" in index, r["alert"]


def test_every_rule_has_a_firing_and_a_quiet_unit_test():
    with open(os.path.join(OBS, "alerts_test.yaml")) as f:
        doc = yaml.safe_load(f)
    fired, quiet = set(), set()
    for t in doc["tests"]:
        for c in t.get("alert_rule_test", []):
            (fired if c["exp_alerts"] else quiet).add(c["alertname"])
            for a in c["exp_alerts"]:
                # the annotations are checked, the runbook link included
                assert "runbook_url" in a.get("exp_annotations", {}), c["alertname"]
    names = {r["alert"] for r in rules()}
    assert names - fired == set(), "rules never seen firing"
    assert names - quiet == set(), "rules never seen quiet"


@needs_promtool
def test_promtool_checks_and_runs_the_rule_tests():
    p = subprocess.run([PROMTOOL, "check", "rules", "alerts.yaml"], cwd=OBS,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"SUCCESS: {len(rules())} rules found" in p.stdout
    p = subprocess.run([PROMTOOL, "test", "rules", "alerts_test.yaml"], cwd=OBS,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def dashboard():
    with open(os.path.join(OBS, "taugate-dashboard.json")) as f:
        return json.load(f)


def test_every_exported_family_is_on_the_dashboard_or_in_an_alert(gateway):
    exported = exported_families()
    # the scan finds what a live gateway exports (the engine's families need a
    # cluster; the static scan covers them)
    live = {line.split()[2] for line in scrape(gateway).splitlines()
            if line.startswith("# TYPE ")}
    assert live <= exported, live - exported
    assert {"process_open_fds", "taugate_http_requests_total", "taugate_runs",
            "taugate_kube_informer_relists_total"} <= exported
    used = set()
    for p in dashboard()["panels"]:
        for t in p.get("targets", []):
            used |= set(FAMILY.findall(t["expr"]))
    for r in rules():
        used |= set(FAMILY.findall(r["expr"]))
    assert used <= exported, used - exported  # nothing names a family that does not exist
    missing = exported - used - set(NOT_ACTED_ON)
    assert not missing, f"families neither graphed nor alerted on: {sorted(missing)}"


def test_dashboard_layout_is_sound():
    d = dashboard()
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    cells = set()
    for p in d["panels"]:
        g = p["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24, p["title"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, f"{p['title']} overlaps another panel"
                cells.add((x, y))
        if p["type"] != "row":
            assert p["datasource"]["uid"] == "${datasource}", p["title"]
            assert p["targets"], p["title"]
    assert {v["name"] for v in d["templating"]["list"]} >= {"datasource", "job"}
