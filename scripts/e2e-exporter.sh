#!/usr/bin/env bash
# deploy/ and the exporter on a real control plane (called by scripts/e2e-real.sh; runnable
# alone against any cluster you may write CRDs to):
#   1. tests/crds/monitoring.coreos.com.yaml (ServiceMonitor, PrometheusRule)
#      applied and Established, then every manifest of deploy/ (but the krew
#      manifest) through the API server's validation and admission with
#      `kubectl apply --dry-run=server` (nothing stored);
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
#      and the repair clears it.
# Starts and stops its own exporters, Prometheus, node and namespace. Prints one PASS/FAIL line per step; exits
# 1 when any failed.
# Usage: scripts/e2e-exporter.sh GPUOPS KUBECONFIG
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gpuops=$1 kc=$2
work=$(mktemp -d /tmp/gpuops-e2e-exporter.XXXXXX)
exporter_pid=
failed=0
cleanup() {
  declare -F prom_cleanup >/dev/null && prom_cleanup
  [ -n "$exporter_pid" ] && kill "$exporter_pid" 2>/dev/null && wait "$exporter_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# 1. the manifests, validated by the real API server.
if kubectl --kubeconfig "$kc" apply -f "$repo/tests/crds/monitoring.coreos.com.yaml" >"$work/crds.out" 2>&1 &&
  kubectl --kubeconfig "$kc" wait --for=condition=Established --timeout=60s \
    crd/servicemonitors.monitoring.coreos.com crd/prometheusrules.monitoring.coreos.com >>"$work/crds.out" 2>&1; then
  kubectl --kubeconfig "$kc" create namespace gpu-operator >/dev/null 2>&1 || true
  if kubectl --kubeconfig "$kc" apply --dry-run=server -f "$repo/deploy/rbac.yaml" -f "$repo/deploy/exporter.yaml" \
    -f "$repo/deploy/servicemonitor.yaml" -f "$repo/deploy/prometheusrule.yaml" >"$work/deploy.out" 2>&1; then
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
[ "$failed" = 0 ]
