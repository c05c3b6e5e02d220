#!/usr/bin/env bash
# End-to-end tests on a real control plane: upstream etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler and KWOK, built (or
# reused) by scripts/cluster-build.sh and started on loopback by
# scripts/cluster-up.sh in a temporary directory. Against it:
#   1. the whole scenario library with `gpuops run --backend real`
#      (simulator-only scenarios and steps are reported as skipped), the
#      GPU Operator's scenarios on the real operator (cluster-up.sh
#      --gpu-operator);
#   1a. tests/data/e2e/fails-on-purpose.yaml, which fails on purpose: its catch
#      artefacts (diagnose output, a dump) exist and its JUnit test case
#      carries them (scripts/e2e-catch-check.py), and it is cleaned up;
#   1b. scripts/plan-predict.sh: `gpuops plan` run before each of 30 random
#      changes (seed 21) predicts exactly the pods, node labels and matrix the
#      cluster shows after it (it cleans up after itself); then with
#      --operator, 30 more on the real GPU Operator's own state (its
#      DaemonSets, labels and ClusterPolicy);
#   1c. scripts/policy-e2e.sh: `gpuops policy` applied (Deny): every rule
#      refuses its case and lets the operator's and helpers' writes of the
#      same kind through, Warn and Audit modes, and the real operator's
#      install, opt-out, operands=false, deleted-key, new-node, driver-upgrade
#      and MIG sequences pass with it on (docs/POLICY.md);
#   2. `gpuops lab run --kubeconfig` into a temporary working directory, then
#      `gpuops lab grade --kubeconfig` on it (must print 8 PASS lines);
#   3. the lab's two scripts from that directory (operand-audit.sh,
#      order-check.sh NODE for every node) against `gpuops audit` and
#      `gpuops order-check NODE`: same output, same exit code;
#   4. when serve_tests is built (or E2E_SERVE_TESTS names it): the API front end's kubectl
#      conformance test (Kubectl*) with the kubectl built here first on PATH;
#   5. with --fidelity: the differential run (scripts/fidelity.sh) on the
#      same cluster, which rewrites the table of docs/FIDELITY.md.
# The cluster is always brought down (trap, by recorded PID). Prints a summary
# and exits non-zero on any failure.
#
#   scripts/e2e-real.sh [--fidelity] [--keep]
#
# Environment: GPUOPS (the gpuops binary; default build/gpuops), GPUOPS_CACHE
# and GPUOPS_CLUSTER_BIN (see scripts/cluster-build.sh / cluster-up.sh),
# E2E_DIR (work directory; default a new one under /tmp, deleted at the end
# unless --keep or a failure), E2E_GPU_OPERATOR=0 (no GPU Operator: its
# scenarios are skipped whole), E2E_TIMEOUT (default expectation timeout of
# `gpuops run`, default 60s), E2E_PLAN_SEED and E2E_PLAN_CHANGES (the seed
# and the number of changes of step 1b; default 21 and 30),
# E2E_PLAN_OPERATOR_CHANGES (those of its --operator run; default 30).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gpuops=${GPUOPS:-$repo/build/gpuops}
fidelity=0 keep=0
for a in "$@"; do
  case $a in
    --fidelity) fidelity=1 ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,44p' "$0"; exit 0 ;;
    *) echo "e2e-real: unknown argument $a" >&2; exit 2 ;;
  esac
done
[ -x "$gpuops" ] || { echo "e2e-real: $gpuops not found: build it (scripts/build.sh) or set GPUOPS" >&2; exit 2; }
gpuops=$(cd "$(dirname "$gpuops")" && pwd)/$(basename "$gpuops")

work=${E2E_DIR:-$(mktemp -d /tmp/gpuops-e2e.XXXXXX)}
mkdir -p "$work"
cluster=$work/cluster
results=()   # "PASS|FAIL name (detail)"
failed=0
t_all=$(date +%s.%N)

say() { echo "e2e-real: $*" >&2; }
record() { # STATUS NAME DETAIL
  results+=("$1 $2${3:+ ($3)}")
  [ "$1" = PASS ] || failed=$((failed + 1))
  say "$1 $2${3:+ ($3)}"
}
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }'; }

down() {
  if [ -d "$cluster/pids" ]; then
    "$repo/scripts/cluster-down.sh" "$cluster" >&2 || say "cluster-down failed"
  fi
}
finish() {
  local rc=$?
  down
  # The operator's log, when something failed (it is kept in $work too).
  if { [ "$failed" -ne 0 ] || [ "$rc" -ne 0 ]; } && [ -s "$cluster/gpu-operator.log" ]; then
    echo "=== last lines of $cluster/gpu-operator.log ===" >&2
    tail -n 40 "$cluster/gpu-operator.log" >&2
  fi
  echo
  echo "=== e2e-real summary ($work) ==="
  for r in "${results[@]}"; do echo "  $r"; done
  echo "  total $(since "$t_all")"
  if [ "$failed" -eq 0 ] && [ "$rc" -eq 0 ]; then
    echo "e2e-real: all passed"
    [ "$keep" = 1 ] || [ -n "${E2E_DIR:-}" ] || rm -rf "$work"
  else
    echo "e2e-real: $failed failed (logs kept in $work)"
    [ "$rc" -ne 0 ] || rc=1
  fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

# --- the control plane ------------------------------------------------------
t=$(date +%s.%N)
if ! bin=$("$repo/scripts/cluster-build.sh" | tail -n1); then
  record FAIL cluster-build "see the messages above"
  exit 1
fi
record PASS cluster-build "$(since "$t")"
# The GPU Operator (scripts/operator-build.sh, built by cluster-build.sh
# above) runs beside the control plane unless E2E_GPU_OPERATOR=0: the
# operator scenarios then run on it, in place of the simulated one.
up_args=()
[ "${E2E_GPU_OPERATOR:-1}" = 0 ] || up_args=(--gpu-operator)
t=$(date +%s.%N)
if ! GPUOPS_CLUSTER_BIN=$bin "$repo/scripts/cluster-up.sh" "${up_args[@]}" "$cluster" >"$work/cluster-up.out" 2>&1; then
  cat "$work/cluster-up.out" >&2
  record FAIL cluster-up "see $work/cluster-up.out"
  exit 1
fi
record PASS cluster-up "${up_args[*]:+with the GPU Operator, }$(since "$t")"
# shellcheck disable=SC1091
. "$cluster/env"
kc=$KUBECONFIG
# The lab's scripts call kubectl (and jq): use the kubectl built with the
# control plane, whatever else is on PATH.
export PATH="$GPUOPS_CLUSTER_BIN:$PATH"

# --- 1. the scenario library ------------------------------------------------
t=$(date +%s.%N)
"$gpuops" run --backend real --kubeconfig "$kc" --timeout "${E2E_TIMEOUT:-60s}" \
  --junit "$work/scenarios.junit.xml" --report-json "$work/scenarios-real.json" \
  "$repo/scenarios" >"$work/scenarios.out" 2>"$work/scenarios.err"
rc=$?
cat "$work/scenarios.out"
summary=$(tail -n1 "$work/scenarios.out")
skipped=$(grep -c '^  skipped ' "$work/scenarios.out")
if [ $rc -eq 0 ]; then
  record PASS "scenarios --backend real" "$summary, $skipped simulator-only skips, $(since "$t")"
else
  sed 's/^/  stderr: /' "$work/scenarios.err" | tail -n 20 >&2
  record FAIL "scenarios --backend real" "exit $rc: $summary, $(since "$t")"
fi

# --- 1a. a scenario that fails on purpose leaves its catch artefacts ----------
# tests/data/e2e/fails-on-purpose.yaml: its failed step's catch (diagnose,
# dump, explain, podLogs) must be in --artifacts and in the JUnit test case's
# <system-out> (scripts/e2e-catch-check.py), and its clean-up must leave the
# cluster without nodes, as the steps below need it.
t=$(date +%s.%N)
"$gpuops" run --backend real --kubeconfig "$kc" --artifacts "$work/catch-artifacts" \
  --junit "$work/catch.junit.xml" "$repo/tests/data/e2e/fails-on-purpose.yaml" \
  >"$work/catch.out" 2>"$work/catch.err"
rc=$?
left=$(kubectl --kubeconfig "$kc" get nodes -o name 2>&1)
if [ $rc -eq 1 ] && problems=$(python3 "$repo/scripts/e2e-catch-check.py" "$work/catch-artifacts" \
  "$work/catch.junit.xml") && [ -z "$left" ]; then
  record PASS "catch artefacts of a failing scenario" "$(since "$t")"
else
  sed 's/^/  /' "$work/catch.out" "$work/catch.err" >&2
  record FAIL "catch artefacts of a failing scenario" "exit $rc (expected 1); ${problems:-}; nodes left: ${left:-none}"
fi

# --- 1b. plan's predictions against the real cluster (docs/PLAN.md) -------------
# The scenario library leaves the cluster empty; plan-predict.sh sets up its
# own lab-like state, makes E2E_PLAN_CHANGES random changes (seed
# E2E_PLAN_SEED), compares each with `gpuops plan`'s prediction, and deletes
# what it created, so the lab below finds the cluster empty again. With
# --operator (when the real GPU Operator runs), the same on the operator's
# own state: its ClusterPolicy at its defaults on NFD-labelled nodes,
# E2E_PLAN_OPERATOR_CHANGES changes of every verb (deploy labels,
# operands=false, hand labels, cordon, drain, taints, ClusterPolicy patches,
# a new GPU node, --steps plans, plans from dumps without the ClusterPolicy).
# plan_predictions NAME DIR [--operator] CHANGES: one run, recorded as NAME.
plan_predictions() {
  local name=$1 dir=$2 t rc summary
  shift 2
  local changes=${*: -1} mode=("${@:1:$#-1}")
  t=$(date +%s.%N)
  GPUOPS=$gpuops KUBECTL=$GPUOPS_CLUSTER_BIN/kubectl PLAN_PREDICT_DIR=$work/$dir \
    "$repo/scripts/plan-predict.sh" "${mode[@]}" "$kc" "${E2E_PLAN_SEED:-21}" "$changes" \
    >"$work/$dir.out" 2>"$work/$dir.err"
  rc=$?
  grep '^FAIL' "$work/$dir.out" >&2
  summary=$(tail -n1 "$work/$dir.out")
  if [ $rc -eq 0 ]; then
    record PASS "$name" "$summary, seed ${E2E_PLAN_SEED:-21}, $(since "$t")"
  else
    tail -n 5 "$work/$dir.err" >&2
    record FAIL "$name" "exit $rc: $summary, seed ${E2E_PLAN_SEED:-21}, see $work/$dir.out"
  fi
}
plan_predictions "plan predictions" plan-predict "${E2E_PLAN_CHANGES:-30}"
[ "${E2E_GPU_OPERATOR:-1}" = 0 ] ||
  plan_predictions "plan predictions, real operator" plan-predict-operator --operator "${E2E_PLAN_OPERATOR_CHANGES:-30}"

# --- 1c. the admission policy on the real API server (docs/POLICY.md) ---------
# Creates and deletes its own nodes; the cluster is empty again after it.
t=$(date +%s.%N)
GPUOPS=$gpuops KUBECTL=$GPUOPS_CLUSTER_BIN/kubectl POLICY_TIMEOUT=${E2E_TIMEOUT:-60s} \
  "$repo/scripts/policy-e2e.sh" "$kc" >"$work/policy-e2e.out" 2>"$work/policy-e2e.err"
rc=$?
grep '^FAIL' "$work/policy-e2e.out" >&2
summary=$(tail -n1 "$work/policy-e2e.out")
if [ $rc -eq 0 ]; then
  record PASS "admission policy" "$summary, $(since "$t")"
else
  tail -n 5 "$work/policy-e2e.err" >&2
  record FAIL "admission policy" "exit $rc: $summary, see $work/policy-e2e.out"
fi

# --- 2. the lab, run and graded on the real cluster -------------------------
t=$(date +%s.%N)
lab=$work/lab
if "$gpuops" lab run --dir "$lab" --kubeconfig "$kc" --quiet >"$work/lab-run.out" 2>&1; then
  record PASS "lab run" "$(since "$t")"
else
  cat "$work/lab-run.out" >&2
  record FAIL "lab run" "exit $?"
fi
t=$(date +%s.%N)
"$gpuops" lab grade --dir "$lab" --kubeconfig "$kc" >"$work/lab-grade.out" 2>&1
rc=$?
cat "$work/lab-grade.out"
passes=$(grep -c '^PASS' "$work/lab-grade.out")
if [ $rc -eq 0 ] && [ "$passes" -eq 8 ]; then
  record PASS "lab grade" "8 PASS lines, $(since "$t")"
else
  record FAIL "lab grade" "exit $rc, $passes PASS lines (expected 8)"
fi

# --- 3. the lab's two scripts against gpuops --------------------------------
compare() { # NAME -- SCRIPT-CMD... -- GPUOPS-CMD...
  local name=$1; shift 2
  local a=() b=()
  while [ "$1" != -- ]; do a+=("$1"); shift; done
  shift
  b=("$@")
  local out_a out_b rc_a rc_b
  out_a=$("${a[@]}" 2>"$work/$name.script.err"); rc_a=$?
  out_b=$("${b[@]}" 2>"$work/$name.gpuops.err"); rc_b=$?
  if [ "$out_a" = "$out_b" ] && [ $rc_a -eq $rc_b ]; then
    record PASS "$name" "exit $rc_a, $(printf '%s\n' "$out_a" | wc -l) lines agree"
  else
    say "$name: script (exit $rc_a):"; printf '%s\n' "$out_a" >&2
    say "$name: gpuops (exit $rc_b):"; printf '%s\n' "$out_b" >&2
    record FAIL "$name" "script exit $rc_a, gpuops exit $rc_b; outputs $([ "$out_a" = "$out_b" ] && echo agree || echo differ)"
  fi
}
if [ -f "$lab/operand-audit.sh" ]; then
  compare operand-audit.sh -- env KUBECONFIG="$kc" bash "$lab/operand-audit.sh" -- \
    "$gpuops" audit --kubeconfig "$kc"
  for node in $(kubectl --kubeconfig "$kc" get nodes -o 'jsonpath={.items[*].metadata.name}'); do
    compare "order-check.sh-$node" -- env KUBECONFIG="$kc" bash "$lab/order-check.sh" "$node" -- \
      "$gpuops" order-check --kubeconfig "$kc" "$node"
  done
else
  record FAIL "lab scripts" "no $lab/operand-audit.sh"
fi

# --- 4. the API front end's kubectl conformance test, with this kubectl -------
# tests/serve runs `kubectl` from PATH; PATH starts with the kubectl built
# here (v1.37.2). E2E_SERVE_TESTS=path/to/serve_tests; by default the
# serve_tests beside the gpuops binary (build/tests/serve_tests), when built.
serve_tests=${E2E_SERVE_TESTS:-$(dirname "$gpuops")/tests/serve_tests}
if [ -n "$serve_tests" ] && [ -x "$serve_tests" ]; then
  t=$(date +%s.%N)
  if "$serve_tests" --gtest_filter='Kubectl*' >"$work/serve-kubectl.out" 2>&1; then
    record PASS "serve kubectl conformance ($(kubectl version --client -o json | grep -m1 gitVersion | tr -d ' ",'))" \
      "$(grep -c '^\[       OK' "$work/serve-kubectl.out") tests, $(since "$t")"
  else
    grep -E '^\[  FAILED|Failure' "$work/serve-kubectl.out" | head -n 20 >&2
    record FAIL "serve kubectl conformance" "see $work/serve-kubectl.out"
  fi
fi

# --- 4b. deploy/, the exporter, the kubectl plugin and a fleet (docs/EXPORTER.md) ------
t=$(date +%s.%N)
"$repo/scripts/e2e-exporter.sh" "$gpuops" "$kc" >"$work/exporter.out" 2>&1
while read -r st rest; do
  case $st in PASS|FAIL) record "$st" "$rest" ;; esac
done <"$work/exporter.out"
grep -q '^FAIL' "$work/exporter.out" && cat "$work/exporter.out" >&2

# --- 5. the differential run ------------------------------------------------
if [ "$fidelity" = 1 ]; then
  t=$(date +%s.%N)
  if GPUOPS=$gpuops E2E_KUBECONFIG=$kc E2E_REAL_JSON=$work/scenarios-real.json \
      "$repo/scripts/fidelity.sh" "$work/fidelity" >"$work/fidelity.out" 2>&1; then
    record PASS fidelity "$(tail -n1 "$work/fidelity.out"), $(since "$t")"
  else
    cat "$work/fidelity.out" >&2
    record FAIL fidelity "$(tail -n1 "$work/fidelity.out")"
  fi
fi
