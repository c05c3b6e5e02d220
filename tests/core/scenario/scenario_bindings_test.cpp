// core/scenario/scenario_bindings.cpp through the loader: a scenario's
// bindings and matrix, --values and --set, and their errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "../../common/temp_dir.h"
#include "core/base/errors.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_bindings.h"

namespace core = gpuops::core;
namespace fs = std::filesystem;

namespace {

using gpuops::testing::TempDir;

// Two releases, each with its expectations; a top-level binding for the node.
const char* const kMatrix = R"(name: m
description: ($why)
simulatorOnly: ($simOnly)
bindings:
  node: gpu-a
  simOnly: false
matrix:
  - version: v25.3
    running: [gpu-a, gpu-b]
    why: keeps it
  - {version: v26.7, simOnly: true, running: [gpu-b], why: drops it}
operator:
  version: ($version)
cluster:
  nodes: [{name: gpu-a}, {name: gpu-b}]
steps:
  - label: {node: ($node), remove: [k]}
    expect:
      running:
        nvidia-device-plugin-daemonset: ($running)
)";

core::InputError entries_error(const std::string& text, const core::BindingOverrides& overrides = {}) {
  TempDir d;
  std::string f = d.write("s.yaml", text);
  try {
    core::load_scenario_entries(f, overrides);
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return core::InputError("", 0, "", "");
}

}  // namespace

TEST(ScenarioBindings, MatrixGivesOneScenarioPerEntryNamedByItsScalars) {
  TempDir d;
  const std::string f = d.write("s.yaml", kMatrix);
  std::vector<core::Scenario> s = core::load_scenario_entries(f);
  ASSERT_EQ(s.size(), 2u);
  // The entry's keys in its order, lists and prose ("keeps it": a space) left out.
  EXPECT_EQ(s[0].name, "m[version=v25.3]");
  EXPECT_EQ(s[1].name, "m[version=v26.7,simOnly=true]");
  EXPECT_EQ(s[0].file, f);
  EXPECT_EQ(s[1].file, f);
  EXPECT_EQ(s[0].operator_->version, "v25.3");
  EXPECT_EQ(s[1].operator_->version, "v26.7");
  EXPECT_EQ(s[0].description, "keeps it");
  EXPECT_EQ(s[1].description, "drops it");
  EXPECT_FALSE(s[0].simulator_only);  // the top-level binding
  EXPECT_TRUE(s[1].simulator_only);   // the entry's, over it
  EXPECT_EQ(s[0].steps.at(0).node, "gpu-a");
  const auto want0 = std::vector<std::string>{"gpu-a", "gpu-b"};
  const auto want1 = std::vector<std::string>{"gpu-b"};
  EXPECT_EQ(s[0].steps.at(0).expect.running.at("nvidia-device-plugin-daemonset"), want0);
  EXPECT_EQ(s[1].steps.at(0).expect.running.at("nvidia-device-plugin-daemonset"), want1);
  // One scenario at a time refuses a matrix of two.
  try {
    core::load_scenario(f);
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "matrix");
  }
}

TEST(ScenarioBindings, PrecedenceSetOverValuesOverEntryOverBindings) {
  TempDir d;
  const std::string f = d.write("s.yaml", kMatrix);
  // --values names the node and the release; --set the release again, and a list.
  const std::string values = d.write("values.yaml", "node: gpu-b\nversion: v26.7\nextra: unused\n");
  core::BindingOverrides overrides{values, {"version=v25.3", "running=[gpu-a, gpu-b]", "version=v25.3"}};
  std::vector<core::Scenario> s = core::load_scenario_entries(f, overrides);
  ASSERT_EQ(s.size(), 2u);
  for (const auto& scenario : s) {
    EXPECT_EQ(scenario.operator_->version, "v25.3");  // --set over --values over the entry
    EXPECT_EQ(scenario.steps.at(0).node, "gpu-b");    // --values over bindings
    const auto want = std::vector<std::string>{"gpu-a", "gpu-b"};
    EXPECT_EQ(scenario.steps.at(0).expect.running.at("nvidia-device-plugin-daemonset"), want);
  }
  // The names carry the final values.
  EXPECT_EQ(s[0].name, "m[version=v25.3]");
  EXPECT_EQ(s[1].name, "m[version=v25.3,simOnly=true]");
}

TEST(ScenarioBindings, WithoutAMatrixTheNameStaysAndScalarsKeepTheirQuotes) {
  TempDir d;
  const std::string f = d.write("s.yaml", R"(name: plain
bindings:
  flag: "true"
  labels: {a: "1"}
cluster:
  nodes: [{name: n, labels: ($labels)}]
steps:
  - label: {node: n, set: {k: ($flag)}}
)");
  std::vector<core::Scenario> s = core::load_scenario_entries(f);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].name, "plain");
  EXPECT_EQ(s[0].steps.at(0).label_set.at("k"), "true");     // quoted in the binding: a string
  EXPECT_EQ(s[0].nodes.at(0).metadata.labels.at("a"), "1");  // a map binding
  // A binding's value is not searched for uses: the label's value is the text "($on)",
  // which label validation refuses.
  core::InputError e = entries_error(R"(name: plain
bindings:
  labels: {b: ($on)}
  on: "x"
cluster:
  nodes: [{name: n, labels: ($labels)}]
steps:
  - label: {node: n, set: {k: ($on)}}
)");
  EXPECT_EQ(e.field(), "cluster.nodes[0].labels[b]");
  EXPECT_EQ(e.line(), 3);  // the binding's line: the value comes from there
}

TEST(ScenarioBindings, ASetValueIsReadAsYaml) {
  TempDir d;
  const std::string f = d.write("s.yaml", R"(name: quoted
cluster:
  nodes: [{name: n}]
steps:
  - label: {node: n, set: {k: ($v)}}
)");
  core::BindingOverrides quoted{"", {R"(v="true")"}};
  EXPECT_EQ(core::load_scenario_entries(f, quoted).at(0).steps.at(0).label_set.at("k"), "true");
  // Plain true is a boolean, which a label value refuses.
  core::BindingOverrides plain{"", {"v=true"}};
  try {
    core::load_scenario_entries(f, plain);
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "steps[0].label.set[k]");
    EXPECT_NE(e.message().find("write \"true\" in quotes"), std::string::npos) << e.message();
  }
}

TEST(ScenarioBindings, UnknownBindingNamesFileLineAndField) {
  core::InputError e = entries_error(R"(name: u
bindings: {a: 1, b: 2}
steps:
  - label: {node: ($nod), set: {k: v}}
)");
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "steps[0].label.node");
  EXPECT_EQ(e.message(), "unknown binding \"nod\" (bindings: a, b)");
  core::InputError none = entries_error("name: u\nsteps:\n  - cordon: ($n)\n");
  EXPECT_EQ(none.line(), 3);
  EXPECT_EQ(none.field(), "steps[0].cordon");
  EXPECT_EQ(none.message(),
            "unknown binding \"n\" (no bindings: give them under bindings:, matrix:, --values or --set)");
}

TEST(ScenarioBindings, MalformedUsesAreErrors) {
  core::InputError inside = entries_error("name: u\nbindings: {n: a}\nsteps:\n  - cordon: node-($n)\n");
  EXPECT_EQ(inside.line(), 4);
  EXPECT_EQ(inside.field(), "steps[0].cordon");
  EXPECT_EQ(inside.message(),
            "a binding is used as a whole value: write the value as \"($name)\" alone, not inside \"node-($n)\"");
  core::InputError bad = entries_error("name: u\nsteps:\n  - cordon: ($no-de)\n");
  EXPECT_EQ(bad.line(), 3);
  EXPECT_EQ(bad.message(), "\"($no-de)\" is not a binding: ($ and ) around an identifier");
}

TEST(ScenarioBindings, MalformedBindingsAndMatrixAreErrors) {
  core::InputError not_map = entries_error("name: u\nmatrix:\n  - {a: 1}\n  - just-a-string\nsteps:\n  - cordon: n\n");
  EXPECT_EQ(not_map.line(), 4);
  EXPECT_EQ(not_map.field(), "matrix[1]");
  EXPECT_EQ(not_map.message(), "must be a map of bindings, e.g. {version: v26.7}");
  core::InputError key = entries_error("name: u\nmatrix:\n  - {a-b: 1}\nsteps:\n  - cordon: n\n");
  EXPECT_EQ(key.line(), 3);
  EXPECT_EQ(key.field(), "matrix[0].a-b");
  EXPECT_EQ(key.message(), "a binding's name is an identifier ([A-Za-z_][A-Za-z0-9_]*), not \"a-b\"");
  core::InputError digit = entries_error("name: u\nbindings:\n  1st: x\nsteps:\n  - cordon: n\n");
  EXPECT_EQ(digit.line(), 3);
  EXPECT_EQ(digit.field(), "bindings.1st");
  core::InputError list = entries_error("name: u\nbindings: [a]\nsteps:\n  - cordon: n\n");
  EXPECT_EQ(list.line(), 2);
  EXPECT_EQ(list.field(), "bindings");
  core::InputError empty = entries_error("name: u\nmatrix: []\nsteps:\n  - cordon: n\n");
  EXPECT_EQ(empty.line(), 2);
  EXPECT_EQ(empty.field(), "matrix");
  EXPECT_EQ(empty.message(), "must be a list of maps of bindings, e.g. [{version: v26.7}]");
}

TEST(ScenarioBindings, BadOverridesAreErrors) {
  const char* const ok = "name: u\nsteps:\n  - cordon: n\n";
  core::InputError no_eq = entries_error(ok, {"", {"version"}});
  EXPECT_EQ(no_eq.file(), "--set");
  EXPECT_EQ(no_eq.field(), "version");
  EXPECT_EQ(no_eq.message(), "give a binding as NAME=VALUE (e.g. --set version=v26.7)");
  core::InputError bad_key = entries_error(ok, {"", {"my.key=1"}});
  EXPECT_EQ(bad_key.file(), "--set");
  EXPECT_EQ(bad_key.field(), "my.key");
  TempDir d;
  const std::string values = d.write("values.yaml", "- a\n");
  core::InputError not_map = entries_error(ok, {values, {}});
  EXPECT_EQ(not_map.file(), values);
  EXPECT_EQ(not_map.line(), 1);
  EXPECT_EQ(not_map.message(), "must be a map of bindings, e.g. {version: v26.7}");
  const std::string absent = (fs::path(values).parent_path() / "absent.yaml").string();
  core::InputError missing = entries_error(ok, {absent, {}});
  EXPECT_EQ(missing.file(), absent);
}

TEST(ScenarioBindings, LibraryKeepsAFilesEntriesTogetherAndRefusesDuplicates) {
  TempDir d;
  const std::string a = d.write("a.yaml", kMatrix);
  const std::string b = d.write("b.yaml", "name: b\ncluster: {nodes: [{name: n}]}\nsteps:\n  - cordon: n\n");
  std::vector<core::Scenario> all = core::load_scenarios({fs::path(a).parent_path().string()});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].name, "m[version=v25.3]");
  EXPECT_EQ(all[1].name, "m[version=v26.7,simOnly=true]");
  EXPECT_EQ(all[2].name, "b");
  EXPECT_EQ(all[2].file, b);
  // --set v=a gives both entries of a matrix over v one name: the duplicate is refused.
  const std::string over_v = d.write("v.yaml", "name: v\nmatrix: [{v: a}, {v: b}]\nsteps:\n  - cordon: ($v)\n");
  EXPECT_EQ(core::load_scenarios({over_v}).at(1).name, "v[v=b]");
  try {
    core::load_scenarios({over_v}, {"", {"v=a"}});
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "name");
    EXPECT_EQ(e.message(), "Duplicate value: \"v[v=a]\" (also in " + over_v + ")");
  }
}

TEST(ScenarioBindings, Identifiers) {
  using core::scenario_bindings::is_identifier;
  EXPECT_TRUE(is_identifier("version"));
  EXPECT_TRUE(is_identifier("_a1"));
  EXPECT_FALSE(is_identifier(""));
  EXPECT_FALSE(is_identifier("1a"));
  EXPECT_FALSE(is_identifier("a-b"));
  EXPECT_FALSE(is_identifier("a.b"));
  EXPECT_FALSE(is_identifier("caf\xc3\xa9"));
}
