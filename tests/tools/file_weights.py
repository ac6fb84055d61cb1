#!/usr/bin/env python3
"""Write tests/file_weights.txt from a pytest --junitxml report: the seconds
each test file took (its tests' setup, call and teardown), heaviest first.
tests/conftest.py orders the files by it so that pytest-xdist starts the
long ones first.

    python3 -m pytest ... tests/integration tests/kubesim --junitxml=/tmp/run.xml
    tests/tools/file_weights.py /tmp/run.xml > tests/file_weights.txt
"""
import collections
import os
import sys
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_file(classname):
    """The repository path of the file a junit classname (a.b.test_x or
    a.b.test_x.TestClass) names."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        path = os.path.join(*parts[:n]) + ".py"
        if os.path.exists(os.path.join(REPO, path)):
            return path
    raise SystemExit(f"no test file for {classname}")


def main(report):
    seconds = collections.Counter()
    for case in ET.parse(report).iter("testcase"):
        seconds[test_file(case.get("classname"))] += float(case.get("time", 0))
    print(f"# seconds per test file in one run ({os.path.basename(sys.argv[0])}); heaviest first")
    for path, s in sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{s:6.1f} {path}")


if __name__ == "__main__":
    main(sys.argv[1])
