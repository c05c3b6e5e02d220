#!/usr/bin/env bash
# operand-audit.sh: LAB.md step 6, the lab's reference solution.
#
# For every node of the cluster, and every operand whose deploy label is
# "true" on that node, check that the operand's DaemonSet has a Running pod on
# that node: a pod controlled by that DaemonSet (ownerReference, not just the
# app label), bound to the node, in phase Running, not being deleted.
# Prints `<node> MISSING <operand>` per gap, or `<node> OK`; exit 1 if anything
# is missing, else 0. No node names in here: the nodes come from the API.
# Needs bash, kubectl and jq; honours KUBECONFIG. NAMESPACE overrides
# gpu-operator.
set -euo pipefail

NS="${NAMESPACE:-gpu-operator}"
# operand, deploy label, DaemonSet (LAB.md "The five operands"), roster order
OPERANDS='driver nvidia.com/gpu.deploy.driver nvidia-driver-daemonset
container-toolkit nvidia.com/gpu.deploy.container-toolkit nvidia-container-toolkit-daemonset
device-plugin nvidia.com/gpu.deploy.device-plugin nvidia-device-plugin-daemonset
gpu-feature-discovery nvidia.com/gpu.deploy.gpu-feature-discovery gpu-feature-discovery
dcgm-exporter nvidia.com/gpu.deploy.dcgm-exporter nvidia-dcgm-exporter'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kubectl get nodes -o json >"$tmp/nodes.json" || exit 3
kubectl get daemonsets -n "$NS" -o json >"$tmp/ds.json" || exit 3
kubectl get pods -n "$NS" -o json >"$tmp/pods.json" || exit 3

out=$(jq -rn --arg ops "$OPERANDS" \
  --slurpfile nodes "$tmp/nodes.json" --slurpfile ds "$tmp/ds.json" --slurpfile pods "$tmp/pods.json" '
  [$ops | split("\n")[] | select(length > 0) | split(" ") | {name: .[0], label: .[1], ds: .[2]}] as $operands
  | ($ds[0].items | map({key: .metadata.name, value: .metadata.uid}) | from_entries) as $uids
  | [$pods[0].items[]
      | select(.metadata.deletionTimestamp == null and .status.phase == "Running" and (.spec.nodeName // "") != "")
      | ((.metadata.ownerReferences // []) | map(select(.controller == true and .kind == "DaemonSet")) | .[0]) as $ref
      | select($ref != null and ($uids[$ref.name] == null or $uids[$ref.name] == $ref.uid))
      | "\($ref.name)/\(.spec.nodeName)"] as $present
  | $nodes[0].items | sort_by(.metadata.name)[]
  | .metadata.name as $n | (.metadata.labels // {}) as $l
  | [$operands[] | select($l[.label] == "true") | select(("\(.ds)/\($n)" | IN($present[])) | not)
      | "\($n) MISSING \(.name)"] as $missing
  | if ($missing | length) == 0 then "\($n) OK" else $missing[] end')

[ -n "$out" ] && printf '%s\n' "$out"
if grep -q ' MISSING ' <<<"$out"; then exit 1; fi
exit 0
