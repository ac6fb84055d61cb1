"""The test harness itself: a test that fails before its cleanup leaves no
gateway and no kubesim running once its pytest process ends (found when a
failed make sanitize run left a gateway serving for half an hour)."""
import os
import subprocess
import sys

from paths import BUILD, TESTS

FAILING_TEST = '''
from gateway import Gateway
from kubesim import KubeSim
from paths import BUILD


def test_fails_before_its_cleanup():
    ks = KubeSim().start()
    gw = Gateway(BUILD, "postgresql://nobody@127.0.0.1:1/none",
                 extra_env={"TAUGATE_KUBE_API_URL": ks.url}).start(probe="/healthz")
    with open("pids", "w") as f:
        f.write(f"{gw.proc.pid} {ks.proc.pid}")
    raise RuntimeError("failed: nothing below runs")
'''


def alive(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read()
    except FileNotFoundError:
        return False
    return b"taugate" in cmd or b"kubesim" in cmd


def test_a_test_that_fails_before_its_cleanup_leaves_no_process_behind(tmp_path):
    (tmp_path / "test_failing.py").write_text(FAILING_TEST)
    env = dict(os.environ, PYTHONPATH=os.path.join(TESTS, "harness"), TAUGATE_BUILD=BUILD)
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "no:xdist", "test_failing.py"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert "1 failed" in p.stdout, p.stdout + p.stderr
    pids = [int(x) for x in (tmp_path / "pids").read_text().split()]
    left = [pid for pid in pids if alive(pid)]
    for pid in left:
        os.kill(pid, 9)
    assert not left, f"still running after pytest ended: {left}"
