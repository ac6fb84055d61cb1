#!/usr/bin/env bash
# The local stack: a PostgreSQL cluster in .run/pg, migrated, and the gateway
# in the foreground. Ctrl-C stops everything this script started; no system
# service is touched.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUN=$PWD/.run
PORT=${TAUGATE_PORT:-8080}
PGPORT=${TAUGATE_DEV_PGPORT:-54329}
PGUSER_OS=taugate-pg

bindir=$(pg_config --bindir 2>/dev/null || true)
[ -x "$bindir/initdb" ] || bindir=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | tail -n1)")

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$PGUSER_OS" -- "$@"; else "$@"; fi
}

mkdir -p "$RUN"
if [ "$(id -u)" -eq 0 ]; then
  id "$PGUSER_OS" >/dev/null 2>&1 ||
    useradd --system --no-create-home --shell /usr/sbin/nologin "$PGUSER_OS"
  DBUSER=$PGUSER_OS
else
  DBUSER=$(id -un)
fi

if [ ! -f "$RUN/pg/PG_VERSION" ]; then
  echo "run: creating a PostgreSQL cluster in .run/pg"
  mkdir -p "$RUN/pg"
  [ "$(id -u)" -eq 0 ] && chown "$PGUSER_OS" "$RUN/pg" && chmod 700 "$RUN/pg"
  as_pg "$bindir/initdb" -D "$RUN/pg" -A trust -U "$DBUSER" -E UTF8 --no-locale >/dev/null
fi
[ "$(id -u)" -eq 0 ] && chown "$PGUSER_OS" "$RUN"

pids=()
cleanup() {
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  as_pg "$bindir/pg_ctl" -D "$RUN/pg" -m fast -w stop >/dev/null 2>&1 || true
  echo "run: stopped"
}
trap cleanup INT TERM EXIT

as_pg "$bindir/pg_ctl" -D "$RUN/pg" -l "$RUN/postgres.log" -w \
  -o "-p $PGPORT -k $RUN -c listen_addresses=127.0.0.1" start >/dev/null
as_pg psql -X -q -h 127.0.0.1 -p "$PGPORT" -U "$DBUSER" -d postgres -tAc \
  "SELECT 1 FROM pg_database WHERE datname = 'taugate'" | grep -q 1 ||
  as_pg psql -X -q -h 127.0.0.1 -p "$PGPORT" -U "$DBUSER" -d postgres -c "CREATE DATABASE taugate"

export TAUGATE_DATABASE_URL="postgresql://$DBUSER@127.0.0.1:$PGPORT/taugate"
export TAUGATE_PORT=$PORT

# A development signing key, generated once; the gateway trusts its public half.
if [ ! -f "$RUN/dev-signing.pem" ]; then
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$RUN/dev-signing.pem" 2>/dev/null
  chmod 600 "$RUN/dev-signing.pem"
  openssl pkey -in "$RUN/dev-signing.pem" -pubout -out "$RUN/dev-signing.pub" 2>/dev/null
fi
export TAUGATE_AUTH_ISSUER=${TAUGATE_AUTH_ISSUER:-https://taugate.local/dev}
export TAUGATE_AUTH_AUDIENCE=${TAUGATE_AUTH_AUDIENCE:-taugate}
export TAUGATE_AUTH_PEM_FILE=$RUN/dev-signing.pub
export TAUGATE_AUTH_ADMIN_GROUPS=${TAUGATE_AUTH_ADMIN_GROUPS:-platform-admins}
TOKEN=$("$BUILD/taugate" mint-token --key-file="$RUN/dev-signing.pem" \
          --subject=dev@localhost --groups=platform-admins --ttl=86400)
"$BUILD/taugate" migrate

"$BUILD/taugate" serve &
pids+=($!)
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done

cat <<MSG

taugate is serving on http://127.0.0.1:$PORT   (Ctrl-C stops everything)

A development token (platform admin, 24 h), signed by .run/dev-signing.pem:

  export TOKEN=$TOKEN

  curl -s http://127.0.0.1:$PORT/readyz
  curl -s -X POST http://127.0.0.1:$PORT/v1/admin/workspaces -H "Authorization: Bearer \$TOKEN" \\
       -H 'Content-Type: application/json' -d '{"name":"vision","namespace":"vision"}'
  curl -s http://127.0.0.1:$PORT/v1/admin/workspaces -H "Authorization: Bearer \$TOKEN"
  curl -s http://127.0.0.1:$PORT/metrics | head

MSG
wait "${pids[0]}"
