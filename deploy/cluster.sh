#!/usr/bin/env bash
# linkqr past one machine, on one machine: a PostgreSQL primary and a
# streaming replica, PgBouncer in transaction mode, Redis, two redirect
# instances, one api, one worker and HAProxy in front, from Debian's
# packages (postgresql, pgbouncer, redis-server, haproxy). deploy/README.md
# draws the picture and explains each setting.
#
#   deploy/cluster.sh start    start everything (idempotent: running parts stay)
#   deploy/cluster.sh stop     stop everything, linkqr first (scans drained)
#   deploy/cluster.sh status   what runs, and where
#   deploy/cluster.sh env      the addresses, as shell variables
#   deploy/cluster.sh stop-db | start-db | stop-replica | start-replica | kill-redirect1 |
#                     start-redirect1 | stop-redirect2 | start-api2
#                              chaos for tests and the bench: PostgreSQL down and up, ...
#
# Settings (environment): LQ_DIR (default /tmp/linkqr-cluster: the data, logs
# and pid files; PostgreSQL's account must be able to reach it, so not under
# /root), LQ_PORT (default 18000: the first of the ports used, see ports()),
# LINKQR (default bin/linkqr, built by `make cluster`). 30 ports from LQ_PORT.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
DIR=${LQ_DIR:-/tmp/linkqr-cluster}
PORT=${LQ_PORT:-18000}
LINKQR=${LINKQR:-$repo/bin/linkqr}

ports() {
  SHORT_PORT=$PORT            # HAProxy: short links
  APP_PORT=$((PORT + 1))      # HAProxy: API, UI, docs
  STATS_PORT=$((PORT + 2))    # HAProxy: stats page
  PRIMARY_PORT=$((PORT + 10))
  REPLICA_PORT=$((PORT + 11))
  PGBOUNCER_PORT=$((PORT + 12))
  REDIS_PORT=$((PORT + 13))
  REDIRECT1_PORT=$((PORT + 20))
  REDIRECT2_PORT=$((PORT + 21))
  API_PORT=$((PORT + 22))
  WORKER_PORT=$((PORT + 23))  # health only
  API2_PORT=$((PORT + 24))    # a second api instance, started on demand (start-api2)
  # Each instance's private /metrics (LINKQR_METRICS_ADDR): on one machine
  # every instance needs a port of its own; the default 127.0.0.1:9090
  # would let only the first start.
  REDIRECT1_METRICS_PORT=$((PORT + 25))
  REDIRECT2_METRICS_PORT=$((PORT + 26))
  API_METRICS_PORT=$((PORT + 27))
  WORKER_METRICS_PORT=$((PORT + 28))
  API2_METRICS_PORT=$((PORT + 29))
}
ports

log() { echo "cluster: $*" >&2; }
die() { log "$*"; exit 1; }

# PostgreSQL and PgBouncer refuse to run as root: as root (CI), they run as
# Debian's postgres account.
as_db() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pgbin() {
  local d
  if command -v pg_config >/dev/null 2>&1 && d=$(pg_config --bindir) && [ -x "$d/postgres" ]; then echo "$d"; return; fi
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
  [ -n "$d" ] || die "PostgreSQL is not installed (Debian: apt-get install postgresql)"
  echo "$d"
}

need() {
  local missing=()
  for b in "$@"; do command -v "$b" >/dev/null 2>&1 || missing+=("$b"); done
  [ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]} (Debian: apt-get install haproxy pgbouncer redis-server postgresql)"
}

running() { [ -f "$DIR/run/$1.pid" ] && kill -0 "$(cat "$DIR/run/$1.pid")" 2>/dev/null; }

wait_for() { # name, command...: poll until the command succeeds (30 s)
  local name=$1; shift
  for _ in $(seq 1 300); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  die "$name did not come up; see $DIR/log/"
}

url_primary() { echo "postgres://linkqr@127.0.0.1:$PRIMARY_PORT/linkqr?sslmode=disable"; }
url_replica() { echo "postgres://linkqr@127.0.0.1:$REPLICA_PORT/linkqr?sslmode=disable"; }
# Through PgBouncer: no named prepared statements (transaction pooling).
url_pooled() { echo "postgres://linkqr@127.0.0.1:$PGBOUNCER_PORT/linkqr?sslmode=disable&default_query_exec_mode=cache_describe"; }

start_primary() {
  local bin; bin=$(pgbin)
  if [ ! -f "$DIR/primary/PG_VERSION" ]; then
    log "initdb primary"
    as_db "$bin/initdb" -D "$DIR/primary" -U linkqr --auth=trust -E UTF8 --locale=C >"$DIR/log/initdb.log"
    cat >>"$DIR/primary/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
wal_level = replica
max_wal_senders = 5
hot_standby = on
max_connections = 200
shared_buffers = 256MB
synchronous_commit = on
CONF
    echo "host replication linkqr 127.0.0.1/32 trust" >>"$DIR/primary/pg_hba.conf"
  fi
  if ! as_db "$bin/pg_ctl" -D "$DIR/primary" status >/dev/null 2>&1; then
    as_db "$bin/pg_ctl" -D "$DIR/primary" -o "-p $PRIMARY_PORT" -l "$DIR/log/primary.log" -w start >/dev/null
  fi
  wait_for primary "$bin/pg_isready" -q -h 127.0.0.1 -p "$PRIMARY_PORT"
  "$bin/psql" -q "postgres://linkqr@127.0.0.1:$PRIMARY_PORT/postgres?sslmode=disable" -tAc "SELECT 1 FROM pg_database WHERE datname = 'linkqr'" | grep -q 1 ||
    "$bin/psql" -q "postgres://linkqr@127.0.0.1:$PRIMARY_PORT/postgres?sslmode=disable" -c "CREATE DATABASE linkqr" >/dev/null
}

start_replica() {
  local bin; bin=$(pgbin)
  if [ ! -f "$DIR/replica/PG_VERSION" ]; then
    log "pg_basebackup replica from the primary"
    as_db "$bin/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U linkqr -D "$DIR/replica" -R -X stream -c fast
  fi
  if ! as_db "$bin/pg_ctl" -D "$DIR/replica" status >/dev/null 2>&1; then
    as_db "$bin/pg_ctl" -D "$DIR/replica" -o "-p $REPLICA_PORT" -l "$DIR/log/replica.log" -w start >/dev/null
  fi
  wait_for replica "$bin/pg_isready" -q -h 127.0.0.1 -p "$REPLICA_PORT"
}

stop_pg() { # primary|replica
  local bin; bin=$(pgbin)
  [ -f "$DIR/$1/PG_VERSION" ] || return 0
  as_db "$bin/pg_ctl" -D "$DIR/$1" -m fast -w stop >/dev/null 2>&1 || true
}

start_pgbouncer() {
  running pgbouncer && return 0
  echo '"linkqr" ""' >"$DIR/pgbouncer.users"
  sed -e "s|@PRIMARY_PORT@|$PRIMARY_PORT|g" -e "s|@PGBOUNCER_PORT@|$PGBOUNCER_PORT|g" -e "s|@DIR@|$DIR|g" \
    "$here/pgbouncer.ini" >"$DIR/pgbouncer.ini"
  [ "$(id -u)" = 0 ] && chown postgres "$DIR/pgbouncer.ini" "$DIR/pgbouncer.users"
  as_db pgbouncer -d "$DIR/pgbouncer.ini"
  wait_for pgbouncer "$(pgbin)/pg_isready" -q -h 127.0.0.1 -p "$PGBOUNCER_PORT" -d linkqr
}

start_redis() {
  running redis && return 0
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --pidfile "$DIR/run/redis.pid" --logfile "$DIR/log/redis.log" --dir "$DIR"
  wait_for redis redis-cli -p "$REDIS_PORT" ping
}

# start_linkqr name roles port metrics_port: one linkqr instance. Every
# instance shares the secret key, the database and Redis; each has the
# role's pool and its own metrics listener (not behind HAProxy).
start_linkqr() {
  local name=$1 roles=$2 port=$3 metrics_port=$4
  running "$name" && return 0
  [ -x "$LINKQR" ] || die "$LINKQR is missing (make build)"
  (
    export LINKQR_ADDR="127.0.0.1:$port"
    export LINKQR_METRICS_ADDR="127.0.0.1:$metrics_port"
    export LINKQR_BASE_URL="http://127.0.0.1:$APP_PORT"
    export LINKQR_SHORT_BASE_URL="http://127.0.0.1:$SHORT_PORT"
    export LINKQR_DATABASE_URL; LINKQR_DATABASE_URL=$(url_pooled)
    export LINKQR_DATABASE_DIRECT_URL; LINKQR_DATABASE_DIRECT_URL=$(url_primary)
    export LINKQR_DATABASE_READ_URL; LINKQR_DATABASE_READ_URL=$(url_replica)
    export LINKQR_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
    export LINKQR_SECRET_KEY; LINKQR_SECRET_KEY=$(cat "$DIR/secret")
    export LINKQR_DATA_DIR="$DIR/$name"
    export LINKQR_ROLES="$roles"
    # HAProxy is the only proxy: its X-Forwarded-For is the client's address.
    export LINKQR_TRUSTED_PROXIES="127.0.0.1/32"
    export LINKQR_LOG_FORMAT=json LINKQR_LOG_LEVEL=${LQ_LOG_LEVEL:-warn}
    [ -n "${LQ_WEBHOOK_ALLOW_PRIVATE:-}" ] && export LINKQR_WEBHOOK_ALLOW_PRIVATE=1
    nohup "$LINKQR" serve >>"$DIR/log/$name.log" 2>&1 &
    echo $! >"$DIR/run/$name.pid"
  )
  wait_for "$name" curl -fsS "http://127.0.0.1:$port/healthz"
}

start_haproxy() {
  running haproxy && return 0
  LQ_SHORT_BIND="127.0.0.1:$SHORT_PORT" LQ_APP_BIND="127.0.0.1:$APP_PORT" LQ_STATS_BIND="127.0.0.1:$STATS_PORT" \
    LQ_REDIRECT1="127.0.0.1:$REDIRECT1_PORT" LQ_REDIRECT2="127.0.0.1:$REDIRECT2_PORT" LQ_API="127.0.0.1:$API_PORT" \
    haproxy -f "$here/haproxy.cfg" -D -p "$DIR/run/haproxy.pid" >>"$DIR/log/haproxy.log" 2>&1
  wait_for haproxy curl -fsS "http://127.0.0.1:$APP_PORT/healthz"
}

stop_pid() { # name [signal]
  local f="$DIR/run/$1.pid"
  [ -f "$f" ] || return 0
  local pid; pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "-${2:-TERM}" "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$f"
}

start() {
  need haproxy pgbouncer redis-server curl
  mkdir -p "$DIR/log" "$DIR/run"
  if [ "$(id -u)" = 0 ]; then chown postgres "$DIR" "$DIR/log" "$DIR/run"; fi
  [ -f "$DIR/secret" ] || (umask 077; head -c 32 /dev/urandom | base64 >"$DIR/secret")
  start_primary
  start_replica
  start_pgbouncer
  start_redis
  # The worker first: it migrates the database (through the direct URL).
  start_linkqr worker worker "$WORKER_PORT" "$WORKER_METRICS_PORT"
  start_linkqr api api "$API_PORT" "$API_METRICS_PORT"
  start_linkqr redirect1 redirect "$REDIRECT1_PORT" "$REDIRECT1_METRICS_PORT"
  start_linkqr redirect2 redirect "$REDIRECT2_PORT" "$REDIRECT2_METRICS_PORT"
  start_haproxy
  status
}

stop() {
  stop_pid haproxy
  for n in redirect1 redirect2 api api2 worker; do stop_pid "$n"; done
  stop_pid pgbouncer
  stop_pid redis
  stop_pg replica
  stop_pg primary
}

status() {
  local n
  for n in haproxy redirect1 redirect2 api api2 worker pgbouncer redis; do
    if running "$n"; then echo "$n: running (pid $(cat "$DIR/run/$n.pid"))"; else echo "$n: stopped"; fi
  done
  for n in primary replica; do
    if as_db "$(pgbin)/pg_ctl" -D "$DIR/$n" status >/dev/null 2>&1; then echo "$n: running"; else echo "$n: stopped"; fi
  done
  echo "short links: http://127.0.0.1:$SHORT_PORT/  app: http://127.0.0.1:$APP_PORT/  HAProxy stats: http://127.0.0.1:$STATS_PORT/"
}

env_vars() {
  cat <<VARS
LQ_DIR=$DIR
LQ_SHORT_URL=http://127.0.0.1:$SHORT_PORT
LQ_APP_URL=http://127.0.0.1:$APP_PORT
LQ_REDIRECT1_URL=http://127.0.0.1:$REDIRECT1_PORT
LQ_REDIRECT2_URL=http://127.0.0.1:$REDIRECT2_PORT
LQ_API_URL=http://127.0.0.1:$API_PORT
LQ_WORKER_URL=http://127.0.0.1:$WORKER_PORT
LQ_API2_URL=http://127.0.0.1:$API2_PORT
LQ_REDIRECT1_METRICS_URL=http://127.0.0.1:$REDIRECT1_METRICS_PORT
LQ_REDIRECT2_METRICS_URL=http://127.0.0.1:$REDIRECT2_METRICS_PORT
LQ_API_METRICS_URL=http://127.0.0.1:$API_METRICS_PORT
LQ_WORKER_METRICS_URL=http://127.0.0.1:$WORKER_METRICS_PORT
LQ_API2_METRICS_URL=http://127.0.0.1:$API2_METRICS_PORT
LQ_PRIMARY_URL=$(url_primary)
LQ_REPLICA_URL=$(url_replica)
LQ_PGBOUNCER_URL=$(url_pooled)
LQ_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
LQ_STATS_URL=http://127.0.0.1:$STATS_PORT
VARS
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) env_vars ;;
  stop-db) stop_pg primary ;;
  start-db) start_primary ;;
  stop-replica) stop_pg replica ;;
  start-replica) start_replica ;;
  kill-redirect1) stop_pid redirect1 KILL ;;
  stop-redirect2) stop_pid redirect2 ;;
  start-api2) start_linkqr api2 api "$API2_PORT" "$API2_METRICS_PORT" ;;
  start-redirect1) start_linkqr redirect1 redirect "$REDIRECT1_PORT" "$REDIRECT1_METRICS_PORT" ;;
  *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
