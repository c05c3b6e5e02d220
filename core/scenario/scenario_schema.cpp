// core/scenario/scenario_schema.cpp: the JSON Schema of a scenario file
// (core/scenario/scenario_schema.h).
#include "core/scenario/scenario_schema.h"

#include <boost/json.hpp>

#include <initializer_list>
#include <iterator>
#include <string>

#include "core/scenario/action.h"
#include "core/scenario/scenario_keys.h"

namespace gpuops::core {

namespace json = boost::json;

namespace {

// A value of JSON type `type`, or a binding's use.
json::object typed(const char* type) {
  return json::object{{"anyOf", json::array{json::object{{"type", type}}, json::object{{"$ref", "#/$defs/use"}}}}};
}

// The JSON type of a top-level key's value; nullptr for any.
const char* top_level_type(const std::string& key) {
  if (key == "simulatorOnly") return "boolean";
  if (key == "cluster" || key == "operator" || key == "bindings") return "object";
  if (key == "steps" || key == "matrix" || key == "catch" || key == "finally") return "array";
  return "string";
}

}  // namespace

json::object scenario_schema() {
  const std::string identifier = "^[A-Za-z_][A-Za-z0-9_]*$";
  json::object bindings{{"type", "object"}, {"propertyNames", json::object{{"pattern", identifier}}}};
  json::object top;
  for (const char* key : kScenarioKeys) top[key] = typed(top_level_type(key));
  top["name"] = json::object{{"type", "string"}, {"minLength", 1}};
  top["bindings"] = json::object{{"$ref", "#/$defs/bindings"}};
  top["matrix"] =
      json::object{{"type", "array"}, {"minItems", 1}, {"items", json::object{{"$ref", "#/$defs/bindings"}}}};
  top["steps"] = json::object{{"type", "array"}, {"minItems", 1}, {"items", json::object{{"$ref", "#/$defs/step"}}}};
  const json::object diagnostics{{"type", "array"}, {"items", json::object{{"$ref", "#/$defs/diagnostic"}}}};
  top["catch"] = top["finally"] = diagnostics;

  json::object step{{"name", typed("string")}};
  for (const auto& row : kActionKeys) step[row.key] = json::object{{"description", "an action (one per step)"}};
  for (const char* key : kStepCheckKeys) step[key] = typed(std::string(key) == "settle" ? "boolean" : "string");
  step["expect"] = json::object{{"$ref", "#/$defs/expect"}};
  step["expectError"] = typed("object");
  step["catch"] = step["finally"] = diagnostics;

  // One diagnostic operation: a map of exactly one of them.
  json::object operation_args{{"type", json::array{"object", "null"}}, {"additionalProperties", false}};
  auto args = [&](std::initializer_list<const char*> keys) {
    json::object properties;
    for (const char* key : keys) properties[key] = json::object{{"type", "string"}, {"minLength", 1}};
    json::object schema = operation_args;
    schema["properties"] = std::move(properties);
    return schema;
  };
  json::object operations{{"diagnose", args({})},
                          {"dump", args({})},
                          {"explain", args({"daemonset", "node"})},
                          {"events", args({})},
                          {"podLogs", args({"pod", "selector", "container"})}};
  operations["explain"].as_object()["required"] = json::array{"daemonset", "node"};
  operations["explain"].as_object()["type"] = "object";
  operations["podLogs"].as_object()["type"] = "object";
  json::object diagnostic{{"type", "object"},
                          {"minProperties", 1},
                          {"maxProperties", 1},
                          {"additionalProperties", false},
                          {"properties", std::move(operations)}};

  json::object expect;
  for (const char* key : kExpectKeys) expect[key] = json::object{};
  expect["assert"] = typed("array");
  expect["error"] = typed("array");

  json::object defs{
      {"use", json::object{{"type", "string"}, {"pattern", "^\\(\\$[A-Za-z_][A-Za-z0-9_]*\\)$"}}},
      {"bindings", std::move(bindings)},
      {"diagnostic", std::move(diagnostic)},
      {"step", json::object{{"type", "object"}, {"additionalProperties", false}, {"properties", std::move(step)}}},
      {"expect", json::object{{"type", "object"}, {"additionalProperties", false}, {"properties", std::move(expect)}}},
  };
  return json::object{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                      {"title", "gpuops scenario (docs/SCENARIOS.md)"},
                      {"type", "object"},
                      {"required", json::array{"name", "steps"}},
                      {"additionalProperties", false},
                      {"properties", std::move(top)},
                      {"$defs", std::move(defs)}};
}

}  // namespace gpuops::core
