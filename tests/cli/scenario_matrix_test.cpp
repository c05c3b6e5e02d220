// gpuops run with bindings and a matrix (--values, --set), --start-at,
// --skip-cleanup, and assert/error expectations, on the simulator.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

#include "../common/cli_run.h"
#include "core/scenario/scenario_schema.h"

namespace fs = std::filesystem;

namespace {

using gpuops::testing::run_gpuops;

class Dir {
 public:
  Dir() : path_(fs::temp_directory_path() / ("gpuops-run-matrix-" + std::to_string(::getpid()) + "-" + next())) {
    fs::create_directories(path_);
  }
  ~Dir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return (path_ / name).string();
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path_ / name);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  static std::string next() {
    static int n = 0;
    return std::to_string(n++);
  }
  fs::path path_;
};

// dcgm-exporter on gpu-a when its deploy label is "true", not when "false".
const char* const kMatrix = R"(name: mx
matrix:
  - {flag: "true", running: [gpu-a]}
  - {flag: "false", running: []}
cluster:
  nodes:
    - name: gpu-a
      labels: {nvidia.com/gpu.deploy.dcgm-exporter: ($flag)}
steps:
  - createNamespace: gpu-operator
  - apply: {operands: [dcgm-exporter]}
    expect:
      running:
        nvidia-dcgm-exporter: ($running)
)";

// The nodes and what runs, given from the command line.
const char* const kValues = R"(name: sv
cluster:
  nodes: ($nodes)
steps:
  - createNamespace: gpu-operator
  - apply: {operands: [dcgm-exporter]}
    expect:
      running:
        nvidia-dcgm-exporter: ($running)
)";

// Step 2 is wrong on purpose; step 3 holds.
const char* const kStartAt = R"(name: sa
cluster:
  nodes: [{name: gpu-a, labels: {nvidia.com/gpu.deploy.dcgm-exporter: "true"}}]
steps:
  - createNamespace: gpu-operator
  - name: wrong on purpose
    apply: {operands: [dcgm-exporter]}
    expect:
      running:
        nvidia-dcgm-exporter: []
  - name: checked
    label: {node: gpu-a, set: {nvidia.com/gpu.deploy.dcgm-exporter: "false"}}
    expect:
      running:
        nvidia-dcgm-exporter: []
)";

}  // namespace

TEST(ScenarioMatrix, EachEntryRunsAndIsNamedInEveryReport) {
  Dir d;
  const std::string f = d.write("mx.yaml", kMatrix);
  auto r = run_gpuops({"run", f, "--report-json", d.path("r.json"), "--junit", d.path("r.xml")});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "PASS mx[flag=true] (2 steps)\nPASS mx[flag=false] (2 steps)\n2 passed, 0 failed\n");
  const boost::json::value report = boost::json::parse(d.read("r.json"));
  const auto& scenarios = report.at("scenarios").as_array();
  ASSERT_EQ(scenarios.size(), 2u);
  EXPECT_EQ(scenarios[0].at("name").as_string(), "mx[flag=true]");
  EXPECT_EQ(scenarios[1].at("name").as_string(), "mx[flag=false]");
  EXPECT_EQ(scenarios[1].at("file").as_string(), f);
  boost::property_tree::ptree junit;
  std::istringstream xml(d.read("r.xml"));
  boost::property_tree::read_xml(xml, junit);
  std::vector<std::string> names;
  for (const auto& [tag, testcase] : junit.get_child("testsuite"))
    if (tag == "testcase") names.push_back(testcase.get<std::string>("<xmlattr>.name"));
  EXPECT_EQ(names, (std::vector<std::string>{"mx[flag=true]", "mx[flag=false]"}));
  // --filter sees the entries' names.
  auto one = run_gpuops({"run", f, "--filter", "flag=false"});
  EXPECT_EQ(one.out, "PASS mx[flag=false] (2 steps)\n1 passed, 0 failed\n");
}

TEST(ScenarioMatrix, SetOverridesAMatrixEntry) {
  Dir d;
  const std::string f = d.write("mx.yaml", kMatrix);
  // running=[] for both entries: the "true" one fails (gpu-a runs it).
  auto r = run_gpuops({"run", f, "--set", "running=[]"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(gpuops::testing::lines_with(r.out, "mx["), "FAIL mx[flag=true] (2 steps)\nPASS mx[flag=false] (2 steps)\n");
}

TEST(ScenarioMatrix, ValuesFileAndSetGiveBindings) {
  Dir d;
  const std::string f = d.write("sv.yaml", kValues);
  const std::string values = d.write("values.yaml", R"(nodes:
  - {name: a, labels: {nvidia.com/gpu.deploy.dcgm-exporter: "true"}}
  - {name: b, labels: {nvidia.com/gpu.deploy.dcgm-exporter: "true"}}
running: [b]
)");
  // --set over --values, its list read whole (the comma does not split it).
  auto both = run_gpuops({"run", f, "--values", values, "--set", "running=[a, b]"});
  EXPECT_EQ(both.code, 0) << both.out << both.err;
  EXPECT_EQ(both.out, "PASS sv (2 steps)\n1 passed, 0 failed\n");
  auto values_only = run_gpuops({"run", f, "--values", values});
  EXPECT_EQ(values_only.code, 1);
  EXPECT_EQ(gpuops::testing::lines_with(values_only.out, "FAIL "), "FAIL sv (2 steps)\n");
  // Without them: an unknown binding, a load error (exit 2) naming file, line and field.
  auto none = run_gpuops({"run", f});
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(none.out, "");
  EXPECT_NE(none.err.find(f + ":3: cluster.nodes: unknown binding \"nodes\" (no bindings: give them under "
                              "bindings:, matrix:, --values or --set)"),
            std::string::npos)
      << none.err;
  auto bad = run_gpuops({"run", f, "--set", "running"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--set: running: give a binding as NAME=VALUE (e.g. --set version=v26.7)"), std::string::npos)
      << bad.err;
}

TEST(ScenarioMatrix, StartAtRunsTheEarlierStepsUnchecked) {
  Dir d;
  const std::string f = d.write("sa.yaml", kStartAt);
  auto whole = run_gpuops({"run", f});
  EXPECT_EQ(whole.code, 1);
  const std::string skipped_lines =
      "  skipped \"createNamespace gpu-operator\": before --start-at (its action ran, its expectations were not "
      "checked)\n"
      "  skipped \"wrong on purpose\": before --start-at (its action ran, its expectations were not checked)\n";
  for (const std::string step : {"checked", "3"}) {
    auto r = run_gpuops({"run", f, "--start-at", step});
    EXPECT_EQ(r.code, 0) << step << r.out;
    EXPECT_EQ(r.out, "PASS sa (3 steps, 2 skipped)\n" + skipped_lines + "1 passed, 0 failed\n") << step;
  }
  auto at2 = run_gpuops({"run", f, "--start-at", "2"});
  EXPECT_EQ(at2.code, 1);
  auto missing = run_gpuops({"run", f, "--start-at", "4"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.out, "FAIL sa (1 step, 1 skipped)\n  " + f +
                             ": --start-at: no step \"4\" (a step's name or 1 to 3)\n"
                             "  skipped \"(whole scenario)\": the scenario was not run\n0 passed, 1 failed\n");
}

TEST(ScenarioMatrix, SkipCleanupHasNoEffectOnTheSimulator) {
  Dir d;
  const std::string f = d.write("mx.yaml", kMatrix);
  auto r = run_gpuops({"run", f, "--skip-cleanup"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "PASS mx[flag=true] (2 steps)\nPASS mx[flag=false] (2 steps)\n2 passed, 0 failed\n");
  auto help = run_gpuops({"run", "--help"});
  // cxxopts wraps the description at "(no" (its column set by the longest
  // option, --pause-on-failure).
  EXPECT_NE(help.out.find("--skip-cleanup      real backend: leave what each scenario created \n"
                          "                          (no effect on the simulator)\n"),
            std::string::npos)
      << help.out;
}

// The library's per-release scenarios are one matrix scenario each, an entry
// per catalogued release (core::catalogued_releases), v25.3 first (the one
// that runs on the real operator too).
TEST(ScenarioMatrix, OperatorReleasesAreOneScenarioEach) {
  const std::string dir = std::string(GPUOPS_SOURCE_DIR) + "/scenarios/operator/";
  auto r = run_gpuops({"run", dir + "deleted-key.yaml", dir + "empty-label.yaml"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  std::string want;
  for (const char* name : {"operator-deleted-key", "operator-empty-label"}) {
    want += std::string("PASS ") + name + "[version=v25.3,simulatorOnly=false] (1 step)\n";
    for (const char* v : {"v23.9", "v24.3", "v24.6", "v24.9", "v25.10", "v26.3", "v26.7"})
      want += std::string("PASS ") + name + "[version=" + v + ",simulatorOnly=true] (1 step)\n";
  }
  EXPECT_EQ(r.out, want + "16 passed, 0 failed\n");
}

// assert / error on the simulator: what the cluster reads, by partial match.
TEST(ScenarioAssertRun, PartialObjectsOnTheSimulator) {
  Dir d;
  const std::string f = d.write("as.yaml", R"(name: as
cluster:
  nodes: [{name: gpu-a, labels: {nvidia.com/gpu.deploy.dcgm-exporter: "true"}}]
steps:
  - createNamespace: gpu-operator
  - apply: {operands: [dcgm-exporter]}
    expect:
      assert:
        - apiVersion: apps/v1
          kind: DaemonSet
          metadata: {name: nvidia-dcgm-exporter, namespace: gpu-operator}
          status: {desiredNumberScheduled: ($desired)}
      error:
        - {apiVersion: v1, kind: Pod, spec: {nodeName: gpu-b}}
)");
  auto ok = run_gpuops({"run", f, "--set", "desired=1"});
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_EQ(ok.out, "PASS as (2 steps)\n1 passed, 0 failed\n");
  auto wrong = run_gpuops({"run", f, "--set", "desired=2"});
  EXPECT_EQ(wrong.code, 1);
  EXPECT_EQ(wrong.out, "FAIL as (2 steps)\n  " + f +
                           ":6: step \"apply\"\n"
                           "    assert (line 9): DaemonSet gpu-operator/nvidia-dcgm-exporter: "
                           "status.desiredNumberScheduled: expected 2, got 1\n"
                           "0 passed, 1 failed\n");
}

TEST(ScenarioSchemaRun, RunPrintsTheSchema) {
  auto r = run_gpuops({"run", "--schema"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(boost::json::parse(r.out), boost::json::value(gpuops::core::scenario_schema()));
}
