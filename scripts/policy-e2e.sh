#!/usr/bin/env bash
# `gpuops policy` on a real API server (docs/POLICY.md): against a running
# cluster (the e2e control plane, Kubernetes 1.30 or later), it applies the
# generated ValidatingAdmissionPolicy and its binding in Deny mode, then
#   - runs the GPU Operator's own write sequences with the policy on
#     (`gpuops run --backend real` over POLICY_SCENARIOS: the real operator's
#     install, opt-out, operands=false and back, deleted key, a new GPU node,
#     the driver manager's pause and the MIG manager's): each must pass, so
#     the policy refused none of the operator's or its helpers' writes;
#   - for every rule, a label write it must refuse (with `kubectl label` and
#     `--dry-run=server`, the refusal naming the rule) and the writes of the
#     same kind the operator and its helpers make, which it must let through;
#   - Warn mode: the refused write goes through with kubectl's "Warning:"
#     line carrying the policy's message; Audit mode: through, silently;
# and deletes what it created. Prints `PASS <check>` or `FAIL <check>: <why>`
# per check and last `N checks, K passed`; exits 1 when a check failed, 2 on
# bad usage or a cluster that already has nodes, 3 when the cluster fails.
#
#   scripts/policy-e2e.sh KUBECONFIG
#
# Environment: GPUOPS (default build/gpuops), KUBECTL (default
# $GPUOPS_CLUSTER_BIN/kubectl, else kubectl on PATH), POLICY_SCENARIOS
# (scenario files to run with the policy on; default the operator scenarios
# listed below; skipped when the cluster serves no clusterpolicies),
# POLICY_TIMEOUT (gpuops run --timeout, default 60s).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case ${1:-} in
  -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
  "") echo "usage: $0 KUBECONFIG" >&2; exit 2 ;;
esac
kc=$1
[ -r "$kc" ] || { echo "policy-e2e: cannot read kubeconfig $kc" >&2; exit 2; }
gpuops=${GPUOPS:-$repo/build/gpuops}
[ -x "$gpuops" ] || { echo "policy-e2e: $gpuops not found (build it or set GPUOPS)" >&2; exit 2; }
kubectl=${KUBECTL:-}
if [ -z "$kubectl" ]; then
  if [ -n "${GPUOPS_CLUSTER_BIN:-}" ] && [ -x "$GPUOPS_CLUSTER_BIN/kubectl" ]; then kubectl=$GPUOPS_CLUSTER_BIN/kubectl
  else kubectl=kubectl; fi
fi
k() { "$kubectl" --kubeconfig "$kc" "$@"; }

work=$(mktemp -d /tmp/gpuops-policy-e2e.XXXXXX)
checks=0 passed=0
pass() { checks=$((checks + 1)); passed=$((passed + 1)); echo "PASS $1"; }
fail() { checks=$((checks + 1)); echo "FAIL $1: $2"; }
cleanup() {
  k delete validatingadmissionpolicybinding gpuops-gpu-deploy-labels --ignore-not-found >/dev/null 2>&1
  k delete validatingadmissionpolicy gpuops-gpu-deploy-labels --ignore-not-found >/dev/null 2>&1
  k delete node policy-gpu policy-cpu --ignore-not-found --wait=true >/dev/null 2>&1
  # The API server drops the policy from its informer a moment later: the
  # next steps of the end-to-end run (the lab's step 7) must not meet it.
  # Waits (at most 30 s) until a write it refused goes through.
  local gone='{"apiVersion":"v1","kind":"Node","metadata":{"name":"policy-gone"}}'
  if echo "$gone" | k create -f - >/dev/null 2>&1; then
    for _ in $(seq 1 60); do
      k label node policy-gone --dry-run=server nvidia.com/gpu.deploy.dcgm-exporter=True >/dev/null 2>&1 && break
      sleep 0.5
    done
    k delete node policy-gone --wait=true >/dev/null 2>&1
  fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "$(k get nodes -o name 2>/dev/null)" ]; then
  echo "policy-e2e: the cluster has nodes; run on an empty one (it creates and deletes its own)" >&2
  exit 2
fi

apply_policy() { # ACTIONS
  "$gpuops" policy --validation-actions "$1" >"$work/policy.yaml" || return 1
  k apply -f "$work/policy.yaml" >/dev/null
}

# Writes are checked once the API server's policy informer has the binding:
# until then a write it should refuse goes through. Waits (at most 30 s) for
# a dry-run of a refused write to be refused.
wait_active() {
  for _ in $(seq 1 60); do
    if ! k label node policy-cpu --dry-run=server nvidia.com/gpu.deploy.dcgm-exporter=True >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.5
  done
  return 1
}

# A GPU node as the operator leaves it (NFD's PCI label, every deploy label
# "true") and a CPU node; created before the policy (a CREATE is never
# checked: the kubelet registering).
cat >"$work/nodes.yaml" <<'EOF'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: policy-gpu
    annotations: {kwok.x-k8s.io/node: fake}
    labels:
      type: kwok
      kubernetes.io/hostname: policy-gpu
      feature.node.kubernetes.io/pci-10de.present: "true"
      nvidia.com/gpu.present: "true"
      nvidia.com/gpu.deploy.driver: "true"
      nvidia.com/gpu.deploy.container-toolkit: "true"
      nvidia.com/gpu.deploy.device-plugin: "true"
      nvidia.com/gpu.deploy.gpu-feature-discovery: "true"
      nvidia.com/gpu.deploy.dcgm: "true"
      nvidia.com/gpu.deploy.dcgm-exporter: "true"
      nvidia.com/gpu.deploy.operator-validator: "true"
      nvidia.com/gpu.deploy.mig-manager: "true"
- apiVersion: v1
  kind: Node
  metadata:
    name: policy-cpu
    annotations: {kwok.x-k8s.io/node: fake}
    labels:
      type: kwok
      kubernetes.io/hostname: policy-cpu
EOF

# refused NAME NODE LABELS...: `kubectl label` (and its --dry-run=server)
# must fail with the policy's message for rule NAME.
refused() {
  local rule=$1 node=$2
  shift 2
  for dry in --dry-run=server ""; do
    # shellcheck disable=SC2086
    if k label node "$node" --overwrite $dry "$@" >"$work/out" 2>"$work/err"; then
      fail "refused $rule: $node $* ${dry}" "accepted"
      return
    fi
    if ! grep -q "denied request: .*(gpuops policy, rule $rule)" "$work/err"; then
      fail "refused $rule: $node $* ${dry}" "$(head -c 400 "$work/err")"
      return
    fi
  done
  pass "refused $rule: $node $*"
}

# allowed WHAT NODE LABELS...: the write goes through (what the operator or
# a helper writes).
allowed() {
  local what=$1 node=$2
  shift 2
  if k label node "$node" --overwrite "$@" >"$work/out" 2>"$work/err"; then
    pass "allowed $what: $node $*"
  else
    fail "allowed $what: $node $*" "$(head -c 400 "$work/err")"
  fi
}

k apply -f "$work/nodes.yaml" >/dev/null || { echo "policy-e2e: cannot create the probe nodes" >&2; exit 3; }
if ! apply_policy Deny; then
  echo "policy-e2e: cannot apply the policy" >&2
  exit 3
fi
if wait_active; then pass "the policy applies and is enforced"; else fail "the policy applies" "never enforced"; fi

# --- the rules: refused, and the operator's writes of the same kind let through
refused deploy-label-value policy-gpu nvidia.com/gpu.deploy.dcgm-exporter=True
refused deploy-label-value policy-gpu nvidia.com/gpu.deploy.device-plugin=yes
refused deploy-label-value policy-gpu nvidia.com/gpu.deploy.driver=enabled
refused workload-config-value policy-gpu nvidia.com/gpu.workload.config=vm
allowed "a workload the operator knows" policy-gpu nvidia.com/gpu.workload.config=vm-passthrough
allowed "back to containers" policy-gpu nvidia.com/gpu.workload.config=container
allowed "an opt-out" policy-gpu nvidia.com/gpu.deploy.dcgm-exporter=false
allowed "the opt-out undone" policy-gpu nvidia.com/gpu.deploy.dcgm-exporter=true
# LAB.md step 7: the device plugin forced on a node without the toolkit, and
# the toolkit lowered under a running device plugin.
refused needs-container-toolkit policy-cpu nvidia.com/gpu.deploy.device-plugin=true
refused needs-container-toolkit policy-gpu nvidia.com/gpu.deploy.container-toolkit=false
# k8s-driver-manager: pause (every client together, X_paused for a value it
# does not know), then restore (maybeSetPaused / maybeSetTrue).
allowed "the driver manager's pause" policy-gpu nvidia.com/gpu.deploy.container-toolkit=paused-for-driver-upgrade \
  nvidia.com/gpu.deploy.device-plugin=paused-for-driver-upgrade \
  nvidia.com/gpu.deploy.mig-manager=paused-for-mig-change_paused-for-driver-upgrade
allowed "the driver manager's restore" policy-gpu nvidia.com/gpu.deploy.container-toolkit=true \
  nvidia.com/gpu.deploy.device-plugin=true nvidia.com/gpu.deploy.mig-manager=true
# The MIG manager's and the vGPU device manager's pauses of the clients.
allowed "the MIG manager's pause" policy-gpu nvidia.com/gpu.deploy.device-plugin=paused-for-mig-change \
  nvidia.com/gpu.deploy.gpu-feature-discovery=paused-for-mig-change
allowed "the MIG manager's restore" policy-gpu nvidia.com/gpu.deploy.device-plugin=true \
  nvidia.com/gpu.deploy.gpu-feature-discovery=true
# operands=false: the operator removes every deploy label; removing the key
# makes it add them back, "true".
allowed "operands=false" policy-gpu nvidia.com/gpu.deploy.operands=false
allowed "the operator's removal" policy-gpu nvidia.com/gpu.deploy.driver- nvidia.com/gpu.deploy.container-toolkit- \
  nvidia.com/gpu.deploy.device-plugin- nvidia.com/gpu.deploy.gpu-feature-discovery- nvidia.com/gpu.deploy.dcgm- \
  nvidia.com/gpu.deploy.dcgm-exporter- nvidia.com/gpu.deploy.operator-validator- nvidia.com/gpu.deploy.mig-manager-
allowed "operands back" policy-gpu nvidia.com/gpu.deploy.operands-
allowed "the operator's labeller" policy-gpu nvidia.com/gpu.deploy.driver=true \
  nvidia.com/gpu.deploy.container-toolkit=true nvidia.com/gpu.deploy.device-plugin=true \
  nvidia.com/gpu.deploy.gpu-feature-discovery=true nvidia.com/gpu.deploy.dcgm=true \
  nvidia.com/gpu.deploy.dcgm-exporter=true nvidia.com/gpu.deploy.operator-validator=true
# A deleted toolkit key on a GPU node: the operator puts it back.
allowed "a deleted key" policy-gpu nvidia.com/gpu.deploy.container-toolkit-
allowed "the key put back" policy-gpu nvidia.com/gpu.deploy.container-toolkit=true
allowed "gpu.present off" policy-gpu nvidia.com/gpu.present=false
allowed "gpu.present on" policy-gpu nvidia.com/gpu.present=true
# The documented way out: the toolkit installed on the host.
allowed "the toolkit on the host" policy-gpu gpuops/on-host.container-toolkit=true \
  nvidia.com/gpu.deploy.container-toolkit=false

# --- Warn, then Audit
apply_policy Warn >/dev/null
sleep 2
if k label node policy-cpu --overwrite nvidia.com/gpu.deploy.gfd=True >"$work/out" 2>"$work/err" &&
  grep -q '^Warning: .*(gpuops policy, rule deploy-label-value)' "$work/err"; then
  pass "Warn: through, with kubectl's warning"
else
  fail "Warn: through, with kubectl's warning" "$(head -c 400 "$work/err")"
fi
apply_policy Audit >/dev/null
sleep 2
if k label node policy-cpu --overwrite nvidia.com/gpu.deploy.gfd=Yes >"$work/out" 2>"$work/err" && ! [ -s "$work/err" ]; then
  pass "Audit: through, silently"
else
  fail "Audit: through, silently" "$(head -c 400 "$work/err")"
fi

# --- the real operator's own sequences with the policy in Deny mode
k delete node policy-gpu policy-cpu --wait=true >/dev/null 2>&1
apply_policy Deny >/dev/null
if k get --raw /apis/nvidia.com/v1 >/dev/null 2>&1; then
  scenarios=${POLICY_SCENARIOS:-}
  if [ -z "$scenarios" ]; then
    for s in install-mixed-nodes optout-by-label operands-false-and-back deleted-key new-gpu-node \
      driver-upgrade-paused-and-stuck mig-reconfiguration; do
      scenarios="$scenarios $repo/scenarios/operator/$s.yaml"
    done
  fi
  # shellcheck disable=SC2086
  if "$gpuops" run --backend real --kubeconfig "$kc" --timeout "${POLICY_TIMEOUT:-60s}" $scenarios \
    >"$work/scenarios.out" 2>"$work/scenarios.err"; then
    pass "the GPU Operator's sequences with the policy on ($(tail -n1 "$work/scenarios.out"))"
  else
    fail "the GPU Operator's sequences with the policy on" \
      "$(grep -E 'FAIL|denied' "$work/scenarios.out" "$work/scenarios.err" | head -n 5)"
  fi
else
  echo "policy-e2e: the cluster serves no clusterpolicies: the operator's sequences are skipped" >&2
fi

echo "$checks checks, $passed passed"
[ "$passed" -eq "$checks" ]
