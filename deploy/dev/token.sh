#!/usr/bin/env bash
# A development token for the `make run` stack, signed by .run/dev-signing.pem
# (the key the stack's gateway trusts), valid 7 days:
#
#   deploy/dev/token.sh SUBJECT [GROUP,...]     e.g. token.sh bob, token.sh ops platform-admins
#
# TAUGATE_DEV_DIR, BUILD, TAUGATE_AUTH_ISSUER and TAUGATE_AUTH_AUDIENCE as for run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 SUBJECT [GROUP,...]" >&2
  exit 2
fi
RUN=${TAUGATE_DEV_DIR:-.run}
[ -f "$RUN/dev-signing.pem" ] || {
  echo "token: no $RUN/dev-signing.pem; start the stack first (make run)" >&2
  exit 1
}
export TAUGATE_AUTH_ISSUER=${TAUGATE_AUTH_ISSUER:-https://taugate.local/dev}
export TAUGATE_AUTH_AUDIENCE=${TAUGATE_AUTH_AUDIENCE:-taugate}
# BUILD's binary, else the one on PATH (. .run/env puts build/ there), else build/'s
if [ -n "${BUILD:-}" ]; then
  taugate=$BUILD/taugate
else
  taugate=$(command -v taugate || echo build/taugate)
fi
exec "$taugate" mint-token --key-file="$RUN/dev-signing.pem" --subject="$1" \
  ${2:+--groups="$2"} --ttl=604800
