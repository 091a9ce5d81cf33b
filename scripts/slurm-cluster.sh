#!/usr/bin/env bash
# A Slurm cluster on this one machine, from Debian's packages (scripts/install-deps.sh --slurm):
# munged, slurmctld and N slurmd (`slurmd -N NAME`, a port each), for kvb's fleet tests and for
# trying kvb's Slurm executor without a cluster (docs/fleet.md#the-local-test-cluster). As root.
#
#   scripts/slurm-cluster.sh start [--nodes N] [--dir DIR] [--port P] [--timeout S]
#   scripts/slurm-cluster.sh stop|status|env [--dir DIR]
#   scripts/slurm-cluster.sh kill-node NAME [--dir DIR]    # a node dies: its slurmd, its job
#                                                          # steps and their processes, SIGKILL
#   scripts/slurm-cluster.sh revive-node NAME [--dir DIR]  # its slurmd again, back to service
#   eval "$(scripts/slurm-cluster.sh env)"                 # SLURM_CONF for sbatch, srun, sinfo...
#
# Nodes node1..nodeN (default 3), CPUs=2 and RealMemory=1000 each, whatever the machine has. All
# but the last carry this machine's architecture as a feature (x86_64 here); the last, when N >= 2,
# the other one (aarch64 here): a stand-in for a node of that architecture, which runs this
# machine's code. Partitions: build (default; jobs share nodes) and measure (every job gets whole
# nodes); jobs pick an architecture with -C FEATURE. Finished jobs: `scontrol show job` for an
# hour, `sacct -c` (the job completion log; there is no accounting database) for ever.
# DIR (default /tmp/kvb-slurm) holds slurm.conf, the munge key, state, spools and logs
# (DIR/log/slurmctld.log, DIR/log/slurmd-NAME.log, DIR/munge/munged.log); P (default 16817) is
# slurmctld's port, nodes take P+1..P+N. start waits up to S seconds (default 60) for every node
# to be up, or fails with the logs' tails; start on a running cluster only starts what is missing;
# a start after stop is a new cluster (job ids from 1, no old jobs). stop ends every process of the
# cluster, jobs included, and keeps DIR's logs.
# Exit status: 0 done (status: the cluster is up); 1 failed, or status: not running; 2 usage
# (a bad command line, not root, Slurm or munge not installed), nothing done.
set -euo pipefail
self=$(readlink -f "$0")
. "$(dirname "$self")/option-value.sh"

usage_error() { echo "slurm-cluster.sh: $*" >&2; exit 2; }
fail() { echo "slurm-cluster.sh: $*" >&2; exit 1; }

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
  -h|--help) sed -n '2,26p' "$self"; exit 0 ;;
  start|stop|status|env|kill-node|revive-node) ;;
  "") usage_error "no command (start, stop, status, env, kill-node, revive-node; --help)" ;;
  *) usage_error "unknown command '$command' (start, stop, status, env, kill-node, revive-node)" ;;
esac
dir=/tmp/kvb-slurm
nodes=3
port=16817
timeout=60
node=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dir|--dir=*) option_value dir "$@"; shift "$OPTION_WORDS" ;;
    --nodes|--nodes=*) [ "$command" = start ] || usage_error "--nodes is an option of start"
      option_value nodes "$@"; shift "$OPTION_WORDS" ;;
    --port|--port=*) [ "$command" = start ] || usage_error "--port is an option of start"
      option_value port "$@"; shift "$OPTION_WORDS" ;;
    --timeout|--timeout=*) option_value timeout "$@"; shift "$OPTION_WORDS" ;;
    -h|--help) sed -n '2,26p' "$self"; exit 0 ;;
    -*) usage_error "unknown option $1" ;;
    *) [[ "$command" == *-node && -z "$node" ]] || usage_error "unexpected argument '$1'"
      node=$1; shift ;;
  esac
done
[[ "$nodes" =~ ^[1-9][0-9]*$ && "$nodes" -le 16 ]] || usage_error "--nodes must be 1..16, got '$nodes'"
[[ "$port" =~ ^[1-9][0-9]*$ && "$port" -ge 1024 && "$port" -le 65000 ]] ||
  usage_error "--port must be 1024..65000, got '$port'"
[[ "$timeout" =~ ^[1-9][0-9]*$ ]] || usage_error "--timeout must be a number of seconds, got '$timeout'"
[[ "$command" != *-node || -n "$node" ]] || usage_error "$command needs a node name"
[[ "$dir" == /* ]] || dir=$PWD/$dir
dir=${dir%/}
# A job step's socket is DIR/nodes/NAME/spool/NAME_JOB.STEP; a Unix socket path has 107 bytes.
[ ${#dir} -le 60 ] || usage_error "--dir $dir is too long for Slurm's sockets (${#dir} characters, at most 60)"
conf=$dir/slurm.conf
export SLURM_CONF=$conf

if [ "$command" = env ]; then
  printf 'export SLURM_CONF=%q\n' "$conf"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || usage_error "must run as root (the daemons run as root, munged as munge)"
for tool in munged mungekey slurmctld slurmd sinfo scontrol; do
  command -v "$tool" >/dev/null ||
    usage_error "$tool is not installed: scripts/install-deps.sh --slurm installs Slurm and munge"
done

# The arguments of a running daemon of this cluster: its pid if the pid file names a live process
# whose command line has this cluster's file in it (a recycled pid is not ours).
daemon_pid() {  # PIDFILE MARK
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$2" || return 1
  echo "$pid"
}
munged_pid() { daemon_pid "$dir/munge/munged.pid" "$dir/munge/munge.socket"; }
ctld_pid() { daemon_pid "$dir/ctld/slurmctld.pid" "$conf"; }
slurmd_pid() { daemon_pid "$dir/nodes/$1/slurmd.pid" "-N $1"; }

# The nodes of the cluster in DIR, from its slurm.conf.
conf_nodes() {
  [ -f "$conf" ] || return 0
  sed -n 's/^NodeName=\(node[0-9]*\) .*/\1/p' "$conf"
}

# slurm.conf for N nodes; every line that is not Slurm's default says why (docs/fleet.md).
write_conf() {  # FILE
  local host arch other i feature
  host=$(hostname -s)
  arch=$(uname -m)
  other=aarch64
  [ "$arch" = aarch64 ] && other=x86_64
  {
    echo "# The local test cluster of scripts/slurm-cluster.sh: $nodes nodes on $host."
    echo "ClusterName=kvbtest"
    echo "SlurmctldHost=$host(127.0.0.1)"
    echo "SlurmctldPort=$port"
    echo "# Root runs the daemons and the jobs: this is a test machine, and kvb's tests run as root."
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "# A munged of the cluster's own, with its own key and socket (not the system's /run/munge)."
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "# cred_expire is also how long a requeued job waits before it may start again (120 s by"
    echo "# default); 30 s keeps the node-failure test short."
    echo "AuthInfo=socket=$dir/munge/munge.socket,cred_expire=30"
    echo "StateSaveLocation=$dir/ctld/state"
    echo "SlurmctldPidFile=$dir/ctld/slurmctld.pid"
    echo "SlurmctldLogFile=$dir/log/slurmctld.log"
    echo "# %n: each slurmd -N NAME has its own spool, pid file and log."
    echo "SlurmdSpoolDir=$dir/nodes/%n/spool"
    echo "SlurmdPidFile=$dir/nodes/%n/slurmd.pid"
    echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
    echo "# The nodes claim what this file says, not what the machine has (all of them share its CPUs):"
    echo "# without it slurmd registers the machine's CPUs and memory and a node that claims more is INVALID."
    echo "SlurmdParameters=config_overrides"
    echo "# No cgroups: a job's processes are found by their parent pids, and tasks are not bound to"
    echo "# CPUs (the nodes' CPUs are all this machine's; kvb pins a measurement itself)."
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "# CPUs are the consumable: build jobs share a node, --exclusive (and partition measure) take it whole."
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "# No slurmdbd (it needs MySQL): sacct -c reads this job completion log instead."
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "JobCompType=jobcomp/filetxt"
    echo "JobCompLoc=$dir/log/jobcomp.txt"
    echo "# scontrol show job keeps a finished job this long (default 300 s)."
    echo "MinJobAge=3600"
    echo "# A node whose slurmd is silent this long is DOWN and its jobs fail or requeue (default 300 s)."
    echo "SlurmdTimeout=10"
    echo "# A node DOWN for not responding comes back when its slurmd registers again."
    echo "ReturnToService=1"
    echo "# A job that becomes eligible by the clock (a requeued one, cred_expire after its node died)"
    echo "# waits for the backfill scheduler's next pass: every 5 s, not 30."
    echo "SchedulerParameters=bf_interval=5"
    echo "MpiDefault=none"
    echo "SwitchType=switch/none"
    echo "NodeName=DEFAULT CPUs=2 RealMemory=1000 State=UNKNOWN"
    for ((i = 1; i <= nodes; i++)); do
      feature=$arch
      if [ "$i" -eq "$nodes" ] && [ "$nodes" -ge 2 ]; then
        feature=$other
        echo "# A stand-in for an $other node: it has the feature, but it runs this machine's $arch code."
      fi
      echo "NodeName=node$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + i)) Features=$feature"
    done
    echo "PartitionName=build Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    echo "# Measurements: every job has its nodes to itself, as if it asked --exclusive."
    echo "PartitionName=measure Nodes=ALL OverSubscribe=EXCLUSIVE MaxTime=INFINITE State=UP"
  } >"$1"
}

log_tails() {  # NAME...: the end of the logs that say why
  local f
  for f in "$dir/munge/munged.log" "$dir/log/slurmctld.log" "${@/#/$dir/log/slurmd-}"; do
    f=${f%.log}.log
    [ -f "$f" ] || continue
    echo "--- tail of $f" >&2
    tail -n 15 "$f" >&2
  done
}

start_munged() {
  munged_pid >/dev/null && return 0
  install -d -o munge -g munge -m 755 "$dir/munge"
  if [ ! -f "$dir/munge/munge.key" ]; then
    runuser -u munge -- mungekey --create --keyfile="$dir/munge/munge.key"
  fi
  # munged refuses a socket directory that not everyone may enter (hence 755, the key is 600).
  runuser -u munge -- munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed" || { log_tails; fail "munged did not start"; }
}

# A new cluster: state, spools, the job completion log and the logs of the last one go.
fresh_cluster() {
  local i p
  for ((i = 0; i <= nodes; i++)); do
    p=$((port + i))
    if ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; then
      usage_error "port $p is in use (slurmctld takes --port $port, the nodes the next $nodes): choose another --port"
    fi
  done
  rm -rf "$dir/ctld" "$dir/nodes" "$dir/log"
  mkdir -p "$dir/ctld/state" "$dir/log"
  write_conf "$conf"
}

start_slurmd() {  # NAME
  slurmd_pid "$1" >/dev/null && return 0
  mkdir -p "$dir/nodes/$1/spool"
  slurmd -f "$conf" -N "$1" || { log_tails "$1"; fail "slurmd -N $1 did not start"; }
}

# The state sinfo gives NAME (idle, mix, alloc, down*, ...), or nothing while slurmctld is not
# answering.
node_state() {
  sinfo -h -n "$1" -o %t 2>/dev/null | head -n 1 || true
}

wait_up() {  # NAME...: each idle, mixed, allocated or completing (not down, drained or silent)
  local deadline=$((SECONDS + timeout)) name state waiting
  while :; do
    waiting=()
    for name in "$@"; do
      state=$(node_state "$name")
      [[ "$state" =~ ^(idle|mix|alloc|comp)$ ]] || waiting+=("$name:${state:-no answer}")
    done
    [ ${#waiting[@]} -eq 0 ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      log_tails "${waiting[@]%%:*}"
      fail "not up after ${timeout}s: ${waiting[*]}"
    fi
    sleep 0.5
  done
}

cmd_start() {
  local name existing
  mkdir -p "$dir"
  chmod 755 "$dir"
  if ctld_pid >/dev/null; then
    existing=$(conf_nodes | wc -l)
    [ "$existing" -eq "$nodes" ] ||
      usage_error "the cluster in $dir is running with $existing nodes; stop it before starting $nodes"
    port=$(sed -n 's/^SlurmctldPort=//p' "$conf")
    start_munged
  else
    fresh_cluster
    start_munged
    # -c: no state of an earlier cluster (its jobs, its nodes' states).
    slurmctld -c -f "$conf" || { log_tails; fail "slurmctld did not start"; }
  fi
  mapfile -t names < <(conf_nodes)
  for name in "${names[@]}"; do start_slurmd "$name"; done
  wait_up "${names[@]}"
  echo "slurm-cluster.sh: up in $dir: $(sinfo -h -N -o '%N:%f' | sort -u | tr '\n' ' ')"
  printf 'export SLURM_CONF=%q\n' "$conf"
}

# The pids of the job steps (slurmstepd) of node NAME, or of every node: a step keeps its node's
# slurmd log open.
step_pids() {  # [NAME]
  local pid link pattern="$dir/log/slurmd-${1:-*}.log"
  for pid in $(pgrep -x slurmstepd || true); do
    for link in /proc/"$pid"/fd/*; do
      # shellcheck disable=SC2053  # a glob, on purpose
      if [[ "$(readlink "$link" 2>/dev/null)" == $pattern ]]; then
        echo "$pid"
        break
      fi
    done
  done
}

# PIDs and every process below them (a step's job; one that left its parent by a double fork is
# missed, as Slurm's proctrack/linuxproc misses it).
with_descendants() {  # PID...
  local -A keep=()
  local pid ppid changed=1 table
  for pid in "$@"; do keep[$pid]=1; done
  table=$(ps -e -o pid=,ppid=)
  while [ "$changed" = 1 ]; do
    changed=0
    while read -r pid ppid; do
      if [ -z "${keep[$pid]:-}" ] && [ -n "${keep[$ppid]:-}" ]; then
        keep[$pid]=1
        changed=1
      fi
    done <<<"$table"
  done
  echo "${!keep[@]}"
}

# SIGKILL to the steps (and their processes) of NAME, or of every node.
kill_steps() {  # [NAME]
  local pids
  mapfile -t pids < <(step_pids "${1:-}")
  [ ${#pids[@]} -gt 0 ] || return 0
  # shellcheck disable=SC2046  # a list of pids
  kill -KILL $(with_descendants "${pids[@]}") 2>/dev/null || true
}

# Whether PID runs (a daemon's parent is init, which may be slow to reap: a zombie has ended).
running() {  # PID
  local state
  state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [[ "$state" != Z* ]]
}

stop_daemons() {  # PID...: TERM, then KILL to those alive after 10 s
  local pid i alive
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    alive=()
    for pid in "$@"; do running "$pid" && alive+=("$pid"); done
    [ ${#alive[@]} -eq 0 ] && return 0
    sleep 0.1
  done
  kill -KILL "${alive[@]}" 2>/dev/null || true
}

cmd_stop() {
  local name pid i steps
  local -a pids=()
  if ctld_pid >/dev/null; then
    scancel --quiet --full --user=root 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do  # up to 5 s for the jobs to end on the nodes that answer
      [ -z "$(squeue -h -t running,completing -o %A 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  for name in $(conf_nodes); do
    pid=$(slurmd_pid "$name") && pids+=("$pid")
  done
  pid=$(ctld_pid) && pids+=("$pid")
  stop_daemons "${pids[@]}"
  steps=$(step_pids | wc -l)
  kill_steps
  # munged last: slurmctld and slurmd use it until they exit.
  pid=$(munged_pid) && pids+=("$pid") && stop_daemons "$pid"
  if [ ${#pids[@]} -eq 0 ] && [ "$steps" -eq 0 ]; then
    echo "slurm-cluster.sh: no cluster was running in $dir"
  else
    echo "slurm-cluster.sh: stopped the cluster in $dir: ${#pids[@]} daemons, $steps job steps left after them (logs in $dir/log)"
  fi
}

cmd_status() {
  ctld_pid >/dev/null || { echo "slurm-cluster.sh: no cluster running in $dir"; exit 1; }
  sinfo -N -o '%N %P %t %f %c %m' || fail "slurmctld does not answer (log: $dir/log/slurmctld.log)"
  squeue
}

known_node() {
  conf_nodes | grep -qx -- "$node" ||
    usage_error "no node '$node' in $dir (nodes: $(conf_nodes | tr '\n' ' '))"
  ctld_pid >/dev/null || fail "no cluster running in $dir"
}

cmd_kill_node() {
  local pid
  known_node
  pid=$(slurmd_pid "$node") && kill -KILL "$pid"
  kill_steps "$node"
  echo "slurm-cluster.sh: killed $node (slurmd and its jobs); slurmctld sets it DOWN after SlurmdTimeout"
}

cmd_revive_node() {
  known_node
  start_slurmd "$node"
  # A node DOWN for not answering returns by itself (ReturnToService=1); one DOWN for another
  # reason (scontrol update state=down) is resumed.
  sleep 1
  if [[ "$(node_state "$node")" == down* || "$(node_state "$node")" == drain* ]]; then
    scontrol update NodeName="$node" State=RESUME 2>/dev/null || true
  fi
  wait_up "$node"
  echo "slurm-cluster.sh: $node is up ($(node_state "$node"))"
}

case "$command" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  kill-node) cmd_kill_node ;;
  revive-node) cmd_revive_node ;;
esac
