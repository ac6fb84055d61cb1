"""Shared pytest set-up: puts tests/harness on the path (see harness/paths.py
for BUILD, REPO and SHARED); registers the REST contract check that runs
when an integration session ends (harness/contract_check.py); and
--shuffle=SEED, which runs the test files in a random order and each file's
tests in a random order (seeded, so that every pytest-xdist worker collects
the same order and a failing order can be replayed): no test may depend on
another having run before it. Write --shuffle=SEED, not --shuffle SEED: in
the second form pytest's first look at the arguments takes SEED for a path
and loads only this folder's conftest.py.

Without --shuffle the test files run heaviest first, by the seconds each
took in a full run (file_weights.txt; a file not listed there counts as the
heaviest, being unknown): pytest-xdist (--dist loadfile) hands files out in
collection order, and a long file started last is a worker running alone
at the end. tests/tools/file_weights.py writes the list from a run's
--junitxml report."""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness"))

import contract_check  # noqa: E402
from paths import BUILD, REPO, SHARED  # noqa: E402,F401  (BUILD, SHARED: kept for older imports)


def pytest_configure(config):
    contract_check.register(config)


def pytest_addoption(parser):
    parser.addoption("--shuffle", type=int, metavar="SEED", default=None,
                     help="run test files, and the tests in each, in an order drawn from SEED")


def pytest_report_header(config):
    seed = config.getoption("shuffle")
    return None if seed is None else f"test order shuffled with --shuffle {seed}"


WEIGHTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "file_weights.txt")


def file_weights(path=WEIGHTS_FILE):
    """{test file path relative to the repository: seconds}, from the lines
    "SECONDS PATH" of `path` ('#' starts a comment)."""
    weights = {}
    with open(path) as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if fields:
                weights[fields[1]] = float(fields[0])
    return weights


def pytest_collection_modifyitems(config, items):
    # a file's tests stay together: its module fixtures (gateway, database)
    # are set up once
    files = {}
    for item in items:
        files.setdefault(os.path.relpath(item.path, REPO), []).append(item)
    seed = config.getoption("shuffle")
    if seed is None:
        weights = file_weights()
        # sorted() is stable: files of equal weight keep their order
        groups = [files[f] for f in sorted(files, key=lambda f: -weights.get(f, float("inf")))]
    else:
        groups = list(files.values())
        rng = random.Random(seed)
        rng.shuffle(groups)
        for group in groups:
            rng.shuffle(group)
    items[:] = [item for group in groups for item in group]
