// core/scenario_load.cpp: scenario YAML -> the typed Scenario of
// core/scenario.h (load_scenario, load_scenarios, parse_duration, Step::title).
#include "core/scenario.h"

#include <boost/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/documents.h"
#include "core/errors.h"
#include "core/input_file.h"
#include "core/manifests.h"
#include "core/model.h"
#include "core/operands.h"
#include "core/quantity.h"
#include "core/validation.h"
#include "core/yaml_load.h"

namespace gpuops::core {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& n, const std::string& field, const std::string& msg) const {
    throw InputError(file_, n.IsDefined() ? n.Mark().line + 1 : 0, field, msg);
  }
  void keys(const YAML::Node& n, const std::string& field, std::initializer_list<const char*> allowed) const {
    if (!n.IsMap()) fail(n, field, "must be a map");
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string k = it->first.Scalar();
      bool ok = std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; });
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
        fail(it->first, join(field, k), "unknown field \"" + k + "\" (expected one of: " + list + ")");
      }
    }
  }
  std::string str(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar()) fail(n, field, "must be a string");
    return n.Scalar();
  }
  // A label value: must be a string in the YAML sense (quoted when it looks
  // like a boolean or a number), exactly as the API demands of labels.
  std::string label_value(const YAML::Node& n, const std::string& field) const {
    if (n.IsNull()) return "";
    if (!n.IsScalar()) fail(n, field, "must be a string");
    if (n.Tag() == "?") {
      json::value v = plain(n.Scalar());
      if (!v.is_string())
        fail(n, field, "label values are strings: write \"" + n.Scalar() + "\" in quotes (YAML reads " + n.Scalar() +
                           " as a " + (v.is_bool() ? "boolean" : v.is_null() ? "null" : "number") + ")");
    }
    return n.Scalar();
  }
  int integer(const YAML::Node& n, const std::string& field) const {
    try {
      return n.as<int>();
    } catch (const YAML::Exception&) {
      fail(n, field, "must be an integer");
    }
  }
  bool boolean(const YAML::Node& n, const std::string& field) const {
    try {
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      fail(n, field, "must be true or false");
    }
  }
  std::vector<std::string> strings(const YAML::Node& n, const std::string& field) const {
    std::vector<std::string> out;
    if (n.IsScalar()) return {n.Scalar()};
    if (!n.IsSequence()) fail(n, field, "must be a list of strings");
    for (size_t i = 0; i < n.size(); ++i) out.push_back(str(n[i], field + "[" + std::to_string(i) + "]"));
    return out;
  }
  std::vector<std::string> text_lines(const YAML::Node& n, const std::string& field) const {
    if (n.IsSequence()) return strings(n, field);
    std::string s = str(n, field);
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
  Duration duration(const YAML::Node& n, const std::string& field) const {
    try {
      return parse_duration(str(n, field));
    } catch (const std::invalid_argument& e) {
      fail(n, field, e.what());
    }
  }
  static std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }
  const std::string& file() const { return file_; }

 private:
  // YAML 1.1 plain-scalar resolution, as the API's YAML reader does it.
  static json::value plain(const std::string& s) {
    Document d = read_documents("v: " + s + "\n", "<scalar>").at(0);
    return d.value.as_object().at("v");
  }
  std::string file_;
};

Taint read_taint(const Reader& r, const YAML::Node& n, const std::string& field, bool effect_required) {
  r.keys(n, field, {"key", "value", "effect", "node"});
  Taint t;
  if (!n["key"]) r.fail(n, field + ".key", "Required value");
  t.key = r.str(n["key"], field + ".key");
  if (n["value"]) t.value = r.label_value(n["value"], field + ".value");
  if (n["effect"]) t.effect = r.str(n["effect"], field + ".effect");
  if (effect_required && t.effect.empty()) r.fail(n, field + ".effect", "Required value");
  if (!t.effect.empty() && t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" && t.effect != "NoExecute")
    r.fail(n["effect"], field + ".effect",
           "Unsupported value: \"" + t.effect + "\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
  return t;
}

Node read_node(const Reader& r, const YAML::Node& n, const std::string& field) {
  r.keys(n, field, {"name", "labels", "taints", "allocatable", "ready", "unschedulable"});
  Node node;
  if (!n["name"]) r.fail(n, field + ".name", "Required value");
  node.metadata.name = r.str(n["name"], field + ".name");
  if (const YAML::Node l = n["labels"]) {
    if (!l.IsMap()) r.fail(l, field + ".labels", "must be a map");
    for (auto it = l.begin(); it != l.end(); ++it) {
      std::string k = it->first.Scalar();
      std::string kf = field + ".labels[" + k + "]";
      std::string e = validate_label_key(k);
      if (!e.empty()) r.fail(it->first, kf, e);
      std::string v = r.label_value(it->second, kf);
      e = validate_label_value(v);
      if (!e.empty()) r.fail(it->second, kf, e);
      node.metadata.labels[k] = v;
    }
  }
  if (const YAML::Node t = n["taints"]) {
    if (!t.IsSequence()) r.fail(t, field + ".taints", "must be a list");
    for (size_t i = 0; i < t.size(); ++i)
      node.taints.push_back(read_taint(r, t[i], field + ".taints[" + std::to_string(i) + "]", true));
  }
  if (const YAML::Node a = n["allocatable"]) {
    if (!a.IsMap()) r.fail(a, field + ".allocatable", "must be a map");
    for (auto it = a.begin(); it != a.end(); ++it) {
      std::string k = it->first.Scalar();
      try {
        node.allocatable[k] = Quantity::parse(it->second.Scalar());
      } catch (const QuantityError& e) {
        r.fail(it->second, field + ".allocatable[" + k + "]", e.what());
      }
    }
  }
  bool ready = n["ready"] ? r.boolean(n["ready"], field + ".ready") : true;
  node.conditions.push_back({"Ready", ready ? "True" : "False", ready ? "KubeletReady" : "KubeletNotReady", ""});
  if (n["unschedulable"]) node.unschedulable = r.boolean(n["unschedulable"], field + ".unschedulable");
  node.metadata.labels.emplace("kubernetes.io/hostname", node.metadata.name);
  return node;
}

Expectations read_expect(const Reader& r, const YAML::Node& n, const std::string& field) {
  r.keys(n, field, {"audit", "order", "matrix", "daemonsets", "running", "pods", "nodes"});
  Expectations e;
  // Failures name the line of the expectation's key.
  std::map<std::string, int> key_line;
  for (auto it = n.begin(); it != n.end(); ++it) key_line[it->first.Scalar()] = it->first.Mark().line + 1;
  if (const YAML::Node a = n["audit"]) {
    e.audit_line = key_line["audit"];
    if (a.IsMap()) {
      r.keys(a, field + ".audit", {"lines", "exit"});
      if (a["lines"]) e.audit_lines = r.text_lines(a["lines"], field + ".audit.lines");
      if (a["exit"]) e.audit_exit = r.integer(a["exit"], field + ".audit.exit");
    } else {
      e.audit_lines = r.text_lines(a, field + ".audit");
    }
  }
  if (const YAML::Node o = n["order"]) {
    e.order_line = key_line["order"];
    if (!o.IsMap()) r.fail(o, field + ".order", "must map node names to ok or device-plugin-without-toolkit");
    for (auto it = o.begin(); it != o.end(); ++it) {
      std::string v = r.str(it->second, field + ".order[" + it->first.Scalar() + "]");
      if (v != "ok" && v != "device-plugin-without-toolkit")
        r.fail(it->second, field + ".order[" + it->first.Scalar() + "]",
               "must be ok or device-plugin-without-toolkit, not \"" + v + "\"");
      e.order[it->first.Scalar()] = v;
    }
  }
  if (const YAML::Node m = n["matrix"]) {
    e.matrix_line = key_line["matrix"];
    e.matrix = r.text_lines(m, field + ".matrix");
  }
  if (const YAML::Node d = n["daemonsets"]) {
    e.daemonsets_line = key_line["daemonsets"];
    if (!d.IsMap()) r.fail(d, field + ".daemonsets", "must map DaemonSet names to status fields");
    static const std::set<std::string> kFields = {
        "currentNumberScheduled", "numberMisscheduled",     "desiredNumberScheduled", "numberReady",
        "observedGeneration",     "updatedNumberScheduled", "numberAvailable",        "numberUnavailable"};
    for (auto it = d.begin(); it != d.end(); ++it) {
      std::string ds = it->first.Scalar();
      std::string f = field + ".daemonsets[" + ds + "]";
      if (!it->second.IsMap()) r.fail(it->second, f, "must map status fields to numbers");
      for (auto jt = it->second.begin(); jt != it->second.end(); ++jt) {
        std::string k = jt->first.Scalar();
        if (!kFields.count(k)) r.fail(jt->first, f + "." + k, "not a DaemonSet status field");
        e.daemonsets[ds][k] = r.integer(jt->second, f + "." + k);
      }
    }
  }
  if (const YAML::Node run = n["running"]) {
    e.running_line = key_line["running"];
    if (!run.IsMap()) r.fail(run, field + ".running", "must map DaemonSet names to lists of nodes");
    for (auto it = run.begin(); it != run.end(); ++it) {
      std::string ds = it->first.Scalar();
      std::vector<std::string> nodes;
      if (!it->second.IsNull()) nodes = r.strings(it->second, field + ".running[" + ds + "]");
      std::sort(nodes.begin(), nodes.end());
      e.running[ds] = nodes;
    }
  }
  if (const YAML::Node p = n["pods"]) {
    if (!p.IsSequence()) r.fail(p, field + ".pods", "must be a list");
    for (size_t i = 0; i < p.size(); ++i) {
      std::string f = field + ".pods[" + std::to_string(i) + "]";
      const YAML::Node& pn = p[i];
      r.keys(pn, f, {"daemonset", "node", "absent", "phase", "ready", "terminating", "reason", "message"});
      PodExpectation pe;
      pe.line = pn.Mark().line + 1;
      if (!pn["daemonset"] || !pn["node"]) r.fail(pn, f, "daemonset and node are required");
      pe.daemonset = r.str(pn["daemonset"], f + ".daemonset");
      pe.node = r.str(pn["node"], f + ".node");
      if (pn["absent"]) pe.absent = r.boolean(pn["absent"], f + ".absent");
      if (pn["phase"]) pe.phase = r.str(pn["phase"], f + ".phase");
      if (pn["ready"]) pe.ready = r.boolean(pn["ready"], f + ".ready");
      if (pn["terminating"]) pe.terminating = r.boolean(pn["terminating"], f + ".terminating");
      if (pn["reason"]) pe.reason = r.str(pn["reason"], f + ".reason");
      if (pn["message"]) pe.message = r.str(pn["message"], f + ".message");
      e.pods.push_back(pe);
    }
  }
  if (const YAML::Node nn = n["nodes"]) {
    e.nodes_line = key_line["nodes"];
    if (!nn.IsMap()) r.fail(nn, field + ".nodes", "must map node names to {labels: ...}");
    for (auto it = nn.begin(); it != nn.end(); ++it) {
      std::string node = it->first.Scalar();
      std::string f = field + ".nodes[" + node + "]";
      r.keys(it->second, f, {"labels"});
      const YAML::Node l = it->second["labels"];
      if (!l || !l.IsMap()) r.fail(it->second, f + ".labels", "must be a map");
      for (auto jt = l.begin(); jt != l.end(); ++jt) {
        if (jt->second.IsNull()) e.node_labels[node][jt->first.Scalar()] = std::nullopt;
        else e.node_labels[node][jt->first.Scalar()] = r.label_value(jt->second, f + ".labels[" + jt->first.Scalar() + "]");
      }
    }
  }
  return e;
}

// How a scenario spells each fault kind, in the order an error lists them.
const std::pair<const char*, FaultKind> kFaultKinds[] = {
    {"image-pull", FaultKind::kImagePull},   {"crash-loop", FaultKind::kCrashLoop},
    {"never-ready", FaultKind::kNeverReady}, {"stuck-in-init", FaultKind::kStuckInInit},
    {"failed", FaultKind::kFailed},
};

FaultKind read_fault_kind(const Reader& r, const YAML::Node& n, const std::string& field) {
  std::string kind = r.str(n, field);
  std::string list;
  for (const auto& [name, value] : kFaultKinds) {
    if (kind == name) return value;
    list += std::string(list.empty() ? "" : ", ") + name;
  }
  r.fail(n, field, "unknown fault \"" + kind + "\" (" + list + ")");
}

const std::vector<const char*> kActions = {"createNamespace", "apply", "label", "addNode", "deleteNode",
                                           "taint", "untaint", "cordon", "uncordon", "ready",
                                           "deletePod", "fault", "clearFaults", "advance"};

Step read_step(const Reader& r, const YAML::Node& n, const std::string& field, const fs::path& dir,
               const Catalog& catalog) {
  r.keys(n, field, {"name", "createNamespace", "apply", "label", "addNode", "deleteNode", "taint", "untaint",
                    "cordon", "uncordon", "ready", "deletePod", "fault", "clearFaults", "advance", "expect",
                    "expectError", "timeout", "settle"});
  Step s;
  s.line = n.Mark().line + 1;
  if (n["name"]) s.name = r.str(n["name"], field + ".name");
  for (const char* a : kActions) {
    if (!n[a]) continue;
    if (!s.action.empty())
      r.fail(n[a], field + "." + a, "a step has one action; this one already has " + s.action);
    s.action = a;
  }
  const std::string af = field + "." + s.action;
  const YAML::Node an = s.action.empty() ? YAML::Node() : n[s.action];
  if (s.action == "createNamespace" || s.action == "deleteNode" || s.action == "cordon" || s.action == "uncordon") {
    s.name_arg = r.str(an, af);
  } else if (s.action == "apply") {
    r.keys(an, af, {"files", "operands", "inline"});
    if (an["files"])
      for (const auto& f : r.strings(an["files"], af + ".files")) s.apply_files.push_back((dir / f).lexically_normal().string());
    if (an["operands"]) {
      s.apply_operands = r.strings(an["operands"], af + ".operands");
      for (const auto& o : s.apply_operands) {
        const Operand* op = catalog.by_name(o);
        if (!op) r.fail(an["operands"], af + ".operands", "no operand \"" + o + "\" in the catalog (operands: " + catalog.names() + ")");
        if (op->manifest.empty() || builtin_manifest(op->manifest).empty())
          r.fail(an["operands"], af + ".operands", "operand \"" + o + "\" has no shipped manifest");
      }
    }
    if (an["inline"]) s.apply_inline = r.str(an["inline"], af + ".inline");
    if (s.apply_files.empty() && s.apply_operands.empty() && s.apply_inline.empty())
      r.fail(an, af, "give files, operands or inline");
  } else if (s.action == "label") {
    r.keys(an, af, {"node", "set", "remove"});
    if (!an["node"]) r.fail(an, af + ".node", "Required value");
    s.node = r.str(an["node"], af + ".node");
    if (const YAML::Node set = an["set"]) {
      if (!set.IsMap()) r.fail(set, af + ".set", "must be a map");
      for (auto it = set.begin(); it != set.end(); ++it)
        s.label_set[it->first.Scalar()] = r.label_value(it->second, af + ".set[" + it->first.Scalar() + "]");
    }
    if (an["remove"]) s.label_remove = r.strings(an["remove"], af + ".remove");
    if (s.label_set.empty() && s.label_remove.empty()) r.fail(an, af, "give set or remove");
  } else if (s.action == "addNode") {
    s.new_node = read_node(r, an, af);
  } else if (s.action == "taint" || s.action == "untaint") {
    if (!an["node"]) r.fail(an, af + ".node", "Required value");
    s.node = r.str(an["node"], af + ".node");
    s.taint = read_taint(r, an, af, s.action == "taint");
  } else if (s.action == "ready") {
    r.keys(an, af, {"node", "status"});
    if (!an["node"] || !an["status"]) r.fail(an, af, "node and status are required");
    s.node = r.str(an["node"], af + ".node");
    s.ready_status = r.str(an["status"], af + ".status");
    if (s.ready_status != "True" && s.ready_status != "False" && s.ready_status != "Unknown")
      r.fail(an["status"], af + ".status", "must be \"True\", \"False\" or \"Unknown\" (quoted)");
  } else if (s.action == "deletePod") {
    r.keys(an, af, {"daemonset", "node"});
    if (!an["daemonset"] || !an["node"]) r.fail(an, af, "daemonset and node are required");
    s.daemonset = r.str(an["daemonset"], af + ".daemonset");
    s.node = r.str(an["node"], af + ".node");
  } else if (s.action == "fault") {
    r.keys(an, af, {"kind", "node", "daemonset", "reason"});
    if (!an["kind"]) r.fail(an, af + ".kind", "Required value");
    s.fault.kind = read_fault_kind(r, an["kind"], af + ".kind");
    if (an["node"]) s.fault.node = r.str(an["node"], af + ".node");
    if (an["daemonset"]) s.fault.daemonset = r.str(an["daemonset"], af + ".daemonset");
    if (an["reason"]) s.fault.reason = r.str(an["reason"], af + ".reason");
  } else if (s.action == "advance") {
    s.advance = r.duration(an, af);
  }
  if (const YAML::Node e = n["expect"]) s.expect = read_expect(r, e, field + ".expect");
  if (const YAML::Node ee = n["expectError"]) {
    std::string f = field + ".expectError";
    r.keys(ee, f, {"exit", "contains", "field", "line"});
    ExpectedError x;
    if (ee["exit"]) {
      x.exit = r.integer(ee["exit"], f + ".exit");
      if (x.exit != 2 && x.exit != 3) r.fail(ee["exit"], f + ".exit", "must be 2 (input error) or 3 (cluster error)");
    }
    if (ee["contains"]) x.contains = r.str(ee["contains"], f + ".contains");
    if (ee["field"]) x.field = r.str(ee["field"], f + ".field");
    if (ee["line"]) x.line = r.integer(ee["line"], f + ".line");
    if (s.action.empty()) r.fail(ee, f, "expectError needs an action in the same step");
    s.expect_error = x;
  }
  if (n["timeout"]) s.timeout = r.duration(n["timeout"], field + ".timeout");
  if (n["settle"]) s.settle = r.boolean(n["settle"], field + ".settle");
  if (s.action.empty() && s.expect.empty()) r.fail(n, field, "a step needs an action or expectations");
  return s;
}

}  // namespace

std::string Step::title() const {
  if (!name.empty()) return name;
  if (action.empty()) return "check";
  if (action == "label") {
    std::string t = "label " + node;
    for (const auto& [k, v] : label_set) t += " " + k + "=" + v;
    for (const auto& k : label_remove) t += " " + k + "-";
    return t;
  }
  if (!name_arg.empty()) return action + " " + name_arg;
  if (!node.empty()) return action + " " + node;
  return action;
}

Duration parse_duration(const std::string& text) {
  static const std::regex part(R"((\d+(?:\.\d+)?)(ms|h|m|s))");
  if (text.empty()) throw std::invalid_argument("empty duration: write e.g. 30s, 5m, 1h, 500ms");
  // time.ParseDuration holds a duration in int64 nanoseconds: beyond
  // 2562047h47m16.854775807s it is "invalid duration" (out of range).
  constexpr double kMaxMs = 9223372036854.775807;
  double total = 0;
  size_t pos = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), part), end; it != end; ++it) {
    if (static_cast<size_t>(it->position()) != pos) break;
    double v = std::stod((*it)[1]);
    std::string u = (*it)[2];
    total += u == "ms" ? v : u == "s" ? v * 1000 : u == "m" ? v * 60000 : v * 3600000;
    pos += it->length();
  }
  if (pos != text.size()) throw std::invalid_argument("invalid duration \"" + text + "\": write e.g. 30s, 5m, 1h, 500ms");
  if (!(total <= kMaxMs))
    throw std::invalid_argument("invalid duration \"" + text + "\": out of range (at most 2562047h, as Go's time.Duration)");
  return Duration(static_cast<long long>(total));
}

Scenario load_scenario(const std::string& path) {
  std::string text = read_input_file(path);
  Reader r(path);
  YAML::Node root = load_yaml(text, path);
  if (!root.IsMap()) throw InputError(path, 1, "", "a scenario is a map with name, cluster and steps");
  r.keys(root, "", {"name", "description", "operands", "namespace", "simulatorOnly", "cluster", "steps"});
  Scenario sc;
  sc.file = path;
  if (!root["name"]) r.fail(root, "name", "Required value");
  sc.name = r.str(root["name"], "name");
  if (root["description"]) sc.description = r.str(root["description"], "description");
  if (root["namespace"]) sc.namespace_ = r.str(root["namespace"], "namespace");
  fs::path dir = fs::path(path).parent_path();
  std::string operands = root["operands"] ? r.str(root["operands"], "operands") : "lab";
  if (builtin_catalog_text(operands).empty()) operands = (dir / operands).string();
  sc.catalog = load_catalog(operands);
  if (root["simulatorOnly"]) sc.simulator_only = r.boolean(root["simulatorOnly"], "simulatorOnly");
  if (const YAML::Node c = root["cluster"]) {
    r.keys(c, "cluster", {"profile", "nodes"});
    if (c["profile"]) {
      sc.profile = r.str(c["profile"], "cluster.profile");
      if (sc.profile != "kwok" && sc.profile != "kubelet")
        r.fail(c["profile"], "cluster.profile", "must be kwok or kubelet, not \"" + sc.profile + "\"");
    }
    if (const YAML::Node nodes = c["nodes"]) {
      if (!nodes.IsSequence()) r.fail(nodes, "cluster.nodes", "must be a list");
      std::set<std::string> names;
      for (size_t i = 0; i < nodes.size(); ++i) {
        Node n = read_node(r, nodes[i], "cluster.nodes[" + std::to_string(i) + "]");
        if (!names.insert(n.metadata.name).second)
          r.fail(nodes[i], "cluster.nodes[" + std::to_string(i) + "].name", "Duplicate value: \"" + n.metadata.name + "\"");
        sc.nodes.push_back(std::move(n));
      }
    }
  }
  const YAML::Node steps = root["steps"];
  if (!steps || !steps.IsSequence() || steps.size() == 0) r.fail(root, "steps", "Required value: a list of steps");
  for (size_t i = 0; i < steps.size(); ++i) sc.steps.push_back(read_step(r, steps[i], "steps[" + std::to_string(i) + "]", dir, sc.catalog));
  return sc;
}

std::vector<Scenario> load_scenarios(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p); it != fs::recursive_directory_iterator(); ++it) {
        const auto& e = *it;
        // Folders named `manifests` hold a scenario's inputs, not scenarios.
        if (e.is_directory() && e.path().filename() == "manifests") {
          it.disable_recursion_pending();
          continue;
        }
        auto ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml")) found.push_back(e.path().string());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      throw InputError(p, 0, "", "no such file or directory");
    }
  }
  std::vector<Scenario> out;
  std::map<std::string, std::string> seen;
  for (const auto& f : files) {
    Scenario s = load_scenario(f);
    auto [it, fresh] = seen.emplace(s.name, f);
    if (!fresh) throw InputError(f, 0, "name", "Duplicate value: \"" + s.name + "\" (also in " + it->second + ")");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gpuops::core
