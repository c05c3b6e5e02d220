// gpuops run: a step's and a scenario's catch/finally diagnostics on the
// simulator: what runs when, the reports (JSON, JUnit <system-out>), the
// files of --artifacts, and the loader's errors.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include "../common/cli_run.h"
#include "../common/temp_dir.h"
#include "core/scenario/scenario_diagnostics.h"
#include "core/scenario/scenario_schema.h"

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

using gpuops::testing::run_gpuops;
using gpuops::testing::TempDir;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

// gpu-b opts out of the DCGM exporter ("false"), so the step expecting it on
// both nodes fails: its nodeSelector (deploy label = "true") does not match
// gpu-b, NodeShouldRunDaemonPod gives (false, false) and no pod goes there.
const char* const kFails = R"(name: fails-on-purpose[x=1]
cluster:
  nodes:
    - name: gpu-a
      labels: {nvidia.com/gpu.deploy.dcgm-exporter: "true"}
    - name: gpu-b
      labels: {nvidia.com/gpu.deploy.dcgm-exporter: "false"}
steps:
  - createNamespace: gpu-operator
    finally:
      - dump: {}
  - name: dcgm on both/all
    apply: {operands: [dcgm-exporter]}
    expect:
      running: {nvidia-dcgm-exporter: [gpu-a, gpu-b]}
    catch:
      - diagnose: {}
      - dump: {}
      - explain: {daemonset: nvidia-dcgm-exporter, node: gpu-b}
      - events: {}
      - podLogs: {selector: app=nvidia-dcgm-exporter, container: exporter}
      - diagnose:
    finally:
      - diagnose: {}
catch:
  - explain: {daemonset: nvidia-dcgm-exporter, node: gpu-a}
finally:
  - events: {}
)";

std::set<std::string> files_under(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

}  // namespace

// A failed step runs its catch, then its finally; a passed one only its
// finally; the scenario's catch and finally run after the last step. Each
// output is a file of --artifacts, named by scenario and step (path-safe).
TEST(ScenarioDiagnostics, CatchOnFailureFinallyAlwaysIntoArtifacts) {
  TempDir d;
  std::string f = d.write("s.yaml", kFails);
  const std::string art = d.path + "/art";
  auto r =
      run_gpuops({"run", f, "--artifacts", art, "--report-json", d.path + "/r.json", "--junit", d.path + "/j.xml"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "gpuops run: 10 files of catch/finally output under " + art + "\n");
  const std::string scenario = "fails-on-purpose_x_1_";
  const std::string step = scenario + "/2-dcgm_on_both_all/";
  EXPECT_EQ(files_under(art), (std::set<std::string>{
                                  scenario + "/1-createNamespace_gpu-operator/finally-dump.json",
                                  step + "diagnose.txt",
                                  step + "dump.json",
                                  step + "explain-gpu-b-nvidia-dcgm-exporter.txt",
                                  step + "events.txt",
                                  step + "podlogs-app_nvidia-dcgm-exporter.txt",
                                  step + "diagnose-2.txt",
                                  step + "finally-diagnose.txt",
                                  scenario + "/scenario/explain-gpu-a-nvidia-dcgm-exporter.txt",
                                  scenario + "/scenario/finally-events.txt",
                              }));
  // explain of the opted-out pair: the nodeSelector does not match.
  std::string explain = slurp(art + "/" + step + "explain-gpu-b-nvidia-dcgm-exporter.txt");
  EXPECT_EQ(explain.substr(0, explain.find("\n", explain.find("\n", explain.find("\n") + 1) + 1) + 1),
            "gpu-b dcgm-exporter: daemonset nvidia-dcgm-exporter found; label "
            "nvidia.com/gpu.deploy.dcgm-exporter=false\n"
            "placement: shouldRun=false shouldContinueRunning=false\n"
            "  reason: nodeSelector nvidia.com/gpu.deploy.dcgm-exporter=true: node has \"false\"\n");
  // The dump: both nodes, the DaemonSet, its one pod (on gpu-a); gpuops
  // diagnose reads it back to the same findings as the catch's diagnose.
  const std::string dump = art + "/" + step + "dump.json";
  json::value doc = json::parse(slurp(dump));
  EXPECT_EQ(doc.at("kind"), json::value("List"));
  std::multiset<std::string> kinds;
  for (const auto& item : doc.at("items").as_array()) kinds.insert(std::string(item.at("kind").as_string()));
  EXPECT_EQ(kinds, (std::multiset<std::string>{"Node", "Node", "DaemonSet", "Pod"}));
  auto again = run_gpuops({"diagnose", "--snapshot", dump, "--severity", "info"});
  EXPECT_EQ(again.out, slurp(art + "/" + step + "diagnose.txt"));
  EXPECT_NE(again.out.find("gpu-b dcgm-exporter info label-false: "), std::string::npos) << again.out;
  EXPECT_EQ(slurp(art + "/" + step + "diagnose-2.txt"), again.out);
  EXPECT_EQ(slurp(art + "/" + step + "events.txt"), "events: unavailable on the simulator (it records no events)\n");
  EXPECT_EQ(slurp(art + "/" + step + "podlogs-app_nvidia-dcgm-exporter.txt"),
            "podLogs: unavailable on the simulator (its pods run no containers, so have no logs)\n");

  // JSON: the step's and the scenario's diagnostics, in order.
  json::value report = json::parse(slurp(d.path + "/r.json"));
  const json::value& sc = report.at("scenarios").at(0);
  const json::array& diags = sc.at("steps").at(1).at("diagnostics").as_array();
  std::vector<std::string> seen;
  for (const auto& x : diags)
    seen.push_back(std::string(x.at("block").as_string()) + " " + std::string(x.at("op").as_string()));
  EXPECT_EQ(seen, (std::vector<std::string>{"catch diagnose", "catch dump", "catch explain", "catch events",
                                            "catch podLogs", "catch diagnose", "finally diagnose"}));
  EXPECT_EQ(diags.at(2).at("output"), json::value(explain));
  EXPECT_EQ(sc.at("steps").at(0).at("diagnostics").as_array().size(), 1u);
  EXPECT_EQ(sc.at("diagnostics").as_array().size(), 2u);

  // JUnit: the same under "===" headers in the test case's <system-out>.
  std::istringstream xml(slurp(d.path + "/j.xml"));
  boost::property_tree::ptree tree;
  boost::property_tree::read_xml(xml, tree);
  const std::string out = tree.get<std::string>("testsuite.testcase.system-out");
  EXPECT_EQ(out.rfind("=== step 1 \"createNamespace gpu-operator\": finally dump (finally-dump.json)\n", 0), 0u);
  EXPECT_NE(
      out.find("=== step 2 \"dcgm on both/all\": catch explain (explain-gpu-b-nvidia-dcgm-exporter.txt)\n" + explain),
      std::string::npos);
  EXPECT_NE(out.find("=== scenario: finally events (finally-events.txt)\nevents: unavailable on the simulator"),
            std::string::npos);
}

// A scenario that passes runs no catch at all, only its finally.
TEST(ScenarioDiagnostics, PassingScenarioRunsOnlyFinally) {
  TempDir d;
  std::string text = kFails;
  text.replace(text.find("[gpu-a, gpu-b]"), 14, "[gpu-a]");
  std::string f = d.write("s.yaml", text);
  auto r = run_gpuops({"run", f, "--artifacts", d.path + "/art"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(files_under(d.path + "/art"), (std::set<std::string>{
                                              "fails-on-purpose_x_1_/1-createNamespace_gpu-operator/finally-dump.json",
                                              "fails-on-purpose_x_1_/2-dcgm_on_both_all/finally-diagnose.txt",
                                              "fails-on-purpose_x_1_/scenario/finally-events.txt",
                                          }));
}

// Bad catch/finally input: exit 2, the file, line and field named.
TEST(ScenarioDiagnostics, BadOperationsNameFileLineAndField) {
  TempDir d;
  struct Case {
    std::string op, error;
  };
  const Case cases[] = {
      {"evnts: {}",
       ":9: steps[0].catch[0].evnts: unknown operation \"evnts\" (expected one of: diagnose, dump, explain, events, "
       "podLogs)"},
      {"explain: {node: gpu-a}", ":9: steps[0].catch[0].explain.daemonset: Required value"},
      {"explain: {daemonset: nope, node: gpu-a}",
       ":9: steps[0].catch[0].explain.daemonset: no operand of the scenario's catalog has DaemonSet \"nope\""},
      {"explain: {daemonset: [a], node: gpu-a}", ":9: steps[0].catch[0].explain.daemonset: must be a non-empty string"},
      {"diagnose: {nodes: [a]}",
       ":9: steps[0].catch[0].diagnose.nodes: unknown field \"nodes\" (it takes no arguments)"},
      {"podLogs: {pod: a, selector: b}", ":9: steps[0].catch[0].podLogs: needs exactly one of pod and selector"},
      {"{diagnose: {}, dump: {}}",
       ":9: steps[0].catch[0]: must be a map of one operation (diagnose, dump, explain, events or podLogs), e.g. "
       "{diagnose: {}}"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.op);
    std::string f = d.write("s.yaml",
                            "name: bad\ncluster:\n  nodes: [{name: gpu-a}]\nsteps:\n"
                            "  - createNamespace: gpu-operator\n"
                            "    # a comment\n"
                            "    # another\n"
                            "    catch:\n"
                            "      - " +
                                c.op + "\n");
    auto r = run_gpuops({"run", f});
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(r.err, "gpuops: error: " + f + c.error + "\n");
  }
  std::string f = d.write("s.yaml", "name: bad\nsteps:\n  - createNamespace: x\nfinally: {dump: {}}\n");
  auto r = run_gpuops({"run", f});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: " + f + ":4: finally: must be a list of diagnostic operations\n");
}

// The schema names catch and finally at both levels, each item one
// operation of the five, explain's arguments required.
TEST(ScenarioDiagnostics, SchemaNamesCatchAndFinally) {
  json::object schema = gpuops::core::scenario_schema();
  const json::value ref = json::object{{"$ref", "#/$defs/diagnostic"}};
  EXPECT_EQ(schema.at("properties").at("catch").at("items"), ref);
  EXPECT_EQ(schema.at("properties").at("finally").at("items"), ref);
  const json::value& step = schema.at("$defs").at("step").at("properties");
  EXPECT_EQ(step.at("catch").at("items"), ref);
  EXPECT_EQ(step.at("finally").at("items"), ref);
  const json::value& op = schema.at("$defs").at("diagnostic");
  EXPECT_EQ(op.at("maxProperties"), json::value(1));
  std::set<std::string> names;
  for (const auto& [k, v] : op.at("properties").as_object()) names.insert(std::string(k));
  EXPECT_EQ(names, (std::set<std::string>{"diagnose", "dump", "explain", "events", "podLogs"}));
  EXPECT_EQ(op.at("properties").at("explain").at("required"), (json::array{"daemonset", "node"}));
}

TEST(ScenarioDiagnostics, PathSafeNames) {
  using gpuops::core::path_safe;
  EXPECT_EQ(path_safe("opt-out[version=v26.7]"), "opt-out_version_v26.7_");
  EXPECT_EQ(path_safe("../etc/passwd"), ".._etc_passwd");
  EXPECT_EQ(path_safe(".."), "__");
  EXPECT_EQ(path_safe("."), "_");
  EXPECT_EQ(path_safe(""), "_");
  EXPECT_EQ(path_safe(std::string(300, 'a')).size(), 100u);
}

// --pause-on-failure waits on a live cluster only (tests/serve/run_pause_test.cpp
// has the terminal and the refusal without one).
TEST(ScenarioPause, GoesWithTheRealBackend) {
  TempDir d;
  auto r = run_gpuops({"run", d.write("s.yaml", kFails), "--pause-on-failure"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "gpuops run: --pause-on-failure goes with --backend real\nRun 'gpuops run --help' for usage.\n");
}
