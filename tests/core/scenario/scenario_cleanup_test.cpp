// The runner's clean-up on a live cluster (RunOptions::clean_up): what a
// scenario created deleted in reverse order of creation, at its end, after a
// failed step and after an interruption; clean-up failures reported beside
// the scenario's result; --skip-cleanup keeping everything.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "../../common/temp_dir.h"
#include "core/base/errors.h"
#include "core/scenario/scenario.h"
#include "mock_cluster.h"

using namespace gpuops;
using gpuops::testing::MockCluster;
using gpuops::testing::TempDir;
using ::testing::_;
using ::testing::InSequence;
using ::testing::Return;

namespace {

// Nodes gpu-a and gpu-b, then a namespace, a DaemonSet (applied without a
// namespace: the scenario's), a ClusterPolicy and a pod (applied), a third
// node, and a last step whose expectation never holds on an empty state.
const char* const kScenario = R"(name: made-things
cluster:
  nodes:
    - name: gpu-a
    - name: gpu-b
steps:
  - createNamespace: gpu-operator
  - apply:
      inline: |
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: toolkit}
        spec:
          selector: {matchLabels: {app: toolkit}}
          template:
            metadata: {labels: {app: toolkit}}
            spec:
              containers: [{name: toolkit, image: nvcr.io/nvidia/k8s/container-toolkit:v1.17.0}]
  - addNode: {name: gpu-c}
  - name: never
    expect:
      running: {toolkit: [gpu-a]}
)";

core::Scenario load(TempDir& d, const std::string& text = kScenario) {
  return core::load_scenario(d.write("s.yaml", text));
}

core::RunOptions live() {
  core::RunOptions opt;
  opt.clean_up = true;
  return opt;
}

// The scenario's writes before its last step: reads, settles, `nodes` of its
// nodes added, its namespace and its DaemonSet.
void expect_setup(MockCluster& c, int nodes) {
  EXPECT_CALL(c, state(_)).WillRepeatedly(Return(core::ClusterState{}));
  EXPECT_CALL(c, settle()).Times(::testing::AnyNumber());
  EXPECT_CALL(c, add_node(_)).Times(nodes);
  EXPECT_CALL(c, create_namespace("gpu-operator"));
  EXPECT_CALL(c, apply(_));
}

// Deletions expected after the steps, newest creation first.
void expect_deletions(MockCluster& c) {
  EXPECT_CALL(c, delete_node("gpu-c"));
  EXPECT_CALL(c, delete_daemonset("gpu-operator", "toolkit", "background"));
  EXPECT_CALL(c, delete_namespace("gpu-operator"));
  EXPECT_CALL(c, delete_node("gpu-b"));
  EXPECT_CALL(c, delete_node("gpu-a"));
}

}  // namespace

// A failed last step: the scenario fails, then everything it created goes,
// in reverse order of creation (the DaemonSet before its namespace, the
// namespace before the nodes set up first).
TEST(ScenarioCleanup, FailedScenarioDeletesWhatItCreatedInReverseOrder) {
  TempDir d;
  core::Scenario s = load(d);
  ::testing::StrictMock<MockCluster> c;
  expect_setup(c, 3);
  {
    InSequence seq;
    expect_deletions(c);
  }
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, live());
  EXPECT_FALSE(r.passed);
  EXPECT_FALSE(r.interrupted);
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.steps[3].status, core::StepResult::Status::kFailed);
  EXPECT_TRUE(r.cleanup_failures.empty());
}

// Interrupted (the flag raised during the third step's action): the step
// after it is skipped as "interrupted", the scenario fails as interrupted,
// and what was created up to then is deleted.
TEST(ScenarioCleanup, InterruptedScenarioStopsAndCleansUp) {
  TempDir d;
  core::Scenario s = load(d);
  ::testing::StrictMock<MockCluster> c;
  bool flag = false;
  expect_setup(c, 2);
  EXPECT_CALL(c, add_node(::testing::Field(&core::Node::metadata, ::testing::Field(&core::ObjectMeta::name, "gpu-c"))))
      .WillOnce([&](const core::Node&) { flag = true; });
  {
    InSequence seq;
    expect_deletions(c);
  }
  core::RunOptions opt = live();
  opt.interrupted = [&] { return flag; };
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, opt);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.error, "interrupted");
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.steps[2].status, core::StepResult::Status::kPassed);
  EXPECT_EQ(r.steps[3].status, core::StepResult::Status::kSkipped);
  EXPECT_EQ(r.steps[3].skip_reason, "interrupted");
  boost::json::value doc = boost::json::parse(core::render_json({r}));
  EXPECT_EQ(doc.at("scenarios").at(0).at("interrupted"), boost::json::value(true));
  EXPECT_EQ(doc.at("scenarios").at(0).at("status"), boost::json::value("failed"));
}

// The flag raised while an expectation is polled: the poll stops at once
// (not at its 60 s timeout) and says so.
TEST(ScenarioCleanup, InterruptStopsThePolling) {
  TempDir d;
  core::Scenario s = load(d);
  MockCluster c;
  EXPECT_CALL(c, state(_)).WillRepeatedly(Return(core::ClusterState{}));
  int sleeps = 0;
  core::RunOptions opt = live();
  opt.poll = true;
  core::Time now{};
  opt.now = [&] { return now; };
  opt.sleep = [&](core::Duration d) {
    now += d;
    ++sleeps;
  };
  opt.interrupted = [&] { return sleeps >= 3; };
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, opt);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(sleeps, 3);  // 60 s at 500 ms would be 120
  ASSERT_EQ(r.steps.size(), 4u);
  ASSERT_EQ(r.steps[3].status, core::StepResult::Status::kFailed);
  EXPECT_EQ(r.steps[3].failures.back(), "(interrupted while waiting; last state shown)");
}

// A deletion that fails is reported, the others still run, an object
// already gone (404) counts as deleted, and the scenario's own result
// stands: it passed.
TEST(ScenarioCleanup, FailuresAreReportedBesideThePassingResult) {
  TempDir d;
  std::string text = kScenario;
  text = text.substr(0, text.find("  - name: never"));
  core::Scenario s = load(d, text);
  MockCluster c;
  EXPECT_CALL(c, state(_)).WillRepeatedly(Return(core::ClusterState{}));
  EXPECT_CALL(c, delete_node("gpu-c")).WillOnce([](const std::string&) {
    throw core::ClusterError("node \"gpu-c\" not found", 404);
  });
  EXPECT_CALL(c, delete_daemonset("gpu-operator", "toolkit", "background"));
  EXPECT_CALL(c, delete_namespace("gpu-operator")).WillOnce([](const std::string&) {
    throw core::ClusterError("namespace \"gpu-operator\" is still terminating after 120000ms");
  });
  EXPECT_CALL(c, delete_node("gpu-b")).WillOnce([](const std::string&) {
    throw core::ClusterError("Forbidden: nodes \"gpu-b\" is forbidden", 403);
  });
  EXPECT_CALL(c, delete_node("gpu-a"));
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, live());
  EXPECT_TRUE(r.passed) << r.error;
  EXPECT_EQ(r.cleanup_failures,
            (std::vector<std::string>{
                "deleting namespace \"gpu-operator\": namespace \"gpu-operator\" is still terminating after 120000ms",
                "deleting node \"gpu-b\": Forbidden: nodes \"gpu-b\" is forbidden"}));
  std::string console = core::render_console({r});
  EXPECT_NE(console.find("\n  clean-up: deleting node \"gpu-b\": Forbidden: nodes \"gpu-b\" is forbidden\n"
                         "1 passed, 0 failed, 2 clean-up failures\n"),
            std::string::npos)
      << console;
  boost::json::value doc = boost::json::parse(core::render_json({r}));
  EXPECT_EQ(doc.at("scenarios").at(0).at("status"), boost::json::value("passed"));
  EXPECT_EQ(doc.at("scenarios").at(0).at("cleanupFailures").as_array().size(), 2u);
  std::istringstream xml(core::render_junit({r}));
  boost::property_tree::ptree tree;
  boost::property_tree::read_xml(xml, tree);
  const auto& test_case = tree.get_child("testsuite.testcase");
  EXPECT_FALSE(test_case.get_child_optional("failure"));
  EXPECT_EQ(test_case.get<std::string>("system-err"),
            "clean-up: deleting namespace \"gpu-operator\": namespace \"gpu-operator\" is still terminating after "
            "120000ms\nclean-up: deleting node \"gpu-b\": Forbidden: nodes \"gpu-b\" is forbidden\n");
}

// --skip-cleanup: nothing is deleted (a strict mock fails on any deletion).
TEST(ScenarioCleanup, SkipCleanupDeletesNothing) {
  TempDir d;
  core::Scenario s = load(d);
  ::testing::StrictMock<MockCluster> c;
  expect_setup(c, 3);
  core::RunOptions opt = live();
  opt.skip_cleanup = true;
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, opt);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.cleanup_failures.empty());
}

// The ClusterPolicies: the one applied beside the operator's is deleted
// before the operator's own (created first, at set-up), then the runner
// waits for the garbage collector to empty the namespace before it deletes
// the nodes.
TEST(ScenarioCleanup, PoliciesGoNewestFirstThenTheNamespaceEmpties) {
  TempDir d;
  core::Scenario s = load(d, R"(name: policies
operator: {version: v25.3}
cluster:
  nodes: [{name: gpu-a}]
steps:
  - apply:
      inline: |
        apiVersion: nvidia.com/v1
        kind: ClusterPolicy
        metadata: {name: second-policy}
        spec: {daemonsets: {}, dcgm: {}, dcgmExporter: {}, devicePlugin: {}, driver: {}, gfd: {}, nodeStatusExporter: {}, operator: {}, toolkit: {}}
)");
  MockCluster c;
  EXPECT_CALL(c, serves_cluster_policies()).WillRepeatedly(Return(true));
  core::ClusterState busy;
  busy.daemonsets = {core::DaemonSet{}};
  int reads = 0;
  EXPECT_CALL(c, state(_)).WillRepeatedly([&](const std::string&) {
    ++reads;
    // empty for the refusal check; busy for the first read after the deletions
    return reads == 2 ? busy : core::ClusterState{};
  });
  {
    InSequence seq;
    EXPECT_CALL(c, delete_cluster_policy("second-policy"));
    EXPECT_CALL(c, delete_cluster_policy("cluster-policy"));
    EXPECT_CALL(c, delete_node("gpu-a")).WillOnce([&](const std::string&) { EXPECT_EQ(reads, 3); });
  }
  core::RunOptions opt = live();
  opt.poll = true;
  core::Time now{};
  opt.now = [&] { return now; };
  opt.sleep = [&](core::Duration d) { now += d; };
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, opt);
  EXPECT_TRUE(r.passed) << r.error << core::render_console({r});
  EXPECT_TRUE(r.cleanup_failures.empty());
}
