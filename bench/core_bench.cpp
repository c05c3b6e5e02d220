// Core benchmarks (docs/PERFORMANCE.md): placement (core::should_run, every DaemonSet x
// every node) and the audit (core::audit, LAB.md step 6) over 1,000, 5,000 and
// 20,000 nodes x 16 operands of the gpu-operator catalog (bench_common.h), and
// core::diagnose over 1,000 and 5,000 nodes x 16.
//
//   ninja -C build core_bench && build/bench/core_bench
//
// The audit's cluster is settled: every node runs a Running pod of every
// operand, so the audit prints `<node> OK` for each node. The diagnose's
// cluster is the same, healthy in the operator's terms (NFD's GPU label on
// every node, every pod Ready), so it gives one `running` finding per (node,
// operand) pair. Results: docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "bench/bench_common.h"
#include "core/analysis/analysis.h"
#include "core/diagnose/diagnose.h"
#include "core/kube/placement.h"

namespace {

namespace core = gpuops::core;
namespace bench = gpuops::bench;

constexpr int kOperands = 16;

// A settled cluster: nodes, the operands' DaemonSets, one Running pod per pair.
core::ClusterState settled_state(int nodes) {
  auto ops = bench::operands(kOperands);
  core::ClusterState s;
  s.namespace_ = bench::kNs;
  for (int i = 0; i < nodes; ++i) s.nodes.push_back(bench::node(i, ops));
  for (size_t k = 0; k < ops.size(); ++k) {
    core::DaemonSet d = bench::daemonset(ops[k]);
    d.metadata.uid = "uid-" + std::to_string(k);
    s.daemonsets.push_back(d);
  }
  s.pods.reserve(static_cast<size_t>(nodes) * ops.size());
  for (int i = 0; i < nodes; ++i) {
    for (const auto& d : s.daemonsets) {
      core::Pod p;
      p.metadata.name = d.metadata.name + "-" + std::to_string(i);
      p.metadata.namespace_ = bench::kNs;
      p.metadata.labels = d.template_.labels;
      p.metadata.owner_references.push_back(
          core::OwnerReference{"apps/v1", "DaemonSet", d.metadata.name, d.metadata.uid, true});
      p.spec = d.template_.spec;
      p.spec.node_name = bench::node_name(i);
      p.status.phase = "Running";
      s.pods.push_back(std::move(p));
    }
  }
  return s;
}

void BM_Placement(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  core::ClusterState s = settled_state(nodes);
  int64_t running = 0;
  for (auto _ : state) {
    running = 0;
    for (const auto& d : s.daemonsets)
      for (const auto& n : s.nodes) running += core::should_run(d, n).should_run;
    benchmark::DoNotOptimize(running);
  }
  if (running != static_cast<int64_t>(nodes) * kOperands) state.SkipWithError("wrong placement count");
  state.counters["pairs"] = static_cast<double>(nodes) * kOperands;
  state.counters["per_pair"] =
      benchmark::Counter(static_cast<double>(nodes) * kOperands,
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Placement)->Arg(1000)->Arg(5000)->Arg(20000)->Unit(benchmark::kMillisecond);

void BM_Audit(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  core::ClusterState s = settled_state(nodes);
  core::Catalog catalog = bench::catalog(kOperands);
  size_t lines = 0;
  int exit_code = -1;
  for (auto _ : state) {
    core::Report r = core::audit(s, catalog);
    lines = r.lines.size();
    exit_code = r.exit_code;
    benchmark::DoNotOptimize(r);
  }
  if (lines != static_cast<size_t>(nodes) || exit_code != 0) state.SkipWithError("audit did not print one OK per node");
  state.counters["pods"] = static_cast<double>(s.pods.size());
}
BENCHMARK(BM_Audit)->Arg(1000)->Arg(5000)->Arg(20000)->Unit(benchmark::kMillisecond);

// settled_state, healthy for diagnose: GPU nodes (NFD's pci-10de label) and
// Ready pods, so every (node, operand) pair is `running` and nothing else.
core::ClusterState healthy_state(int nodes) {
  core::ClusterState s = settled_state(nodes);
  for (auto& n : s.nodes) n.metadata.labels["feature.node.kubernetes.io/pci-10de.present"] = "true";
  for (auto& p : s.pods) p.status.conditions.push_back(core::PodCondition{"Ready", "True", "", "", std::nullopt});
  return s;
}

void BM_Diagnose(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  core::ClusterState s = healthy_state(nodes);
  core::Catalog catalog = bench::catalog(kOperands);
  size_t findings = 0, running = 0;
  for (auto _ : state) {
    std::vector<core::Finding> f = core::diagnose(s, catalog, {});
    findings = f.size();
    running = static_cast<size_t>(
        std::count_if(f.begin(), f.end(), [](const core::Finding& x) { return x.name == "running"; }));
    benchmark::DoNotOptimize(f);
  }
  if (findings != static_cast<size_t>(nodes) * kOperands || running != findings)
    state.SkipWithError("diagnose did not give one running finding per (node, operand)");
  state.counters["pods"] = static_cast<double>(s.pods.size());
}
BENCHMARK(BM_Diagnose)->Arg(1000)->Arg(5000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
