#!/usr/bin/env bash
# Does `gpuops plan` predict what a real cluster does? (docs/PLAN.md). Against a
# running cluster (the e2e control plane: upstream kube-apiserver,
# controller-manager and scheduler, KWOK as every node's kubelet), it sets
# up a lab-like state once (namespace gpu-operator, four KWOK nodes with the
# lab's deploy labels, the lab's five operand DaemonSets of manifests/), waits
# until it is settled, then N times:
#   - draws a change at random from SEED over the current state: a deploy
#     label set "true"/"false" or removed, cordon/uncordon, a NoExecute taint
#     added or removed, a NoSchedule taint (tolerated by the operands or not)
#     added or removed, kubernetes.io/arch changed (which the node lifecycle
#     controller copies to beta.kubernetes.io/arch), an operand DaemonSet
#     re-applied with another image or
#     with a toleration more (`apply -f`, a rolling update), and once a node
#     deleted and, a few changes later, re-added (`apply -f` of its Node);
#   - runs `gpuops plan --kubeconfig KC -o json <change>` (only reads);
#   - makes the same change with kubectl (same words);
#   - waits until the cluster is settled (the rules of real/api_cluster.cpp's
#     settle_pending, stricter: every node Ready and its cordon taint in
#     place, every pod Running and Ready on an existing node, on every node
#     that should run a DaemonSet's pod one pod of its current template, none
#     where it should not continue running, every status.observedGeneration
#     current, and nothing changing for PLAN_PREDICT_QUIET seconds);
#   - compares what the cluster shows with what plan predicted: the pods by
#     (DaemonSet, node) (kept ones with the same name, created and replaced
#     ones new), every label of every node, the node set, the matrix after
#     (`gpuops matrix --kubeconfig`), plan's exit code (1 iff something
#     changed), and that plan's view before the change (its matrix before,
#     the labels' old values) is the cluster's.
#
# With --operator, on a cluster where the real GPU Operator runs beside it
# (scripts/cluster-up.sh --gpu-operator), the state is the operator's
# instead: three GPU nodes and a CPU node with NFD's labels, a ClusterPolicy
# at its defaults (the CRD's required fields as {}), and the DaemonSets and
# node labels the operator makes of them. The changes drawn: the operator's
# deploy labels set, lowered or removed on any node, operands=false and
# back, gpu.present or a deploy label by hand on the CPU node, cordon,
# uncordon and `drain --ignore-daemonsets`, NoSchedule taints, a ClusterPolicy
# patch (a component disabled or enabled, the toolkit's env,
# spec.daemonsets.tolerations, the device plugin's image whole or by version
# alone), a fourth GPU node, and two- and three-step `--steps` plans whose kubectl
# commands run with the cluster settled in between; a quarter of them planned
# from `kubectl get nodes,daemonsets,pods -A -o json` (no ClusterPolicy: plan
# infers it) instead of --kubeconfig. Settled also means every NFD GPU node
# labelled, the ClusterPolicy reconciled, and either ready or not ready for
# PLAN_PREDICT_POLICY_QUIET seconds without change (default 8: a state can
# stay not ready for good, an OnDelete driver whose template changed).
# Compared also: the DaemonSets created, deleted and changed (spec
# generation), the ClusterPolicy's status.state (not when planned from a
# dump, whose inferred policy has no status), and that a settled cluster
# shows plan no drift.
#
# Prints `PASS i <change>` or `FAIL i <change>: <differences>` per change and
# last `N predictions, K exact`; exits 1 when a prediction differs, 2 on bad
# usage or a cluster that is not empty, 3 when the cluster fails (set-up,
# settling, clean-up). Deletes what it created (namespace, nodes) at the end.
#
#   scripts/plan-predict.sh [--operator] KUBECONFIG [SEED] [N]   (SEED default 21, N default 30)
#
# The cluster must have no nodes, no namespace gpu-operator and (--operator) no
# ClusterPolicy (it creates and deletes its own; as the scenario runner, it
# refuses to touch others').
# Environment: GPUOPS (default build/gpuops), KUBECTL (default
# $GPUOPS_CLUSTER_BIN/kubectl, else kubectl on PATH), PLAN_PREDICT_DIR (work
# directory: plans, states, kubectl output; default a new one under /tmp,
# deleted when every prediction was exact), PLAN_PREDICT_QUIET (seconds
# without change that count as settled, default 2), PLAN_PREDICT_TIMEOUT
# (seconds to settle, default 150: pods on a deleted node wait for pod GC's
# 40 s quarantine). Needs python3 (standard library only).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=lab
if [ "${1:-}" = --operator ]; then mode=operator; shift; fi
case ${1:-} in
  -h|--help) sed -n '2,66p' "$0"; exit 0 ;;
  "") echo "usage: $0 [--operator] KUBECONFIG [SEED] [N]" >&2; exit 2 ;;
esac
kc=$1 seed=${2:-21} n=${3:-30}
[ -r "$kc" ] || { echo "plan-predict: cannot read kubeconfig $kc" >&2; exit 2; }
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || { echo "plan-predict: N must be a positive integer, not $n" >&2; exit 2; }
gpuops=${GPUOPS:-$repo/build/gpuops}
[ -x "$gpuops" ] || { echo "plan-predict: $gpuops not found (build it or set GPUOPS)" >&2; exit 2; }
kubectl=${KUBECTL:-}
if [ -z "$kubectl" ]; then
  if [ -n "${GPUOPS_CLUSTER_BIN:-}" ] && [ -x "$GPUOPS_CLUSTER_BIN/kubectl" ]; then kubectl=$GPUOPS_CLUSTER_BIN/kubectl
  else kubectl=$(command -v kubectl) || { echo "plan-predict: no kubectl (set KUBECTL)" >&2; exit 2; }
  fi
fi
command -v python3 >/dev/null || { echo "plan-predict: python3 not found" >&2; exit 2; }
ns=gpu-operator
work=${PLAN_PREDICT_DIR:-$(mktemp -d /tmp/gpuops-plan-predict.XXXXXX)}
mkdir -p "$work"
helper=$repo/scripts/plan-predict.py
export PP_KC=$kc PP_KUBECTL=$kubectl PP_GPUOPS=$gpuops PP_NS=$ns PP_REPO=$repo PP_WORK=$work PP_MODE=$mode
export PP_QUIET=${PLAN_PREDICT_QUIET:-2} PP_TIMEOUT=${PLAN_PREDICT_TIMEOUT:-150}
export PP_POLICY_QUIET=${PLAN_PREDICT_POLICY_QUIET:-8}


k() { "$kubectl" --kubeconfig "$kc" "$@"; }
py() { python3 "$helper" "$@"; }
say() { echo "plan-predict: $*" >&2; }
t_all=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# An empty cluster only: the state is this script's, and so is the clean-up.
if ! existing=$(k get nodes -o name 2>"$work/refuse.err"); then
  say "cannot read the cluster: $(cat "$work/refuse.err")"; exit 3
fi
if [ -n "$existing" ]; then
  say "the cluster already has nodes ($(echo $existing | tr '\n' ' ')): run it on an empty cluster (it creates and deletes its own)"; exit 2
fi
if k get namespace "$ns" >/dev/null 2>&1; then
  say "namespace $ns exists already: run it on an empty cluster (it creates and deletes its own)"; exit 2
fi
if [ "$mode" = operator ]; then
  if ! k get crd clusterpolicies.nvidia.com >/dev/null 2>&1; then
    say "--operator needs the GPU Operator running beside the cluster (scripts/cluster-up.sh --gpu-operator): no clusterpolicies.nvidia.com"; exit 2
  fi
  if [ -n "$(k get clusterpolicies -o name 2>/dev/null)" ]; then
    say "a ClusterPolicy exists already: run it on an empty cluster (it creates and deletes its own)"; exit 2
  fi
fi

created_nodes=""
created_policy=0
clean_up() {
  local rc=$? ok=1
  # The ClusterPolicy first: its DaemonSets go with it (ownerReferences), before the namespace.
  if [ "$created_policy" = 1 ]; then
    k delete clusterpolicy cluster-policy --ignore-not-found --wait=true --timeout=120s >"$work/cleanup.out" 2>&1 || ok=0
  fi
  k delete namespace "$ns" --ignore-not-found --wait=true --timeout=120s >>"$work/cleanup.out" 2>&1 || ok=0
  if [ -n "$created_nodes" ]; then
    # shellcheck disable=SC2086
    k delete node $created_nodes --ignore-not-found --wait=true --timeout=60s >>"$work/cleanup.out" 2>&1 || ok=0
  fi
  if [ "$ok" = 1 ] && [ -z "$(k get nodes -o name 2>/dev/null)" ] && ! k get namespace "$ns" >/dev/null 2>&1; then
    say "cleaned up (namespace $ns and nodes $created_nodes deleted)"
  else
    say "clean-up failed: $(cat "$work/cleanup.out")"
    [ "$rc" -ne 0 ] || rc=3
  fi
  if [ "$rc" -eq 0 ] && [ -z "${PLAN_PREDICT_DIR:-}" ]; then rm -rf "$work"; else say "work directory kept: $work"; fi
  exit "$rc"
}
trap clean_up EXIT
trap 'exit 130' INT TERM

# --- the state, once -------------------------------------------------------
# The lab's matrix columns by operand (plan's JSON names operands; an operator
# catalog's matrix prints the operands' names).
if [ "$mode" = operator ]; then
  echo '{"operands": []}' >"$work/roster.json"
else
  "$gpuops" roster -o json >"$work/roster.json" || { say "gpuops roster failed"; exit 3; }
fi
if ! created_nodes=$(py setup); then say "set-up files: failed"; exit 3; fi
if ! k create namespace "$ns" >"$work/setup.out" 2>&1 || ! k apply -f "$work/nodes.json" >>"$work/setup.out" 2>&1; then
  say "set-up failed: $(cat "$work/setup.out")"; exit 3
fi
if [ "$mode" = operator ]; then
  created_policy=1
  k apply -f "$work/policy.json" >>"$work/setup.out" 2>&1 || { say "set-up failed: $(cat "$work/setup.out")"; exit 3; }
  what="the GPU Operator's ClusterPolicy"
else
  k apply -f "$work/ds" >>"$work/setup.out" 2>&1 || { say "set-up failed: $(cat "$work/setup.out")"; exit 3; }
  what="5 DaemonSets"
fi
if ! s=$(py settle); then say "the set-up $s"; exit 3; fi
py capture "$work/state-0.json" || exit 3
say "set up ($mode): namespace $ns, nodes $created_nodes, $what, settled in ${s}s; seed $seed, $n changes"

# --- the changes -------------------------------------------------------------
exact=0 done_=0
for i in $(seq 1 "$n"); do
  py draw "$i" "$n" "$seed" "$work/state-$((i - 1)).json" "$work/change-$i.json" || exit 3
  shown=$(py shown "$work/change-$i.json")
  py plan "$work/change-$i.json" "$work/plan-$i.json" "$work/plan-$i.err"
  prc=$?
  py act "$work/change-$i.json" "$work/kubectl-$i.out"
  arc=$?
  if [ "$arc" -ne 0 ]; then
    echo "FAIL $i $shown: $([ "$arc" = 1 ] && echo "kubectl refused the change" || echo "the cluster did not settle between its steps"): $(tr '\n' ' ' <"$work/kubectl-$i.out")"
    done_=$((done_ + 1)); break
  fi
  if ! s=$(py settle); then
    echo "FAIL $i $shown: the cluster $s"
    done_=$((done_ + 1)); break
  fi
  echo "$i $s" >>"$work/settle-times"
  py capture "$work/state-$i.json" || exit 3
  done_=$((done_ + 1))
  if d=$(py compare "$work/state-$((i - 1)).json" "$work/plan-$i.json" "$prc" "$work/state-$i.json" \
        "$work/roster.json" "$work/change-$i.json"); then
    exact=$((exact + 1))
    echo "PASS $i $shown"
  else
    [ "$prc" -le 1 ] || d="$d: $(head -c 300 "$work/plan-$i.err")"
    echo "FAIL $i $shown: $d"
  fi
done
slowest=$(sort -k2 -n -r "$work/settle-times" 2>/dev/null | head -n1 | awk '{ printf "%ss after change %s", $2, $1 }')
say "seed $seed: $done_ of $n changes made, $exact predictions exact, $(since "$t_all")s wall (longest settling: ${slowest:-none})"
echo "$done_ predictions, $exact exact"
if [ "$done_" -ne "$n" ]; then exit 3; fi
[ "$exact" -eq "$n" ] || exit 1
exit 0
