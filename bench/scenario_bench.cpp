// The scenario runner at scale (docs/PERFORMANCE.md): a scenario file of N nodes
// and the first 16 operands of the gpu-operator catalog (bench_common.h),
// written once as docs/SCENARIOS.md and scenarios/*.yaml write them, then
//  * BM_ScenarioLoad/N: core::load_scenario of the file (read, YAML, the
//    typed Scenario), nothing run;
//  * BM_ScenarioRun/N/E: the whole `gpuops run FILE` in process (cli::run):
//    load, the simulator's nodes added, the 16 DaemonSets applied and
//    settled (N x 16 pods), and with E = 1 a step's expectation checking two
//    DaemonSets' status (desiredNumberScheduled and numberReady of the driver
//    and the device plugin: N each); with E = 0 the same step without it.
//    The run must pass.
//  * BM_YamlParse/N/P: the file's text (read once) through one YAML
//    parser, to tell the parser's share of the load: P = 0 yaml-cpp's
//    events only (YAML::Parser, a handler that does nothing), 1 YAML::Load
//    (the nodes built), 2 core::load_yaml (the checks and the nodes, what
//    load_scenario calls); with libfyaml (Debian's libfyaml-dev, measured and
//    not adopted: docs/PERFORMANCE.md) 3 its events only, 4 its document.
// Counters: the file's size, peak_rss_MB (the process's VmHWM: run one
// configuration per process for its own; scripts/bench.sh does).
//
//   ninja -C build scenario_bench && build/bench/scenario_bench
//
// Each node is what a scenario copied from a real GPU node holds: NFD's GPU,
// kernel and OS labels (the kernel and OS unquoted, as kubectl prints them),
// nvidia.com/gpu.present and each distinct deploy label of the operands
// "true" (a block map), allocatable in flow style. Results:
// docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "bench/bench_common.h"
#include "cli/app.h"
#include "core/base/input_file.h"
#include "core/codec/encode.h"
#include "core/codec/yaml_load.h"
#include "core/scenario/scenario.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#ifdef GPUOPS_HAVE_FYAML
#include <libfyaml.h>
#endif

namespace {

namespace core = gpuops::core;
namespace bench = gpuops::bench;
namespace fs = std::filesystem;

constexpr int kOperands = 16;

// The scenario's folder: scenario.yaml and manifests/daemonsets.json (the 16
// DaemonSets as one List). `expect`: the apply step checks two DaemonSets.
std::string write_scenario(int nodes, bool expect) {
  auto ops = bench::operands(kOperands);
  fs::path dir =
      fs::temp_directory_path() / ("gpuops-scenario-bench-" + std::to_string(nodes) + (expect ? "-expect" : "-plain"));
  fs::create_directories(dir / "manifests");
  boost::json::array items;
  for (const auto& op : ops) items.push_back(core::encode(bench::daemonset(op)));
  std::ofstream(dir / "manifests" / "daemonsets.json")
      << boost::json::serialize(boost::json::object{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}});
  std::ostringstream y;
  y << "name: scale-" << nodes << "x" << kOperands << "\n"
    << "description: " << nodes << " GPU nodes, " << kOperands << " operands (bench/scenario_bench.cpp)\n"
    << "operands: gpu-operator\n"
    << "cluster:\n"
    << "  nodes:\n";
  for (int i = 0; i < nodes; ++i) {
    y << "    - name: " << bench::node_name(i) << "\n"
      << "      labels:\n"
      << "        feature.node.kubernetes.io/pci-10de.present: \"true\"\n"
      << "        feature.node.kubernetes.io/kernel-version.full: 6.8.0-101-generic\n"
      << "        feature.node.kubernetes.io/system-os_release.ID: ubuntu\n"
      << "        feature.node.kubernetes.io/system-os_release.VERSION_ID: \"22.04\"\n"
      << "        nvidia.com/gpu.present: \"true\"\n";
    std::set<std::string> labels;  // mps-control-daemon shares the device plugin's
    for (const auto& op : ops)
      if (labels.insert(op.label).second) y << "        " << op.label << ": \"true\"\n";
    y << "      allocatable: {cpu: \"64\", memory: 512Gi, pods: \"110\"}\n";
  }
  y << "steps:\n"
    << "  - createNamespace: gpu-operator\n"
    << "  - apply: {files: [manifests/daemonsets.json]}\n";
  if (expect) {
    // Every node carries every deploy label and has room: one Running, Ready
    // pod per node (kwok profile).
    y << "    expect:\n"
      << "      daemonsets:\n"
      << "        nvidia-driver-daemonset: {desiredNumberScheduled: " << nodes << ", numberReady: " << nodes << "}\n"
      << "        nvidia-device-plugin-daemonset: {desiredNumberScheduled: " << nodes << ", numberReady: " << nodes
      << "}\n";
  }
  fs::path file = dir / "scenario.yaml";
  std::ofstream(file) << y.str();
  return file.string();
}

void BM_ScenarioLoad(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const std::string file = write_scenario(nodes, true);
  size_t loaded = 0;
  for (auto _ : state) {
    core::Scenario s = core::load_scenario(file);
    loaded = s.nodes.size();
    benchmark::DoNotOptimize(s);
  }
  if (loaded != static_cast<size_t>(nodes)) state.SkipWithError("the scenario did not load every node");
  state.counters["file_MB"] = static_cast<double>(fs::file_size(file)) / 1e6;
  state.counters["peak_rss_MB"] = bench::peak_rss_mb();
  fs::remove_all(fs::path(file).parent_path());
}
BENCHMARK(BM_ScenarioLoad)->Arg(1000)->Arg(5000)->Unit(benchmark::kMillisecond);

// yaml-cpp's parser with nothing built: what any use of yaml-cpp pays.
class NoEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

void BM_YamlParse(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int parser = static_cast<int>(state.range(1));
  const std::string file = write_scenario(nodes, true);
  const std::string text = core::read_input_file(file);
  for (auto _ : state) {
    if (parser == 0) {
      std::istringstream in(text);
      YAML::Parser p(in);
      NoEvents none;
      while (p.HandleNextDocument(none)) {
      }
    } else if (parser == 1) {
      benchmark::DoNotOptimize(YAML::Load(text));
    } else if (parser == 2) {
      benchmark::DoNotOptimize(core::load_yaml(text, file));
    } else {
#ifdef GPUOPS_HAVE_FYAML
      fy_parse_cfg cfg{};
      cfg.flags = FYPCF_QUIET;
      if (parser == 3) {
        fy_parser* p = fy_parser_create(&cfg);
        fy_parser_set_string(p, text.data(), text.size());
        while (fy_event* e = fy_parser_parse(p)) fy_parser_event_free(p, e);
        if (fy_parser_get_stream_error(p)) state.SkipWithError("libfyaml refused the file");
        fy_parser_destroy(p);
      } else {
        fy_document* d = fy_document_build_from_string(&cfg, text.data(), text.size());
        if (!d) state.SkipWithError("libfyaml refused the file");
        fy_document_destroy(d);
      }
#else
      state.SkipWithError("built without libfyaml");
      break;
#endif
    }
  }
  state.counters["file_MB"] = static_cast<double>(text.size()) / 1e6;
  fs::remove_all(fs::path(file).parent_path());
}
BENCHMARK(BM_YamlParse)
    ->ArgsProduct({{5000}, {0, 1, 2, 3, 4}})
    ->ArgNames({"nodes", "parser"})
    ->Unit(benchmark::kMillisecond);

void BM_ScenarioRun(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bool expect = state.range(1) != 0;
  const std::string file = write_scenario(nodes, expect);
  int code = -1;
  std::string text;
  for (auto _ : state) {
    std::ostringstream out, err;
    code = gpuops::cli::run({"run", file}, out, err);
    text = out.str() + err.str();
  }
  if (code != 0 || text.find("1 passed, 0 failed") == std::string::npos)
    state.SkipWithError(("the scenario did not pass: exit " + std::to_string(code) + ": " + text).c_str());
  state.counters["file_MB"] = static_cast<double>(fs::file_size(file)) / 1e6;
  state.counters["peak_rss_MB"] = bench::peak_rss_mb();
  fs::remove_all(fs::path(file).parent_path());
}
BENCHMARK(BM_ScenarioRun)
    ->Args({5000, 0})
    ->Args({5000, 1})
    ->ArgNames({"nodes", "expect"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
