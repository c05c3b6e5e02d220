// core/scenario/scenario_load.cpp: scenario YAML -> core::Scenario (load_scenario, load_steps).
#include "core/scenario/scenario.h"

#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>

#include <cstddef>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/base/terminal.h"
#include "core/codec/crd_schema.h"
#include "core/codec/documents.h"
#include "core/codec/yaml_load.h"
#include "core/diagnose/diagnose_render.h"
#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/manifests.h"
#include "core/gpu_operator/operands.h"
#include "core/gpu_operator/operator_install.h"
#include "core/kube/names.h"
#include "core/kube/taints.h"
#include "core/model/duration.h"
#include "core/model/model.h"
#include "core/model/quantity.h"
#include "core/scenario/scenario_bindings.h"
#include "core/scenario/scenario_keys.h"

namespace gpuops::core {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& field, const std::string& message) const {
    throw InputError(file_, at.IsDefined() ? at.Mark().line + 1 : 0, field, message);
  }
  void keys(const YAML::Node& map, const std::string& field, std::initializer_list<const char*> allowed) const {
    keys(map, field, std::vector<const char*>(allowed));
  }
  void keys(const YAML::Node& map, const std::string& field, const std::vector<const char*>& allowed) const {
    if (!map.IsMap()) fail(map, field, "must be a map");
    for (auto it = map.begin(); it != map.end(); ++it) {
      std::string key = it->first.Scalar();
      bool ok = std::any_of(allowed.begin(), allowed.end(), [&](const char* name) { return key == name; });
      if (!ok) {
        std::string list;
        for (const char* name : allowed) list += std::string(list.empty() ? "" : ", ") + name;
        fail(it->first, join(field, key), "unknown field \"" + key + "\" (expected one of: " + list + ")");
      }
    }
  }
  // The value of the first `key` of `map` (the one map[key] gives), or
  // nullopt when there is none: what operator[] answers without its cost on
  // an absent key (yaml-cpp names the node it returns then through a
  // std::stringstream), for the fields read once per node of a cluster.
  static std::optional<YAML::Node> find(const YAML::Node& map, std::string_view key) {
    if (!map.IsMap()) return std::nullopt;
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
    return std::nullopt;
  }
  std::string str(const YAML::Node& value, const std::string& field) const {
    if (!value.IsScalar()) fail(value, field, "must be a string");
    return value.Scalar();
  }
  // A label value: must be a string in the YAML sense (quoted when it looks
  // like a boolean or a number), exactly as the API demands of labels.
  std::string label_value(const YAML::Node& value, const std::string& field) const {
    if (value.IsNull()) return "";
    if (!value.IsScalar()) fail(value, field, "must be a string");
    if (value.Tag() == "?") {
      if (const char* kind = plain_kind(value.Scalar()))
        fail(value, field,
             "label values are strings: write \"" + value.Scalar() + "\" in quotes (YAML reads " + value.Scalar() +
                 " as a " + kind + ")");
    }
    return value.Scalar();
  }
  int integer(const YAML::Node& value, const std::string& field) const {
    try {
      return value.as<int>();
    } catch (const YAML::Exception&) {
      fail(value, field, "must be an integer");
    }
  }
  bool boolean(const YAML::Node& value, const std::string& field) const {
    try {
      return value.as<bool>();
    } catch (const YAML::Exception&) {
      fail(value, field, "must be true or false");
    }
  }
  std::vector<std::string> strings(const YAML::Node& value, const std::string& field) const {
    std::vector<std::string> out;
    if (value.IsScalar()) return {value.Scalar()};
    if (!value.IsSequence()) fail(value, field, "must be a list of strings");
    for (size_t i = 0; i < value.size(); ++i) out.push_back(str(value[i], field + "[" + std::to_string(i) + "]"));
    return out;
  }
  std::vector<std::string> text_lines(const YAML::Node& value, const std::string& field) const {
    if (value.IsSequence()) return strings(value, field);
    std::string text = str(value, field);
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  Duration duration(const YAML::Node& value, const std::string& field) const {
    try {
      return parse_duration(str(value, field));
    } catch (const std::invalid_argument& e) {
      fail(value, field, e.what());
    }
  }
  static std::string join(const std::string& parent, const std::string& child) {
    return parent.empty() ? child : parent + "." + child;
  }
  const std::string& file() const { return file_; }

 private:
  // YAML 1.1 plain-scalar resolution, as the API's YAML reader does it:
  // nullptr for a string, else what YAML reads it as ("boolean", "null",
  // "number"). Each distinct scalar is resolved once per file: a scenario
  // of many nodes repeats the same few label values on every one.
  const char* plain_kind(const std::string& scalar) const {
    if (auto it = plain_kinds_.find(scalar); it != plain_kinds_.end()) return it->second;
    Document doc = read_documents("v: " + scalar + "\n", "<scalar>").at(0);  // may throw: nothing kept then
    const json::value& resolved = doc.value.as_object().at("v");
    const char* kind = resolved.is_string() ? nullptr
                       : resolved.is_bool() ? "boolean"
                       : resolved.is_null() ? "null"
                                            : "number";
    plain_kinds_.emplace(scalar, kind);
    return kind;
  }
  std::string file_;
  mutable std::unordered_map<std::string, const char*> plain_kinds_;
};

Taint read_taint(const Reader& reader, const YAML::Node& yaml, const std::string& field, bool effect_required) {
  reader.keys(yaml, field, {"key", "value", "effect", "node"});
  Taint taint;
  if (!yaml["key"]) reader.fail(yaml, field + ".key", "Required value");
  taint.key = reader.str(yaml["key"], field + ".key");
  // The API server's rules for a node's taints (validateNodeTaints): the key
  // a qualified name, the value a label value.
  if (std::string e = validate_label_key(taint.key); !e.empty())
    reader.fail(yaml["key"], field + ".key", "Invalid value: " + go_quote(taint.key) + ": " + e);
  if (yaml["value"]) {
    taint.value = reader.label_value(yaml["value"], field + ".value");
    if (std::string e = validate_label_value(taint.value); !e.empty())
      reader.fail(yaml["value"], field + ".value", "Invalid value: " + go_quote(taint.value) + ": " + e);
  }
  if (yaml["effect"]) taint.effect = reader.str(yaml["effect"], field + ".effect");
  if (effect_required && taint.effect.empty()) reader.fail(yaml, field + ".effect", "Required value");
  if (!taint.effect.empty() && !is_taint_effect(taint.effect))
    reader.fail(yaml["effect"], field + ".effect",
                "Unsupported value: \"" + taint.effect + "\": supported values: " + quoted_taint_effects());
  return taint;
}

// A host spec (core::HostSpec): {node?, driver, driverInUse, migConfig,
// migApplyFails}; `node` is required in a `host` step, absent under
// cluster.nodes[] (the node's own name).
HostSpec read_host(const Reader& reader, const YAML::Node& yaml, const std::string& field, bool with_node) {
  if (!yaml.IsMap()) reader.fail(yaml, field, "must be a map");
  if (with_node)
    reader.keys(yaml, field, {"node", "driver", "driverInUse", "migConfig", "migApplyFails"});
  else
    reader.keys(yaml, field, {"driver", "driverInUse", "migConfig", "migApplyFails"});
  HostSpec host;
  if (with_node) {
    if (!yaml["node"]) reader.fail(yaml, field + ".node", "Required value");
    host.node = reader.str(yaml["node"], field + ".node");
  }
  if (yaml["driver"]) {
    host.driver = reader.str(yaml["driver"], field + ".driver");
    if (*host.driver != "none" && *host.driver != "pre-installed" && *host.driver != "loaded")
      reader.fail(
          yaml["driver"], field + ".driver",
          "Unsupported value: \"" + *host.driver + "\": supported values: \"none\", \"pre-installed\", \"loaded\"");
  }
  if (yaml["driverInUse"]) host.driver_in_use = reader.boolean(yaml["driverInUse"], field + ".driverInUse");
  if (yaml["migConfig"]) host.mig_config = reader.str(yaml["migConfig"], field + ".migConfig");
  if (yaml["migApplyFails"]) host.mig_apply_fails = reader.boolean(yaml["migApplyFails"], field + ".migApplyFails");
  if (!host.driver && !host.driver_in_use && !host.mig_config && !host.mig_apply_fails)
    reader.fail(yaml, field, "give driver, driverInUse, migConfig or migApplyFails");
  return host;
}

Node read_node(const Reader& reader, const YAML::Node& yaml, const std::string& field) {
  reader.keys(yaml, field, {"name", "labels", "taints", "allocatable", "ready", "unschedulable", "host"});
  Node node;
  const std::optional<YAML::Node> name = Reader::find(yaml, "name");
  if (!name) reader.fail(yaml, field + ".name", "Required value");
  node.metadata.name = reader.str(*name, field + ".name");
  if (const std::optional<YAML::Node> found = Reader::find(yaml, "labels")) {
    const YAML::Node& labels = *found;
    if (!labels.IsMap()) reader.fail(labels, field + ".labels", "must be a map");
    LabelsBuilder built;
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      std::string k = it->first.Scalar();
      std::string key_field = field + ".labels[" + k + "]";
      std::string error = validate_label_key(k);
      if (!error.empty()) reader.fail(it->first, key_field, error);
      std::string v = reader.label_value(it->second, key_field);
      error = validate_label_value(v);
      if (!error.empty()) reader.fail(it->second, key_field, error);
      built.add(std::move(k), std::move(v));
    }
    node.metadata.labels = built.take();
  }
  if (const std::optional<YAML::Node> found = Reader::find(yaml, "taints")) {
    const YAML::Node& taints = *found;
    if (!taints.IsSequence()) reader.fail(taints, field + ".taints", "must be a list");
    for (size_t i = 0; i < taints.size(); ++i)
      node.taints.push_back(read_taint(reader, taints[i], field + ".taints[" + std::to_string(i) + "]", true));
  }
  if (const std::optional<YAML::Node> found = Reader::find(yaml, "allocatable")) {
    const YAML::Node& allocatable = *found;
    if (!allocatable.IsMap()) reader.fail(allocatable, field + ".allocatable", "must be a map");
    for (auto it = allocatable.begin(); it != allocatable.end(); ++it) {
      std::string k = it->first.Scalar();
      try {
        node.allocatable[k] = Quantity::parse(it->second.Scalar());
      } catch (const QuantityError& error) {
        reader.fail(it->second, field + ".allocatable[" + k + "]", error.what());
      }
    }
  }
  const std::optional<YAML::Node> ready_field = Reader::find(yaml, "ready");
  bool ready = ready_field ? reader.boolean(*ready_field, field + ".ready") : true;
  node.conditions.push_back({"Ready", ready ? "True" : "False", ready ? "KubeletReady" : "KubeletNotReady", ""});
  if (const std::optional<YAML::Node> unschedulable = Reader::find(yaml, "unschedulable"))
    node.unschedulable = reader.boolean(*unschedulable, field + ".unschedulable");
  node.metadata.labels.emplace("kubernetes.io/hostname", node.metadata.name);
  return node;
}

// expect.daemonsets: DaemonSet names to status fields to numbers.
void read_daemonsets_expect(const Reader& reader, const YAML::Node& daemonsets, const std::string& field,
                            Expectations& expect) {
  if (!daemonsets.IsMap()) reader.fail(daemonsets, field + ".daemonsets", "must map DaemonSet names to status fields");
  static const std::set<std::string> kFields = {
      "currentNumberScheduled", "numberMisscheduled",     "desiredNumberScheduled", "numberReady",
      "observedGeneration",     "updatedNumberScheduled", "numberAvailable",        "numberUnavailable"};
  for (auto it = daemonsets.begin(); it != daemonsets.end(); ++it) {
    std::string ds = it->first.Scalar();
    std::string item_field = field + ".daemonsets[" + ds + "]";
    if (!it->second.IsMap()) reader.fail(it->second, item_field, "must map status fields to numbers");
    for (auto jt = it->second.begin(); jt != it->second.end(); ++jt) {
      std::string k = jt->first.Scalar();
      if (!kFields.count(k)) reader.fail(jt->first, item_field + "." + k, "not a DaemonSet status field");
      expect.daemonsets[ds][k] = reader.integer(jt->second, item_field + "." + k);
    }
  }
}

// One item of expect.pods.
PodExpectation read_pod_expect(const Reader& reader, const YAML::Node& pod_yaml, const std::string& item_field) {
  reader.keys(pod_yaml, item_field,
              {"daemonset", "node", "absent", "phase", "ready", "terminating", "reason", "message", "image", "updated",
               "orphaned"});
  PodExpectation pod;
  pod.line = pod_yaml.Mark().line + 1;
  if (!pod_yaml["daemonset"] || !pod_yaml["node"]) reader.fail(pod_yaml, item_field, "daemonset and node are required");
  pod.daemonset = reader.str(pod_yaml["daemonset"], item_field + ".daemonset");
  pod.node = reader.str(pod_yaml["node"], item_field + ".node");
  if (pod_yaml["absent"]) pod.absent = reader.boolean(pod_yaml["absent"], item_field + ".absent");
  if (pod_yaml["phase"]) pod.phase = reader.str(pod_yaml["phase"], item_field + ".phase");
  if (pod_yaml["ready"]) pod.ready = reader.boolean(pod_yaml["ready"], item_field + ".ready");
  if (pod_yaml["terminating"]) pod.terminating = reader.boolean(pod_yaml["terminating"], item_field + ".terminating");
  if (pod_yaml["reason"]) pod.reason = reader.str(pod_yaml["reason"], item_field + ".reason");
  if (pod_yaml["message"]) pod.message = reader.str(pod_yaml["message"], item_field + ".message");
  if (pod_yaml["image"]) pod.image = reader.str(pod_yaml["image"], item_field + ".image");
  if (pod_yaml["updated"]) pod.updated = reader.boolean(pod_yaml["updated"], item_field + ".updated");
  if (pod_yaml["orphaned"]) pod.orphaned = reader.boolean(pod_yaml["orphaned"], item_field + ".orphaned");
  return pod;
}

// One node of expect.nodes: {labels: {KEY: VALUE or null}}.
void read_node_labels_expect(const Reader& reader, const YAML::Node& item, const std::string& node,
                             const std::string& item_field, Expectations& expect) {
  reader.keys(item, item_field, {"labels"});
  const YAML::Node labels = item["labels"];
  if (!labels || !labels.IsMap()) reader.fail(item, item_field + ".labels", "must be a map");
  for (auto jt = labels.begin(); jt != labels.end(); ++jt) {
    if (jt->second.IsNull())
      expect.node_labels[node][jt->first.Scalar()] = std::nullopt;
    else
      expect.node_labels[node][jt->first.Scalar()] =
          reader.label_value(jt->second, item_field + ".labels[" + jt->first.Scalar() + "]");
  }
}

// One item of expect.diagnose.
FindingExpectation read_finding_expect(const Reader& reader, const YAML::Node& item, const std::string& f) {
  reader.keys(item, f, {"node", "operand", "code", "severity", "absent"});
  FindingExpectation e;
  e.line = item.Mark().line + 1;
  if (item["absent"]) e.absent = reader.boolean(item["absent"], f + ".absent");
  if (item["code"] ? !item["node"] : (!e.absent || !item["severity"]))
    reader.fail(item, f, "node and code are required (without code: absent: true and a severity)");
  if (item["node"]) e.node = reader.str(item["node"], f + ".node");
  if (item["code"]) e.code = reader.str(item["code"], f + ".code");
  if (item["operand"]) e.operand = reader.str(item["operand"], f + ".operand");
  if (item["severity"]) {
    e.severity = reader.str(item["severity"], f + ".severity");
    if (!severity_from_name(*e.severity))
      reader.fail(item["severity"], f + ".severity", "must be error, warning or info");
  }
  return e;
}

Expectations read_expect(const Reader& reader, const YAML::Node& yaml, const std::string& field) {
  reader.keys(yaml, field, std::vector<const char*>(std::begin(kExpectKeys), std::end(kExpectKeys)));
  Expectations expect;
  if (yaml["assert"]) expect.asserts = read_object_expectations(yaml["assert"], reader.file(), field + ".assert");
  if (yaml["error"]) expect.errors = read_object_expectations(yaml["error"], reader.file(), field + ".error");
  // Failures name the line of the expectation's key.
  std::map<std::string, int> key_line;
  for (auto it = yaml.begin(); it != yaml.end(); ++it) key_line[it->first.Scalar()] = it->first.Mark().line + 1;
  if (const YAML::Node audit = yaml["audit"]) {
    expect.audit_line = key_line["audit"];
    if (audit.IsMap()) {
      reader.keys(audit, field + ".audit", {"lines", "exit"});
      if (audit["lines"]) expect.audit_lines = reader.text_lines(audit["lines"], field + ".audit.lines");
      if (audit["exit"]) expect.audit_exit = reader.integer(audit["exit"], field + ".audit.exit");
    } else {
      expect.audit_lines = reader.text_lines(audit, field + ".audit");
    }
  }
  if (const YAML::Node order = yaml["order"]) {
    expect.order_line = key_line["order"];
    if (!order.IsMap())
      reader.fail(order, field + ".order", "must map node names to ok or device-plugin-without-toolkit");
    for (auto it = order.begin(); it != order.end(); ++it) {
      std::string v = reader.str(it->second, field + ".order[" + it->first.Scalar() + "]");
      if (v != "ok" && v != "device-plugin-without-toolkit")
        reader.fail(it->second, field + ".order[" + it->first.Scalar() + "]",
                    "must be ok or device-plugin-without-toolkit, not \"" + v + "\"");
      expect.order[it->first.Scalar()] = v;
    }
  }
  if (const YAML::Node matrix = yaml["matrix"]) {
    expect.matrix_line = key_line["matrix"];
    expect.matrix = reader.text_lines(matrix, field + ".matrix");
  }
  if (const YAML::Node daemonsets = yaml["daemonsets"]) {
    expect.daemonsets_line = key_line["daemonsets"];
    read_daemonsets_expect(reader, daemonsets, field, expect);
  }
  if (const YAML::Node run = yaml["running"]) {
    expect.running_line = key_line["running"];
    if (!run.IsMap()) reader.fail(run, field + ".running", "must map DaemonSet names to lists of nodes");
    for (auto it = run.begin(); it != run.end(); ++it) {
      std::string ds = it->first.Scalar();
      std::vector<std::string> nodes;
      if (!it->second.IsNull()) nodes = reader.strings(it->second, field + ".running[" + ds + "]");
      std::sort(nodes.begin(), nodes.end());
      expect.running[ds] = nodes;
    }
  }
  if (const YAML::Node pods = yaml["pods"]) {
    if (!pods.IsSequence()) reader.fail(pods, field + ".pods", "must be a list");
    for (size_t i = 0; i < pods.size(); ++i) {
      expect.pods.push_back(read_pod_expect(reader, pods[i], field + ".pods[" + std::to_string(i) + "]"));
    }
  }
  if (const YAML::Node rollout = yaml["rollout"]) {
    // One {daemonset, complete} or a list of them.
    auto read_one = [&](const YAML::Node& item, const std::string& item_field) {
      reader.keys(item, item_field, {"daemonset", "complete"});
      if (!item["daemonset"]) reader.fail(item, item_field + ".daemonset", "Required value");
      RolloutExpectation r;
      r.line = item.Mark().line + 1;
      r.daemonset = reader.str(item["daemonset"], item_field + ".daemonset");
      if (item["complete"]) r.complete = reader.boolean(item["complete"], item_field + ".complete");
      expect.rollouts.push_back(r);
    };
    if (rollout.IsSequence()) {
      for (size_t i = 0; i < rollout.size(); ++i) read_one(rollout[i], field + ".rollout[" + std::to_string(i) + "]");
    } else {
      read_one(rollout, field + ".rollout");
    }
  }
  if (const YAML::Node nodes = yaml["nodes"]) {
    expect.nodes_line = key_line["nodes"];
    if (!nodes.IsMap()) reader.fail(nodes, field + ".nodes", "must map node names to {labels: ...}");
    for (auto it = nodes.begin(); it != nodes.end(); ++it) {
      std::string node = it->first.Scalar();
      read_node_labels_expect(reader, it->second, node, field + ".nodes[" + node + "]", expect);
    }
  }
  if (const YAML::Node cp = yaml["clusterPolicy"]) {
    std::string f = field + ".clusterPolicy";
    reader.keys(cp, f, {"name", "state", "reason", "message", "absent"});
    ClusterPolicyExpectation e;
    e.line = key_line["clusterPolicy"];
    if (cp["name"]) e.name = reader.str(cp["name"], f + ".name");
    if (cp["state"]) e.state = cp["state"].IsNull() ? "" : reader.str(cp["state"], f + ".state");
    if (cp["reason"]) e.reason = reader.str(cp["reason"], f + ".reason");
    if (cp["message"]) e.message = reader.str(cp["message"], f + ".message");
    if (cp["absent"]) e.absent = reader.boolean(cp["absent"], f + ".absent");
    expect.cluster_policy = e;
  }
  if (const YAML::Node findings = yaml["diagnose"]) {
    if (!findings.IsSequence()) reader.fail(findings, field + ".diagnose", "must be a list of {node, operand, code}");
    for (size_t i = 0; i < findings.size(); ++i) {
      expect.findings.push_back(
          read_finding_expect(reader, findings[i], field + ".diagnose[" + std::to_string(i) + "]"));
    }
  }
  return expect;
}

// A YAML map as the JSON object kubectl would send for it (core/codec/documents.h
// read_documents' typing), `line` its first line for errors.
json::object yaml_json(const Reader& reader, const YAML::Node& yaml, const std::string& field) {
  if (!yaml.IsMap()) reader.fail(yaml, field, "must be a map");
  // The node itself, not a re-emitted copy: the emitter drops the quotes of
  // a quoted "1.5" or "true", which a second reading took for a number or a
  // boolean.
  json::value v = yaml_node_to_json(yaml);
  if (!v.is_object()) reader.fail(yaml, field, "must be a map");
  return std::move(v.as_object());
}

OperatorSpec read_operator(const Reader& reader, const YAML::Node& yaml, const std::string& field) {
  reader.keys(yaml, field, {"version", "namespace", "name", "clusterPolicy"});
  OperatorSpec op;
  op.line = yaml.Mark().line + 1;
  if (!yaml["version"]) reader.fail(yaml, field + ".version", "Required value: one of " + catalogued_release_list());
  op.version = reader.str(yaml["version"], field + ".version");
  if (!is_catalogued_release(op.version))
    reader.fail(yaml["version"], field + ".version",
                "Unsupported value: \"" + op.version + "\": supported values: " + catalogued_release_list());
  op.catalog = load_catalog(operator_catalog_name(op.version));
  op.catalog.operator_mode = true;
  if (yaml["namespace"]) op.namespace_ = reader.str(yaml["namespace"], field + ".namespace");
  if (yaml["name"]) op.policy_name = reader.str(yaml["name"], field + ".name");
  if (const YAML::Node cp = yaml["clusterPolicy"]; cp && !cp.IsNull()) {
    op.spec = yaml_json(reader, cp, field + ".clusterPolicy");
    // The policy installOperator creates, judged now as the API server would
    // judge it then (core/codec/crd_schema.h): bad input names its line, where
    // the run would fail the scenario at setting up, with no line.
    try {
      validate_cluster_policy_spec(op.policy_name, cluster_policy_object(op.spec));
    } catch (const InputError& e) {
      // The line of the first field in error, as far as the YAML has it.
      // (reset, not =: a Node's = writes into the node it refers to.)
      YAML::Node at;
      at.reset(cp);
      std::string f = e.field();
      if (f.starts_with("spec.")) f = f.substr(5);
      for (size_t from = 0; from < f.size() && at.IsMap();) {
        size_t dot = f.find_first_of(".[", from);
        const std::string key = f.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
        const YAML::Node next = static_cast<const YAML::Node&>(at)[key];
        if (!next) break;
        at.reset(next);
        if (dot == std::string::npos || f[dot] == '[') break;
        from = dot + 1;
      }
      reader.fail(at, field + ".clusterPolicy", e.message());
    }
  }
  return op;
}

// How a scenario spells each fault kind, in the order an error lists them.
const std::pair<const char*, FaultKind> kFaultKinds[] = {
    {"image-pull", FaultKind::kImagePull},   {"crash-loop", FaultKind::kCrashLoop},
    {"never-ready", FaultKind::kNeverReady}, {"stuck-in-init", FaultKind::kStuckInInit},
    {"failed", FaultKind::kFailed},
};

FaultKind read_fault_kind(const Reader& reader, const YAML::Node& yaml, const std::string& field) {
  std::string kind = reader.str(yaml, field);
  std::string list;
  for (const auto& [name, value] : kFaultKinds) {
    if (kind == name) return value;
    list += std::string(list.empty() ? "" : ", ") + name;
  }
  reader.fail(yaml, field, "unknown fault \"" + kind + "\" (" + list + ")");
}

Step read_step(const Reader& reader, const YAML::Node& yaml, const std::string& field, const fs::path& dir,
               const Catalog& catalog) {
  // A step's fields: its name, one action (core::kActionKeys), then what it checks.
  static const std::vector<const char*> kStepFields = [] {
    std::vector<const char*> f{"name"};
    for (const auto& row : kActionKeys) f.push_back(row.key);
    f.insert(f.end(), std::begin(kStepCheckKeys), std::end(kStepCheckKeys));
    return f;
  }();
  reader.keys(yaml, field, kStepFields);
  Step step;
  step.line = yaml.Mark().line + 1;
  if (yaml["name"]) step.name = reader.str(yaml["name"], field + ".name");
  for (const auto& [action, key] : kActionKeys) {
    if (!yaml[key]) continue;
    if (step.action != Action::kNone)
      reader.fail(yaml[key], field + "." + key,
                  "a step has one action; this one already has " + action_key(step.action));
    step.action = action;
  }
  const std::string args_field = field + "." + action_key(step.action);
  const YAML::Node args = step.action == Action::kNone ? YAML::Node() : yaml[action_key(step.action)];
  if (step.action == Action::kCreateNamespace || step.action == Action::kDeleteNode || step.action == Action::kCordon ||
      step.action == Action::kUncordon) {
    step.name_arg = reader.str(args, args_field);
  } else if (step.action == Action::kApply) {
    reader.keys(args, args_field, {"files", "operands", "inline"});
    if (args["files"])
      for (const auto& file : reader.strings(args["files"], args_field + ".files"))
        step.apply_files.push_back((dir / file).lexically_normal().string());
    if (args["operands"]) {
      step.apply_operands = reader.strings(args["operands"], args_field + ".operands");
      for (const auto& operand_name : step.apply_operands) {
        const Operand* operand = catalog.by_name(operand_name);
        if (!operand)
          reader.fail(args["operands"], args_field + ".operands",
                      "no operand \"" + operand_name + "\" in the catalog (operands: " + catalog.names() + ")");
        if (operand->manifest.empty() || builtin_manifest(operand->manifest).empty())
          reader.fail(args["operands"], args_field + ".operands",
                      "operand \"" + operand_name + "\" has no shipped manifest");
      }
    }
    if (args["inline"]) step.apply_inline = reader.str(args["inline"], args_field + ".inline");
    if (step.apply_files.empty() && step.apply_operands.empty() && step.apply_inline.empty())
      reader.fail(args, args_field, "give files, operands or inline");
  } else if (step.action == Action::kLabel) {
    reader.keys(args, args_field, {"node", "set", "remove"});
    if (!args["node"]) reader.fail(args, args_field + ".node", "Required value");
    step.node = reader.str(args["node"], args_field + ".node");
    if (const YAML::Node set = args["set"]) {
      if (!set.IsMap()) reader.fail(set, args_field + ".set", "must be a map");
      LabelsBuilder built;
      for (auto it = set.begin(); it != set.end(); ++it)
        built.add(it->first.Scalar(), reader.label_value(it->second, args_field + ".set[" + it->first.Scalar() + "]"));
      step.label_set = built.take();
    }
    if (args["remove"]) step.label_remove = reader.strings(args["remove"], args_field + ".remove");
    if (step.label_set.empty() && step.label_remove.empty()) reader.fail(args, args_field, "give set or remove");
    // kubectl label's rule (parseLabels, pkg/cmd/label/label.go).
    for (size_t i = 0; i < step.label_remove.size(); ++i)
      if (step.label_set.count(step.label_remove[i]))
        reader.fail(args["remove"][i], args_field + ".remove[" + std::to_string(i) + "]",
                    "can not both modify and remove a label in the same command");
  } else if (step.action == Action::kAddNode) {
    step.new_node = read_node(reader, args, args_field);
  } else if (step.action == Action::kTaint || step.action == Action::kUntaint) {
    if (!args["node"]) reader.fail(args, args_field + ".node", "Required value");
    step.node = reader.str(args["node"], args_field + ".node");
    step.taint = read_taint(reader, args, args_field, step.action == Action::kTaint);
  } else if (step.action == Action::kReady) {
    reader.keys(args, args_field, {"node", "status"});
    if (!args["node"] || !args["status"]) reader.fail(args, args_field, "node and status are required");
    step.node = reader.str(args["node"], args_field + ".node");
    step.ready_status = reader.str(args["status"], args_field + ".status");
    if (step.ready_status != "True" && step.ready_status != "False" && step.ready_status != "Unknown")
      reader.fail(args["status"], args_field + ".status", "must be \"True\", \"False\" or \"Unknown\" (quoted)");
  } else if (step.action == Action::kDeletePod) {
    reader.keys(args, args_field, {"daemonset", "node"});
    if (!args["daemonset"] || !args["node"]) reader.fail(args, args_field, "daemonset and node are required");
    step.daemonset = reader.str(args["daemonset"], args_field + ".daemonset");
    step.node = reader.str(args["node"], args_field + ".node");
  } else if (step.action == Action::kDeleteDaemonSet) {
    reader.keys(args, args_field, {"name", "cascade"});
    if (!args["name"]) reader.fail(args, args_field + ".name", "Required value");
    step.daemonset = reader.str(args["name"], args_field + ".name");
    if (args["cascade"]) {
      step.cascade = reader.str(args["cascade"], args_field + ".cascade");
      if (step.cascade != "background" && step.cascade != "foreground" && step.cascade != "orphan")
        reader.fail(args["cascade"], args_field + ".cascade", "must be background, foreground or orphan");
    }
  } else if (step.action == Action::kFault) {
    reader.keys(args, args_field, {"kind", "node", "daemonset", "reason"});
    if (!args["kind"]) reader.fail(args, args_field + ".kind", "Required value");
    step.fault.kind = read_fault_kind(reader, args["kind"], args_field + ".kind");
    if (args["node"]) step.fault.node = reader.str(args["node"], args_field + ".node");
    if (args["daemonset"]) step.fault.daemonset = reader.str(args["daemonset"], args_field + ".daemonset");
    if (args["reason"]) step.fault.reason = reader.str(args["reason"], args_field + ".reason");
  } else if (step.action == Action::kHost) {
    step.host = read_host(reader, args, args_field, true);
  } else if (step.action == Action::kAdvance) {
    step.advance = reader.duration(args, args_field);
  } else if (step.action == Action::kInstallOperator) {
    step.operator_spec = read_operator(reader, args, args_field);
  } else if (step.action == Action::kPatchClusterPolicy) {
    reader.keys(args, args_field, {"name", "patch"});
    if (!args["patch"])
      reader.fail(args, args_field + ".patch",
                  "Required value: a JSON merge patch, e.g. {spec: {dcgm: {enabled: true}}}");
    if (args["name"]) step.policy_name = reader.str(args["name"], args_field + ".name");
    step.policy_patch = yaml_json(reader, args["patch"], args_field + ".patch");
  } else if (step.action == Action::kRemoveOperator) {
    if (args.IsMap()) {
      reader.keys(args, args_field, {"name"});
      if (args["name"]) step.policy_name = reader.str(args["name"], args_field + ".name");
    } else if (!args.IsNull() && !(args.IsScalar() && args.Scalar() == "true")) {
      reader.fail(args, args_field, "must be true or {name: NAME}");
    }
  }
  if (const YAML::Node expect_yaml = yaml["expect"]) step.expect = read_expect(reader, expect_yaml, field + ".expect");
  if (const YAML::Node error_yaml = yaml["expectError"]) {
    std::string error_field = field + ".expectError";
    reader.keys(error_yaml, error_field, {"exit", "contains", "field", "line"});
    ExpectedError expected;
    if (error_yaml["exit"]) {
      expected.exit = reader.integer(error_yaml["exit"], error_field + ".exit");
      if (expected.exit != 2 && expected.exit != 3)
        reader.fail(error_yaml["exit"], error_field + ".exit", "must be 2 (input error) or 3 (cluster error)");
    }
    if (error_yaml["contains"]) expected.contains = reader.str(error_yaml["contains"], error_field + ".contains");
    if (error_yaml["field"]) expected.field = reader.str(error_yaml["field"], error_field + ".field");
    if (error_yaml["line"]) expected.line = reader.integer(error_yaml["line"], error_field + ".line");
    if (step.action == Action::kNone)
      reader.fail(error_yaml, error_field, "expectError needs an action in the same step");
    step.expect_error = expected;
  }
  if (yaml["timeout"]) step.timeout = reader.duration(yaml["timeout"], field + ".timeout");
  if (yaml["settle"]) step.settle = reader.boolean(yaml["settle"], field + ".settle");
  read_diagnostic_blocks(yaml, reader.file(), field, catalog, step.diagnostics);
  if (step.action == Action::kNone && step.expect.empty())
    reader.fail(yaml, field, "a step needs an action or expectations");
  return step;
}

}  // namespace

// One item of cluster.nodes read: the node, its host facts, and what reading
// it threw (rethrown where the item is taken, so the first error of a
// scenario is the same whether its nodes were read while the text was
// parsed or after).
struct ClusterNode {
  Node node;
  std::optional<HostSpec> host;
  std::exception_ptr error;
};

ClusterNode read_cluster_node(const Reader& reader, const YAML::Node& yaml, size_t i) noexcept {
  ClusterNode out;
  try {
    const std::string field = "cluster.nodes[" + std::to_string(i) + "]";
    out.node = read_node(reader, yaml, field);
    if (const std::optional<YAML::Node> host = Reader::find(yaml, "host")) {
      out.host = read_host(reader, *host, field + ".host", false);
      out.host->node = out.node.metadata.name;
    }
  } catch (...) {
    out.error = std::current_exception();
  }
  return out;
}

namespace {

// The scenario of `root` (bindings substituted), its cluster.nodes read
// already when `streamed` (load_yaml_streaming).
Scenario read_scenario(const Reader& reader, const YAML::Node& root, std::vector<ClusterNode>& cluster_nodes,
                       bool streamed) {
  const std::string& path = reader.file();
  reader.keys(root, "", std::vector<const char*>(std::begin(kScenarioKeys), std::end(kScenarioKeys)));
  Scenario scenario;
  scenario.file = path;
  if (!root["name"]) reader.fail(root, "name", "Required value");
  scenario.name = reader.str(root["name"], "name");
  if (root["description"]) scenario.description = reader.str(root["description"], "description");
  if (root["namespace"]) scenario.namespace_ = reader.str(root["namespace"], "namespace");
  fs::path dir = fs::path(path).parent_path();
  if (const YAML::Node op = root["operator"]) scenario.operator_ = read_operator(reader, op, "operator");
  if (root["operands"]) {
    std::string operands = reader.str(root["operands"], "operands");
    if (builtin_catalog_text(operands).empty()) operands = (dir / operands).string();
    scenario.catalog = load_catalog(operands);
    scenario.catalog.operator_mode = scenario.operator_.has_value();
  } else {
    scenario.catalog = scenario.operator_ ? scenario.operator_->catalog : load_catalog("lab");
  }
  if (scenario.operator_ && !root["namespace"]) scenario.namespace_ = scenario.operator_->namespace_;
  if (root["simulatorOnly"]) scenario.simulator_only = reader.boolean(root["simulatorOnly"], "simulatorOnly");
  if (const YAML::Node cluster = root["cluster"]) {
    reader.keys(cluster, "cluster", {"profile", "nodes"});
    if (cluster["profile"]) {
      scenario.profile = reader.str(cluster["profile"], "cluster.profile");
      if (scenario.profile != "kwok" && scenario.profile != "kubelet")
        reader.fail(cluster["profile"], "cluster.profile", "must be kwok or kubelet, not \"" + scenario.profile + "\"");
    }
    if (const YAML::Node nodes = cluster["nodes"]) {
      if (!nodes.IsSequence()) reader.fail(nodes, "cluster.nodes", "must be a list");
      std::set<std::string> names;
      for (size_t i = 0; i < nodes.size(); ++i) {
        ClusterNode read = streamed ? std::move(cluster_nodes.at(i)) : read_cluster_node(reader, nodes[i], i);
        if (read.error) std::rethrow_exception(read.error);
        Node& node = read.node;
        if (read.host) {
          scenario.hosts.push_back(std::move(*read.host));
          scenario.simulator_only = true;  // host facts exist only in the simulator
        }
        if (!names.insert(node.metadata.name).second)
          reader.fail(nodes[i], "cluster.nodes[" + std::to_string(i) + "].name",
                      "Duplicate value: \"" + node.metadata.name + "\"");
        scenario.nodes.push_back(std::move(node));
      }
    }
  }
  const YAML::Node steps = root["steps"];
  if (!steps || !steps.IsSequence() || steps.size() == 0) reader.fail(root, "steps", "Required value: a list of steps");
  for (size_t i = 0; i < steps.size(); ++i)
    scenario.steps.push_back(read_step(reader, steps[i], "steps[" + std::to_string(i) + "]", dir, scenario.catalog));
  // An operator installed by a step: its release's catalog (operator mode)
  // and namespace, as with a top-level `operator:`.
  if (!root["operands"] && !scenario.operator_)
    for (const auto& step : scenario.steps)
      if (step.action == Action::kInstallOperator) {
        scenario.catalog = step.operator_spec.catalog;
        if (!root["namespace"]) scenario.namespace_ = step.operator_spec.namespace_;
        break;
      }
  read_diagnostic_blocks(root, path, "", scenario.catalog, scenario.diagnostics);
  return scenario;
}

}  // namespace

std::vector<Scenario> load_scenario_entries(const std::string& path, const BindingOverrides& overrides) {
  std::string text = read_input_file(path);
  Reader reader(path);
  // cluster.nodes is read item by item while the text is parsed (a large
  // scenario is mostly that list): load_yaml_streaming.
  std::vector<ClusterNode> cluster_nodes;
  SequenceItems items{{"cluster", "nodes"}, [&](const YAML::Node& item, size_t i) {
                        cluster_nodes.push_back(read_cluster_node(reader, item, i));
                      }};
  bool streamed = false;
  YAML::Node root = load_yaml_streaming(text, path, items, streamed);
  if (!streamed) cluster_nodes.clear();
  if (!root.IsMap()) throw InputError(path, 1, "", "a scenario is a map with name, cluster and steps");
  const size_t count = scenario_bindings::entry_count(root, path);
  const scenario_bindings::Bindings command_line = scenario_bindings::read_overrides(overrides);
  std::vector<Scenario> entries;
  for (size_t i = 0; i < count; ++i) {
    // Each entry substitutes into a tree of its own (the text read again).
    if (i > 0) root = load_yaml(text, path);
    scenario_bindings::Entry entry = scenario_bindings::entry(root, i, command_line);
    // The nodes read while parsing are those of the text before substitution.
    const bool substituted = scenario_bindings::substitute(root, entry.bindings, path) > 0;
    entries.push_back(read_scenario(reader, root, cluster_nodes, streamed && count == 1 && !substituted));
    entries.back().name += entry.suffix;
  }
  return entries;
}

Scenario load_scenario(const std::string& path) {
  std::vector<Scenario> entries = load_scenario_entries(path);
  if (entries.size() != 1)
    throw InputError(path, 0, "matrix",
                     "a scenario with a matrix of " + std::to_string(entries.size()) +
                         " entries is run as a library (gpuops run), not one at a time");
  return std::move(entries.front());
}

std::vector<Step> load_steps(const std::string& path, const Catalog& catalog) {
  std::string text = read_input_file(path);
  Reader reader(path);
  YAML::Node root = load_yaml(text, path);
  if (!root.IsSequence() || root.size() == 0)
    throw InputError(path, root.IsDefined() ? root.Mark().line + 1 : 1, "",
                     "a list of scenario steps (docs/SCENARIOS.md), e.g. - label: {node: gpu-2, set: {...}}");
  fs::path dir = fs::path(path).parent_path();
  std::vector<Step> steps;
  for (size_t i = 0; i < root.size(); ++i)
    steps.push_back(read_step(reader, root[i], "[" + std::to_string(i) + "]", dir, catalog));
  return steps;
}

}  // namespace gpuops::core
