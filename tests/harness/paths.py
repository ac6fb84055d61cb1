"""Where things are: the repository, the build folder, the shared docs."""
import os

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(TESTS)
BUILD = os.environ.get("TAUGATE_BUILD", os.path.join(REPO, "build"))
SHARED = os.environ.get("TAUGATE_SHARED", os.path.join(os.path.dirname(REPO), "shared"))
