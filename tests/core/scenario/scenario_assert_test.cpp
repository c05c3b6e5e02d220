// core/scenario/scenario_assert.cpp: `assert:` and `error:` by partial match,
// read from a scenario and checked against a state.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "../../common/builders.h"
#include "core/base/errors.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_assert.h"

namespace core = gpuops::core;
namespace json = boost::json;
namespace fs = std::filesystem;
using gpuops::testing::daemonset;
using gpuops::testing::node;
using gpuops::testing::pod;

namespace {

std::string write(const std::string& text) {
  static int n = 0;
  fs::path dir = fs::temp_directory_path() / ("gpuops-assert-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path f = dir / ("s" + std::to_string(n++) + ".yaml");
  std::ofstream(f) << text;
  return f.string();
}

core::Expectations expect_of(const std::string& expect_yaml) {
  core::Scenario s = core::load_scenario(write("name: a\nsteps:\n  - expect:\n" + expect_yaml));
  return s.steps.at(0).expect;
}

core::InputError load_error(const std::string& expect_yaml) {
  try {
    expect_of(expect_yaml);
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return core::InputError("", 0, "", "");
}

// gpu-a labelled, a DaemonSet with numberReady 1 and its pod on gpu-a.
core::ClusterState state() {
  core::ClusterState s;
  s.namespace_ = "gpu-operator";
  s.nodes = {node("gpu-a", {{"nvidia.com/gpu.present", "true"}})};
  core::DaemonSet ds = daemonset("dcgm", "nvidia.com/gpu.deploy.dcgm");
  ds.status.desired_number_scheduled = 1;
  ds.status.number_ready = 1;
  s.daemonsets = {ds};
  s.pods = {pod(ds, "gpu-a")};
  return s;
}

std::vector<std::string> check(const std::string& expect_yaml) {
  return core::check_expectations(expect_of(expect_yaml), state(), core::load_catalog("lab"));
}

}  // namespace

TEST(ScenarioAssert, SubsetOfMapsListsByPositionScalarsByValue) {
  auto d = [](const char* want, const char* got) {
    return core::partial_difference(json::parse(want), json::parse(got));
  };
  EXPECT_EQ(d(R"({"a": {"b": 1}})", R"({"a": {"b": 1, "c": 2}, "d": 3})"), std::nullopt);
  EXPECT_EQ(d(R"({"a": {"b": 2}})", R"({"a": {"b": 1}})"), "a.b: expected 2, got 1");
  EXPECT_EQ(d(R"({"n": 2})", R"({"n": 2.0})"), std::nullopt);
  EXPECT_EQ(d(R"({"s": "2"})", R"({"s": 2})"), "s: expected \"2\", got 2");
  EXPECT_EQ(d(R"({"l": [1, 2]})", R"({"l": [1, 2]})"), std::nullopt);
  EXPECT_EQ(d(R"({"l": [1]})", R"({"l": [1, 2]})"), "l: expected 1 items, got 2");
  EXPECT_EQ(d(R"({"l": [{"k": "x"}, {"k": "y"}]})", R"({"l": [{"k": "x"}, {"k": "z", "v": 1}]})"),
            "l[1].k: expected \"y\", got \"z\"");
  EXPECT_EQ(d(R"({"m": {"x.io/k": "v"}})", R"({"m": {}})"), "m[x.io/k]: expected \"v\", got nothing");
  EXPECT_EQ(d(R"({"gone": null})", R"({})"), std::nullopt);
  EXPECT_EQ(d(R"({"gone": null})", R"({"gone": 1})"), "gone: expected null (absent), got 1");
  EXPECT_EQ(d(R"({"a": {"b": 1}})", R"({"a": [1]})"), "a: expected a map, got [1]");
}

TEST(ScenarioAssert, AssertAndErrorAgainstAState) {
  // Each holds.
  EXPECT_EQ(check(R"(      assert:
        - {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: dcgm}, status: {numberReady: 1}}
        - {apiVersion: v1, kind: Node, metadata: {name: gpu-a, labels: {nvidia.com/gpu.present: "true"}}}
        - {apiVersion: v1, kind: Pod, metadata: {labels: {app: dcgm}}, spec: {nodeName: gpu-a}}
      error:
        - {apiVersion: v1, kind: Pod, spec: {nodeName: gpu-b}}
        - {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: other}}
)"),
            std::vector<std::string>{});
  // Each fails, with the first differing path.
  EXPECT_EQ(check(R"(      assert:
        - {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: dcgm}, status: {numberReady: 2}}
        - {apiVersion: v1, kind: Node, metadata: {name: gpu-z}}
        - {apiVersion: v1, kind: Pod, spec: {nodeName: gpu-b}}
      error:
        - {apiVersion: v1, kind: Pod, spec: {nodeName: gpu-a}}
)"),
            (std::vector<std::string>{
                "assert (line 5): DaemonSet gpu-operator/dcgm: status.numberReady: expected 2, got 1",
                "assert (line 6): no Node \"gpu-z\"",
                "assert (line 7): no Pod matches; the first: Pod gpu-operator/dcgm-abcde: spec.nodeName: expected "
                "\"gpu-b\", got \"gpu-a\"",
                "error (line 9): Pod gpu-operator/dcgm-abcde matches",
            }));
  EXPECT_EQ(check("      assert:\n        - {apiVersion: nvidia.com/v1, kind: ClusterPolicy}\n"),
            std::vector<std::string>{"assert (line 5): no ClusterPolicy"});
}

TEST(ScenarioAssert, StatePartsFollowTheKinds) {
  core::StateParts parts =
      core::state_parts(expect_of("      assert: [{apiVersion: v1, kind: Node}]\n      error: [{apiVersion: "
                                  "nvidia.com/v1, kind: ClusterPolicy}]\n"));
  EXPECT_TRUE(parts.nodes);
  EXPECT_FALSE(parts.daemonsets);
  EXPECT_FALSE(parts.pods);
  EXPECT_TRUE(parts.cluster_policies);
}

TEST(ScenarioAssert, MalformedItemsAreLoadErrors) {
  core::InputError kind = load_error("      assert: [{apiVersion: v1, kind: Secret, metadata: {name: x}}]\n");
  EXPECT_EQ(kind.line(), 4);
  EXPECT_EQ(kind.field(), "steps[0].expect.assert[0].kind");
  EXPECT_EQ(kind.message(),
            "Unsupported value: \"Secret\": the kinds gpuops reads: Node, DaemonSet, Pod, ClusterPolicy, NVIDIADriver");
  core::InputError version = load_error("      error:\n        - {apiVersion: v1, kind: DaemonSet}\n");
  EXPECT_EQ(version.line(), 5);
  EXPECT_EQ(version.field(), "steps[0].expect.error[0].apiVersion");
  EXPECT_EQ(version.message(), "DaemonSet is apps/v1, not \"v1\"");
  core::InputError no_kind = load_error("      assert: [{apiVersion: v1}]\n");
  EXPECT_EQ(no_kind.field(), "steps[0].expect.assert[0].kind");
  EXPECT_EQ(no_kind.message(), "Required value");
  core::InputError no_version = load_error("      assert: [{kind: Node}]\n");
  EXPECT_EQ(no_version.field(), "steps[0].expect.assert[0].apiVersion");
  core::InputError not_list = load_error("      assert: {kind: Node}\n");
  EXPECT_EQ(not_list.field(), "steps[0].expect.assert");
  EXPECT_EQ(not_list.message(), "must be a list of objects (apiVersion, kind, metadata, ...)");
  core::InputError not_map = load_error("      error: [Node]\n");
  EXPECT_EQ(not_map.field(), "steps[0].expect.error[0]");
  EXPECT_EQ(not_map.message(), "must be a map: an object, in part");
  core::InputError name = load_error("      assert: [{apiVersion: v1, kind: Node, metadata: {name: [a]}}]\n");
  EXPECT_EQ(name.field(), "steps[0].expect.assert[0].metadata.name");
  EXPECT_EQ(name.message(), "must be a string");
}
