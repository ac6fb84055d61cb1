#!/usr/bin/env bash
# Run one libFuzzer harness for a while on a fresh copy of its seeds.
# Usage: tests/fuzz/run-fuzz.sh NAME SECONDS [BUILD_DIR]
# Seeds: tests/fuzz/seeds-NAME/, plus for spec the YAML fixtures and the
# conformance corpus ($TAUGATE_SHARED, default ../shared). Crashes are saved as
# BUILD_DIR/crash-NAME-*; the exit status is the fuzzer's.
set -uo pipefail
name=$1
secs=$2
build=${3:-build-fuzz}
bin=$build/fuzz_$name
corpus=$build/corpus-$name
log=$build/fuzz-$name.log
rm -rf "$corpus" && mkdir -p "$corpus"
[ -d "tests/fuzz/seeds-$name" ] && cp tests/fuzz/seeds-"$name"/* "$corpus"/
if [ "$name" = spec ]; then
  cp tests/fixtures/specs/*.yaml "$corpus"/
  for f in "${TAUGATE_SHARED:-../shared}"/conformance/taugrid/*.yaml; do
    [ -f "$f" ] && cp "$f" "$corpus"/
  done
fi
dict=()
[ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
echo "== fuzz_$name for ${secs}s ($(ls "$corpus" | wc -l) seeds)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  "${dict[@]}" -print_final_stats=1 -artifact_prefix="$build/crash-$name-" "$corpus" >"$log" 2>&1
rc=$?
grep -Ev '^#[0-9]+.*(NEW|REDUCE|pulse|RELOAD)' "$log" | tail -n 25
exit $rc
