// core/scenario/scenario_schema.cpp: the published schema names every key the
// library's scenarios use.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "core/scenario/action.h"
#include "core/scenario/scenario_schema.h"

namespace core = gpuops::core;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// The keys of the map `yaml` (at `where`) that `schema_object`'s properties
// do not name, as "where: key".
void unnamed(const YAML::Node& yaml, const json::object& schema_object, const std::string& where,
             std::vector<std::string>& out) {
  if (!yaml.IsMap()) return;
  const json::object& properties = schema_object.at("properties").as_object();
  for (auto it = yaml.begin(); it != yaml.end(); ++it)
    if (!properties.contains(it->first.Scalar())) out.push_back(where + ": " + it->first.Scalar());
}

// The keys of scenario `root` (of `file`) the schema does not name: top
// level, steps, expectations.
std::vector<std::string> outside_schema(const YAML::Node& root, const json::object& schema, const std::string& file) {
  std::vector<std::string> out;
  const json::object& defs = schema.at("$defs").as_object();
  unnamed(root, schema, file, out);
  if (const YAML::Node steps = root["steps"]; steps && steps.IsSequence())
    for (size_t i = 0; i < steps.size(); ++i) {
      const std::string where = file + " steps[" + std::to_string(i) + "]";
      unnamed(steps[i], defs.at("step").as_object(), where, out);
      if (steps[i].IsMap() && steps[i]["expect"])
        unnamed(steps[i]["expect"], defs.at("expect").as_object(), where + ".expect", out);
    }
  return out;
}

}  // namespace

TEST(ScenarioSchema, IsDraft202012AndClosed) {
  const json::object schema = core::scenario_schema();
  EXPECT_EQ(schema.at("$schema").as_string(), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(schema.at("additionalProperties"), json::value(false));
  EXPECT_EQ(schema.at("required"), (json::array{"name", "steps"}));
  const json::object& step = schema.at("$defs").at("step").as_object();
  EXPECT_EQ(step.at("additionalProperties"), json::value(false));
  // Every action, as the loader's table spells it.
  for (const auto& row : core::kActionKeys) EXPECT_TRUE(step.at("properties").as_object().contains(row.key)) << row.key;
  for (const char* key : {"bindings", "matrix", "operator", "cluster"})
    EXPECT_TRUE(schema.at("properties").as_object().contains(key)) << key;
  for (const char* key : {"assert", "error", "running", "diagnose"})
    EXPECT_TRUE(schema.at("$defs").at("expect").at("properties").as_object().contains(key)) << key;
}

TEST(ScenarioSchema, TheCheckFindsAKeyOutsideIt) {
  const json::object schema = core::scenario_schema();
  YAML::Node bad = YAML::Load("name: x\nbogus: 1\nsteps:\n  - cordon: n\n    wait: 1s\n    expect: {nope: 1}\n");
  EXPECT_EQ(outside_schema(bad, schema, "f"),
            (std::vector<std::string>{"f: bogus", "f steps[0]: wait", "f steps[0].expect: nope"}));
}

TEST(ScenarioSchema, EveryLibraryScenarioUsesOnlyItsKeys) {
  const json::object schema = core::scenario_schema();
  const fs::path library = fs::path(GPUOPS_SOURCE_DIR) / "scenarios";
  size_t files = 0;
  std::vector<std::string> outside;
  for (auto it = fs::recursive_directory_iterator(library); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && it->path().filename() == "manifests") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || it->path().extension() != ".yaml") continue;
    ++files;
    for (auto& key : outside_schema(YAML::LoadFile(it->path().string()), schema, it->path().string()))
      outside.push_back(std::move(key));
  }
  EXPECT_GE(files, 50u);
  EXPECT_EQ(outside, std::vector<std::string>{});
}
