// Simulator benchmarks (issues 3 and 9): settle from empty and one label flip
// on a settled cluster, for 1,000 and 5,000 nodes x 5 and x 16 operands of the
// gpu-operator catalog (bench_common.h); peak RSS.
//
//   ninja -C build simulator_bench && build/bench/simulator_bench
//
// Targets: 5,000 x 16 settles in < 1 s; a label flip costs < 5 ms and does
// not grow with the cluster; peak RSS < 500 MB. Results: docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include <unistd.h>

#include <filesystem>

#include "bench/bench_common.h"
#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/operands.h"
#include "core/lab/lab.h"
#include "simulator/fake_cluster.h"

namespace {

using gpuops::simulator::FakeCluster;
namespace core = gpuops::core;
namespace bench = gpuops::bench;
using bench::kNs;
using bench::peak_rss_mb;

// N nodes with every deploy label "true", then the first `operands` operands
// of the gpu-operator catalog applied (bench_common.h). Not settled.
void populate(FakeCluster& c, int nodes, int operands) {
  auto ops = bench::operands(operands);
  c.create_namespace(kNs);
  for (int n = 0; n < nodes; ++n) c.add_node(bench::node(n, ops));
  std::vector<core::Object> ds;
  for (const auto& op : ops) ds.emplace_back(bench::daemonset(op));
  c.apply(ds);
}

void BM_SettleFromEmpty(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0)), operands = static_cast<int>(state.range(1));
  size_t pods = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto c = std::make_unique<FakeCluster>();
    populate(*c, nodes, operands);
    state.ResumeTiming();
    c->settle();
    state.PauseTiming();
    pods = c->store().pod_count();
    c.reset();
    state.ResumeTiming();
  }
  if (pods != static_cast<size_t>(nodes) * operands) state.SkipWithError("wrong pod count");
  state.counters["pods"] = static_cast<double>(pods);
  state.counters["peak_rss_MB"] = peak_rss_mb();
}
BENCHMARK(BM_SettleFromEmpty)
    ->Args({100, 16})  // everything in cache: the per-pod cost without misses (docs/PERFORMANCE.md)
    ->Args({1000, 5})
    ->Args({1000, 16})
    ->Args({5000, 5})
    ->Args({5000, 16})
    ->Args({15000, 20})   // past upstream's 5,000-node limit (docs/PERFORMANCE.md)
    ->Args({65000, 16})   // the largest production clusters (GKE, 1.31 and later)
    ->Args({130000, 16})  // measured, no target (GKE's experiment)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// One deploy label flipped on one node of a settled cluster, then settle:
// alternately an opt-out (pod deleted) and an opt-in (pod created, bound,
// Running), with every DaemonSet status kept exact. The label is the
// container-toolkit's (only its DaemonSet selects on it).
void BM_LabelFlip(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0)), operands = static_cast<int>(state.range(1));
  auto ops = bench::operands(operands);
  const core::Operand& op = ops[1];
  FakeCluster c;
  populate(c, nodes, operands);
  c.settle();
  bool on = true;
  for (auto _ : state) {
    on = !on;
    c.set_node_label(bench::node_name(nodes / 2), op.label, on ? "true" : "false");
    c.settle();
  }
  auto* d = c.store().find_daemonset(kNs, op.daemonset);
  int expected = nodes - (on ? 0 : 1);
  if (!d || d->status.desired_number_scheduled != expected || d->status.number_ready != expected)
    state.SkipWithError("wrong DaemonSet status after flips");
  state.counters["peak_rss_MB"] = peak_rss_mb();
}
// One image update of one DaemonSet rolled out over N nodes at maxUnavailable
// 10% (kwok profile: a pod deleted goes at once, a new one is Ready at once),
// timed from the apply to the end of settle(): rollingUpdate's batches of
// ceil(10% of N) pods (GetScaledValueFromIntOrPercent), each a deletion,
// a creation, a binding and Ready, plus the history and status writes.
void BM_RollingUpdate(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  auto ops = bench::operands(1);
  int round = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto c = std::make_unique<FakeCluster>();
    c->create_namespace(kNs);
    for (int n = 0; n < nodes; ++n) c->add_node(bench::node(n, ops));
    core::DaemonSet d = bench::daemonset(ops[0]);
    d.max_unavailable = core::IntOrPercent{10, true};
    c->apply({d});
    c->settle();
    d.template_.spec.containers.at(0).image += "-update" + std::to_string(++round);
    state.ResumeTiming();
    c->apply({d});
    c->settle();
    state.PauseTiming();
    auto* s = c->store().find_daemonset(kNs, ops[0].daemonset);
    if (!s || s->status.updated_number_scheduled != nodes || s->status.number_available != nodes)
      state.SkipWithError("rollout did not complete");
    c.reset();
    state.ResumeTiming();
  }
  state.counters["peak_rss_MB"] = peak_rss_mb();
}
BENCHMARK(BM_RollingUpdate)->Args({1000})->Args({5000})->Unit(benchmark::kMillisecond)->Iterations(3);

// The simulated GPU Operator (v25.3, ClusterPolicy at its defaults) on N GPU
// nodes that carry only NFD's labels: labelGPUNodes labels every node, the
// nine DaemonSets are rendered, 7 pods per node are created and Ready, the
// policy ends ready (the target, docs/PERFORMANCE.md: 5,000 GPU nodes labelled and settled).
// Arg 2 (1: the kubelet profile): the validation gates, start delays and
// grace periods, and k8s-driver-manager's pause and restore on every node
// (v0.8.1 pauses on a fresh install), so most pods are created twice.
void BM_OperatorInstall(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bool kubelet = state.range(1) == 1;
  const core::Catalog catalog = core::load_catalog("gpu-operator-v25.3");
  size_t pods = 0;
  std::string policy_state;
  for (auto _ : state) {
    state.PauseTiming();
    FakeCluster::Options o;
    if (kubelet) o.profile = gpuops::simulator::KubeletProfile::kKubelet;
    auto c = std::make_unique<FakeCluster>(o);
    for (int n = 0; n < nodes; ++n) {
      core::Node node;
      node.metadata.name = "gpu-" + std::to_string(n);
      node.metadata.labels = {{"feature.node.kubernetes.io/pci-10de.present", "true"},
                              {"feature.node.kubernetes.io/kernel-version.full", "6.8.0-101-generic"}};
      c->add_node(node);
    }
    c->install_operator(catalog);
    core::ClusterPolicy cp;
    cp.metadata.name = "cluster-policy";
    cp.raw = boost::json::object{{"spec", core::with_required_spec_fields({})}};
    state.ResumeTiming();
    c->apply({core::Object(cp)});
    c->settle();
    state.PauseTiming();
    pods = c->store().pod_count();
    policy_state = c->store().cluster_policies().at("cluster-policy").state;
    c.reset();
    state.ResumeTiming();
  }
  if (pods != static_cast<size_t>(nodes) * 7 || policy_state != "ready") state.SkipWithError("not settled as expected");
  state.counters["pods"] = static_cast<double>(pods);
  state.counters["peak_rss_MB"] = peak_rss_mb();
}
BENCHMARK(BM_OperatorInstall)
    ->Args({1000, 0})
    ->Args({5000, 0})
    ->Args({15000, 0})
    ->Args({65000, 0})
    ->Args({1000, 1})
    ->Args({5000, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

BENCHMARK(BM_LabelFlip)
    ->Args({1000, 5})
    ->Args({1000, 16})
    ->Args({5000, 5})
    ->Args({5000, 16})
    ->Args({15000, 20})
    ->Args({65000, 16})
    ->Args({130000, 16})
    ->Unit(benchmark::kMicrosecond);

// LAB.md's eight steps (core::run_lab, as `gpuops lab run` does) on a fresh
// simulator, in process: what `gpuops lab run` costs without starting a
// process. Writes the working directory to a temporary folder.
void BM_LabRun(benchmark::State& state) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("gpuops-bench-lab-" + std::to_string(::getpid()));
  core::Catalog catalog = core::load_catalog("lab");
  for (auto _ : state) {
    FakeCluster c;
    core::LabRunOptions lo;
    lo.dir = dir.string();
    core::run_lab(c, catalog, lo);
  }
  fs::remove_all(dir);
}
BENCHMARK(BM_LabRun)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
