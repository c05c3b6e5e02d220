#!/usr/bin/env bash
# order-check.sh NODE: LAB.md step 7, the lab's reference solution.
#
# If the node's device-plugin pod is Running but the node has no Running
# container-toolkit pod, print device-plugin-without-toolkit and exit 1;
# otherwise print ok and exit 0. "Running" as in operand-audit.sh: controlled
# by the operand's DaemonSet, bound to the node, phase Running, not being
# deleted. Exit 2 without a node, 3 when the node does not exist.
# Needs bash, kubectl and jq; honours KUBECONFIG. NAMESPACE overrides
# gpu-operator.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 NODE" >&2
  exit 2
fi
node=$1
NS="${NAMESPACE:-gpu-operator}"

kubectl get node "$node" -o name >/dev/null || exit 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kubectl get daemonsets -n "$NS" -o json >"$tmp/ds.json" || exit 3
kubectl get pods -n "$NS" -o json >"$tmp/pods.json" || exit 3

# Prints "true" when DaemonSet $1 has a Running pod on the node.
running() {
  jq -rn --arg ds "$1" --arg node "$node" --slurpfile dss "$tmp/ds.json" --slurpfile pods "$tmp/pods.json" '
    ($dss[0].items | map(select(.metadata.name == $ds)) | .[0].metadata.uid) as $uid
    | [$pods[0].items[]
        | select(.metadata.deletionTimestamp == null and .status.phase == "Running" and .spec.nodeName == $node)
        | ((.metadata.ownerReferences // []) | map(select(.controller == true and .kind == "DaemonSet")) | .[0]) as $ref
        | select($ref != null and $ref.name == $ds and ($uid == null or $ref.uid == $uid))]
    | length > 0'
}

plugin=$(running nvidia-device-plugin-daemonset)
toolkit=$(running nvidia-container-toolkit-daemonset)
if [ "$plugin" = true ] && [ "$toolkit" != true ]; then
  echo device-plugin-without-toolkit
  exit 1
fi
echo ok
