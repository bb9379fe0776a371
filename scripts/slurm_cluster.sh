#!/usr/bin/env bash
# A one-node SLURM cluster on localhost, everything under one directory (nothing in /etc, no
# services): munged, slurmctld and slurmd started by this script, free ports picked.
#   scripts/slurm_cluster.sh start DIR   start it; prints `export SLURM_CONF=DIR/slurm.conf`
#   scripts/slurm_cluster.sh stop DIR    cancel its jobs, wait for them, stop the daemons
# Clients (sbatch, squeue, scancel, scontrol, sinfo) and trainer's SLURM launcher need
# SLURM_CONF=DIR/slurm.conf in their environment; jobs inherit it.
# Needs Debian's slurmctld slurmd slurm-client munge (scripts/setup.sh installs them).
# Recipe and pitfalls: ../shared/notes/slurm.md; used by the SLURM end-to-end test.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1
T=$(mkdir -p "$2" && cd "$2" && pwd)
export SLURM_CONF="$T/slurm.conf"

need() {
  local missing=()
  for program in munged mungekey slurmctld slurmd sbatch squeue scancel sinfo scontrol; do
    command -v "$program" >/dev/null 2>&1 || [[ -x "/usr/sbin/$program" ]] || missing+=("$program")
  done
  if ((${#missing[@]})); then
    echo "slurm_cluster.sh: not installed: ${missing[*]}. Install Debian's slurmctld slurmd slurm-client munge (scripts/setup.sh does)." >&2
    exit 1
  fi
}
PATH="$PATH:/usr/sbin:/sbin"

free_port() {
  local port
  for _ in $(seq 200); do
    port=$((20000 + RANDOM % 40000))
    if [[ -z "$(ss -Htan "( sport = :$port )" 2>/dev/null)" ]] && ! grep -qs "Port=$port\$" "$T/slurm.conf"; then
      echo "$port"
      return
    fi
  done
  echo "slurm_cluster.sh: no free port found" >&2
  exit 1
}

pid_of() { [[ -s "$T/$1.pid" ]] && cat "$T/$1.pid" || true; }

# Ends process $1: TERM, then KILL after $2 seconds.
stop_pid() {
  local pid=$1 grace=$2
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq $((grace * 10))); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
}

start() {
  need
  if [[ -n "$(pid_of slurmctld)" ]] && kill -0 "$(pid_of slurmctld)" 2>/dev/null; then
    echo "slurm_cluster.sh: a cluster already runs in $T (stop it first)" >&2
    exit 1
  fi
  mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/log"
  chmod 700 "$T/munge"
  mungekey --create --keyfile="$T/munge/munge.key" --force
  chmod 400 "$T/munge/munge.key"
  local user cpus ctld_port slurmd_port
  user=$(id -un)
  cpus=$(nproc)
  ((cpus >= 2)) || cpus=2
  : >"$T/slurm.conf"
  ctld_port=$(free_port)
  echo "SlurmctldPort=$ctld_port" >"$T/slurm.conf"
  slurmd_port=$(free_port)
  cat >"$T/slurm.conf" <<CONF
# Written by scripts/slurm_cluster.sh: a one-node cluster on localhost under $T
ClusterName=trainer-test
SlurmctldHost=localhost
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=300
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  munged -F -f --key-file="$T/munge/munge.key" --socket="$T/munge/munge.socket" \
    --pid-file="$T/munge/munged.pid" --seed-file="$T/munge/munge.seed" --log-file="$T/log/munged.log" \
    </dev/null >>"$T/log/munged.out" 2>&1 &
  echo $! >"$T/munged.pid"
  for _ in $(seq 100); do [[ -S "$T/munge/munge.socket" ]] && break; sleep 0.05; done
  [[ -S "$T/munge/munge.socket" ]] || { echo "slurm_cluster.sh: munged did not start, see $T/log/munged.log" >&2; stop; exit 1; }
  slurmctld -D -f "$SLURM_CONF" </dev/null >>"$T/log/slurmctld.out" 2>&1 &
  echo $! >"$T/slurmctld.pid"
  slurmd -D -N localhost -f "$SLURM_CONF" </dev/null >>"$T/log/slurmd.out" 2>&1 &
  echo $! >"$T/slurmd.pid"
  local state=""
  for _ in $(seq 300); do
    state=$(sinfo -h -N -n localhost -o %T 2>/dev/null || true)
    [[ "$state" == idle ]] && break
    sleep 0.1
  done
  if [[ "$state" != idle ]]; then
    echo "slurm_cluster.sh: the node did not become idle (state '$state'); logs in $T/log" >&2
    tail -n 5 "$T"/log/*.log >&2 || true
    stop
    exit 1
  fi
  echo "export SLURM_CONF=$SLURM_CONF"
}

stop() {
  [[ -f "$T/slurm.conf" ]] || return 0
  local ctld
  ctld=$(pid_of slurmctld)
  if [[ -n "$ctld" ]] && kill -0 "$ctld" 2>/dev/null; then
    # Jobs first: daemons stopped under running jobs leave slurmstepd processes behind.
    scancel --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 150); do
      [[ -z "$(squeue -h 2>/dev/null)" ]] && break
      sleep 0.1
    done
  fi
  stop_pid "$(pid_of slurmd)" 10
  stop_pid "$ctld" 10
  # Anything still holding a file under $T (a slurmstepd left behind) is killed by PID.
  local pid link
  for fd in /proc/[0-9]*/fd/*; do
    link=$(readlink "$fd" 2>/dev/null) || continue
    [[ "$link" == "$T"/* ]] || continue
    pid=${fd#/proc/}; pid=${pid%%/*}
    [[ "$pid" == "$$" || "$pid" == "$(pid_of munged)" ]] && continue
    kill -KILL "$pid" 2>/dev/null || true
  done
  stop_pid "$(pid_of munged)" 5
  rm -f "$T/slurmctld.pid" "$T/slurmd.pid" "$T/munged.pid"
}

case "$action" in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
