#!/usr/bin/env bash
# scripts/replicate-snapshot.sh: a large snapshot made of copies of a small one,
# to time the snapshot commands (diagnose, audit, matrix) at scale.
#
#   scripts/replicate-snapshot.sh SNAPSHOT COPIES > BIG.json
#   scripts/replicate-snapshot.sh tests/data/cases/lab-final-state/cluster.json 400 > /tmp/lab-1200.json
#
# SNAPSHOT is a kubectl List (`kubectl get nodes,daemonsets,pods -A -o json`).
# Every Node and Pod is copied COPIES times; copy c renames node N to N-r<c> and
# pod P to P-r<c>, and points the copied pod at the renamed node (spec.nodeName,
# the metadata.name matchFields of its required node affinity, the node's
# kubernetes.io/hostname label); uids get the same suffix. Other objects
# (DaemonSets, Namespaces) are kept once, so every copied pod stays controlled
# by the same DaemonSet. The lab's final state (3 nodes, 9 pods) x 400 gives
# 1,200 nodes and 3,600 pods. Needs jq.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 SNAPSHOT COPIES" >&2; exit 2; }
command -v jq >/dev/null || { echo "replicate-snapshot.sh: needs jq" >&2; exit 2; }

jq -c --argjson n "$2" '
  def rn($c): if . == null or . == "" then . else "\(.)-r\($c)" end;
  def copy($c):
    .metadata.name |= rn($c)
    | if .metadata.uid then .metadata.uid |= rn($c) else . end
    | if .kind == "Node" then
        if .metadata.labels["kubernetes.io/hostname"] then .metadata.labels["kubernetes.io/hostname"] |= rn($c)
        else . end
      else
        (if .spec.nodeName then .spec.nodeName |= rn($c) else . end)
        | (.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[]?
             .matchFields[]? | select(.key == "metadata.name") | .values) |= map(rn($c))
      end;
  .items as $items
  | .items = [$items[] | select(.kind != "Node" and .kind != "Pod")]
           + [range(0; $n) as $c | $items[] | select(.kind == "Node" or .kind == "Pod") | copy($c)]
' "$1"
