#!/usr/bin/env bash
# kubesim scale benchmark: 10,000 simulated Jobs through Kueue with 100
# watchers; prints objects/s, the time until all are admitted and complete,
# and peak memory, and fails unless every Job completed. Not part of
# `make test`.
#   tests/bench/kubesim_bench.sh [JOBS] [WATCHERS]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
make --no-print-directory "$BUILD/kubesim" >/dev/null
TAUGATE_BUILD=$PWD/$BUILD exec /usr/bin/python3 tests/bench/kubesim_bench.py "${1:-10000}" "${2:-100}"
