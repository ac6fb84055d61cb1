"""deploy/dev/deps.sh, what `make deps` and `make run` call first on a fresh
machine: it finds what is missing and installs it (as root) or prints the
command (otherwise). A fresh Debian has never heard of most packages, and
dpkg-query answers that with exit 1: the script must take it as "missing",
not die there without a word (session 10's fresh machine did, silently)."""
import os
import pathlib
import pwd
import shutil
import subprocess
import tempfile

import pytest

from paths import REPO

MISSING = "taugate-test-no-such-package"


def as_unprivileged(tree):
    """A copy of deps.sh in a scratch tree that also asks for a package dpkg
    has never heard of, and the user to run it as (so it prints, not installs)."""
    (tree / "deploy" / "dev").mkdir(parents=True)
    with open(os.path.join(REPO, "deploy", "dev", "deps.sh")) as f:
        text = f.read()
    assert "RUN_PACKAGES=(\n" in text
    script = tree / "deploy" / "dev" / "deps.sh"
    script.write_text(text.replace("RUN_PACKAGES=(\n", f"RUN_PACKAGES=(\n  {MISSING}\n", 1))
    script.chmod(0o755)
    if os.geteuid() != 0:
        return [str(script), "run"]
    runuser = shutil.which("runuser")
    if not runuser:
        pytest.skip("runuser is not installed")
    return [runuser, "-u", pwd.getpwnam("nobody").pw_name, "--", str(script), "run"]


def test_a_package_dpkg_never_heard_of_is_reported_missing():
    # not under pytest's tmp_path: its parents are private to root
    with tempfile.TemporaryDirectory(prefix="taugate-deps-") as tree:
        os.chmod(tree, 0o755)
        cp = subprocess.run(as_unprivileged(pathlib.Path(tree)), capture_output=True, text=True,
                            timeout=60)
    assert cp.returncode == 1, (cp.stdout, cp.stderr)
    assert "deps: missing packages; run as root:" in cp.stdout, (cp.stdout, cp.stderr)
    command = cp.stdout.splitlines()[-1]
    assert command.strip().startswith("apt-get update && apt-get install -y")
    # the unknown package, and only what is really missing besides it
    assert MISSING in command.split()
    installed = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Status}\n", "jq"],
                               capture_output=True, text=True).stdout
    if installed.strip().endswith(" installed"):
        assert "jq" not in command.split()
