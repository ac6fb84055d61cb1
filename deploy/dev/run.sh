#!/usr/bin/env bash
# `make run`: the whole local platform, kept in .run/ — PostgreSQL, kubesim
# (a local Kubernetes + Kueue + KubeRay whose pods are local processes) and
# the gateway wired to it, with the demo of deploy/dev/seed.sh. A second start
# reuses what is there. Ctrl-C (or SIGTERM) stops everything this script
# started; no system service is touched.
#
# Settings (environment): TAUGATE_PORT (8080), TAUGATE_DEV_PGPORT (54329),
# TAUGATE_DEV_KUBEPORT (54330), TAUGATE_DEV_DIR (the state folder, .run),
# BUILD (build).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
BUILD=$(cd "${BUILD:-build}" && pwd)
RUN=${TAUGATE_DEV_DIR:-$REPO/.run}
PORT=${TAUGATE_PORT:-8080}
PGPORT=${TAUGATE_DEV_PGPORT:-54329}
KUBEPORT=${TAUGATE_DEV_KUBEPORT:-54330}
PGUSER_OS=taugate-pg
URL=http://127.0.0.1:$PORT
KUBE_URL=http://127.0.0.1:$KUBEPORT

say() { echo "run: $*"; }
die() {
  echo "run: $*" >&2
  exit 1
}

# "up" when something answers 200 on URL
answers() { curl -fsS -o /dev/null --max-time 1 "$1" 2>/dev/null; }
wait_for() { # URL WHAT PID LOG
  for _ in $(seq 1 300); do
    answers "$1" && return 0
    kill -0 "$3" 2>/dev/null || die "$2 exited at start; the end of $4:"$'\n'"$(tail -n 20 "$4")"
    sleep 0.1
  done
  die "$2 did not answer on $1 within 30 s; see $4"
}

answers "$URL/healthz" && die "something already serves on $URL (another make run?); stop it or set TAUGATE_PORT"
answers "$KUBE_URL/healthz" && die "something already serves on $KUBE_URL; stop it or set TAUGATE_DEV_KUBEPORT"
# What the stack writes (tokens, keys, logs, pod sandboxes) is its owner's
# alone; others may pass through .run (PostgreSQL's user needs to), not list it.
umask 077
mkdir -p "$RUN"
chmod 711 "$RUN"
RUN=$(cd "$RUN" && pwd)
# how the messages name it: .run when it is the checkout's own
SHOWN=$RUN
[ "$RUN" = "$REPO/.run" ] && SHOWN=.run

# --- PostgreSQL ------------------------------------------------------------
# initdb refuses root: as root the cluster belongs to an unprivileged user,
# who must be able to reach its data folder. When the checkout lies under a
# folder that user cannot enter (a mode-700 home), the data lives in
# /var/lib/taugate-dev/<hash of this folder> and .run/pg links to it.
bindir=$(pg_config --bindir 2>/dev/null || true)
if [ ! -x "$bindir/initdb" ]; then # the newest installed version
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bindir=$d; done
fi
[ -x "$bindir/initdb" ] || die "PostgreSQL server binaries not found; run make deps"
PGDATA=$RUN/pg
if [ "$(id -u)" -eq 0 ]; then
  id "$PGUSER_OS" >/dev/null 2>&1 ||
    useradd --system --no-create-home --shell /usr/sbin/nologin "$PGUSER_OS"
  DBUSER=$PGUSER_OS
  as_pg() { (cd / && runuser -u "$PGUSER_OS" -- "$@"); }
  if [ ! -e "$PGDATA" ] && ! as_pg test -x "$RUN"; then
    outside=/var/lib/taugate-dev/$(printf '%s' "$RUN" | sha256sum | cut -c1-16)
    say "$PGUSER_OS cannot enter $RUN; PostgreSQL's data goes to $outside (linked as $SHOWN/pg)"
    mkdir -p "$outside/pg"
    chmod 755 /var/lib/taugate-dev "$outside"
    ln -s "$outside/pg" "$PGDATA"
  fi
  PGDATA=$(readlink -f "$PGDATA")
  mkdir -p "$PGDATA"
  chown "$PGUSER_OS" "$PGDATA"
else
  DBUSER=$(id -un)
  as_pg() { "$@"; }
  mkdir -p "$PGDATA"
fi
chmod 700 "$PGDATA"
if [ ! -f "$PGDATA/PG_VERSION" ]; then
  say "creating a PostgreSQL cluster in $PGDATA"
  as_pg "$bindir/initdb" -D "$PGDATA" -A trust -U "$DBUSER" -E UTF8 --no-locale \
    ${TAUGATE_DEV_NOSYNC:+--no-sync} >/dev/null
fi

pids=()
pg_started=
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  local status=$?
  # make passes the terminal's Ctrl-C on once more: finish the clean-up
  trap '' INT TERM
  trap - EXIT
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "$pg_started" ] && as_pg "$bindir/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null 2>&1
  say "stopped"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

if ! as_pg "$bindir/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
  # TCP on loopback only: no socket path (they are limited to 107 bytes)
  as_pg "$bindir/pg_ctl" -D "$PGDATA" -l "$PGDATA/postgres.log" -w -t 30 \
    -o "-p $PGPORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=''" start >/dev/null ||
    die "PostgreSQL did not start; see $PGDATA/postgres.log"
fi
pg_started=1
DATABASE_URL="postgresql://$DBUSER@127.0.0.1:$PGPORT/taugate"
psql -X -q -h 127.0.0.1 -p "$PGPORT" -U "$DBUSER" -d postgres -tAc \
  "SELECT 1 FROM pg_database WHERE datname = 'taugate'" | grep -q 1 ||
  psql -X -q -h 127.0.0.1 -p "$PGPORT" -U "$DBUSER" -d postgres -c "CREATE DATABASE taugate"

# --- kubesim ---------------------------------------------------------------
# Its objects persist in .run/kubesim/state.json (saved when it stops).
schemas=${KUBESIM_SCHEMAS:-$REPO/../shared/k8s-schemas}
kubesim_args=(--port "$KUBEPORT" --state-dir "$RUN/kubesim" --state-file "$RUN/kubesim/state.json")
if [ -d "$schemas" ]; then
  kubesim_args+=(--schemas "$(cd "$schemas" && pwd)")
else
  say "no k8s-schemas folder at $schemas (KUBESIM_SCHEMAS): custom resources are not validated"
fi
mkdir -p "$RUN/kubesim"
"$BUILD/kubesim" "${kubesim_args[@]}" >"$RUN/kubesim.log" 2>&1 &
pids+=($!)
cat >"$RUN/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kubesim
  cluster:
    server: $KUBE_URL
users:
- name: kubesim
  user: {}
contexts:
- name: kubesim
  context:
    cluster: kubesim
    user: kubesim
    namespace: demo
current-context: kubesim
EOF

# --- keys --------------------------------------------------------------------
# Token signing (RS256; the gateway trusts the public half) and evidence
# signing (Ed25519), each generated once.
if [ ! -f "$RUN/dev-signing.pem" ]; then
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$RUN/dev-signing.pem" 2>/dev/null
  openssl pkey -in "$RUN/dev-signing.pem" -pubout -out "$RUN/dev-signing.pub" 2>/dev/null
fi
if [ ! -f "$RUN/evidence.pem" ]; then
  openssl genpkey -algorithm ed25519 -out "$RUN/evidence.pem" 2>/dev/null
fi

# --- the gateway -------------------------------------------------------------
export TAUGATE_DATABASE_URL=$DATABASE_URL
export TAUGATE_PORT=$PORT
export TAUGATE_KUBECONFIG=$RUN/kubeconfig
export TAUGATE_EVIDENCE_SIGNING_KEY=$RUN/evidence.pem
export TAUGATE_AUTH_ISSUER=${TAUGATE_AUTH_ISSUER:-https://taugate.local/dev}
export TAUGATE_AUTH_AUDIENCE=${TAUGATE_AUTH_AUDIENCE:-taugate}
export TAUGATE_AUTH_PEM_FILE=$RUN/dev-signing.pub
export TAUGATE_AUTH_ADMIN_GROUPS=${TAUGATE_AUTH_ADMIN_GROUPS:-platform-admins}
# the demo tokens (deploy/dev/token.sh) live 7 days; production keeps 1 day
export TAUGATE_AUTH_MAX_TOKEN_LIFETIME_S=${TAUGATE_AUTH_MAX_TOKEN_LIFETIME_S:-604800}
mint() { TAUGATE_DEV_DIR=$RUN BUILD=$BUILD "$REPO/deploy/dev/token.sh" "$@"; }
ADMIN_TOKEN=$(mint admin platform-admins)
TOKEN=$(mint alice)

wait_for "$KUBE_URL/healthz" kubesim "${pids[0]}" "$RUN/kubesim.log"
# `serve` listens at once and applies pending migrations as soon as the
# database answers: /readyz says when it can serve (database, migrations,
# policy, cluster)
"$BUILD/taugate" serve >"$RUN/gateway.log" 2>&1 &
pids+=($!)
wait_for "$URL/readyz" "the gateway" "${pids[1]}" "$RUN/gateway.log"
"$REPO/deploy/dev/seed.sh" "$URL" "$ADMIN_TOKEN"
# The gateway writes the demo's Kueue objects into kubesim; wait for the
# LocalQueue so that the first submission is admitted at once.
lq=$KUBE_URL/apis/kueue.x-k8s.io/v1beta1/namespaces/demo/localqueues/demo
for _ in $(seq 1 300); do
  answers "$lq" && break
  sleep 0.1
done
answers "$lq" || say "warning: the demo's LocalQueue is not in kubesim yet; see $SHOWN/gateway.log"

cat >"$RUN/env" <<EOF
# Source this file (. .run/env) for the demo's tokens and tools.
export TAUGATE=$URL
export ADMIN_TOKEN=$ADMIN_TOKEN
export TOKEN=$TOKEN
export TAU_GATEWAY=$URL TAU_TOKEN=$TOKEN TAU_WORKSPACE=demo
export DATABASE_URL=$DATABASE_URL
export TAUGATE_DEV_DIR=$RUN
export KUBECONFIG=$RUN/kubeconfig
case ":\$PATH:" in *":$BUILD:"*) ;; *) export PATH="$BUILD:\$PATH" ;; esac
EOF

cat <<MSG

taugate serves on $URL   (web console: $URL/ui/)
  cluster:    kubesim on $KUBE_URL (kubeconfig $SHOWN/kubeconfig; pods are local processes)
  database:   $DATABASE_URL
  logs:       $SHOWN/gateway.log  $SHOWN/kubesim.log  $PGDATA/postgres.log
  demo:       workspace demo, profiles demo-job (default) and demo-ray, researcher alice

Tokens (7 days; deploy/dev/token.sh SUBJECT makes more), also in $SHOWN/env:
  admin (platform-admins):  $ADMIN_TOKEN
  researcher (alice):       $TOKEN

In another terminal: submit an example with curl, one with tau (waiting for it), follow its logs
  cd $REPO && . $SHOWN/env
  curl -s -H "Authorization: Bearer \$TOKEN" -H 'Idempotency-Key: hello-1' -F spec=@examples/hello/tau.yaml -F file=@examples/hello/hello.sh "\$TAUGATE/v1/workspaces/demo/runs" | jq '{id, state}'
  RUN=\$(tau run examples/metrics --wait)
  tau logs -f "\$RUN"
and, once its evidence is sealed (a second later), check it against the database:
  taugate verify "\$RUN" --database_url="\$DATABASE_URL" --evidence_signing_key=$SHOWN/evidence.pem

Ctrl-C stops everything.
MSG
status=0
wait -n -p ended "${pids[@]}" || status=$?
# Kubesim and the gateway exit 0 only when told to stop. Ctrl-C reaches the
# whole process group, and bash does not run its INT trap when the child it
# waited on handled the signal and exited on its own: that is a stop too.
[ "$status" = 0 ] && exit 0
what=kubesim
[ "$ended" = "${pids[1]}" ] && what="the gateway"
say "$what exited (status $status); stopping the rest (see $SHOWN/gateway.log and $SHOWN/kubesim.log)"
exit 1
