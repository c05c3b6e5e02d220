#!/usr/bin/env bash
# The whole test suite (what CI runs, .ci/run):
#   0. the tree is formatted (scripts/format.sh --check, .clang-format);
#   1. set-up and the normal build, and every test binary through ctest;
#      then the install step, the .deb and the kubectl plugin
#      (scripts/package-test.sh);
#   2. end to end on a real control plane: upstream etcd,
#      kube-apiserver, kube-controller-manager, kube-scheduler and KWOK, built
#      from the Go module proxy into ~/.cache/gpuops on first use (10-55 min
#      once on 2 cores; reused afterwards), brought up on loopback, the scenario
#      library with --backend real, lab run and grade, the lab's scripts, the
#      API front end's kubectl conformance test with the kubectl built there,
#      and the differential run (every comparable step of every scenario must
#      agree between the simulator and upstream), always brought down;
#   3. the same tests once more under AddressSanitizer and
#      UndefinedBehaviorSanitizer, built as shared libraries linked with
#      -Wl,--no-undefined (the layer check's link half; ctest `layers` is
#      its include half, in both trees);
#   4. the libFuzzer targets (fuzz/), 15 s each (scripts/fuzz.sh). Last: the
#      deterministic suites report first, and a fuzz finding (random, new
#      each run) never hides their results; the regression inputs are
#      replayed by the unit tests of steps 1 and 3 already.
# GPUOPS_E2E=0 skips step 2 (a quick local run; CI never sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
# Disk, measured on a fresh machine (README.md, "Testing"): the three build
# trees take 7.2 GB (build/ 1.7, build-asan/ 5.0, build-fuzz/ 0.5);
# the end-to-end set-up keeps about 1.6 GB more (~/.cache/gpuops and Go's
# module cache) and uses 5 GB of Go build cache while it compiles, removed
# after it (scripts/go-build-cache.sh). A warning, not a failure: a build that
# runs out of disk fails on its own, with the compiler's or linker's message.
free_gb=$(df -Pk . | awk 'NR==2 { printf "%d", $4 / 1048576 }')
if [ "${free_gb:-0}" -lt 10 ]; then
  echo "test.sh: warning: ${free_gb} GB free on the file system of $(pwd); a first run of the whole suite needs about 10 GB" >&2
fi
scripts/setup.sh
scripts/format.sh --check

# Work that waits on the network or sleeps leaves the 2 cores idle: the
# end-to-end run's Go builds (module downloads first; reused from
# ~/.cache/gpuops once built) start now, niced, beside the C++ build and
# the unit tests; the sanitizer build (niced) runs beside the end-to-end
# run, which mostly waits for the real control plane. docs/CONTROL-PLANE.md,
# "What CI takes", has the figures.
logs=$(mktemp -d /tmp/gpuops-test.XXXXXX)
pids=()
cleanup() {
  # Each background job leads its own process group (setsid): end it whole.
  for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || true; done
  rm -rf "$logs"
}
trap cleanup EXIT
# Waits for background job $1 (named $2), printing its log when it failed.
wait_job() {
  if ! wait "$1"; then
    echo "test.sh: $2 failed; its output:" >&2
    cat "$logs/$2.log" >&2
    exit 1
  fi
}
e2e=0
[ "${GPUOPS_E2E:-1}" != 0 ] && e2e=1
if [ $e2e = 1 ]; then
  setsid nice -n 19 scripts/cluster-build.sh >"$logs/cluster-build.log" 2>&1 &
  go_pid=$!
  pids+=("$go_pid")
fi

scripts/build.sh
ctest --test-dir build --output-on-failure
# cmake --install, the .deb and the kubectl plugin (about 10 s).
scripts/package-test.sh build

setsid nice -n 10 scripts/build.sh --sanitize >"$logs/asan-build.log" 2>&1 &
asan_pid=$!
pids+=("$asan_pid")

if [ $e2e = 1 ]; then
  wait_job "$go_pid" cluster-build
  fidelity_out=$(mktemp /tmp/gpuops-fidelity.XXXXXX.md)
  # The table goes to a temporary file: CI checks agreement, it does not
  # rewrite docs/FIDELITY.md (scripts/fidelity.sh does, on purpose).
  GPUOPS=build/gpuops FIDELITY_OUT=$fidelity_out scripts/e2e-real.sh --fidelity
  rm -f "$fidelity_out"
fi

wait_job "$asan_pid" asan-build
tail -n 1 "$logs/asan-build.log"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure

scripts/fuzz.sh
