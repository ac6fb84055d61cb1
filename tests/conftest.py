"""Shared pytest set-up: puts tests/harness on the path and names the build folder."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "harness"))

REPO = os.path.dirname(HERE)
BUILD = os.environ.get("TAUGATE_BUILD", os.path.join(REPO, "build"))
SHARED = os.environ.get("TAUGATE_SHARED", os.path.join(os.path.dirname(REPO), "shared"))
