#!/usr/bin/env bash
# Smoke test of the real control plane (scripts/cluster-up.sh): the lab's steps
# 1 and 2 (docs/LAB.md) against upstream Kubernetes + KWOK, then one
# label lowered (step 5's mechanism). Exits non-zero on any mismatch.
#
#   tests/cluster/smoke.sh [DIR]     (DIR default: a new temporary directory)
#
# Expected values, worked out from the lab's labels and the DaemonSet
# controller's rule (a node runs a daemon pod iff the pod's nodeSelector
# matches the node's labels; mirrors NodeShouldRunDaemonPod, pkg/controller/
# daemon): lab-node-0 and lab-node-1 carry
# nvidia.com/gpu.deploy.container-toolkit=true, lab-node-2 carries no deploy
# label, so desiredNumberScheduled=2 with one Running, Ready pod on each of
# lab-node-0 and lab-node-1. After lab-node-1's label becomes "false":
# desiredNumberScheduled=1, the only pod on lab-node-0.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=${1:-$(mktemp -d /tmp/gpuops-cluster.XXXXXX)}
passed=0 failed=0

trap '"$repo/scripts/cluster-down.sh" "$dir" || true' EXIT
"$repo/scripts/cluster-up.sh" "$dir"
# shellcheck disable=SC1091
. "$dir/env"
k() { "$GPUOPS_CLUSTER_BIN/kubectl" --kubeconfig "$KUBECONFIG" "$@"; }

check() { # NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then
    echo "smoke: ok   $1 = '$3'"
    passed=$((passed + 1))
  else
    echo "smoke: FAIL $1: expected '$2', got '$3'"
    failed=$((failed + 1))
  fi
}
# settle EXPECTED SECONDS CMD...: re-reads CMD until it prints EXPECTED (the
# controllers need a few seconds), then prints the last value read.
settle() {
  local want=$1 secs=$2 got=""; shift 2
  local end=$(( $(date +%s) + secs ))
  while :; do
    got=$("$@" 2>/dev/null || true)
    [ "$got" = "$want" ] && break
    [ "$(date +%s)" -ge "$end" ] && break
    sleep 1
  done
  echo "$got"
}
ds=nvidia-container-toolkit-daemonset
desired() { k -n gpu-operator get daemonset "$ds" -o jsonpath='{.status.desiredNumberScheduled}'; }
ready() { k -n gpu-operator get daemonset "$ds" -o jsonpath='{.status.numberReady}'; }
running_nodes() { # node names of the DaemonSet's Running pods, sorted, space-separated
  k -n gpu-operator get pods -l app=$ds --field-selector status.phase=Running \
    -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | xargs
}
all_pods_nodes() { # every pod of the DaemonSet, whatever its phase
  k -n gpu-operator get pods -l app=$ds -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | xargs
}

# Step 1: namespace and the three labelled nodes, through the API.
k create namespace gpu-operator
k create -f "$here/testdata/lab-nodes.yaml"
k wait --for=condition=Ready node --all --timeout=60s
check "node count" 3 "$(k get nodes -o name | wc -l)"
check "ready nodes" "lab-node-0 lab-node-1 lab-node-2" \
  "$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | awk '$2=="True"{print $1}' | sort | xargs)"

# Step 2: the toolkit DaemonSet lands on the two labelled nodes.
k apply -f "$here/testdata/toolkit-ds.yaml"
check "step 2 desiredNumberScheduled" 2 "$(settle 2 60 desired)"
check "step 2 Running pods on" "lab-node-0 lab-node-1" "$(settle "lab-node-0 lab-node-1" 60 running_nodes)"
check "step 2 numberReady" 2 "$(settle 2 60 ready)"
check "step 2 pods (any phase) on" "lab-node-0 lab-node-1" "$(all_pods_nodes)"

# Lower the label on lab-node-1: the DaemonSet controller deletes its pod and
# KWOK's pod-delete stage completes the deletion.
k label node lab-node-1 --overwrite nvidia.com/gpu.deploy.container-toolkit=false
check "label lowered desiredNumberScheduled" 1 "$(settle 1 60 desired)"
check "label lowered pods (any phase) on" "lab-node-0" "$(settle lab-node-0 60 all_pods_nodes)"
check "label lowered Running pods on" "lab-node-0" "$(running_nodes)"

echo "smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
