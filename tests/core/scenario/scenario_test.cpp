// The scenario format and runner, against a mocked core::Cluster.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "../../common/builders.h"
#include "../../common/temp_dir.h"
#include "core/codec/encode.h"
#include "core/codec/yaml_load.h"
#include "core/scenario/scenario.h"
#include "mock_cluster.h"

using namespace gpuops;
using namespace gpuops::testing;
using gpuops::testing::MockCluster;
using ::testing::_;
using ::testing::Return;
namespace fs = std::filesystem;

namespace {

using gpuops::testing::TempDir;

// gpu-a runs the toolkit; gpu-b is labelled for it but has no pod.
core::ClusterState toolkit_state() {
  core::ClusterState s;
  s.namespace_ = "gpu-operator";
  s.nodes = {node("gpu-a", {{"nvidia.com/gpu.deploy.container-toolkit", "true"}}),
             node("gpu-b", {{"nvidia.com/gpu.deploy.container-toolkit", "true"}})};
  core::DaemonSet ds = daemonset("nvidia-container-toolkit-daemonset", "nvidia.com/gpu.deploy.container-toolkit");
  ds.status.desired_number_scheduled = 2;
  s.daemonsets = {ds};
  s.pods = {pod(ds, "gpu-a")};
  return s;
}

core::InputError load_error(const std::string& text) {
  TempDir d;
  std::string f = d.write("s.yaml", text);
  try {
    core::load_scenario(f);
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return core::InputError("", 0, "", "");
}

}  // namespace

TEST(Scenario, ParsesActionsAndExpectations) {
  TempDir d;
  std::string f = d.write("s.yaml", R"(name: demo
cluster:
  nodes:
    - name: gpu-a
      labels: {nvidia.com/gpu.deploy.driver: "true"}
      taints: [{key: k, value: v, effect: NoSchedule}]
      allocatable: {memory: 1Gi}
      ready: false
steps:
  - createNamespace: gpu-operator
  - apply: {operands: [driver], files: [x.yaml]}
    expect:
      audit: {exit: 1, lines: [gpu-a MISSING driver]}
      daemonsets: {nvidia-driver-daemonset: {desiredNumberScheduled: 1}}
      running: {nvidia-driver-daemonset: [b, a]}
  - label: {node: gpu-a, set: {x: "false"}, remove: [y]}
  - advance: 1m30s
    timeout: 5s
)");
  core::Scenario s = core::load_scenario(f);
  EXPECT_EQ(s.name, "demo");
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_EQ(s.nodes[0].metadata.labels.at("kubernetes.io/hostname"), "gpu-a");
  EXPECT_EQ(s.nodes[0].ready_status(), "False");
  EXPECT_EQ(s.nodes[0].allocatable.at("memory").value(), 1LL << 30);
  ASSERT_EQ(s.steps.size(), 4u);
  EXPECT_EQ(core::action_key(s.steps[0].action), "createNamespace");
  EXPECT_EQ(s.steps[1].apply_files.at(0), (fs::path(f).parent_path() / "x.yaml").string());
  EXPECT_EQ(s.steps[1].expect.running.at("nvidia-driver-daemonset"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.steps[1].line, 11);
  EXPECT_EQ(s.steps[2].title(), "label gpu-a x=false y-");
  EXPECT_EQ(s.steps[3].advance, std::chrono::seconds(90));
  EXPECT_EQ(*s.steps[3].timeout, std::chrono::seconds(5));
  EXPECT_TRUE(s.steps[3].simulator_only());
}

// A ClusterPolicy patch or spec in a scenario is the JSON kubectl would
// send for that YAML: a quoted scalar stays a string, a plain one is typed
// as go-yaml resolves it. (The patch was re-emitted and read again, and the
// emitter dropped the quotes: "1.5" became a number, "false" a boolean.)
TEST(Scenario, ClusterPolicyYamlKeepsItsQuotedStrings) {
  TempDir d;
  std::string f = d.write("s.yaml", R"(name: quoted
operator:
  version: v26.7
  clusterPolicy: {driver: {version: "550", enabled: true, repository: "true"}}
steps:
  - patchClusterPolicy:
      patch: {spec: {driver: {resources: {limits: {cpu: "1.5", memory: 2}}, enabled: "false", upgradePolicy: {maxParallelUpgrades: 3}}}}
)");
  core::Scenario s = core::load_scenario(f);
  ASSERT_TRUE(s.operator_);
  const auto& spec = s.operator_->spec;
  EXPECT_EQ(spec.at("driver").at("version"), boost::json::value("550"));
  EXPECT_EQ(spec.at("driver").at("enabled"), boost::json::value(true));
  EXPECT_EQ(spec.at("driver").at("repository"), boost::json::value("true"));
  ASSERT_EQ(s.steps.size(), 1u);
  const auto& driver = s.steps[0].policy_patch.at("spec").at("driver");
  EXPECT_EQ(driver.at("resources").at("limits").at("cpu"), boost::json::value("1.5"));
  EXPECT_EQ(driver.at("resources").at("limits").at("memory"), boost::json::value(2));
  EXPECT_EQ(driver.at("enabled"), boost::json::value("false"));
  EXPECT_EQ(driver.at("upgradePolicy").at("maxParallelUpgrades"), boost::json::value(3));
}

TEST(Scenario, MalformedScenariosNameFileLineField) {
  auto e = load_error("name: x\nsteps:\n  - lable: {node: a}\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "steps[0].lable");
  EXPECT_NE(e.message().find("unknown field \"lable\""), std::string::npos);

  auto two = load_error("name: x\nsteps:\n  - cordon: a\n    uncordon: a\n");
  EXPECT_EQ(two.line(), 4);
  EXPECT_NE(two.message().find("one action"), std::string::npos);

  auto unquoted = load_error("name: x\nsteps:\n  - label: {node: a, set: {k: true}}\n");
  EXPECT_EQ(unquoted.field(), "steps[0].label.set[k]");
  EXPECT_NE(unquoted.message().find("write \"true\" in quotes"), std::string::npos);

  // validateNodeTaints' rules for a taint step and a node's taints (both
  // were taken: "x=y" as a value, "b!c" under cluster.nodes).
  auto tv = load_error("name: x\nsteps:\n  - taint: {node: a, key: k, value: \"x=y\", effect: NoSchedule}\n");
  EXPECT_EQ(tv.field(), "steps[0].taint.value");
  EXPECT_NE(tv.message().find("Invalid value: \"x=y\": a valid label must be an empty string"), std::string::npos)
      << tv.message();
  auto tk = load_error(
      "name: x\ncluster:\n  nodes:\n    - name: a\n      taints: [{key: \"bad key\", effect: NoSchedule}]\nsteps: "
      "[]\n");
  EXPECT_EQ(tk.field(), "cluster.nodes[0].taints[0].key");
  EXPECT_NE(tk.message().find("Invalid value: \"bad key\": name part must consist of"), std::string::npos)
      << tk.message();

  // The operator's ClusterPolicy is judged at load by its CRD's schema, as
  // the API server will judge it at installOperator (it failed the run's
  // set-up, exit 1, with no line).
  auto cp = load_error(
      "name: x\noperator:\n  version: v26.7\n  clusterPolicy:\n    driver:\n      upgradePolicy:\n"
      "        maxParallelUpgrades: -3\nsteps: []\n");
  EXPECT_EQ(cp.line(), 7);
  EXPECT_EQ(cp.field(), "operator.clusterPolicy");
  EXPECT_EQ(cp.message(),
            "ClusterPolicy.nvidia.com \"cluster-policy\" is invalid: spec.driver.upgradePolicy.maxParallelUpgrades: "
            "Invalid value: -3: spec.driver.upgradePolicy.maxParallelUpgrades in body should be greater than or "
            "equal to 0");

  auto both = load_error("name: x\nsteps:\n  - label: {node: a, set: {k: v}, remove: [j, k]}\n");
  EXPECT_EQ(both.field(), "steps[0].label.remove[1]");
  EXPECT_EQ(both.line(), 3);
  EXPECT_NE(both.message().find("can not both modify and remove a label in the same command"), std::string::npos);

  auto dur = load_error("name: x\nsteps:\n  - advance: soon\n");
  EXPECT_EQ(dur.field(), "steps[0].advance");
  EXPECT_NE(dur.message().find("invalid duration"), std::string::npos);

  auto op = load_error("name: x\nsteps:\n  - apply: {operands: [nope]}\n");
  EXPECT_NE(op.message().find("no operand \"nope\""), std::string::npos);

  EXPECT_EQ(load_error("steps:\n  - cordon: a\n").field(), "name");
  EXPECT_EQ(load_error("name: x\n").field(), "steps");
  EXPECT_EQ(load_error("name: x\nsteps:\n  - name: nothing\n").field(), "steps[0]");
  auto order = load_error("name: x\nsteps:\n  - expect: {order: {a: fine}}\n");
  EXPECT_EQ(order.field(), "steps[0].expect.order[a]");
  auto field = load_error("name: x\nsteps:\n  - expect: {daemonsets: {d: {desired: 1}}}\n");
  EXPECT_EQ(field.field(), "steps[0].expect.daemonsets[d].desired");
  auto yaml = load_error("name: x\nsteps: [\n");
  EXPECT_NE(yaml.message().find("invalid YAML"), std::string::npos);
}

// Every value and message below is what go1.26's time.ParseDuration
// returns for the text (a Go program printing int64(d) and err), the value
// then truncated to milliseconds.
TEST(Scenario, DurationsAsGo) {
  auto ms = [](long long v) { return std::chrono::milliseconds(v); };
  EXPECT_EQ(core::parse_duration("30s"), std::chrono::seconds(30));
  EXPECT_EQ(core::parse_duration("500ms"), ms(500));
  EXPECT_EQ(core::parse_duration("1h2m3s"), std::chrono::seconds(3723));
  EXPECT_EQ(core::parse_duration("1.5s"), ms(1500));
  EXPECT_EQ(core::parse_duration("1m1ms"), ms(60001));
  EXPECT_EQ(core::parse_duration("0.5h"), std::chrono::minutes(30));
  // Go takes a bare 0, a sign, a '.' with digits on one side only, every
  // unit, a unit repeated, and 5m.5s.
  EXPECT_EQ(core::parse_duration("0"), ms(0));
  EXPECT_EQ(core::parse_duration("+0"), ms(0));
  EXPECT_EQ(core::parse_duration("-0"), ms(0));
  EXPECT_EQ(core::parse_duration("0s"), ms(0));
  EXPECT_EQ(core::parse_duration("+5s"), ms(5000));
  EXPECT_EQ(core::parse_duration("1.s"), ms(1000));
  EXPECT_EQ(core::parse_duration(".5s"), ms(500));
  EXPECT_EQ(core::parse_duration("5m.5s"), ms(300500));
  EXPECT_EQ(core::parse_duration("00001s"), ms(1000));
  EXPECT_EQ(core::parse_duration("1h1h"), std::chrono::hours(2));
  EXPECT_EQ(core::parse_duration("1500us"), ms(1));  // 1,500,000 ns
  EXPECT_EQ(core::parse_duration("1500\u00b5s"), ms(1));
  EXPECT_EQ(core::parse_duration("1500\u03bcs"), ms(1));
  EXPECT_EQ(core::parse_duration("2500000ns"), ms(2));
  EXPECT_EQ(core::parse_duration("1h30m0.5ms"), ms(5400000));            // 5400000500000 ns
  EXPECT_EQ(core::parse_duration("0.9999999999999999999999ms"), ms(1));  // 1000000 ns
  // The range is int64 nanoseconds, the fraction computed in float64:
  // ...807999s rounds to the maximum, ...807999999999999s past it.
  EXPECT_EQ(core::parse_duration("2562047h"), std::chrono::hours(2562047));
  EXPECT_EQ(core::parse_duration("2562047h47m16.854775807s"), ms(9223372036854));
  EXPECT_EQ(core::parse_duration("2562047h47m16.854775807999s"), ms(9223372036854));
  EXPECT_EQ(core::parse_duration("9223372036854775807ns"), ms(9223372036854));
  EXPECT_EQ(core::parse_duration("2562047h47m16s854775807ns"), ms(9223372036854));
  EXPECT_EQ(core::parse_duration("9223372036854775.807us"), ms(9223372036854));
  auto error = [](const std::string& text) {
    try {
      core::parse_duration(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string range = " (out of range: at most 2562047h47m16.854775807s)";
  EXPECT_EQ(error("2562047h47m16.854775808s"), "time: invalid duration \"2562047h47m16.854775808s\"" + range);
  EXPECT_EQ(error("2562047h47m16.854775807999999999999s"),
            "time: invalid duration \"2562047h47m16.854775807999999999999s\"" + range);
  EXPECT_EQ(error("2562047h47m16s854775808ns"), "time: invalid duration \"2562047h47m16s854775808ns\"" + range);
  EXPECT_EQ(error("9223372036854775808ns"), "time: invalid duration \"9223372036854775808ns\"" + range);
  EXPECT_EQ(error("99999999999999999999s"), "time: invalid duration \"99999999999999999999s\"" + range);
  EXPECT_EQ(error("2562048h"), "time: invalid duration \"2562048h\"" + range);
  EXPECT_EQ(error("2562047h48m"), "time: invalid duration \"2562047h48m\"" + range);
  EXPECT_EQ(error(""), "time: invalid duration \"\"");
  EXPECT_EQ(error("s"), "time: invalid duration \"s\"");
  EXPECT_EQ(error(".s"), "time: invalid duration \".s\"");
  EXPECT_EQ(error("-"), "time: invalid duration \"-\"");
  EXPECT_EQ(error("-.s"), "time: invalid duration \"-.s\"");
  EXPECT_EQ(error("\x01s"), "time: invalid duration \"\\x01s\"");
  EXPECT_EQ(error("\xc3\xa9"), "time: invalid duration \"\\xc3\\xa9\"");
  EXPECT_EQ(error("30"), "time: missing unit in duration \"30\"");
  EXPECT_EQ(error("1."), "time: missing unit in duration \"1.\"");
  EXPECT_EQ(error("1..5s"), "time: missing unit in duration \"1..5s\"");
  const std::string units = " (units: ns, us, ms, s, m, h)";
  EXPECT_EQ(error("1x"), "time: unknown unit \"x\" in duration \"1x\"" + units);
  EXPECT_EQ(error("1S"), "time: unknown unit \"S\" in duration \"1S\"" + units);
  EXPECT_EQ(error("1s "), "time: unknown unit \"s \" in duration \"1s \"" + units);
  EXPECT_EQ(error("1h-1m"), "time: unknown unit \"h-\" in duration \"1h-1m\"" + units);
  EXPECT_EQ(error("1e3s"), "time: unknown unit \"e\" in duration \"1e3s\"" + units);
  EXPECT_EQ(error("1s\""), "time: unknown unit \"s\\\"\" in duration \"1s\\\"\"" + units);
  EXPECT_EQ(error("1\u00b5x"), "time: unknown unit \"\\xc2\\xb5x\" in duration \"1\\xc2\\xb5x\"" + units);
  // Go takes a negative duration; no step goes back in time.
  EXPECT_NE(error("-5s").find("is negative"), std::string::npos);
  EXPECT_NE(error("-2562047h47m16.854775808s").find("is negative"), std::string::npos);
}

// Found by a hostile-input run: a number of 400 digits threw out_of_range
// out of std::stod (exit 3, "stod"), one of 30,000 overflowed std::regex's
// recursion (SIGSEGV). Both are out of range, as any past int64 nanoseconds.
TEST(Scenario, HugeDurationsAreOutOfRangeNotACrash) {
  for (size_t digits : {400u, 30000u, 200000u}) {
    SCOPED_TRACE(digits);
    for (const char* unit : {"s", "ms", "h"}) {
      try {
        core::parse_duration(std::string(digits, '1') + unit);
        ADD_FAILURE() << "accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
      }
    }
    EXPECT_THROW(core::parse_duration(std::string(digits, '1')), std::invalid_argument);
  }
}

TEST(Scenario, RunnerDrivesTheClusterInOrder) {
  TempDir d;
  std::string f = d.write("s.yaml", R"(name: drive
cluster:
  nodes: [{name: gpu-a}]
steps:
  - createNamespace: gpu-operator
  - label: {node: gpu-a, set: {k: v}, remove: [old]}
  - apply: {operands: [container-toolkit]}
)");
  core::Scenario s = core::load_scenario(f);
  MockCluster c;
  ::testing::InSequence seq;
  EXPECT_CALL(c, add_node(::testing::Field(&core::Node::metadata, ::testing::Field(&core::ObjectMeta::name, "gpu-a"))));
  EXPECT_CALL(c, settle());
  EXPECT_CALL(c, create_namespace("gpu-operator"));
  EXPECT_CALL(c, settle());
  EXPECT_CALL(c, set_node_label("gpu-a", "k", std::optional<std::string>("v")));
  EXPECT_CALL(c, set_node_label("gpu-a", "old", std::optional<std::string>()));
  EXPECT_CALL(c, settle());
  EXPECT_CALL(c, apply(::testing::SizeIs(1)));
  EXPECT_CALL(c, settle());
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, {});
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.steps.size(), 3u);
}

TEST(Scenario, WrongExpectationFailsWithReadableDiff) {
  TempDir d;
  std::string f = d.write("s.yaml", R"(name: wrong
steps:
  - name: check
    expect:
      audit:
        exit: 0
        lines: |
          gpu-a OK
          gpu-b OK
      daemonsets: {nvidia-container-toolkit-daemonset: {desiredNumberScheduled: 3}}
      running: {nvidia-container-toolkit-daemonset: [gpu-a, gpu-b]}
      order: {gpu-b: device-plugin-without-toolkit}
)");
  core::Scenario s = core::load_scenario(f);
  MockCluster c;
  EXPECT_CALL(c, settle()).Times(::testing::AnyNumber());
  EXPECT_CALL(c, state("gpu-operator")).WillRepeatedly(Return(toolkit_state()));
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, {});
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.steps.size(), 1u);
  const auto& fails = r.steps[0].failures;
  ASSERT_EQ(fails.size(), 5u);
  EXPECT_EQ(fails[0],
            "audit (line 5): output differs\n"
            "--- expected\n+++ actual\n"
            "@@ -1,2 +1,2 @@\n"
            " gpu-a OK\n"
            "-gpu-b OK\n"
            "+gpu-b MISSING container-toolkit\n");
  EXPECT_EQ(fails[1], "audit (line 5): exit code: expected 0, got 1");
  EXPECT_EQ(fails[2], "order (line 12): gpu-b: expected device-plugin-without-toolkit, got ok");
  EXPECT_EQ(
      fails[3],
      "daemonsets (line 10): nvidia-container-toolkit-daemonset: status.desiredNumberScheduled: expected 3, got 2");
  EXPECT_EQ(fails[4],
            "running (line 11): nvidia-container-toolkit-daemonset: expected Running on [gpu-a, gpu-b], got [gpu-a]");

  std::string console = core::render_console({r});
  EXPECT_NE(console.find("FAIL wrong (1 step)\n  " + f + ":3: step \"check\"\n    audit (line 5): output differs\n"),
            std::string::npos)
      << console;
  EXPECT_NE(console.find("    -gpu-b OK\n    +gpu-b MISSING container-toolkit\n"), std::string::npos);
  EXPECT_EQ(console.substr(console.size() - 19), "0 passed, 1 failed\n");
}

// Text from the scenario file and the cluster printed as kubectl prints
// cluster text (EscapeTerminal: ESC as ^[, CR as \r; other controls as
// \xNN): a hostile-input run's `name: "esc\e[2J"` cleared the screen.
TEST(Scenario, ConsoleReportEscapesWhatATerminalWouldActOn) {
  core::ScenarioResult r;
  r.name = "esc\x1b[2Jape";
  r.file = "s.yaml";
  r.passed = false;
  core::StepResult step;
  step.title = "label gpu\x1b[31mx";
  step.line = 4;
  step.status = core::StepResult::Status::kFailed;
  step.failures = {"pods (line 6): gpu\x1b]0;pwned\x07: expected 1\rgot 2\nsecond line\x9b"};
  r.steps.push_back(step);
  core::StepResult skipped;
  skipped.title = "t\x1b";
  skipped.status = core::StepResult::Status::kSkipped;
  skipped.skip_reason = "r\x1b";
  r.steps.push_back(skipped);
  EXPECT_EQ(core::render_console({r}),
            "FAIL esc^[[2Jape (2 steps, 1 skipped)\n"
            "  s.yaml:4: step \"label gpu^[[31mx\"\n"
            "    pods (line 6): gpu^[]0;pwned\\x07: expected 1\\rgot 2\n"
            "    second line\x9b\n"
            "  skipped \"t^[\": r^[\n"
            "0 passed, 1 failed\n");
  core::ScenarioResult e;
  e.name = "n";
  e.file = "s.yaml";
  e.passed = false;
  e.error = "setting up the initial cluster: bad\x1b[2J\nsecond";
  EXPECT_EQ(core::render_console({e}),
            "FAIL n (0 steps)\n  s.yaml: setting up the initial cluster: bad^[[2J\nsecond\n0 passed, 1 failed\n");
}

TEST(Scenario, ExpectErrorChecksExitFieldAndLine) {
  TempDir d;
  d.write("bad.yaml",
          "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\nspec:\n  selector: {matchLabels: {app: x}}\n"
          "  template:\n    metadata: {labels: {app: x}}\n    spec:\n      nodeSelector: {k: true}\n"
          "      containers: [{name: c, image: i}]\n");
  std::string f = d.write("s.yaml", R"(name: errors
steps:
  - apply: {files: [bad.yaml]}
    expectError: {exit: 2, line: 9, field: "spec.template.spec.nodeSelector[k]", contains: cannot unmarshal bool}
  - apply: {files: [bad.yaml]}
    expectError: {exit: 3}
  - createNamespace: x
    expectError: {exit: 2}
)");
  core::Scenario s = core::load_scenario(f);
  MockCluster c;
  EXPECT_CALL(c, apply(_)).Times(0);  // refused before any write
  EXPECT_CALL(c, create_namespace("x"));
  EXPECT_CALL(c, settle()).Times(::testing::AnyNumber());
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, {});
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].status, core::StepResult::Status::kPassed);
  EXPECT_EQ(r.steps[1].status, core::StepResult::Status::kFailed);
  EXPECT_NE(r.steps[1].failures.at(0).find("expectError: exit: expected 3, got 2"), std::string::npos);
  EXPECT_EQ(r.steps[2].failures.at(0), "expectError: the action succeeded, expected it to fail");
}

TEST(Scenario, FaultKindsAreReadOnLoad) {
  TempDir d;
  std::string f = d.write("s.yaml", R"(name: faults
steps:
  - fault: {kind: image-pull}
  - fault: {kind: crash-loop}
  - fault: {kind: never-ready}
  - fault: {kind: stuck-in-init}
  - fault: {kind: failed, node: a, daemonset: ds, reason: OutOfmemory}
)");
  core::Scenario s = core::load_scenario(f);
  ASSERT_EQ(s.steps.size(), 5u);
  EXPECT_EQ(s.steps[0].fault.kind, core::FaultKind::kImagePull);
  EXPECT_EQ(s.steps[1].fault.kind, core::FaultKind::kCrashLoop);
  EXPECT_EQ(s.steps[2].fault.kind, core::FaultKind::kNeverReady);
  EXPECT_EQ(s.steps[3].fault.kind, core::FaultKind::kStuckInInit);
  EXPECT_EQ(s.steps[4].fault.kind, core::FaultKind::kFailed);
  EXPECT_EQ(s.steps[4].fault.node, "a");
  EXPECT_EQ(s.steps[4].fault.daemonset, "ds");
  EXPECT_EQ(s.steps[4].fault.reason, "OutOfmemory");

  auto e = load_error("name: x\nsteps:\n  - fault:\n      kind: oom\n");
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "steps[0].fault.kind");
  EXPECT_EQ(e.message(), "unknown fault \"oom\" (image-pull, crash-loop, never-ready, stuck-in-init, failed)");
}

TEST(Scenario, HostFactsAreReadOnLoad) {
  TempDir d;
  std::string f = d.write("s.yaml", R"(name: hosts
cluster:
  profile: kubelet
  nodes:
    - name: a
      host: {driver: pre-installed}
steps:
  - host: {node: a, driverInUse: true, migConfig: all-1g.5gb, migApplyFails: false}
)");
  core::Scenario s = core::load_scenario(f);
  EXPECT_TRUE(s.simulator_only);  // host facts exist only in the simulator
  ASSERT_EQ(s.hosts.size(), 1u);
  EXPECT_EQ(s.hosts[0].node, "a");
  EXPECT_EQ(s.hosts[0].driver, "pre-installed");
  EXPECT_FALSE(s.hosts[0].driver_in_use);
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_TRUE(s.steps[0].simulator_only());
  EXPECT_EQ(s.steps[0].host.node, "a");
  EXPECT_EQ(s.steps[0].host.driver, std::nullopt);
  EXPECT_EQ(s.steps[0].host.driver_in_use, true);
  EXPECT_EQ(s.steps[0].host.mig_config, "all-1g.5gb");
  EXPECT_EQ(s.steps[0].host.mig_apply_fails, false);
  EXPECT_EQ(s.steps[0].title(), "host a driverInUse=true migConfig=all-1g.5gb migApplyFails=false");

  auto e = load_error("name: x\nsteps:\n  - host:\n      node: a\n      driver: installed\n");
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.field(), "steps[0].host.driver");
  EXPECT_EQ(e.message(), "Unsupported value: \"installed\": supported values: \"none\", \"pre-installed\", \"loaded\"");
  EXPECT_EQ(load_error("name: x\nsteps:\n  - host: {driver: none}\n").field(), "steps[0].host.node");
  EXPECT_EQ(load_error("name: x\nsteps:\n  - host: {node: a}\n").field(), "steps[0].host");
  EXPECT_EQ(
      load_error(
          "name: x\ncluster:\n  nodes:\n    - name: a\n      host: {node: a, driver: none}\nsteps:\n  - cordon: a\n")
          .field(),
      "cluster.nodes[0].host.node");
}

TEST(Scenario, SimulatorOnlyStepsAreSkippedVisiblyWithoutControls) {
  TempDir d;
  std::string f = d.write("s.yaml", "name: sim\nsteps:\n  - advance: 30s\n  - fault: {kind: crash-loop}\n");
  core::Scenario s = core::load_scenario(f);
  MockCluster c;
  EXPECT_CALL(c, settle()).Times(::testing::AnyNumber());
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, {});
  EXPECT_TRUE(r.passed);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].status, core::StepResult::Status::kSkipped);
  EXPECT_EQ(r.steps[0].skip_reason, "simulator only (advance)");
  EXPECT_NE(core::render_console({r}).find("  skipped \"advance\": simulator only (advance)\n"), std::string::npos);
}

TEST(Scenario, PollingRetriesUntilTimeout) {
  TempDir d;
  std::string f = d.write("s.yaml", "name: poll\nsteps:\n  - expect: {audit: {exit: 0}}\n    timeout: 2s\n");
  core::Scenario s = core::load_scenario(f);
  MockCluster c;
  core::ClusterState good = toolkit_state();
  good.pods.push_back(pod(good.daemonsets[0], "gpu-b", "Running", "b"));
  EXPECT_CALL(c, settle()).Times(::testing::AnyNumber());
  EXPECT_CALL(c, state(_))
      .WillOnce(Return(toolkit_state()))
      .WillOnce(Return(toolkit_state()))
      .WillRepeatedly(Return(good));
  core::Time t{};
  core::RunOptions opt;
  opt.poll = true;
  opt.now = [&] { return t; };
  opt.sleep = [&](core::Duration dur) { t += dur; };
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, opt);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(t, core::Time(std::chrono::seconds(1)));  // two 500 ms waits

  MockCluster never;
  EXPECT_CALL(never, settle()).Times(::testing::AnyNumber());
  EXPECT_CALL(never, state(_)).WillRepeatedly(Return(toolkit_state()));
  t = core::Time{};
  core::ScenarioResult r2 = core::run_scenario(s, never, nullptr, opt);
  EXPECT_FALSE(r2.passed);
  EXPECT_EQ(t, core::Time(std::chrono::seconds(2)));
  EXPECT_EQ(r2.steps[0].failures.back(), "(still failing after 2s; last state shown)");
}

TEST(Scenario, JunitIsValidXmlWithOneTestcasePerScenario) {
  core::ScenarioResult ok;
  ok.name = "a";
  ok.file = "scenarios/a.yaml";
  ok.steps.push_back({"step", 3, core::StepResult::Status::kPassed, {}, "", {}});
  core::ScenarioResult bad;
  bad.name = "b <&>";
  bad.file = "scenarios/b.yaml";
  bad.passed = false;
  bad.steps.push_back({"check", 7, core::StepResult::Status::kFailed, {"audit: expected \"x\" & <y>"}, "", {}});
  std::string xml = core::render_junit({ok, bad});
  std::istringstream in(xml);
  boost::property_tree::ptree t;
  ASSERT_NO_THROW(boost::property_tree::read_xml(in, t));
  EXPECT_EQ(t.get<int>("testsuite.<xmlattr>.tests"), 2);
  EXPECT_EQ(t.get<int>("testsuite.<xmlattr>.failures"), 1);
  int cases = 0;
  for (const auto& [k, v] : t.get_child("testsuite")) {
    if (k != "testcase") continue;
    ++cases;
    if (v.get<std::string>("<xmlattr>.name") == "b <&>") {
      EXPECT_EQ(v.get<std::string>("failure.<xmlattr>.message"), "step \"check\" failed");
      EXPECT_NE(v.get<std::string>("failure").find("audit: expected \"x\" & <y>"), std::string::npos);
    }
  }
  EXPECT_EQ(cases, 2);
  std::string js = core::render_json({ok, bad});
  EXPECT_NE(js.find(R"("passed":1,"failed":1)"), std::string::npos);
}

// XML 1.0 cannot hold most control characters, not even as references: a
// scenario name or failure text with one gets it written as "\xNN".
TEST(Scenario, JunitEscapesWhatXmlCannotHold) {
  core::ScenarioResult bad;
  bad.name = std::string("odd\x01name");
  bad.file = "scenarios/odd.yaml";
  bad.passed = false;
  bad.steps.push_back(
      {"check", 2, core::StepResult::Status::kFailed, {std::string("got \x1b[31mred\x1b[0m\tx")}, "", {}});
  std::string xml = core::render_junit({bad});
  for (char c : xml) {
    unsigned char ch = static_cast<unsigned char>(c);
    EXPECT_FALSE(ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') << "raw control byte " << int(ch);
  }
  EXPECT_NE(xml.find("name=\"odd\\x01name\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("got \\x1b[31mred\\x1b[0m\tx"), std::string::npos) << xml;
}

// observe(): what audit, order-check and matrix print on the state (LAB.md's
// formats), and the DaemonSet's status fields, for the differential run.
TEST(Scenario, ObserveRecordsTheAnalysesOfOneState) {
  core::ClusterState s = toolkit_state();
  s.daemonsets[0].status.current_number_scheduled = 1;
  s.daemonsets[0].status.number_ready = 1;
  core::StepObservation o = core::observe(s, core::load_catalog("lab"));
  EXPECT_EQ(o.audit, (std::vector<std::string>{"gpu-a OK", "gpu-b MISSING container-toolkit"}));
  EXPECT_EQ(o.audit_exit, 1);
  EXPECT_EQ(o.order, (std::vector<std::string>{"gpu-a ok", "gpu-b ok"}));
  EXPECT_EQ(o.matrix,
            (std::vector<std::string>{"gpu-a driver=no toolkit=yes device-plugin=no gfd=no dcgm=no",
                                      "gpu-b driver=no toolkit=no device-plugin=no gfd=no dcgm=no", "TOTAL_PODS=1"}));
  const auto& f = o.daemonsets.at("nvidia-container-toolkit-daemonset");
  EXPECT_EQ(f.size(), 8u);
  EXPECT_EQ(f.at("desiredNumberScheduled"), 2);
  EXPECT_EQ(f.at("currentNumberScheduled"), 1);
  EXPECT_EQ(f.at("numberReady"), 1);
  EXPECT_EQ(f.at("numberMisscheduled"), 0);
}

// The operator's side of the observation: nvidia.com/* labels of
// every node, each DaemonSet's placement and rollout spec, pods per node,
// the ClusterPolicy's state.
TEST(Scenario, ObserveRecordsWhatTheOperatorWrites) {
  core::ClusterState s = toolkit_state();
  s.nodes[0].metadata.labels["feature.node.kubernetes.io/pci-10de.present"] = "true";
  s.nodes.push_back(node("cpu-a", {}));
  core::DaemonSet& ds = s.daemonsets[0];
  ds.template_.spec.tolerations = {{"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt},
                                   {"node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300}};
  ds.template_.spec.init_containers = {core::Container{}};
  ds.template_.spec.init_containers[0].name = "driver-validation";
  core::ClusterPolicy cp;
  cp.metadata.name = "cluster-policy";
  cp.state = "ready";
  s.cluster_policies = {cp};
  core::StepObservation o = core::observe(s, core::load_catalog("lab"));
  EXPECT_EQ(o.node_labels.at("gpu-a"), (core::Labels{{"nvidia.com/gpu.deploy.container-toolkit", "true"}}));
  EXPECT_TRUE(o.node_labels.at("cpu-a").empty());
  const auto& spec = o.daemonset_specs.at("nvidia-container-toolkit-daemonset");
  EXPECT_EQ(spec.node_selector, (core::Labels{{"nvidia.com/gpu.deploy.container-toolkit", "true"}}));
  EXPECT_EQ(spec.tolerations, (std::vector<std::string>{"nvidia.com/gpu:Exists:NoSchedule",
                                                        "node.kubernetes.io/not-ready:Exists:NoExecute:300"}));
  EXPECT_EQ(spec.update_strategy, "RollingUpdate");
  EXPECT_EQ(spec.init_containers, (std::vector<std::string>{"driver-validation"}));
  EXPECT_EQ(o.pods.at("gpu-a"), (std::vector<std::string>{"nvidia-container-toolkit-daemonset Running"}));
  EXPECT_TRUE(o.pods.at("gpu-b").empty());
  EXPECT_EQ(o.cluster_policies, (std::map<std::string, std::string>{{"cluster-policy", "ready"}}));
}

// A scenario of the GPU Operator on a backend without simulator controls
// runs only where clusterpolicies.nvidia.com is served; elsewhere it is
// skipped whole, with nothing written.
TEST(Scenario, OperatorScenarioSkippedWhereNoOperatorRuns) {
  TempDir d;
  core::Scenario s = core::load_scenario(d.write("s.yaml", R"(name: op
operator:
  version: v25.3
cluster:
  nodes:
    - name: gpu-a
steps:
  - expect: {clusterPolicy: {state: ready}}
)"));
  ::testing::StrictMock<MockCluster> c;  // any other call fails the test
  EXPECT_CALL(c, serves_cluster_policies()).WillOnce(Return(false));
  core::RunOptions opts;
  opts.clean_up = true;
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, opts);
  EXPECT_TRUE(r.passed);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].status, core::StepResult::Status::kSkipped);
  EXPECT_EQ(r.steps[0].skip_reason,
            "the GPU Operator is not installed on this cluster (it serves no clusterpolicies.nvidia.com)");
}

namespace {
const char* kLiveScenario = R"(name: live
cluster:
  nodes:
    - name: gpu-a
steps:
  - createNamespace: gpu-operator
)";
}  // namespace

// On a live cluster (clean_up) a scenario refuses a cluster that already has
// nodes: nothing is written, nothing deleted, every step skipped.
TEST(Scenario, LiveClusterWithNodesIsRefusedUntouched) {
  TempDir d;
  core::Scenario s = core::load_scenario(d.write("s.yaml", kLiveScenario));
  ::testing::StrictMock<MockCluster> c;  // any call but state() fails the test
  EXPECT_CALL(c, state("gpu-operator")).WillOnce(Return(toolkit_state()));
  core::RunOptions opt;
  opt.clean_up = true;
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, opt);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.error,
            "not run: the cluster already has nodes (gpu-a, gpu-b); a scenario on a live cluster creates and deletes "
            "its own nodes and namespace, so it needs an empty cluster (gpuops serve, KWOK); nothing was changed");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].status, core::StepResult::Status::kSkipped);
}

TEST(Scenario, LiveNamespaceWithDaemonSetsIsRefusedUntouched) {
  TempDir d;
  core::Scenario s = core::load_scenario(d.write("s.yaml", kLiveScenario));
  ::testing::StrictMock<MockCluster> c;
  core::ClusterState st = toolkit_state();
  st.nodes.clear();
  EXPECT_CALL(c, state("gpu-operator")).WillOnce(Return(st));
  core::RunOptions opt;
  opt.clean_up = true;
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, opt);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.error.rfind("not run: namespace gpu-operator already has DaemonSets or pods; ", 0), 0u) << r.error;
}

// An empty live cluster: the scenario runs, then deletes what it created.
TEST(Scenario, LiveEmptyClusterRunsAndCleansUp) {
  TempDir d;
  core::Scenario s = core::load_scenario(d.write("s.yaml", kLiveScenario));
  MockCluster c;
  EXPECT_CALL(c, state(_)).WillRepeatedly(Return(core::ClusterState{}));
  ::testing::InSequence seq;
  EXPECT_CALL(c, add_node(::testing::Field(&core::Node::metadata, ::testing::Field(&core::ObjectMeta::name, "gpu-a"))));
  EXPECT_CALL(c, settle());
  EXPECT_CALL(c, create_namespace("gpu-operator"));
  EXPECT_CALL(c, settle());
  EXPECT_CALL(c, delete_namespace("gpu-operator"));
  EXPECT_CALL(c, delete_node("gpu-a"));
  core::RunOptions opt;
  opt.clean_up = true;
  core::ScenarioResult r = core::run_scenario(s, c, nullptr, opt);
  EXPECT_TRUE(r.passed) << r.error;
}

// line_diff escapes what a terminal would not show, so a file with CRLF line
// endings, a tab or trailing spaces does not print "-X" over an identical "+X".
TEST(Scenario, LineDiffShowsInvisibleDifferences) {
  EXPECT_EQ(core::line_diff({"DESIRED=1", "SKIPPED=lab-node-1"}, {"DESIRED=1\r", "SKIPPED=lab-node-1  "}),
            "--- expected\n+++ actual\n"
            "@@ -1,2 +1,2 @@\n"
            "-DESIRED=1\n"
            "-SKIPPED=lab-node-1\n"
            "+DESIRED=1\\r\n"
            "+SKIPPED=lab-node-1\\x20\\x20\n");
  EXPECT_EQ(core::line_diff({"a b", "c"}, {"a\tb", "c\\", "\x01"}),
            "--- expected\n+++ actual\n"
            "@@ -1,2 +1,3 @@\n"
            "-a b\n"
            "-c\n"
            "+a\\tb\n"
            "+c\\\\\n"
            "+\\x01\n");
  // Lines equal but for nothing invisible are context, unchanged.
  EXPECT_EQ(core::line_diff({"x", "y"}, {"x", "z"}),
            "--- expected\n+++ actual\n"
            "@@ -1,2 +1,2 @@\n"
            " x\n"
            "-y\n"
            "+z\n");
}

namespace {

// A scenario of `count` nodes, over 256 KiB from about 450: labels, flow
// allocatable, some taints, cordoned and not-ready nodes, one with host
// facts. `bad_at`: that node's gpu.present label unquoted (YAML reads a
// boolean); `twin_at`: that node named as node 3; `cluster_extra`: lines
// before cluster.nodes.
std::string large_scenario(int count, int bad_at = -1, int twin_at = -1, const std::string& cluster_extra = "") {
  std::string t = "name: large\ndescription: many nodes\ncluster:\n" + cluster_extra + "  nodes:\n";
  for (int i = 0; i < count; ++i) {
    t += "    - name: gpu-" + std::to_string(i == twin_at ? 3 : i) + "\n      labels:\n";
    t += "        nvidia.com/gpu.present: " + std::string(i == bad_at ? "true" : "\"true\"") + "\n";
    for (const char* op : {"driver", "container-toolkit", "device-plugin", "gpu-feature-discovery", "dcgm",
                           "dcgm-exporter", "operator-validator", "node-status-exporter", "mig-manager"})
      t += std::string("        nvidia.com/gpu.deploy.") + op + ": 'true'\n";
    t += "        kernel: 6.8.0-" + std::to_string(i) + "-generic\n";
    t += "      allocatable: {cpu: \"8\", memory: 64Gi, nvidia.com/gpu: \"4\"}\n";
    if (i % 100 == 7)
      t += "      taints: [{key: k, value: v, effect: NoSchedule}]\n      unschedulable: true\n      ready: false\n";
    if (i == 42) t += "      host: {driver: pre-installed}\n";
  }
  return t + "steps:\n  - createNamespace: gpu-operator\n";
}

}  // namespace

// A scenario of 256 KiB and more has its cluster.nodes read item by item
// while the text is parsed (core::load_yaml_streaming). The scenario, and
// the first error of one with errors, are those of the same text read whole:
// the same text ending in a comment with a non-ASCII character, which the
// libfyaml reader leaves to yaml-cpp.
TEST(Scenario, LargeScenarioIsReadAsTheWholeTextIs) {
  TempDir d;
  auto both = [&](const std::string& text) {
    EXPECT_GE(text.size(), 256u * 1024);
    EXPECT_TRUE(core::detail::load_yaml_all_by_libfyaml(text).has_value());  // the streaming reader's subset
    return std::pair{d.write("fast.yaml", text), d.write("whole.yaml", text + "# caf\xc3\xa9\n")};
  };
  auto [fast, whole] = both(large_scenario(900));
  core::Scenario a = core::load_scenario(fast);
  core::Scenario b = core::load_scenario(whole);
  ASSERT_EQ(a.nodes.size(), 900u);
  ASSERT_EQ(b.nodes.size(), 900u);
  for (size_t i = 0; i < a.nodes.size(); ++i)
    ASSERT_EQ(boost::json::serialize(core::encode(a.nodes[i])), boost::json::serialize(core::encode(b.nodes[i]))) << i;
  EXPECT_EQ(a.nodes[107].metadata.labels.at("kernel"), "6.8.0-107-generic");
  EXPECT_TRUE(a.nodes[107].unschedulable);
  EXPECT_EQ(a.nodes[107].ready_status(), "False");
  ASSERT_EQ(a.hosts.size(), 1u);
  EXPECT_EQ(a.hosts[0].node, "gpu-42");
  EXPECT_EQ(a.hosts[0].driver, "pre-installed");
  EXPECT_TRUE(a.simulator_only);
  EXPECT_EQ(a.steps.size(), b.steps.size());

  auto same_error = [&](const std::string& text, const std::string& field) {
    auto [f, w] = both(text);
    auto e_fast = load_error(text);
    auto e_whole = load_error(text + "# caf\xc3\xa9\n");
    EXPECT_EQ(e_fast.field(), field);
    EXPECT_EQ(e_whole.field(), field);
    EXPECT_EQ(e_fast.line(), e_whole.line()) << field;
    EXPECT_EQ(e_fast.message(), e_whole.message()) << field;
    return e_fast;
  };
  auto e = same_error(large_scenario(900, 600), "cluster.nodes[600].labels[nvidia.com/gpu.present]");
  EXPECT_NE(e.message().find("label values are strings"), std::string::npos) << e.message();
  e = same_error(large_scenario(900, -1, 700), "cluster.nodes[700].name");
  EXPECT_EQ(e.message(), "Duplicate value: \"gpu-3\"");
  // Node 10's error was met while parsing; the profile's, read before the
  // nodes, is still the one reported.
  same_error(large_scenario(900, 10, -1, "  profile: bogus\n"), "cluster.profile");
  same_error(large_scenario(900, 10, -1, "  zones: 3\n"), "cluster.zones");
}
