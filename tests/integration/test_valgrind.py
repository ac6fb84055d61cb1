"""The real gateway under valgrind's memcheck, through a run's whole life:
start and migrate, a bad submission refused, a run submitted, queued, run
in kubesim, its log collected, its evidence sealed, read back through the
API, then a clean stop. memcheck must find no invalid read or write, no
decision on an uninitialised value and no memory lost for good: valgrind's
exit status says so. make sanitize covers every suite with ASan and UBSan;
valgrind also sees uninitialised values, on the build that ships."""
import shutil

import pytest

import sanitizer
from gateway import Gateway
from kubesim import KubeSim
from paths import BUILD
from wait import wait_for, wait_run_state
from world import kind_cpu_cluster, kind_cpu_workspace, smoke_body

MEMCHECK = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--num-callers=30"]

pytestmark = pytest.mark.skipif(sanitizer.SANITIZED,
                                reason="an ASan build does not run under valgrind")


def test_a_run_from_submission_to_evidence_is_clean_under_memcheck(db_url):
    assert shutil.which("valgrind"), "make deps installs valgrind"
    with KubeSim() as ks:
        kind_cpu_cluster(ks)
        gw = Gateway(BUILD, db_url, wrapper=MEMCHECK, extra_env={
            "TAUGATE_KUBE_API_URL": ks.url, "TAUGATE_EVIDENCE_LOG_GRACE_S": "1"})
        gw.start(timeout=120)
        try:
            kind_cpu_workspace(gw)
            bad = gw.req("POST", "/v1/workspaces/ray/runs",
                         body={"spec": "name: [unclosed\n", "files": {}})
            assert bad.status in (400, 422), bad
            assert bad.header("Content-Type").startswith("application/problem+json")
            r = gw.req("POST", "/v1/workspaces/ray/runs",
                       body=smoke_body(b"#!/bin/sh\necho hello from memcheck\n"))
            assert r.status == 201, r
            run_id = r.json()["id"]
            done = wait_run_state(gw, run_id, {"Succeeded", "Failed"}, timeout=120)
            assert done["state"] == "Succeeded", done
            evidence = wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}/evidence"), 120,
                                "the run's evidence sealed",
                                cond=lambda r: r.status == 200 and r.json()["sealed"],
                                detail=lambda: gw.logs()[-3000:]).json()
            assert evidence["run_id"] == run_id, evidence
            logs = gw.req("GET", f"/v1/runs/{run_id}/logs")
            assert logs.status == 200 and b"hello from memcheck" in logs.body, logs
            assert gw.req("GET", f"/v1/runs/{run_id}/events").json()["items"]
            assert gw.req("GET", "/v1/workspaces/ray/runs?limit=5").status == 200
            assert gw.req("GET", "/metrics", token=None).status == 200
        finally:
            status = gw.stop(timeout=120)
            log = gw.logs()
            gw.close()
        assert status == 0, "memcheck (exit 99: it found errors):\n" + log[-6000:]
