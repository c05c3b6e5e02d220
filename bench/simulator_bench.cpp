// Simulator benchmarks (issue 3): settle from empty for 1,000 and 5,000 nodes
// x 5 and x 16 operands, one label flip on a settled cluster, peak RSS.
//
//   ninja -C build simulator_bench && build/bench/simulator_bench
//
// Targets: 5,000 x 16 settles in < 1 s; a label flip costs < 5 ms and does
// not grow with the cluster; peak RSS < 500 MB. Results: docs/SIMULATOR.md.
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

#include "simulator/fake_cluster.h"

namespace {

using gpuops::simulator::FakeCluster;
namespace core = gpuops::core;

const char* kNs = "gpu-operator";

std::string label_of(int i) { return "nvidia.com/gpu.deploy.operand-" + std::to_string(i); }

// A synthetic operand DaemonSet shaped like the lab's: nodeSelector
// `<deploy label>: "true"`, selector and pod label app=<name>, one container
// with a memory request, the GPU toleration.
core::DaemonSet operand(int i) {
  core::DaemonSet d;
  d.metadata.name = "operand-" + std::to_string(i);
  d.metadata.namespace_ = kNs;
  d.selector.match_labels = {{"app", d.metadata.name}};
  d.template_.labels = {{"app", d.metadata.name}};
  d.template_.spec.node_selector = {{label_of(i), "true"}};
  d.template_.spec.tolerations.push_back(core::Toleration{"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt});
  core::Container c;
  c.name = "main";
  c.image = "nvcr.io/nvidia/operand-" + std::to_string(i) + ":v1";
  c.requests["memory"] = core::Quantity::parse("64Mi");
  d.template_.spec.containers.push_back(c);
  return d;
}

// N nodes with every deploy label "true", then the operands applied. Not settled.
void populate(FakeCluster& c, int nodes, int operands) {
  c.create_namespace(kNs);
  for (int n = 0; n < nodes; ++n) {
    core::Node node;
    node.metadata.name = "node-" + std::to_string(n);
    node.metadata.labels = {{"kubernetes.io/hostname", node.metadata.name}, {"nvidia.com/gpu.present", "true"}};
    for (int i = 0; i < operands; ++i) node.metadata.labels[label_of(i)] = "true";
    c.add_node(node);
  }
  std::vector<core::Object> ds;
  for (int i = 0; i < operands; ++i) ds.emplace_back(operand(i));
  c.apply(ds);
}

double peak_rss_mb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  return 0;
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
    ->Args({1000, 5})
    ->Args({1000, 16})
    ->Args({5000, 5})
    ->Args({5000, 16})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// One deploy label flipped on one node of a settled cluster, then settle:
// alternately an opt-out (pod deleted) and an opt-in (pod created, bound,
// Running), with every DaemonSet status kept exact.
void BM_LabelFlip(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0)), operands = 16;
  FakeCluster c;
  populate(c, nodes, operands);
  c.settle();
  bool on = true;
  for (auto _ : state) {
    on = !on;
    c.set_node_label("node-" + std::to_string(nodes / 2), label_of(3), on ? "true" : "false");
    c.settle();
  }
  auto* d = c.store().find_daemonset(kNs, "operand-3");
  int expected = nodes - (on ? 0 : 1);
  if (!d || d->status.desired_number_scheduled != expected || d->status.number_ready != expected)
    state.SkipWithError("wrong DaemonSet status after flips");
  state.counters["peak_rss_MB"] = peak_rss_mb();
}
BENCHMARK(BM_LabelFlip)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
