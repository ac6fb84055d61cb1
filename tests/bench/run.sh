#!/usr/bin/env bash
# Every benchmark; each prints its figures and a ratio against a reference
# measured in the same run.
set -euo pipefail
cd "$(dirname "$0")"
for b in ./http_healthz.sh ./submit_bench.py ./run_counts_bench.py ./engine_bench.py; do
  echo "== $b"
  "$b"
done
