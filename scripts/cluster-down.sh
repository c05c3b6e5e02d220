#!/usr/bin/env bash
# Stops the control plane that scripts/cluster-up.sh DIR started: exactly the
# processes whose PIDs it recorded in DIR/pids/*.pid, and only while each PID
# still runs the binary of that name (a recycled PID is left alone). SIGTERM
# first, in reverse start order, SIGKILL after 10 s. DIR itself is kept (logs,
# data); delete it yourself when done. The GPU Operator (cluster-up.sh
# --gpu-operator) is stopped first.
#
#   scripts/cluster-down.sh DIR
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
[ -d "$dir/pids" ] || { echo "cluster-down: no $dir/pids: nothing to stop" >&2; exit 0; }

ours() { # NAME PID: PID is alive and runs the binary NAME
  local exe
  exe=$(readlink "/proc/$2/exe" 2>/dev/null) || return 1
  [ "$(basename "${exe% (deleted)}")" = "$1" ]
}

stopped=()
for name in gpu-operator kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
  f="$dir/pids/$name.pid"
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  if ours "$name" "$pid"; then
    echo "cluster-down: stopping $name (pid $pid)" >&2
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do ours "$name" "$pid" || break; sleep 0.1; done
    if ours "$name" "$pid"; then
      echo "cluster-down: $name (pid $pid) ignored SIGTERM; SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
    stopped+=("$name")
  fi
  rm -f "$f"
done
echo "cluster-down: stopped ${stopped[*]:-nothing}" >&2
