// `gpuops plan` on a large dump (the target, docs/PERFORMANCE.md: "planning one label change on a
// 5,000-node dump takes under 2 s wall including the import"): the whole
// command in process (cli::run), on a kubectl-shaped JSON dump written once:
// N nodes (allocatable, Ready), the first K operands of the gpu-operator
// catalog as DaemonSets (bench_common.h), one Running and Ready pod of each
// per node. The change lowers one node's driver label: the plan reads the
// dump, imports it, settles, replays, settles and compares, and must find
// exactly one pod deleted. Counters: pods, peak_rss_MB.
#include <benchmark/benchmark.h>

#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/bench_common.h"
#include "cli/app.h"
#include "core/codec/encode.h"

namespace {

namespace core = gpuops::core;
namespace bench = gpuops::bench;
namespace json = boost::json;

std::string write_dump(int nodes, int operands) {
  auto ops = bench::operands(operands);
  // Each kind in the API's list order (by name), as kubectl prints it.
  json::array items;
  std::vector<std::string> node_names;
  for (int i = 0; i < nodes; ++i) node_names.push_back(bench::node_name(i));
  for (size_t ni : bench::kubectl_order(node_names)) {
    const int i = static_cast<int>(ni);
    core::Node n = bench::node(i, ops);
    n.metadata.uid = "node-uid-" + std::to_string(i);
    for (const char* r : {"cpu", "memory", "pods"})
      n.allocatable[r] = core::Quantity::parse(r[0] == 'm' ? "512Gi" : "128");
    n.conditions.push_back({"Ready", "True", "KubeletReady", "kubelet is posting ready status"});
    items.push_back(core::encode(n));
  }
  std::vector<core::DaemonSet> dss;
  for (size_t k = 0; k < ops.size(); ++k) {
    core::DaemonSet d = bench::daemonset(ops[k]);
    d.metadata.uid = "ds-uid-" + std::to_string(k);
    d.metadata.generation = 1;
    d.metadata.annotations["deprecated.daemonset.template.generation"] = "1";
    dss.push_back(d);
  }
  std::vector<std::string> ds_names;
  for (const auto& d : dss) ds_names.push_back(d.metadata.name);
  for (size_t k : bench::kubectl_order(ds_names)) items.push_back(core::encode(dss[k]));
  std::vector<std::string> pod_names;
  std::vector<std::pair<size_t, int>> pod_of;  // (DaemonSet, node) of each pod name
  for (int i = 0; i < nodes; ++i)
    for (size_t k = 0; k < dss.size(); ++k) {
      pod_names.push_back(dss[k].metadata.name + "-" + std::to_string(i));
      pod_of.emplace_back(k, i);
    }
  for (size_t j : bench::kubectl_order(pod_names)) {
    const core::DaemonSet& d = dss[pod_of[j].first];
    const int i = pod_of[j].second;
    core::Pod p;
    p.metadata.name = d.metadata.name + "-" + std::to_string(i);
    p.metadata.namespace_ = bench::kNs;
    p.metadata.uid = d.metadata.uid + "-pod-" + std::to_string(i);
    p.metadata.labels = d.template_.labels;
    p.metadata.labels["pod-template-generation"] = "1";
    p.metadata.owner_references.push_back(
        core::OwnerReference{"apps/v1", "DaemonSet", d.metadata.name, d.metadata.uid, true});
    p.spec = d.template_.spec;
    p.spec.node_name = bench::node_name(i);
    p.status.phase = "Running";
    p.status.conditions.push_back(core::PodCondition{"Ready", "True", "", "", std::nullopt});
    for (const auto& c : p.spec.containers) {
      core::ContainerStatus s;
      s.name = c.name;
      s.ready = true;
      s.state = "running";
      p.status.container_statuses.push_back(s);
    }
    items.push_back(core::encode(p));
  }
  std::string path = (std::filesystem::temp_directory_path() /
                      ("gpuops-plan-bench-" + std::to_string(nodes) + "x" + std::to_string(operands) + ".json"))
                         .string();
  std::ofstream(path) << json::serialize(json::object{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}});
  return path;
}

void BM_PlanLabelChange(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0)), operands = static_cast<int>(state.range(1));
  const std::string dump = write_dump(nodes, operands);
  int code = -1;
  std::string summary;
  for (auto _ : state) {
    std::ostringstream out, err;
    code = gpuops::cli::run({"plan", "--snapshot", dump, "--operands", "gpu-operator", "label", "node", "node-0",
                             "nvidia.com/gpu.deploy.driver=false", "--overwrite"},
                            out, err);
    std::string text = out.str();
    summary = text.substr(text.rfind('\n', text.size() - 2) + 1);
  }
  // PLAN_BENCH_KEEP=1 keeps the dump (its path on stderr), to time
  // `gpuops plan --snapshot` on it as a process.
  if (const char* keep = std::getenv("PLAN_BENCH_KEEP"); keep && std::string(keep) == "1")
    std::fprintf(stderr, "plan_bench: kept %s\n", dump.c_str());
  else
    std::filesystem::remove(dump);
  if (code != 1 || summary.rfind("1 pod deleted on 1 node, 0 created, 0 replaced", 0) != 0)
    state.SkipWithError(("unexpected plan: exit " + std::to_string(code) + ", " + summary).c_str());
  state.counters["pods"] = static_cast<double>(nodes) * operands;
  state.counters["peak_rss_MB"] = bench::peak_rss_mb();
}
BENCHMARK(BM_PlanLabelChange)
    ->Args({1000, 8})
    ->Args({5000, 8})
    ->Args({5000, 16})
    ->Args({15000, 8})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
