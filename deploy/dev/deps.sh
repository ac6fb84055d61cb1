#!/usr/bin/env bash
# Install what taugate needs on Debian 12, idempotently.
# As root it runs apt-get itself; otherwise it prints the exact command to run.
set -euo pipefail
cd "$(dirname "$0")/../.."

PACKAGES=(
  build-essential pkg-config git
  libmicrohttpd-dev libpq-dev libjansson-dev libyaml-dev libcurl4-openssl-dev libssl-dev libjwt-dev
  postgresql postgresql-contrib
  libcmocka-dev python3 python3-pytest python3-yaml python3-cryptography python3-kubernetes clang libclang-rt-14-dev clang-format valgrind
  wrk prometheus openssl curl nodejs npm
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    # A package may be provided by something already installed (nodejs from
    # another source ships npm, for example); trust the command when it exists.
    case "$p" in
      nodejs) command -v node >/dev/null && continue ;;
      npm) command -v npm >/dev/null && continue ;;
    esac
    missing+=("$p")
  fi
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

# Node tools for the tests (JSON Schema and OpenAPI validators) live in an
# ignored folder, pinned by tests/package-lock.json.
if [ -f tests/package.json ]; then
  stamp=tests/node_modules/.deps-stamp
  if [ ! -f "$stamp" ] || [ tests/package.json -nt "$stamp" ] || \
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
