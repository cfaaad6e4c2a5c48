#!/usr/bin/env bash
# Starts or stops a single-node Slurm cluster (munged, slurmctld, slurmd, one partition) on this
# machine, for tests and for trying `k3lab run --executor slurm` without a cluster. Needs root and
# Debian's slurm-wlm and munge packages (scripts/setup.sh installs them).
#
#   scripts/slurm-local.sh start    # idempotent: starts only what is not running; prints SLURM_CONF
#   scripts/slurm-local.sh stop     # stops what this script started (daemons by their pid files)
#   scripts/slurm-local.sh status   # daemons and the node's state
#   scripts/slurm-local.sh env      # prints `export SLURM_CONF=...` for the Slurm commands
#
#   K3LAB_SLURM_DIR   state, spool, logs and slurm.conf (default /var/tmp/k3lab-slurm)
#   K3LAB_SLURM_PORT  slurmctld port; slurmd uses the next one (default 6817)
#   K3LAB_SLURMD_TIMEOUT  seconds without an answer from slurmd before slurmctld sets the node DOWN
#                     and its running jobs NODE_FAIL (default 60; the NODE_FAIL test uses less)
#
# The cluster has no accounting database (no slurmdbd), so `sacct` is unavailable there; k3lab then
# reads task states from slurmctld (`scontrol show job`), which keeps finished jobs for MinJobAge
# (one day here). The configuration lives in K3LAB_SLURM_DIR and is selected with SLURM_CONF, so an
# existing /etc/slurm/slurm.conf is never touched.
set -euo pipefail

dir="${K3LAB_SLURM_DIR:-/var/tmp/k3lab-slurm}"
port="${K3LAB_SLURM_PORT:-6817}"
slurmd_timeout="${K3LAB_SLURMD_TIMEOUT:-60}"
conf="$dir/slurm.conf"
export SLURM_CONF="$conf"

die() {
  echo "slurm-local: $*" >&2
  exit 1
}

need_root_and_packages() {
  [ "$(id -u)" -eq 0 ] || die "run as root (the daemons need it); e.g. sudo $0 $1"
  local missing=()
  for tool in munged munge slurmctld slurmd sbatch scontrol sinfo; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  ((${#missing[@]} == 0)) || die "missing ${missing[*]}: install Debian's slurm-wlm and munge (scripts/setup.sh does)"
}

# True when the pid file names a live process running the given program.
alive() {
  local pidfile="$1" program="$2" pid
  [ -s "$pidfile" ] || return 1
  pid="$(cat "$pidfile")"
  [ -d "/proc/$pid" ] || return 1
  [ "$(readlink -f "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$(command -v "$program")")" ]
}

write_config() {
  local host cpus memory
  host="$(hostname -s)"
  cpus="$(nproc)"
  # Leave a quarter of the memory to the system; Slurm refuses a node that reports less than configured.
  memory="$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.75 }' /proc/meminfo)"
  mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  cat >"$conf.tmp" <<EOF
# Written by scripts/slurm-local.sh: a one-node cluster for k3lab's tests.
ClusterName=k3lab-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=86400
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=$slurmd_timeout
MaxArraySize=1001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$conf.tmp" "$conf"
}

start_munge() {
  if munge -n >/dev/null 2>&1; then
    return 0  # a munged is already answering (the system's or ours)
  fi
  if [ ! -s /etc/munge/munge.key ]; then
    echo "slurm-local: creating /etc/munge/munge.key"
    install -d -o munge -g munge -m 0700 /etc/munge
    if command -v mungekey >/dev/null 2>&1; then
      runuser -u munge -- mungekey --create --keyfile=/etc/munge/munge.key
    else
      dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
    fi
    chown munge:munge /etc/munge/munge.key
    chmod 0600 /etc/munge/munge.key
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged
  # munged writes its pid file as the munge user under /run/munge: keep a copy in the state dir,
  # which is how `stop` knows that this script started it.
  for _ in $(seq 50); do
    [ -s /run/munge/munged.pid ] && break
    sleep 0.1
  done
  cp /run/munge/munged.pid "$dir/munged.pid"
  for _ in $(seq 50); do
    munge -n >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "munged did not start; see /var/log/munge/munged.log"
}

wait_for_idle_node() {
  local state=""
  for _ in $(seq 150); do
    state="$(sinfo -h -o '%T' 2>/dev/null | head -n1 || true)"
    case "$state" in
      idle | mixed | allocated) return 0 ;;
      down* | drain*)
        scontrol update NodeName="$(hostname -s)" State=RESUME >/dev/null 2>&1 || true
        ;;
    esac
    sleep 0.2
  done
  die "the node did not become idle (last state: ${state:-none}); see $dir/log/slurmctld.log and $dir/log/slurmd.log"
}

start() {
  need_root_and_packages start
  mkdir -p "$dir"
  # Rewrite the config only while neither daemon runs (a running daemon keeps the config it read).
  if ! alive "$dir/slurmctld.pid" slurmctld && ! alive "$dir/slurmd.pid" slurmd; then
    write_config
  fi
  start_munge
  if ! alive "$dir/slurmctld.pid" slurmctld; then
    slurmctld -f "$conf"
  fi
  for _ in $(seq 100); do
    scontrol ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  scontrol ping >/dev/null 2>&1 || die "slurmctld does not answer; see $dir/log/slurmctld.log"
  if ! alive "$dir/slurmd.pid" slurmd; then
    slurmd -f "$conf"
  fi
  wait_for_idle_node
  echo "slurm-local: running (partition local, node $(hostname -s), $(nproc) CPUs)"
  echo "export SLURM_CONF=$conf"
}

# TERM to every given daemon that this script started, then wait for all of them (up to 10 s, then
# KILL): they shut down side by side, each in 1-2 s, instead of one after another.
stop_pidfiles() {
  local pids=() pidfile program pid
  while (($# >= 2)); do
    pidfile="$1" program="$2"
    shift 2
    if alive "$pidfile" "$program"; then
      pid="$(cat "$pidfile")"
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$pidfile"
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do
      [ -d "/proc/$pid" ] || break
      sleep 0.1
    done
    if [ -d "/proc/$pid" ]; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

stop() {
  [ "$(id -u)" -eq 0 ] || die "run as root; e.g. sudo $0 stop"
  # Only the munged this script started (a system munged keeps running).
  stop_pidfiles "$dir/slurmd.pid" slurmd "$dir/slurmctld.pid" slurmctld "$dir/munged.pid" munged
  echo "slurm-local: stopped"
}

status() {
  local any=0
  alive "$dir/munged.pid" munged && echo "munged: running (started here)" && any=1
  alive "$dir/slurmctld.pid" slurmctld && echo "slurmctld: running" && any=1
  alive "$dir/slurmd.pid" slurmd && echo "slurmd: running" && any=1
  if ((any)); then
    sinfo 2>/dev/null || true
  else
    echo "slurm-local: not running (start it with: $0 start)"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) die "usage: $0 start|stop|status|env" ;;
esac
