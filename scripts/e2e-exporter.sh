#!/usr/bin/env bash
# deploy/ and the exporter on a real control plane (called by scripts/e2e-real.sh; runnable
# alone against any cluster you may write CRDs to):
#   1. tests/crds/monitoring.coreos.com.yaml (ServiceMonitor, PrometheusRule)
#      applied and Established, then every manifest of deploy/ (but the krew
#      manifest), and deploy/fleet/prometheusrule-fleet.yaml, through the API
#      server's validation and admission with `kubectl apply --dry-run=server`
#      (nothing stored);
#  1b. `gpuops lint deploy/` passes, and on every tests/data/lint case gpuops
#      lint and the API server refuse it with the same message;
#   2. `gpuops exporter` against the cluster: /readyz 200, and
#      gpuops_audit_nodes equal to the cluster's node count;
#   3. `kubectl gpuops audit` (kubectl finding kubectl-gpuops on PATH) prints
#      what `gpuops audit` prints, with the same exit code;
#   4. a real Prometheus (/usr/bin/prometheus, scripts/setup.sh) scraping a
#      second exporter with deploy/prometheusrule.yaml's rules: on a node of
#      its own, the toolkit label lowered under a running device plugin
#      makes GpuopsDevicePluginWithoutToolkit active for that node alone,
#      and the repair clears it;
#   5. a fleet, on two `gpuops serve` simulators, no real cluster needed
#      (alone: --fleet): promtool checks deploy/fleet/ and runs
#      tests/data/fleet/rules-test.yml; two exporters (--cluster a, b), a
#      Prometheus each, a global one federating both: its series and the
#      fleet alerts are what the two states imply (about 15 s).
# Starts and stops its own exporters, Prometheus, node and namespace. Prints one PASS/FAIL line per step; exits
# 1 when any failed.
# Usage: scripts/e2e-exporter.sh GPUOPS KUBECONFIG
#        scripts/e2e-exporter.sh --fleet GPUOPS     (step 5 alone)
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fleet_only=0
if [ "${1:-}" = --fleet ]; then
  fleet_only=1 gpuops=$2 kc=
else
  gpuops=$1 kc=$2
fi
work=$(mktemp -d /tmp/gpuops-e2e-exporter.XXXXXX)
exporter_pid=
failed=0
cleanup() {
  declare -F prom_cleanup >/dev/null && prom_cleanup
  declare -F fleet_cleanup >/dev/null && fleet_cleanup
  [ -n "$exporter_pid" ] && kill "$exporter_pid" 2>/dev/null && wait "$exporter_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# 5. A fleet (docs/EXPORTER.md, "A fleet"), no real cluster needed: two
# clusters, each a `gpuops serve --lab` with its own state, each watched by
# an exporter started with --cluster a / --cluster b and scraped by a
# Prometheus of its own (deploy/fleet/prometheus-cluster.yml), and a global
# Prometheus federating both (deploy/fleet/prometheus-federate.yml, with the
# fleet rules of deploy/fleet/rules.yml); intervals 1 s instead of 30 s.
# The global Prometheus' HTTP API must answer what the two states imply;
# then cluster b's exporter stops and GpuopsFleetClusterMissing becomes
# active for b alone. Before that, promtool checks the files of
# deploy/fleet/ and runs tests/data/fleet/rules-test.yml.
#
# The two states. Each lab node's deploy labels set to "true", by operand
# name; the same DaemonSets of manifests/ applied in both (not gfd, not dcgm).
fleet_manifests="driver-ds toolkit-ds device-plugin-ds"
declare -A fleet_asks=(
  [a/lab-node-0]="driver container-toolkit device-plugin"
  [b/lab-node-0]="driver device-plugin"
  [b/lab-node-1]="gpu-feature-discovery"
)
fleet_pids=()
declare -A fleet_eport fleet_nodes fleet_exporter_pid
fleet_taken=
fleet_cleanup() {
  local p
  for p in "${fleet_pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  fleet_pids=()
}
# What a state implies, by the lab's rules: with KWOK's fast kubelet an
# applied DaemonSet has a Running, Ready pod on every node that asks for its
# operand (the label's nodeSelector), at once. A node has a gap when it asks
# for an operand whose DaemonSet (data/operands/lab.yaml's manifest) is not
# applied; the device plugin runs without the toolkit where it runs and the
# toolkit does not (the catalog's needs).
fleet_runs() { # CLUSTER/NODE OPERAND: true when the operand's pod runs there
  local m
  [[ " ${fleet_asks[$1]:-} " == *" $2 "* ]] || return 1
  m=$(awk -v op="$2" '/^  - name: /{n=$3} /^    manifest: /{if (n == op) print $2}' "$repo/data/operands/lab.yaml")
  [[ " $fleet_manifests " == *" ${m%.yaml} "* ]]
}
fleet_expect_gaps() { # CLUSTER: the number of its nodes with a gap
  local key op n=0 gap
  for key in "${!fleet_asks[@]}"; do
    [ "${key%%/*}" = "$1" ] || continue
    gap=0
    for op in ${fleet_asks[$key]}; do fleet_runs "$key" "$op" || gap=1; done
    n=$((n + gap))
  done
  echo "$n"
}
fleet_expect_without_toolkit() { # "CLUSTER NODE" lines, sorted
  local key
  for key in "${!fleet_asks[@]}"; do
    fleet_runs "$key" device-plugin && ! fleet_runs "$key" container-toolkit && echo "${key%%/*} ${key#*/}"
  done | sort
}
fleet_wait() { # SECONDS CMD...: true once CMD is
  local end=$(($(date +%s) + $1))
  shift
  until "$@"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.3; done
}
fleet_port() { # VAR: a free loopback port into VAR, not one taken before
  local p base=$((20000 + RANDOM % 20000))
  for p in $(seq "$base" $((base + 100))); do
    [[ " $fleet_taken " == *" $p "* ]] && continue
    ss -ltnH "sport = :$p" | grep -q . && continue
    fleet_taken+=" $p"
    printf -v "$1" %s "$p"
    return 0
  done
  return 1
}
fleet_cluster() { # NAME: its served simulator, state and exporter
  local c=$1 kc=$work/fleet-$1/kubeconfig key op labels eport=
  mkdir -p "$work/fleet-$c"
  "$gpuops" serve --lab --kubeconfig-out "$kc" >"$work/fleet-$c/serve.out" 2>"$work/fleet-$c/serve.err" &
  fleet_pids+=($!)
  fleet_wait 20 grep -qs "serving on" "$work/fleet-$c/serve.out" ||
    { cat "$work/fleet-$c/serve.err" >&2; return 1; }
  local k=(kubectl --kubeconfig "$kc")
  "${k[@]}" apply -f "$repo/manifests/namespace.yaml" >/dev/null || return 1
  for m in $fleet_manifests; do "${k[@]}" apply -f "$repo/manifests/$m.yaml" >/dev/null || return 1; done
  for key in "${!fleet_asks[@]}"; do
    [ "${key%%/*}" = "$c" ] || continue
    labels=()
    for op in ${fleet_asks[$key]}; do labels+=("nvidia.com/gpu.deploy.$op=true"); done
    "${k[@]}" label node "${key#*/}" "${labels[@]}" >/dev/null || return 1
  done
  "$gpuops" exporter --kubeconfig "$kc" --cluster "$c" --listen 127.0.0.1:0 --min-interval 100 \
    >"$work/fleet-$c/exporter.out" 2>"$work/fleet-$c/exporter.err" &
  fleet_pids+=($!)
  fleet_exporter_pid[$c]=$!
  exporter_port() {
    eport=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/fleet-$c/exporter.err" 2>/dev/null)
    [ -n "$eport" ]
  }
  fleet_wait 20 exporter_port || { cat "$work/fleet-$c/exporter.err" >&2; return 1; }
  ready() { [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$eport/readyz")" = 200 ]; }
  fleet_wait 30 ready || { cat "$work/fleet-$c/exporter.err" >&2; return 1; }
  fleet_eport[$c]=$eport
  fleet_nodes[$c]=$("${k[@]}" get nodes -o name | wc -l)
}
fleet_prometheus() { # NAME CONFIG PORT [FLAG...]: a Prometheus
  local name=$1 config=$2 port=$3
  shift 3
  /usr/bin/prometheus --config.file="$config" --storage.tsdb.path="$work/fleet-$name/tsdb" \
    --web.listen-address="127.0.0.1:$port" "$@" >"$work/fleet-$name/prometheus.out" 2>&1 &
  fleet_pids+=($!)
}
fleet_step() {
  local pa pb pg api want
  local tool=/usr/bin/promtool
  [ -x "$tool" ] || { echo "no $tool (scripts/setup.sh installs Debian's prometheus)" >&2; return 1; }
  "$tool" check rules "$repo/deploy/fleet/rules.yml" >"$work/promtool.out" 2>&1 &&
    "$tool" check config "$repo/deploy/fleet/prometheus-federate.yml" >>"$work/promtool.out" 2>&1 &&
    "$tool" check config "$repo/deploy/fleet/prometheus-cluster.yml" >>"$work/promtool.out" 2>&1 &&
    "$tool" test rules "$repo/tests/data/fleet/rules-test.yml" >>"$work/promtool.out" 2>&1 &&
    "$gpuops" lint "$repo/deploy/fleet/prometheusrule-fleet.yaml" >>"$work/promtool.out" 2>&1 ||
    { cat "$work/promtool.out" >&2; return 1; }
  fleet_cluster a && fleet_cluster b || return 1
  fleet_port pa && fleet_port pb && fleet_port pg || return 1
  local c
  for c in a b; do
    sed -e 's/: 30s$/: 1s/' -e "s|gpuops-exporter.gpu-operator.svc:9402|127.0.0.1:${fleet_eport[$c]}|" \
      "$repo/deploy/fleet/prometheus-cluster.yml" >"$work/fleet-$c/prometheus.yml"
    grep -q "127.0.0.1:${fleet_eport[$c]}" "$work/fleet-$c/prometheus.yml" || return 1
  done
  mkdir -p "$work/fleet-global"
  cp "$repo/deploy/fleet/rules.yml" "$work/fleet-global/rules.yml"
  sed -e 's/: 30s$/: 1s/' -e "s|prometheus.gpu-eu-1.example:9090|127.0.0.1:$pa|" \
    -e "s|prometheus.gpu-us-1.example:9090|127.0.0.1:$pb|" \
    "$repo/deploy/fleet/prometheus-federate.yml" >"$work/fleet-global/prometheus.yml"
  [ "$(grep -c '127.0.0.1:' "$work/fleet-global/prometheus.yml")" = 2 ] || return 1
  fleet_prometheus a "$work/fleet-a/prometheus.yml" "$pa"
  fleet_prometheus b "$work/fleet-b/prometheus.yml" "$pb"
  # Federated samples carry the timestamps of the cluster's Prometheus, and
  # Prometheus marks no such sample stale when it stops coming: a gone
  # cluster's series stay visible for the lookback delta, 5 minutes by
  # default. 5 s here, so that b's exporter stopping shows in seconds.
  fleet_prometheus global "$work/fleet-global/prometheus.yml" "$pg" --query.lookback-delta=5s
  api="http://127.0.0.1:$pg/api/v1"
  # query PROMQL JQ: the instant query's result through jq, sorted lines.
  query() {
    curl -s -m 5 -G "$api/query" --data-urlencode "query=$1" | jq -r ".data.result[] | $2" 2>/dev/null | sort
  }
  alerts() {
    curl -s -m 5 "$api/alerts" | jq -r '.data.alerts[] | "\(.labels.alertname) \(.labels.cluster)"' 2>/dev/null |
      sort
  }
  rules_ok() { [ "$(curl -s -m 5 "$api/rules" | jq '[.data.groups[].rules[] | select(.health == "ok")] | length')" = 5 ]; }
  # Both clusters federated: each exporter's every series is in the global
  # Prometheus with its cluster label.
  local na nb
  na=$(curl -s -m 5 "http://127.0.0.1:${fleet_eport[a]}/metrics" | grep -c '^gpuops_')
  nb=$(curl -s -m 5 "http://127.0.0.1:${fleet_eport[b]}/metrics" | grep -c '^gpuops_')
  federated() { [ "$(query 'count by (cluster) ({__name__=~"gpuops_.*"})' '"\(.metric.cluster) \(.value[1])"')" = \
    "$(printf 'a %s\nb %s' "$na" "$nb")" ]; }
  if ! fleet_wait 60 federated; then
    echo "global Prometheus: series per cluster $(query 'count by (cluster) ({__name__=~"gpuops_.*"})' \
      '"\(.metric.cluster) \(.value[1])"' | tr '\n' ' ')(want a $na, b $nb)" >&2
    cat "$work/fleet-global/prometheus.out" >&2
    return 1
  fi
  fleet_wait 30 rules_ok || { echo "global Prometheus: the 5 fleet rules are not all healthy" >&2; return 1; }
  local bad=0
  check() { # WHAT GOT WANT
    [ "$2" = "$3" ] && return 0
    printf 'global Prometheus: %s:\n  got:  %s\n  want: %s\n' "$1" "${2//$'\n'/, }" "${3//$'\n'/, }" >&2
    bad=1
  }
  # honor_labels: the series keep the job and instance of the cluster's
  # Prometheus, not the federation job's.
  check "jobs" "$(query 'count by (job) ({__name__=~"gpuops_.*"})' '.metric.job')" gpuops
  check "instances" "$(query 'count by (cluster, instance) ({__name__=~"gpuops_.*"})' \
    '"\(.metric.cluster) \(.metric.instance)"')" "$(printf 'a 127.0.0.1:%s\nb 127.0.0.1:%s' "${fleet_eport[a]}" "${fleet_eport[b]}")"
  check "gpuops_audit_nodes" "$(query gpuops_audit_nodes '"\(.metric.cluster) \(.value[1])"')" \
    "$(printf 'a %s\nb %s' "${fleet_nodes[a]}" "${fleet_nodes[b]}")"
  check "gpuops_audit_nodes_with_gaps" "$(query gpuops_audit_nodes_with_gaps '"\(.metric.cluster) \(.value[1])"')" \
    "$(printf 'a %s\nb %s' "$(fleet_expect_gaps a)" "$(fleet_expect_gaps b)")"
  check "device-plugin-without-toolkit findings" \
    "$(query 'gpuops_diagnose_finding{code="device-plugin-without-toolkit"}' '"\(.metric.cluster) \(.metric.node)"')" \
    "$(fleet_expect_without_toolkit)"
  check "gpuops_exporter_synced" "$(query gpuops_exporter_synced '"\(.metric.cluster) \(.value[1])"')" $'a 1\nb 1'
  # The fleet rules, active (pending for their `for`): one alert per
  # cluster the states imply.
  want=$({
    fleet_expect_without_toolkit | cut -d' ' -f1 | uniq | sed 's/^/GpuopsFleetDevicePluginWithoutToolkit /'
    for c in a b; do [ "$(fleet_expect_gaps $c)" = 0 ] || echo "GpuopsFleetNodesWithGaps $c"; done
  } | sort)
  alerts_are() { [ "$(alerts)" = "$want" ]; }
  fleet_wait 30 alerts_are
  check "active alerts" "$(alerts)" "$want"
  # Cluster b's exporter stops: its series leave the federation, and b is
  # the cluster gone missing; its other alerts leave with its series.
  kill "${fleet_exporter_pid[b]}" 2>/dev/null
  want="GpuopsFleetClusterMissing b"
  fleet_wait 30 alerts_are
  check "active alerts once b's exporter stopped" "$(alerts)" "$want"
  [ "$bad" = 0 ]
}
fleet_run() {
  local t0 took
  t0=$(date +%s.%N)
  if fleet_step; then
    took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    pass "a fleet: two clusters federated, their series and the fleet alerts exact (${took} s)"
  else
    fail "a fleet: two clusters federated (deploy/fleet/)"
  fi
  fleet_cleanup
}
if [ "$fleet_only" = 1 ]; then
  fleet_run
  [ "$failed" = 0 ]
  exit
fi

# 1. the manifests, validated by the real API server.
if kubectl --kubeconfig "$kc" apply -f "$repo/tests/crds/monitoring.coreos.com.yaml" >"$work/crds.out" 2>&1 &&
  kubectl --kubeconfig "$kc" wait --for=condition=Established --timeout=60s \
    crd/servicemonitors.monitoring.coreos.com crd/prometheusrules.monitoring.coreos.com >>"$work/crds.out" 2>&1; then
  kubectl --kubeconfig "$kc" create namespace gpu-operator >/dev/null 2>&1 || true
  kubectl --kubeconfig "$kc" create namespace monitoring >/dev/null 2>&1 || true  # the fleet's PrometheusRule
  if kubectl --kubeconfig "$kc" apply --dry-run=server -f "$repo/deploy/rbac.yaml" -f "$repo/deploy/exporter.yaml" \
    -f "$repo/deploy/servicemonitor.yaml" -f "$repo/deploy/prometheusrule.yaml" \
    -f "$repo/deploy/fleet/prometheusrule-fleet.yaml" >"$work/deploy.out" 2>&1; then
    pass "deploy/ --dry-run=server ($(wc -l <"$work/deploy.out") objects)"
  else
    cat "$work/deploy.out" >&2
    fail "deploy/ --dry-run=server"
  fi
else
  cat "$work/crds.out" >&2
  fail "monitoring CRDs"
fi

# 1b. gpuops lint against the API server's own answers: deploy/ passes
# both; each tests/data/lint/*.yaml is refused by both, the API server's
# message holding the case's "# api:" line and gpuops lint's ending with it.
if "$gpuops" lint "$repo/deploy" >"$work/lint.out" 2>&1; then
  pass "gpuops lint deploy/"
else
  cat "$work/lint.out" >&2
  fail "gpuops lint deploy/"
fi
cases=0 agreed=0
for f in "$repo"/tests/data/lint/*.yaml; do
  cases=$((cases + 1))
  want=$(head -n1 "$f" | sed 's/^# api: //')
  api=$(kubectl --kubeconfig "$kc" apply --dry-run=server -f "$f" 2>&1 >/dev/null) && api="(accepted)"
  ours=$("$gpuops" lint "$f" 2>&1); ours_rc=$?
  if [[ "$api" == *"$want"* ]] && [ "$ours_rc" = 2 ] && [[ "$ours" == *"$want" ]]; then
    agreed=$((agreed + 1))
  else
    printf 'lint differential: %s\n  case:   %s\n  api:    %s\n  gpuops: %s (exit %s)\n' \
      "$(basename "$f")" "$want" "$api" "$ours" "$ours_rc" >&2
  fi
done
if [ "$agreed" = "$cases" ]; then
  pass "gpuops lint agrees with the API server on $cases refused manifests"
else
  fail "gpuops lint agrees with the API server on $agreed of $cases refused manifests"
fi

# 2. the exporter against the cluster.
"$gpuops" exporter --kubeconfig "$kc" --listen 127.0.0.1:0 --min-interval 100 >"$work/exporter.out" 2>"$work/exporter.err" &
exporter_pid=$!
port=
for _ in $(seq 1 100); do
  port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/exporter.err")
  [ -n "$port" ] && break
  sleep 0.1
done
ready=0
for _ in $(seq 1 300); do
  [ -n "$port" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ] && { ready=1; break; }
  sleep 0.1
done
nodes=$(kubectl --kubeconfig "$kc" get nodes -o name | wc -l)
if [ "$ready" = 1 ] && curl -s "http://127.0.0.1:$port/metrics" | grep -qx "gpuops_audit_nodes $nodes"; then
  pass "gpuops exporter on the cluster (ready, gpuops_audit_nodes $nodes)"
else
  cat "$work/exporter.err" >&2
  fail "gpuops exporter on the cluster (ready=$ready, want gpuops_audit_nodes $nodes)"
fi

# 3. the kubectl plugin.
mkdir -p "$work/bin"
ln -s "$gpuops" "$work/bin/kubectl-gpuops"
want=$("$gpuops" audit --kubeconfig "$kc" 2>/dev/null); want_rc=$?
got=$(PATH="$work/bin:$PATH" kubectl gpuops audit --kubeconfig "$kc" 2>/dev/null); got_rc=$?
if [ "$got" = "$want" ] && [ "$got_rc" = "$want_rc" ]; then
  pass "kubectl gpuops audit (exit $got_rc, $(printf '%s\n' "$got" | wc -l) lines)"
else
  fail "kubectl gpuops audit (exit $got_rc vs $want_rc)"
fi
# 4. A real Prometheus scraping the exporter on the real cluster, with
# deploy/prometheusrule.yaml's rules: a node of its own (KWOK runs its pods)
# with the lab's toolkit and device plugin in a namespace of its own, then
# the toolkit label lowered under the running device plugin (the lab's
# accident): GpuopsDevicePluginWithoutToolkit becomes active for that node
# alone, and clears once the label is back.
suffix=$(date +%s)-$RANDOM  # a rerun does not wait for the last one's deletion
prom_ns=gpuops-e2e-prometheus-$suffix prom_node=gpuops-e2e-prometheus-node-$suffix
prom_pid= prom_exporter_pid=
prom_cleanup() {
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
  [ -n "$prom_exporter_pid" ] && kill "$prom_exporter_pid" 2>/dev/null && wait "$prom_exporter_pid" 2>/dev/null
  kubectl --kubeconfig "$kc" delete namespace "$prom_ns" --wait=false >/dev/null 2>&1
  kubectl --kubeconfig "$kc" delete node "$prom_node" --wait=false >/dev/null 2>&1
  prom_pid= prom_exporter_pid=
}
prom_step() {
  local k=(kubectl --kubeconfig "$kc")
  "${k[@]}" create namespace "$prom_ns" >/dev/null || return 1
  "${k[@]}" create -f - >/dev/null <<NODE || return 1
apiVersion: v1
kind: Node
metadata:
  name: $prom_node
  labels:
    nvidia.com/gpu.present: "true"
    nvidia.com/gpu.deploy.container-toolkit: "true"
    nvidia.com/gpu.deploy.device-plugin: "true"
    gpuops.e2e/prometheus: "$suffix"
NODE
  # The lab's DaemonSets, on this node alone: the cluster's other nodes may
  # carry the deploy labels too (the lab leaves lab-node-2 with a device
  # plugin and no toolkit).
  for m in toolkit-ds device-plugin-ds; do
    sed -e "s/namespace: gpu-operator/namespace: $prom_ns/" \
      -e "s|^      nodeSelector:\$|      nodeSelector:\n        gpuops.e2e/prometheus: \"$suffix\"|" \
      "$repo/manifests/$m.yaml" | "${k[@]}" apply -f - >/dev/null || return 1
  done
  local ok=0
  for _ in $(seq 1 600); do
    [ "$("${k[@]}" -n "$prom_ns" get pods --field-selector "spec.nodeName=$prom_node,status.phase=Running" \
      -o name | wc -l)" = 2 ] && { ok=1; break; }
    sleep 0.1
  done
  [ "$ok" = 1 ] || { echo "the toolkit and device plugin pods are not Running on $prom_node" >&2; return 1; }
  "$gpuops" exporter --kubeconfig "$kc" --namespace "$prom_ns" --listen 127.0.0.1:0 --min-interval 100 \
    >"$work/prom-exporter.out" 2>"$work/prom-exporter.err" &
  prom_exporter_pid=$!
  local eport=
  for _ in $(seq 1 100); do
    eport=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/prom-exporter.err")
    [ -n "$eport" ] && break
    sleep 0.1
  done
  [ -n "$eport" ] || { cat "$work/prom-exporter.err" >&2; return 1; }
  # deploy/prometheusrule.yaml's spec is a Prometheus rule file (JSON is
  # YAML); kubectl reads it as the cluster's CRD (step 1) types it.
  "${k[@]}" create --dry-run=client -o json -f "$repo/deploy/prometheusrule.yaml" | jq '.spec' >"$work/rules.yml" ||
    return 1
  local pport= base=$((20000 + RANDOM % 20000))
  for p in $(seq "$base" $((base + 50))); do
    ss -ltnH "sport = :$p" | grep -q . || { pport=$p; break; }
  done
  [ -n "$pport" ] || return 1
  cat >"$work/prometheus.yml" <<CFG
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$work/rules.yml"]
scrape_configs:
- job_name: gpuops
  static_configs: [{targets: ["127.0.0.1:$eport"]}]
CFG
  /usr/bin/prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$pport" >"$work/prometheus.out" 2>&1 &
  prom_pid=$!
  local api="http://127.0.0.1:$pport/api/v1"
  # alerts NODE...: the nodes GpuopsDevicePluginWithoutToolkit is active for.
  alerts() {
    curl -s "$api/alerts" |
      jq -r '[.data.alerts[] | select(.labels.alertname == "GpuopsDevicePluginWithoutToolkit") | .labels.node] | sort | join(" ")'
  }
  wait_until() { # SECONDS CMD...: true once CMD is
    local end=$(($(date +%s) + $1)); shift
    until "$@"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.5; done
  }
  rules_ok() { [ "$(curl -s "$api/rules" | jq '[.data.groups[].rules[] | select(.health == "ok")] | length' 2>/dev/null)" = 5 ]; }
  scraped() {
    [ "$(curl -s -G "$api/query" --data-urlencode \
      "query=gpuops_operand_ready{node=\"$prom_node\",operand=\"device-plugin\"}" |
      jq -r '.data.result[0].value[1]' 2>/dev/null)" = 1 ]
  }
  alert_on_node() { [ "$(alerts)" = "$prom_node" ]; }
  no_alert() { [ -z "$(alerts)" ]; }
  wait_until 60 rules_ok || { echo "Prometheus: the 5 rules are not all healthy" >&2; cat "$work/prometheus.out" >&2; return 1; }
  wait_until 60 scraped || { echo "Prometheus: $prom_node's device plugin not scraped as ready" >&2; return 1; }
  no_alert || { echo "Prometheus: an alert before the change: $(alerts)" >&2; return 1; }
  "${k[@]}" label node "$prom_node" --overwrite nvidia.com/gpu.deploy.container-toolkit=false >/dev/null || return 1
  wait_until 60 alert_on_node || { echo "Prometheus: no toolkit alert for $prom_node (have: $(alerts))" >&2; return 1; }
  "${k[@]}" label node "$prom_node" --overwrite nvidia.com/gpu.deploy.container-toolkit=true >/dev/null || return 1
  wait_until 60 no_alert || { echo "Prometheus: the toolkit alert did not clear (have: $(alerts))" >&2; return 1; }
}
if prom_step; then
  pass "Prometheus on the exporter: the toolkit alert fires for $prom_node and clears once repaired"
else
  fail "Prometheus on the exporter: the toolkit alert for $prom_node"
fi
prom_cleanup
fleet_run
[ "$failed" = 0 ]
