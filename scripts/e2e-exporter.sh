#!/usr/bin/env bash
# Issue 25 on a real control plane (called by scripts/e2e-real.sh; runnable
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
#      what `gpuops audit` prints, with the same exit code.
# Starts and stops its own exporter. Prints one PASS/FAIL line per step; exits
# 1 when any failed.
# Usage: scripts/e2e-exporter.sh GPUOPS KUBECONFIG
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gpuops=$1 kc=$2
work=$(mktemp -d /tmp/gpuops-e2e-exporter.XXXXXX)
exporter_pid=
failed=0
cleanup() {
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
[ "$failed" = 0 ]
