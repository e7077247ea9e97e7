#!/bin/bash
# The overhead bench with the gateway on a CPU of its own (not part of the test suite):
#   bash tests/bench/overhead-pinned.sh [overhead.ts options...]      (needs the test services' env)
# The gateway (and the bare forwarders of --bare) run on the last CPU; this bench, the sim, the rest
# of the platform and the running PostgreSQL, Redis and Temporal on the others (taskset; a process
# started later inherits its parent's CPUs). Shows what the usual advice of "give the proxy cores of
# its own" does here: the gateway no longer waits behind the others, but the client, the engine and
# the ledger then share what is left. The services get all CPUs back at the end, however it ends.
set -euo pipefail
cpus=$(nproc)
[ "$cpus" -ge 2 ] || { echo "needs 2 CPUs or more" >&2; exit 1; }
own=$((cpus - 1))
rest="0-$((own - 1))"
all="0-$own"
services() { pgrep -x 'postgres|redis-server|temporal' || true; }
pinned=()
restore() {
  [ -n "${watcher:-}" ] && kill "$watcher" 2>/dev/null || true
  for p in $(services); do taskset -a -pc "$all" "$p" >/dev/null 2>&1 || true; done
}
trap restore EXIT
for p in $(services); do taskset -a -pc "$rest" "$p" >/dev/null; done
taskset -pc "$rest" $$ >/dev/null
# The gateway and the forwarders are started by the bench: each is moved as soon as it shows up,
# every thread of it (-a), once.
(
  while sleep 0.2; do
    for p in $(pgrep -f 'llmgw.js gateway|bare-proxy.ts' || true); do
      [[ " ${pinned[*]} " == *" $p "* ]] && continue
      taskset -a -pc "$own" "$p" >/dev/null 2>&1 && pinned+=("$p") && echo "on CPU $own: $(ps -o args= -p "$p" | cut -c1-90)" >&2
    done
  done
) &
watcher=$!
cd "$(dirname "$0")/../.."
node --import tsx tests/bench/overhead.ts "$@"
