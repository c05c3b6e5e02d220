// core/scenario/scenario_assert.cpp: `assert:` and `error:` by partial match
// (core/scenario/scenario_assert.h).
#include "core/scenario/scenario_assert.h"

#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "core/base/errors.h"
#include "core/codec/documents.h"
#include "core/codec/encode.h"
#include "core/scenario/scenario_expr.h"

namespace gpuops::core {

namespace json = boost::json;

namespace {

// The kinds gpuops reads, with their apiVersion, in the order errors list them.
struct KindRow {
  const char* kind;
  const char* api_version;
};
constexpr KindRow kKinds[] = {
    {"Node", "v1"},
    {"DaemonSet", "apps/v1"},
    {"Pod", "v1"},
    {"ClusterPolicy", "nvidia.com/v1"},
    {"NVIDIADriver", "nvidia.com/v1alpha1"},
};

int line_of(const YAML::Node& node) { return node.IsDefined() ? node.Mark().line + 1 : 0; }

// A map key in field.Path notation: ".key", or "[key]" when it holds '.' or '/'.
std::string step(const std::string& path, const std::string& key) {
  if (key.find_first_of("./") != std::string::npos) return path + "[" + key + "]";
  return path.empty() ? key : path + "." + key;
}

std::optional<std::string> difference(const json::value& expected, const json::value* actual, const std::string& path) {
  const std::string at = path.empty() ? "" : path + ": ";
  // A value (expr): evaluated with @ the actual value (null when absent),
  // it must give true.
  if (expected.is_string() && is_expression(expected.as_string())) {
    const std::string expr(expected.as_string());
    try {
      json::value result = evaluate_expression(expr, actual);
      if (result.is_bool() && result.as_bool()) return std::nullopt;
      return at + "expected " + expr + " to be true, got " + json::serialize(result) +
             (actual ? " (@ is " + json::serialize(*actual) + ")" : " (@ is absent)");
    } catch (const std::exception& e) {
      return at + expr + ": " + e.what();
    }
  }
  if (expected.is_null()) {
    if (!actual || actual->is_null()) return std::nullopt;
    return at + "expected null (absent), got " + json::serialize(*actual);
  }
  if (!actual) return at + "expected " + json::serialize(expected) + ", got nothing";
  if (expected.is_object()) {
    if (!actual->is_object()) return at + "expected a map, got " + json::serialize(*actual);
    for (const auto& [key, value] : expected.as_object()) {
      if (is_expression(key)) {  // a key (expr): its result, with @ this map, matches the value
        const std::string expr(key);
        const std::string where = path.empty() ? expr : path + "." + expr;
        try {
          const json::value result = evaluate_expression(expr, actual);
          if (auto d = difference(value, &result, where)) return d;
        } catch (const std::exception& e) {
          return where + ": " + e.what();
        }
        continue;
      }
      const json::value* field = actual->as_object().if_contains(key);
      if (auto d = difference(value, field, step(path, key))) return d;
    }
    return std::nullopt;
  }
  if (expected.is_array()) {
    if (!actual->is_array()) return at + "expected a list, got " + json::serialize(*actual);
    const json::array& want = expected.as_array();
    const json::array& got = actual->as_array();
    if (want.size() != got.size())
      return at + "expected " + std::to_string(want.size()) + " items, got " + std::to_string(got.size());
    for (size_t i = 0; i < want.size(); ++i)
      if (auto d = difference(want[i], &got[i], path + "[" + std::to_string(i) + "]")) return d;
    return std::nullopt;
  }
  // Scalars: numbers by value, the others as JSON.
  const bool numbers = expected.is_number() && actual->is_number();
  const bool equal = numbers ? expected.to_number<double>() == actual->to_number<double>() : expected == *actual;
  if (equal) return std::nullopt;
  return at + "expected " + json::serialize(expected) + ", got " + json::serialize(*actual);
}

// The objects of `kind` in `state`, encoded, with their names.
std::vector<std::pair<std::string, json::value>> objects_of(const std::string& kind, const ClusterState& state) {
  std::vector<std::pair<std::string, json::value>> out;
  auto add = [&](const auto& list) {
    for (const auto& object : list) out.emplace_back(object.metadata.name, json::value(encode(object)));
  };
  if (kind == "Node") add(state.nodes);
  if (kind == "DaemonSet") add(state.daemonsets);
  if (kind == "Pod") add(state.pods);
  if (kind == "ClusterPolicy") add(state.cluster_policies);
  if (kind == "NVIDIADriver") add(state.nvidia_drivers);
  return out;
}

// "Pod gpu-operator/x" or "Node x".
std::string describe_json(const std::string& kind, const json::value& object) {
  std::string name;
  if (const json::value* meta = object.as_object().if_contains("metadata"); meta && meta->is_object()) {
    const json::object& m = meta->as_object();
    if (const json::value* ns = m.if_contains("namespace"); ns && ns->is_string() && !ns->as_string().empty())
      name = std::string(ns->as_string()) + "/";
    if (const json::value* n = m.if_contains("name"); n && n->is_string()) name += std::string(n->as_string());
  }
  return kind + " " + name;
}

// Checks the syntax of every (expr) key and string value of `node`.
void check_expressions(const YAML::Node& node, const std::string& file, const std::string& field) {
  auto check = [&](const YAML::Node& at, const std::string& text, const std::string& f) {
    if (!is_expression(text)) return;
    try {
      check_expression(text);
    } catch (const std::invalid_argument& e) {
      throw InputError(file, line_of(at), f, "invalid expression " + text + ": " + e.what());
    }
  };
  if (node.IsScalar()) return check(node, node.Scalar(), field);
  if (node.IsSequence())
    for (size_t i = 0; i < node.size(); ++i) check_expressions(node[i], file, field + "[" + std::to_string(i) + "]");
  if (node.IsMap())
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      const std::string f = field + "." + key;
      check(it->first, key, f);
      check_expressions(it->second, file, f);
    }
}

}  // namespace

std::vector<ObjectExpectation> read_object_expectations(const YAML::Node& list, const std::string& file,
                                                        const std::string& field) {
  if (!list.IsSequence())
    throw InputError(file, line_of(list), field, "must be a list of objects (apiVersion, kind, metadata, ...)");
  std::vector<ObjectExpectation> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string f = field + "[" + std::to_string(i) + "]";
    if (!item.IsMap()) throw InputError(file, line_of(item), f, "must be a map: an object, in part");
    check_expressions(item, file, f);
    ObjectExpectation e;
    e.line = line_of(item);
    e.partial = yaml_node_to_json(item);
    const json::object& object = e.partial.as_object();
    const json::value* kind = object.if_contains("kind");
    const json::value* api_version = object.if_contains("apiVersion");
    if (!kind || !kind->is_string()) throw InputError(file, e.line, f + ".kind", "Required value");
    if (!api_version || !api_version->is_string()) throw InputError(file, e.line, f + ".apiVersion", "Required value");
    e.kind = std::string(kind->as_string());
    const KindRow* row = nullptr;
    std::string kinds;
    for (const auto& k : kKinds) {
      if (e.kind == k.kind) row = &k;
      kinds += std::string(kinds.empty() ? "" : ", ") + k.kind;
    }
    if (!row)
      throw InputError(file, line_of(item["kind"]), f + ".kind",
                       "Unsupported value: \"" + e.kind + "\": the kinds gpuops reads: " + kinds);
    if (api_version->as_string() != row->api_version)
      throw InputError(file, line_of(item["apiVersion"]), f + ".apiVersion",
                       e.kind + " is " + row->api_version + ", not \"" + std::string(api_version->as_string()) + "\"");
    if (const json::value* meta = object.if_contains("metadata")) {
      if (!meta->is_object()) throw InputError(file, line_of(item["metadata"]), f + ".metadata", "must be a map");
      if (const json::value* name = meta->as_object().if_contains("name")) {
        if (!name->is_string())
          throw InputError(file, line_of(item["metadata"]["name"]), f + ".metadata.name", "must be a string");
        e.name = std::string(name->as_string());
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<std::string> partial_difference(const json::value& expected, const json::value& actual) {
  return difference(expected, &actual, "");
}

std::vector<std::string> check_object_expectations(const std::vector<ObjectExpectation>& asserts,
                                                   const std::vector<ObjectExpectation>& errors,
                                                   const ClusterState& state) {
  std::vector<std::string> failures;
  for (const ObjectExpectation& e : asserts) {
    const std::string head = "assert (line " + std::to_string(e.line) + "): ";
    std::optional<std::string> first;  // the first candidate's difference
    bool found = false, matched = false;
    for (const auto& [name, object] : objects_of(e.kind, state)) {
      if (!e.name.empty() && name != e.name) continue;
      found = true;
      std::optional<std::string> d = partial_difference(e.partial, object);
      if (!d) {
        matched = true;
        break;
      }
      if (!first) first = describe_json(e.kind, object) + ": " + *d;
    }
    if (matched) continue;
    if (!found)
      failures.push_back(head + "no " + e.kind + (e.name.empty() ? "" : " \"" + e.name + "\""));
    else
      failures.push_back(head + (e.name.empty() ? "no " + e.kind + " matches; the first: " : "") + *first);
  }
  for (const ObjectExpectation& e : errors) {
    for (const auto& [name, object] : objects_of(e.kind, state)) {
      if (!e.name.empty() && name != e.name) continue;
      if (!partial_difference(e.partial, object)) {
        failures.push_back("error (line " + std::to_string(e.line) + "): " + describe_json(e.kind, object) +
                           " matches");
        break;
      }
    }
  }
  return failures;
}

void object_state_parts(const std::vector<ObjectExpectation>& items, StateParts& parts) {
  for (const ObjectExpectation& e : items) {
    if (e.kind == "Node") parts.nodes = true;
    if (e.kind == "DaemonSet") parts.daemonsets = true;
    if (e.kind == "Pod") parts.pods = true;
    if (e.kind == "ClusterPolicy" || e.kind == "NVIDIADriver") parts.cluster_policies = true;
  }
}

}  // namespace gpuops::core
