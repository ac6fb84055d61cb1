"""Shared pytest set-up: puts tests/harness on the path (see harness/paths.py
for BUILD, REPO and SHARED)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness"))

from paths import BUILD, REPO, SHARED  # noqa: E402,F401  (kept for older imports)
