#!/usr/bin/env bash
# Install what taugate needs on Debian 12, idempotently.
#
#   deploy/dev/deps.sh run    what building and `make run` need
#   deploy/dev/deps.sh test   that, plus the test and benchmark tools and the
#                             Node validators in tests/node_modules (`make test`)
#
# As root it runs apt-get itself; otherwise it prints the exact command.
set -euo pipefail
cd "$(dirname "$0")/../.."
MODE=${1:-test}

# One package a line, so that lists merge without conflicts.
RUN_PACKAGES=(
  build-essential
  curl
  git
  jq
  libcurl4-openssl-dev
  libjansson-dev
  libjwt-dev
  libmicrohttpd-dev
  libpq-dev
  libssl-dev
  libyaml-dev
  nodejs
  npm
  openssl
  pkg-config
  postgresql
  python3
  zlib1g-dev
)
TEST_PACKAGES=(
  chromium
  clang
  clang-format
  fish
  libclang-rt-14-dev
  libcmocka-dev
  postgresql-contrib
  prometheus
  python3-cryptography
  python3-kubernetes
  python3-pytest
  python3-pytest-xdist
  python3-yaml
  valgrind
  wrk
  zsh
)

case "$MODE" in
  run) packages=("${RUN_PACKAGES[@]}") ;;
  test) packages=("${RUN_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac

# One dpkg-query for all of them (a second `make run` should not wait here).
# It exits 1 when dpkg has never heard of one of them, which is what a fresh
# machine looks like: that is an answer ("missing"), not a failure.
installed=$({ dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null || true; } |
  awk '$NF == "installed" { print $1 }')
missing=()
for p in "${packages[@]}"; do
  grep -qx -- "$p" <<<"$installed" && continue
  # A package may be provided by something already installed (nodejs from
  # another source ships npm, for example); trust the command when it exists.
  case "$p" in
    nodejs) command -v node >/dev/null && continue ;;
    npm) command -v npm >/dev/null && continue ;;
  esac
  missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "deps: missing packages; run as root:"
    echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
    exit 1
  fi
fi

[ "$MODE" = test ] || exit 0
# Node tools for the tests (JSON Schema and OpenAPI validators) live in an
# ignored folder, pinned by tests/package-lock.json.
if [ -f tests/package.json ]; then
  stamp=tests/node_modules/.deps-stamp
  if [ ! -f "$stamp" ] || [ tests/package.json -nt "$stamp" ] ||
    { [ -f tests/package-lock.json ] && [ tests/package-lock.json -nt "$stamp" ]; }; then
    echo "deps: installing node test tools"
    if [ -f tests/package-lock.json ]; then
      (cd tests && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    else
      (cd tests && npm install --no-audit --no-fund --loglevel=error >/dev/null)
    fi
    touch "$stamp"
  fi
fi
