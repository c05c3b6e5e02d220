// The whole scenario library through real/ (`gpuops run --backend real`)
// against the simulator served over the Kubernetes API (`gpuops serve`), and
// the same library on the built-in simulator: the same scenarios pass, and
// exactly the simulator-only ones are skipped over the API.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <map>
#include <set>

#include "core/scenario/scenario.h"
#include "helpers.h"
#include "tests/common/cli_run.h"

namespace gpuops::serve_testing {
namespace {

namespace json = boost::json;

using gpuops::testing::CliRun;
using gpuops::testing::run_gpuops;

const std::string kScenarios = std::string(GPUOPS_SOURCE_DIR) + "/scenarios";

// name -> (status, number of skipped steps) from a --report-json report.
std::map<std::string, std::pair<std::string, int>> outcomes(const std::string& report_path) {
  json::value doc = json::parse(read_file(report_path));
  std::map<std::string, std::pair<std::string, int>> out;
  for (const auto& s : doc.at("scenarios").as_array()) {
    int skipped = 0;
    for (const auto& st : s.at("steps").as_array())
      if (st.at("status").as_string() == "skipped") ++skipped;
    out[std::string(s.at("name").as_string())] = {std::string(s.at("status").as_string()), skipped};
  }
  return out;
}

// A cluster that already has nodes: no scenario can run (each creates and
// deletes its own nodes), so `run` stops before the first with a cluster
// error (exit 3), not one FAIL per scenario, and changes nothing.
TEST(ScenarioLibraryOverTheApi, ClusterWithNodesIsRefusedUpFront) {
  Served served(/*lab=*/true);
  CliRun before = run_gpuops({"matrix", "--kubeconfig", served.kubeconfig});
  CliRun r = run_gpuops({"run", "--backend", "real", "--kubeconfig", served.kubeconfig, kScenarios});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "gpuops: error: no scenario run: the cluster already has nodes (lab-node-0, lab-node-1, lab-node-2); a "
            "scenario on a live cluster creates and deletes its own nodes and namespace, so it needs an empty cluster "
            "(gpuops serve, KWOK); nothing was changed\n");
  CliRun after = run_gpuops({"matrix", "--kubeconfig", served.kubeconfig});
  EXPECT_EQ(after.out, before.out);
}

TEST(ScenarioLibraryOverTheApi, SamePassesAsTheSimulator) {
  // An empty served cluster whose virtual time follows the wall clock, as
  // `gpuops serve` runs it (pod GC of a deleted node's pods takes its
  // upstream 40 s or so: deleted-node is the slow scenario).
  simulator::ApiServer::Options opts;
  opts.clock = [] { return std::chrono::steady_clock::now(); };
  Served served(/*lab=*/false, opts);
  TempDir dir;

  std::string real_report = dir.path + "/real.json";
  CliRun real = run_gpuops(
      {"run", "--backend", "real", "--kubeconfig", served.kubeconfig, "--report-json", real_report, kScenarios});
  std::string sim_report = dir.path + "/sim.json";
  CliRun sim = run_gpuops({"run", "--report-json", sim_report, kScenarios});
  ASSERT_EQ(sim.code, 0) << sim.out << sim.err;
  EXPECT_EQ(real.code, 0) << real.out << real.err;

  auto over_api = outcomes(real_report);
  auto in_process = outcomes(sim_report);
  ASSERT_GE(in_process.size(), 20u);
  // Which scenarios need the simulator's controls, from the files themselves.
  std::set<std::string> simulator_only;
  std::map<std::string, int> simulator_only_steps;  // steps with settle: false or advance (scenarios/rollout)
  int operator_only = 0;                            // operator scenarios skipped only for want of an operator
  for (const auto& sc : core::load_scenarios({kScenarios})) {
    if (sc.simulator_only) simulator_only.insert(sc.name);
    // `gpuops serve` has no GPU Operator (it serves no clusterpolicies.nvidia.com
    // until one is installed): a scenario of the operator is skipped whole.
    bool needs_operator = sc.operator_.has_value();
    for (const auto& step : sc.steps) needs_operator = needs_operator || step.action == core::Action::kInstallOperator;
    if (needs_operator) {
      simulator_only.insert(sc.name);
      if (!sc.simulator_only) ++operator_only;
    }
    for (const auto& step : sc.steps) simulator_only_steps[sc.name] += step.simulator_only() ? 1 : 0;
  }
  EXPECT_GE(simulator_only.size(), 1u);
  EXPECT_GE(operator_only, 15);  // scenarios/operator less the v26.7 ones and driver-crashloop

  ASSERT_EQ(over_api.size(), in_process.size()) << real.out;
  for (const auto& [name, sim_outcome] : in_process) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(over_api.count(name));
    EXPECT_EQ(sim_outcome.first, "passed");
    EXPECT_EQ(sim_outcome.second, 0);
    EXPECT_EQ(over_api[name].first, "passed");
    // A simulator-only scenario is skipped whole over the API; the others run
    // every step but those that need virtual time (the rollouts' batches).
    if (simulator_only.count(name))
      EXPECT_EQ(over_api[name].second, 1);
    else
      EXPECT_EQ(over_api[name].second, simulator_only_steps[name]);
  }
  // The served cluster is left as it was found: every scenario cleaned up
  // its nodes and DaemonSets.
  CliRun left = run_gpuops({"matrix", "--kubeconfig", served.kubeconfig});
  EXPECT_EQ(left.out, "TOTAL_PODS=0\n") << left.err;
  EXPECT_EQ(left.code, 0);
}

}  // namespace
}  // namespace gpuops::serve_testing
