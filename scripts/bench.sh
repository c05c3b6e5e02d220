#!/usr/bin/env bash
# scripts/bench.sh: every benchmark of docs/PERFORMANCE.md in one run, one table at the end.
#
#   scripts/bench.sh [BUILD_DIR]          # default: build
#
# Environment:
#   BENCH_QUICK=1        skip the 5,000-node kubectl script run (the slowest part)
#   BENCH_CALLGRIND=1    also count instructions of each settle under callgrind
#                        (valgrind; about 1 min per 1,000 x 16 settle)
#   BENCH_CLUSTER=0      skip the lab on the real control plane
#                        (scripts/cluster-up.sh; needs the built binaries)
#
# Builds (Release-like RelWithDebInfo, -O2) core_bench, simulator_bench,
# api_audit_bench, serve_bench, scenario_bench and gpuops in BUILD_DIR with ninja -j2, then runs:
#   core       core::should_run and core::audit, 1,000 / 5,000 / 20,000 nodes x 16;
#              core::diagnose, 1,000 / 5,000 nodes x 16
#   simulator  settle from empty and one label flip, 1,000 / 5,000 nodes x 5 / x 16,
#              15,000 x 20, 65,000 and 130,000 x 16; the operator on 15,000 and 65,000,
#              each configuration in its own process so its peak RSS is its own
#   serve      the 5,000 x 16 settle bare, behind the API server without a
#              watch and with one watch per kind; one field-selector pod list
#              per node at 100 / 300 / 1,000 nodes (server CPU)
#   api        the audit over the API (real::ApiCluster against the simulator's
#              API server) vs data/lab/operand-audit.sh (kubectl + jq), same cluster
#   dump       audit, matrix and diagnose --snapshot of a 5,000 x 16 dump
#              (bench/make_dump.cpp, about 416 MB) and of a 65,000 x 8 one
#              (about 2.7 GiB; plan too): wall, CPU and peak RSS against the
#              file's size, median of 3 processes
#   plan       gpuops plan of one label change on 5,000 x 8 / x 16 and 15,000 x 8 dumps
#              (bench/plan_bench.cpp): in process, and as a process, median of 3
#   scenario   a 5,000 x 16 scenario file (bench/scenario_bench.cpp): loaded alone,
#              and the whole `gpuops run` with and without an expectation on two
#              DaemonSets' status; each in its own process for its peak RSS
#   lab        `gpuops lab run` on the simulator vs on the real control plane
# Times are wall and CPU; the machine is described first (nproc, CPU model, load).
# Results and their discussion: docs/PERFORMANCE.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
OUT=$(mktemp -d "${TMPDIR:-/tmp}/gpuops-bench.XXXXXX")
CLUSTER_DIR=""
cleanup() {
  if [ -n "$CLUSTER_DIR" ] && [ -d "$CLUSTER_DIR/pids" ]; then "$ROOT/scripts/cluster-down.sh" "$CLUSTER_DIR" >/dev/null 2>&1 || true; fi
  rm -rf "$OUT"
}
trap cleanup EXIT

need() { command -v "$1" >/dev/null || { echo "bench.sh: needs $1" >&2; exit 2; }; }
need jq
need cmake
need ninja
[ -x /usr/bin/time ] || { echo "bench.sh: needs /usr/bin/time (scripts/setup.sh installs it)" >&2; exit 2; }

log() { printf '%s\n' "$*" >&2; }
ROWS=()
row() { ROWS+=("$(printf '%s\t' "$@")"); }

# ---------------------------------------------------------------- build
log "== build ($BUILD)"
cmake -S "$ROOT" -B "$BUILD" -G Ninja >/dev/null
ninja -C "$BUILD" -j2 core_bench simulator_bench api_audit_bench serve_bench scenario_bench plan_bench make_dump gpuops >&2

# ---------------------------------------------------------------- machine
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log "== machine: $(nproc) cores, $CPU, load $LOAD_START"

# Google Benchmark JSON -> rows. $1 file, $2 label prefix
gbench_rows() {
  jq -r '.benchmarks[] | [.name, .real_time, .cpu_time, .time_unit, (.peak_rss_MB // 0), (.error_message // "")] | @tsv' "$1"
}
to_ms() {  # value unit -> ms
  awk -v v="$1" -v u="$2" 'BEGIN { f = (u=="ns") ? 1e-6 : (u=="us") ? 1e-3 : (u=="ms") ? 1 : 1000; printf "%.3f", v*f }'
}

# ---------------------------------------------------------------- core
log "== core: placement, audit and diagnose"
"$BUILD/bench/core_bench" --benchmark_out="$OUT/core.json" --benchmark_out_format=json >&2
while IFS=$'\t' read -r name real cpu unit _rss err; do
  [ -n "$err" ] && { echo "bench.sh: $name: $err" >&2; exit 1; }
  n=${name#BM_*/}
  what=${name%%/*}
  case "$what" in
    BM_Placement) w="core::should_run, every (DaemonSet, node)" ;;
    BM_Diagnose) w="core::diagnose, every (node, operand)" ;;
    *) w="core::audit" ;;
  esac
  row core "$w" "${n%%/*} x 16" "$(to_ms "$real" "$unit") ms" "$(to_ms "$cpu" "$unit") ms" "" ""
done < <(gbench_rows "$OUT/core.json")

# ---------------------------------------------------------------- simulator
log "== simulator: settle from empty, label flip"
# One simulator benchmark (its own process, so its peak RSS is its own) into
# JSON file $2; exactly one must match the filter $1.
sim_one() {
  "$BUILD/bench/simulator_bench" --benchmark_filter="$1" --benchmark_out="$2" --benchmark_out_format=json >&2
  [ "$(jq '.benchmarks | length' "$2")" = 1 ] || { echo "bench.sh: $1 did not run exactly once" >&2; exit 1; }
}
for bm in SettleFromEmpty LabelFlip; do
  for cfg in 100/16 1000/5 1000/16 5000/5 5000/16 15000/20 65000/16 130000/16; do
    # 100 x 16: the whole cluster in cache, the per-pod floor of the settle
    # (docs/PERFORMANCE-HISTORY.md, "Past upstream's 5,000-node limit").
    [ "$bm/$cfg" = LabelFlip/100/16 ] && continue
    f="$OUT/sim-$bm-${cfg/\//x}.json"
    sim_one "BM_$bm/$cfg(/|\$)" "$f"
    while IFS=$'\t' read -r name real cpu unit rss err; do
      [ -n "$err" ] && { echo "bench.sh: $name: $err" >&2; exit 1; }
      case "$bm" in
        SettleFromEmpty)
          w="settle from empty"
          case "$cfg" in
            5000/16) tgt="< 1 s, RSS < 500 MB" ;; 15000/20) tgt="< 1.5 s CPU, RSS < 1 GB" ;;
            65000/16) tgt="< 5 s CPU, RSS < 3 GB" ;; 130000/16) tgt="(measured, no target)" ;; *) tgt="" ;;
          esac ;;
        *)
          w="one label flip + settle"
          case "$cfg" in 15000/20 | 65000/16) tgt="< 100 us" ;; 130000/16) tgt="(measured)" ;; *) tgt="< 5 ms, flat" ;; esac ;;
      esac
      ins=""
      if [ "$bm" = SettleFromEmpty ] && [ "${BENCH_CALLGRIND:-0}" = 1 ]; then
        valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" \
          --toggle-collect='gpuops::simulator::FakeCluster::settle()' \
          "$BUILD/bench/simulator_bench" --benchmark_filter="BM_$bm/$cfg(/|\$)" >/dev/null 2>"$OUT/cg.err"
        ins=$(grep -o 'Collected : [0-9]*' "$OUT/cg.err" | awk '{ printf "%.2f G instr", $3 / 3 / 1e9 }')
      fi
      per_pod=""
      if [ "$bm" = SettleFromEmpty ]; then  # every node runs one pod of each DaemonSet
        per_pod=$(awk -v c="$(to_ms "$cpu" "$unit")" -v n="${cfg%/*}" -v o="${cfg#*/}" \
          'BEGIN { printf ", %.2f us CPU per pod", c * 1000 / (n * o) }')
      fi
      row simulator "$w" "${cfg/\// x }" "$(to_ms "$real" "$unit") ms" "$(to_ms "$cpu" "$unit") ms" \
        "RSS $(printf '%.0f' "$rss") MB${per_pod}${ins:+, $ins}" "$tgt"
    done < <(gbench_rows "$f")
  done
done

# The simulated GPU Operator labels 15,000 and 65,000 new GPU nodes and settles (docs/PERFORMANCE.md).
for n in 15000 65000; do
  f="$OUT/sim-operator-$n.json"
  sim_one "BM_OperatorInstall/$n/0/" "$f"
  while IFS=$'\t' read -r name real cpu unit rss err; do
    [ -n "$err" ] && { echo "bench.sh: $name: $err" >&2; exit 1; }
    row simulator "the operator labels the GPU nodes, settle (kwok)" "$n x 7" "$(to_ms "$real" "$unit") ms" \
      "$(to_ms "$cpu" "$unit") ms" "RSS $(printf '%.0f' "$rss") MB" "$([ "$n" = 15000 ] && echo "< 3 s" || echo "< 4 s CPU")"
  done < <(gbench_rows "$f")
done

# ---------------------------------------------------------------- the served simulator
log "== serve: settle behind the API server, per-node field-selector lists"
"$BUILD/bench/serve_bench" --benchmark_filter='BM_SettleServed/nodes:(5000|65000)/' --benchmark_out="$OUT/serve-settle.json" \
  --benchmark_out_format=json >&2
bare_ms=""
while IFS=$'\t' read -r name real cpu unit server catchup events cut err; do
  [ -n "$err" ] && { echo "bench.sh: $name: $err" >&2; exit 1; }
  cpu_ms=$(to_ms "$cpu" "$unit")
  case "$name" in
    */mode:0/*) w="settle from empty, bare simulator (reference)"; bare_ms=$cpu_ms; notes=""; tgt="" ;;
    */mode:1/*) w="settle from empty, ApiServer subscribed, no watch"; tgt="<= 1.5x bare" ;;
    *) w="settle from empty, one Table watch per kind"; tgt="<= 2x bare" ;;
  esac
  ratio=$(awk -v a="$cpu_ms" -v b="${bare_ms:-0}" 'BEGIN{ if (b > 0) printf "%.2fx bare", a/b }')
  case "$name" in
    */mode:1/*) notes="$ratio; server $(printf '%.0f' "$server") ms CPU" ;;
    */mode:2/*) notes="$ratio; server $(printf '%.0f' "$server") ms CPU, caught up $(printf '%.0f' "$catchup") ms after, $(printf '%.0f' "$events") events, $(printf '%.0f' "$cut") cut" ;;
  esac
  n=${name#*nodes:}
  row serve "$w" "${n%%/*} x 16" "$(to_ms "$real" "$unit") ms" "$cpu_ms ms" "$notes" "$tgt"
done < <(jq -r '.benchmarks[] | [.name, .real_time, .cpu_time, .time_unit, (.server_cpu_ms // 0), (.catchup_ms // 0),
                                  (.watch_events // 0), (.watches_cut // 0), (.error_message // "")] | @tsv' \
           "$OUT/serve-settle.json")
"$BUILD/bench/serve_bench" --benchmark_filter='BM_FieldSelectorLists' --benchmark_out="$OUT/serve-lists.json" \
  --benchmark_out_format=json >&2
while IFS=$'\t' read -r name real cpu unit server err; do
  [ -n "$err" ] && { echo "bench.sh: $name: $err" >&2; exit 1; }
  n=${name#*nodes:}
  n=${n%%/*}
  row serve "one spec.nodeName field-selector pod list per node" "$n nodes x 5" "$(to_ms "$real" "$unit") ms" \
    "$(to_ms "$cpu" "$unit") ms client" "server $(printf '%.0f' "$server") ms CPU" "linear in nodes"
done < <(jq -r '.benchmarks[] | [.name, .real_time, .cpu_time, .time_unit, (.server_cpu_ms // 0), (.error_message // "")] | @tsv' \
           "$OUT/serve-lists.json")

# ---------------------------------------------------------------- audit over the API
log "== audit over the API vs operand-audit.sh (kubectl + jq)"
have_kubectl=0
command -v kubectl >/dev/null && have_kubectl=1
for n in 1000 5000; do
  flags=()
  if [ "$have_kubectl" = 1 ] && { [ "$n" = 1000 ] || [ "${BENCH_QUICK:-0}" != 1 ]; }; then flags+=(--kubectl); fi
  # 15 runs of the audit (about 50 ms each at 1,000 nodes): the median of
  # 5 moved by a tenth from one bench run to the next.
  "$BUILD/bench/api_audit_bench" --nodes "$n" --operands 5 --runs 15 "${flags[@]}" >"$OUT/api-$n.txt"
  cat "$OUT/api-$n.txt" >&2
  v() { grep "^$1=" "$OUT/api-$n.txt" | cut -d= -f2; }
  row api "audit over the API (ApiCluster::state + core::audit)" "$n x 5 ($(v pods) pods)" \
    "$(awk -v s="$(v api_wall_s)" 'BEGIN{printf "%.1f ms", s*1000}')" \
    "$(awk -v c="$(v api_client_cpu_s)" -v s="$(v api_server_cpu_s)" 'BEGIN{printf "%.0f ms client + %.0f ms server", c*1000, s*1000}')" \
    "$(v api_requests) requests (6 lists + $(v api_continue_pages) pages), $(awk -v b="$(v api_bytes)" 'BEGIN{printf "%.1f MB", b/1e6}')" \
    "<= 6 lists + pages"
  if grep -q '^kubectl_wall_s=' "$OUT/api-$n.txt"; then
    row api "operand-audit.sh (kubectl + jq), same cluster" "$n x 5" \
      "$(awk -v s="$(v kubectl_wall_s)" 'BEGIN{printf "%.2f s", s}')" \
      "$(awk -v c="$(v kubectl_cpu_s)" -v s="$(v kubectl_server_cpu_s)" 'BEGIN{printf "%.2f s + %.0f ms server", c, s*1000}')" \
      "ratio $(awk -v w="$(v ratio_wall)" -v c="$(v ratio_cpu)" -v k="$(v ratio_client_cpu)" 'BEGIN{printf "%.0fx wall, %.0fx CPU (%.0fx clients only)", w, c, k}'), same output: $(v kubectl_same_output)" \
      "$([ "$n" = 1000 ] && echo ">= 100x" || true)"
  fi
done

# -- a large dump: the snapshot commands (docs/PERFORMANCE.md)
log "== a 5,000 x 16 dump: audit, matrix, diagnose --snapshot"
# `gpuops CMD --snapshot` of a make_dump dump of $1 nodes x $2 operands, each
# command of $3 (plan: one label change, exit 1 as it must) as 3 processes,
# the median's wall, CPU and peak RSS against the file; $4 the snapshot
# commands' target, $5 plan's.
dump_rows() {
  local nodes=$1 ops=$2 dump="$OUT/dump-$1x$2.json" mb cmd i rc want wall user sys kb
  "$BUILD/bench/make_dump" --nodes "$nodes" --operands "$ops" "$dump"
  mb=$(awk -v b="$(stat -c %s "$dump")" 'BEGIN { printf "%.0f", b / 1048576 }')
  for cmd in $3; do
    local runs=() args=("$cmd" --snapshot "$dump" --operands gpu-operator)
    want=0
    [ "$cmd" = plan ] && { args+=(label node node-0 nvidia.com/gpu.deploy.driver=false --overwrite); want=1; }
    for i in 1 2 3; do
      rc=0
      /usr/bin/time -f '%e %U %S %M' -o "$OUT/time.txt" "$BUILD/gpuops" "${args[@]}" >/dev/null 2>"$OUT/dump.err" ||
        rc=$?
      [ "$rc" = "$want" ] || { cat "$OUT/dump.err" >&2; exit 1; }
      runs+=("$(tail -1 "$OUT/time.txt")")
    done
    read -r wall user sys kb < <(printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p)
    row dump "gpuops $cmd --snapshot (median of 3)" "$nodes x $ops ($((nodes * ops)) pods, $mb MiB)" "$wall s" \
      "$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f s", u + s }')" \
      "RSS $((kb / 1024)) MiB, $(awk -v k="$kb" -v f="$mb" 'BEGIN { printf "%.2f", k / 1024 / f }')x the file" \
      "$([ "$cmd" = plan ] && echo "$5" || echo "$4")"
  done
  rm -f "$dump"
}
dump_rows 5000 16 "audit matrix diagnose" "< 3 s, <= 1.5x"

# -- the largest real clusters: a 65,000-node x 8 dump (about 2.7 GiB; issue 49's targets: the snapshot
# commands < 5 s at <= 1.5x the file, plan of one change < 6 s wall at <= 2x the file)
log "== a 65,000 x 8 dump: audit, matrix, diagnose --snapshot, plan"
dump_rows 65000 8 "audit matrix diagnose plan" "< 5 s, <= 1.5x" "< 6 s wall, <= 2x"

# -- gpuops plan on a large dump (targets, docs/PERFORMANCE.md: 5,000 x 8 < 2 s; 15,000 x 8 < 3 s)
log "== gpuops plan of one label change on 5,000 and 15,000-node dumps"
# The dumps plan_bench writes are kept (PLAN_BENCH_KEEP=1) for the process runs.
PLAN_BENCH_KEEP=1 "$BUILD/bench/plan_bench" --benchmark_filter='BM_PlanLabelChange/(5000/(8|16)|15000/8)/' \
  --benchmark_out="$OUT/plan.json" --benchmark_out_format=json 2>"$OUT/plan-keep.err" >&2 ||
  { cat "$OUT/plan-keep.err" >&2; exit 1; }
while IFS=$'\t' read -r name real cpu unit rss err; do
  [ -n "$err" ] && { echo "bench.sh: $name: $err" >&2; exit 1; }
  n=${name#BM_PlanLabelChange/}
  k=${n#*/}
  k=${k%%/*}
  n=${n%%/*}
  tgt=$([ "$n" = 5000 ] && echo "< 2 s" || echo "< 3 s")
  row plan "gpuops plan (in process)" "$n x $k ($((n * k)) pods)" "$(to_ms "$real" "$unit") ms" "" \
    "RSS $(printf '%.0f' "$rss") MB" "$tgt"
  dump=$(sed -n "s/^plan_bench: kept \(.*-${n}x${k}.json\)$/\1/p" "$OUT/plan-keep.err")
  [ -f "$dump" ] || { echo "bench.sh: plan_bench kept no ${n}x${k} dump" >&2; exit 1; }
  runs=()
  for i in 1 2 3; do
    # Exit 1: the plan found a change (kubectl diff's code), as it must.
    rc=0
    /usr/bin/time -f '%e %U %S %M' -o "$OUT/time.txt" "$BUILD/gpuops" plan --snapshot "$dump" --operands gpu-operator \
      label node node-0 nvidia.com/gpu.deploy.driver=false --overwrite >/dev/null 2>"$OUT/plan-run.err" || rc=$?
    [ "$rc" = 1 ] || { echo "bench.sh: gpuops plan exited $rc" >&2; cat "$OUT/plan-run.err" >&2; exit 1; }
    runs+=("$(tail -1 "$OUT/time.txt")")
  done
  read -r wall user sys kb < <(printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p)
  row plan "gpuops plan --snapshot (process, median of 3)" "$n x $k ($(($(stat -c %s "$dump") / 1048576)) MiB)" \
    "$wall s" "$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f s", u + s }')" "RSS $((kb / 1024)) MiB" "$tgt"
  rm -f "$dump"
done < <(gbench_rows "$OUT/plan.json")

# -- the scenario runner at scale (docs/PERFORMANCE.md)
log "== a 5,000 x 16 scenario: load, gpuops run"
for bm in 'BM_ScenarioLoad/5000' 'BM_ScenarioRun/nodes:5000/expect:0/' 'BM_ScenarioRun/nodes:5000/expect:1/'; do
  f="$OUT/scenario.json"
  "$BUILD/bench/scenario_bench" --benchmark_filter="^$bm" --benchmark_out="$f" --benchmark_out_format=json >&2
  while IFS=$'\t' read -r name real cpu unit rss err; do
    [ -n "$err" ] && { echo "bench.sh: $name: $err" >&2; exit 1; }
    case "$name" in
      BM_ScenarioLoad*) w="core::load_scenario"; tgt="< 0.3 s"; thread="" ;;
      */expect:0/*) w="gpuops run (in process), no expectation"; tgt=""; thread=" main thread" ;;
      *) w="gpuops run (in process), two DaemonSets' status"; tgt=""; thread=" main thread" ;;
    esac
    # A scenario runs on a worker thread: Google Benchmark's CPU is the main thread's.
    row scenario "$w" "5000 x 16 ($(jq -r '.benchmarks[0].file_MB | floor' "$f") MB)" "$(to_ms "$real" "$unit") ms" \
      "$(to_ms "$cpu" "$unit") ms$thread" "RSS $(printf '%.0f' "$rss") MB" "$tgt"
  done < <(gbench_rows "$f")
done

# ---------------------------------------------------------------- the lab
log "== the lab: simulator vs real control plane"
time_cmd() {  # prints "wall user+sys" seconds of the command
  local TIMEFORMAT='%R %U %S'
  { time "$@" >/dev/null 2>"$OUT/time.err"; } 2>&1 | tail -1 | awk '{ printf "%s %.3f", $1, $2 + $3 }'
}
sim_times=()
for i in 1 2 3 4 5; do
  rm -rf "$OUT/lab-sim"
  sim_times+=("$(time_cmd "$BUILD/gpuops" lab run --dir "$OUT/lab-sim" --quiet --overwrite)")
done
sim=$(printf '%s\n' "${sim_times[@]}" | sort -n | sed -n 3p)
sim_wall=${sim% *}
row lab "gpuops lab run, simulator (process, median of 5)" "3 nodes x 5" "${sim_wall} s" "${sim#* } s" "" ""
"$BUILD/bench/simulator_bench" --benchmark_filter='BM_LabRun' --benchmark_out="$OUT/lab.json" \
  --benchmark_out_format=json >&2
read -r _ lab_real lab_cpu lab_unit _ _ < <(gbench_rows "$OUT/lab.json")
lab_ms=$(to_ms "$lab_real" "$lab_unit")
row lab "core::run_lab on FakeCluster (in process)" "3 nodes x 5" "$lab_ms ms" "$(to_ms "$lab_cpu" "$lab_unit") ms" "" ""
if [ "${BENCH_CLUSTER:-1}" != 0 ]; then
  CLUSTER_DIR="$OUT/cluster"
  if "$ROOT/scripts/cluster-up.sh" "$CLUSTER_DIR" >"$OUT/cluster-up.log" 2>&1; then
    real=$(time_cmd "$BUILD/gpuops" lab run --dir "$OUT/lab-real" --quiet --overwrite --kubeconfig "$CLUSTER_DIR/kubeconfig") ||
      real=""
    "$ROOT/scripts/cluster-down.sh" "$CLUSTER_DIR" >/dev/null 2>&1 || true
    CLUSTER_DIR=""
    if [ -n "$real" ]; then
      real_wall=${real% *}
      row lab "gpuops lab run, real control plane (cluster-up.sh)" "3 nodes x 5" "${real_wall} s" \
        "${real#* } s gpuops only" "ratio $(awk -v a="$real_wall" -v b="$sim_wall" -v c="$lab_ms" 'BEGIN{printf "%.0fx (process), %.0fx (in process)", a/b, a*1000/c}')" \
        ">= 1000x"
    else
      log "bench.sh: gpuops lab run on the real control plane failed: $(tail -3 "$OUT/time.err")"
      row lab "gpuops lab run, real control plane" "3 nodes x 5" "failed" "" "" ""
    fi
  else
    log "bench.sh: cluster-up.sh failed: $(tail -5 "$OUT/cluster-up.log")"
    row lab "gpuops lab run, real control plane" "3 nodes x 5" "cluster-up failed" "" "" ""
  fi
fi

# ---------------------------------------------------------------- table
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "gpuops benchmarks  $(date -u +%Y-%m-%dT%H:%MZ)  $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "machine: $(nproc) cores, $CPU; load average $LOAD_START at start, $LOAD_END at end"
echo
{
  printf 'area\tbenchmark\tsize\twall\tCPU\tnotes\ttarget\n'
  printf '%s\n' "${ROWS[@]}"
} | column -t -s $'\t'
