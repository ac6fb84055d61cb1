#!/usr/bin/env bash
# Compare the tau.yaml pipeline of two builds: spec_bench of a git revision
# (built in a temporary worktree) and of this working tree, run in turn so
# that both see the same machine. The VMs this runs on drift by several per
# cent from one minute to the next; runs of one build alone cannot show a
# change of that size, alternating runs can.
#
#   tests/bench/spec_ab.sh REV [RUNS] [SECONDS]
#
# Prints each run's pipeline/bare ratio and both medians. Run from the
# repository root; TAUGATE_SHARED as for spec_bench (default ../shared).
set -euo pipefail

rev=${1:?usage: spec_ab.sh REV [RUNS] [SECONDS]}
runs=${2:-8}
secs=${3:-3}
root=$(pwd)
tmp=$(mktemp -d)
cleanup() {
  git -C "$root" worktree remove --force "$tmp/a" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

git worktree add --detach --quiet "$tmp/a" "$rev"
make -s -C "$tmp/a" build/tests/bench/spec_bench >/dev/null
make -s build/tests/bench/spec_bench >/dev/null
cp "$tmp/a/build/tests/bench/spec_bench" "$tmp/spec_bench.a"
cp build/tests/bench/spec_bench "$tmp/spec_bench.b"
export TAUGATE_SHARED=${TAUGATE_SHARED:-$root/../shared}

ratio() { # the full pipeline's ratio to the bare parse, from one run
  "$1" "$secs" | awk '/full pipeline \(text\)/ { sub("x", "", $(NF-1)); print $(NF-1) }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2) }'; }

: >"$tmp/a.txt"
: >"$tmp/b.txt"
for _ in $(seq "$runs"); do
  ratio "$tmp/spec_bench.a" >>"$tmp/a.txt"
  ratio "$tmp/spec_bench.b" >>"$tmp/b.txt"
done
echo "$rev:         $(tr '\n' ' ' <"$tmp/a.txt") median $(median <"$tmp/a.txt")x"
echo "working tree: $(tr '\n' ' ' <"$tmp/b.txt") median $(median <"$tmp/b.txt")x"
