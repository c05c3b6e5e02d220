#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang++ into build-fuzz/ (ASan,
# UBSan, coverage) and runs each for SECONDS_PER_TARGET seconds (default 15:
# seven targets, about 105 s of fuzzing) on one job, starting from its seed
# corpus fuzz/corpus/<target>/ and first replaying every regression input of
# fuzz/regressions/<target>/.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (e.g. scripts/fuzz.sh 600)
#
# Fails (exit 1) when a target crashes, trips a sanitizer, takes longer than
# FUZZ_TIMEOUT seconds on one input (default 10) or uses more than
# FUZZ_RSS_MB MiB (default 2048). The input that did it is kept in
# build-fuzz/artifacts/<target>/ (crash-*, timeout-*, oom-*, leak-*): copy it
# to fuzz/regressions/<target>/ and add a unit test that replays it.
# New inputs libFuzzer finds go to build-fuzz/corpus/<target>/ (kept between
# runs, never written into the repository's seeds).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
shift || true
all=(snapshot manifest scenario kubeconfig quantity api_server yaml)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
timeout_s=${FUZZ_TIMEOUT:-10}
rss_mb=${FUZZ_RSS_MB:-2048}

scripts/setup.sh
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DGPUOPS_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# At most two compile jobs: fuzzing shares the machine.
jobs=$(nproc)
[ "$jobs" -gt 2 ] && jobs=2
ninja -C build-fuzz -j "$jobs" $(printf 'fuzz_%s ' "${targets[@]}")

scratch=$(mktemp -d /tmp/gpuops-fuzz-run.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch
# Leaks are bugs too; a stack trace for UBSan; abort (not exit) on ASan so
# libFuzzer keeps the input.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
for t in "${targets[@]}"; do
  bin=build-fuzz/fuzz/fuzz_$t
  [ -x "$bin" ] || bin=build-fuzz/fuzz_$t
  art=build-fuzz/artifacts/$t
  work=build-fuzz/corpus/$t
  mkdir -p "$art" "$work"
  log=build-fuzz/fuzz-$t.log
  opts=(-rss_limit_mb="$rss_mb" -timeout="$timeout_s" -print_final_stats=1
        -artifact_prefix="$art/")
  # The regression inputs first, each once: a fixed bug that comes back
  # fails here whatever the fuzzing finds.
  if [ -d "fuzz/regressions/$t" ] && [ -n "$(ls -A "fuzz/regressions/$t" 2>/dev/null)" ]; then
    if ! "$bin" "${opts[@]}" -runs=0 $(find "fuzz/regressions/$t" -type f ! -name '*.md' | sort) >"$log.regressions" 2>&1; then
      echo "fuzz: $t: a regression input fails again (build-fuzz/fuzz-$t.log.regressions)" >&2
      tail -n 30 "$log.regressions" >&2
      failed+=("$t")
      continue
    fi
  fi
  echo "fuzz: $t for ${seconds}s" >&2
  if "$bin" "${opts[@]}" -max_total_time="$seconds" "$work" "fuzz/corpus/$t" >"$log" 2>&1; then
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | tr '\n' ' ' >&2 || true
    echo >&2
  else
    echo "fuzz: $t FAILED (log: $log; input kept in $art/):" >&2
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written|deadly signal|uncaught|what\(\)' "$log" | head -n 20 >&2 || true
    failed+=("$t")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds}s each without a finding" >&2
