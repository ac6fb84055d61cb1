#!/usr/bin/env bash
# Benchmark: GET /healthz on taugate against a minimal libmicrohttpd server
# built here, both measured by wrk in the same run. Prints both throughputs and
# the ratio (target: taugate >= 0.8 of the minimal server).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
DURATION=${BENCH_DURATION:-10}
THREADS=${BENCH_SERVER_THREADS:-2}
CONNS=${BENCH_CONNECTIONS:-64}

mkdir -p "$BUILD/bench"
cc -O2 -o "$BUILD/bench/mhd_minimal" tests/bench/mhd_minimal.c $(pkg-config --cflags --libs libmicrohttpd)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }
rps() { wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$1/healthz" | awk '/Requests\/sec/ {print $2}'; }

p1=$(free_port)
"$BUILD/bench/mhd_minimal" "$p1" "$THREADS" &
ref=$!
p2=$(free_port)
TAUGATE_AUTH_ISSUER=https://bench TAUGATE_AUTH_HS256_SECRET=bench-secret-bench-secret-bench-secret \
TAUGATE_PORT=$p2 TAUGATE_THREADS=$THREADS TAUGATE_MIGRATE_ON_START=false TAUGATE_ACCESS_LOG=false \
  TAUGATE_DATABASE_URL=postgresql:///unused "$BUILD/taugate" serve 2>/dev/null &
gw=$!
trap 'kill $ref $gw 2>/dev/null; wait 2>/dev/null' EXIT
wait_up "$p1"; wait_up "$p2"

# warm both, then alternate to spread machine noise evenly
rps "$p1" >/dev/null; rps "$p2" >/dev/null
r1=$(rps "$p1"); g1=$(rps "$p2"); g2=$(rps "$p2"); r2=$(rps "$p1")
ref_rps=$(python3 -c "print(($r1+$r2)/2)")
gw_rps=$(python3 -c "print(($g1+$g2)/2)")
printf 'minimal libmicrohttpd: %.0f req/s\n' "$ref_rps"
printf 'taugate /healthz:      %.0f req/s (access log off)\n' "$gw_rps"
python3 -c "print('ratio taugate/minimal: %.2f (target >= 0.80)' % ($gw_rps/$ref_rps))"
