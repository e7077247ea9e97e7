#!/usr/bin/env bash
# A real one-node Slurm on this machine, for development and the Slurm tests: munged, slurmctld
# and slurmd from Debian's packages, the node named `hostname -s` with nproc CPUs, in partition
# "llmgw". State and logs live under .data/slurm; slurm.conf goes to /etc/slurm (the daemons and
# the client commands read it there). Starting twice is a no-op.
#
#   scripts/slurm.sh start | stop | status
#
# The node enters Slurm drained by llmgw ("llmgw: not lent"): lending it is what resumes it.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="$PWD/.data/slurm"
CONF=/etc/slurm/slurm.conf
NODE="$(hostname -s)"
PARTITION="${LLMGW_SLURM_PARTITION:-llmgw}"

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

install() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null && command -v sinfo >/dev/null && return
  [ "$(id -u)" = 0 ] || { echo "slurm.sh: Slurm is not installed and this is not root" >&2; exit 1; }
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurmctld slurmd munge slurm-client >/dev/null
}

write_conf() {
  mkdir -p "$DIR/ctld" "$DIR/d" /etc/slurm
  local conf
  conf="$(cat <<EOF
# Written by scripts/slurm.sh: a one-node Slurm for llmgw's development and tests.
ClusterName=llmgw
SlurmctldHost=${NODE}(127.0.0.1)
SlurmUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/d
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobRequeue=1
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=60
NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=$(nproc) State=DRAIN Reason="llmgw: not lent"
PartitionName=${PARTITION} Nodes=${NODE} Default=YES MaxTime=INFINITE State=UP
EOF
)"
  # Rewritten only when it changes, so a running slurmctld is not left with a stale file.
  if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$conf" ]; then printf '%s\n' "$conf" > "$CONF"; fi
}

start_munge() {
  mkdir -p /run/munge /var/lib/munge /var/log/munge
  chown munge:munge /run/munge /var/lib/munge /var/log/munge
  chmod 0755 /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
  running /run/munge/munged.pid && return
  runuser -u munge -- /usr/sbin/munged
}

start() {
  install
  [ "$(id -u)" = 0 ] || { echo "slurm.sh: starting Slurm needs root" >&2; exit 1; }
  write_conf
  start_munge
  running "$DIR/slurmctld.pid" || /usr/sbin/slurmctld
  running "$DIR/slurmd.pid" || /usr/sbin/slurmd
  # Bounded wait for the node to register with the controller.
  for _ in $(seq 1 60); do
    if sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null | grep -qv -e '^$' -e 'unknown' -e 'not_responding'; then
      echo "slurm: node $NODE is $(sinfo -h -N -n "$NODE" -o '%T'), partition $PARTITION"
      return
    fi
    sleep 0.5
  done
  echo "slurm.sh: node $NODE did not register with slurmctld; see $DIR/slurmctld.log and $DIR/slurmd.log" >&2
  exit 1
}

stop_pid() {
  local f="$1"
  running "$f" || return 0
  local pid; pid="$(cat "$f")"
  kill "$pid"
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  stop_pid "$DIR/slurmd.pid"
  stop_pid "$DIR/slurmctld.pid"
  stop_pid /run/munge/munged.pid
}

status() {
  local rc=0
  for p in /run/munge/munged.pid "$DIR/slurmctld.pid" "$DIR/slurmd.pid"; do
    if running "$p"; then echo "$(basename "$p" .pid): running (pid $(cat "$p"))"; else echo "$(basename "$p" .pid): stopped"; rc=1; fi
  done
  [ "$rc" = 0 ] && sinfo -N -o '%N %P %T %E' 2>/dev/null
  return "$rc"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: scripts/slurm.sh start|stop|status" >&2; exit 2 ;;
esac
