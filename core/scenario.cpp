#include "core/scenario.h"

#include <boost/json.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <dtl/dtl.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/analysis.h"
#include "core/decode.h"
#include "core/documents.h"
#include "core/errors.h"
#include "core/input_file.h"
#include "core/manifests.h"
#include "core/validation.h"
#include "core/yaml_load.h"

namespace gpuops::core {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// ------------------------------------------------------------------ parsing

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
    s.fault.kind = r.str(an["kind"], af + ".kind");
    static const std::set<std::string> kinds = {"image-pull", "crash-loop", "never-ready", "stuck-in-init", "failed"};
    if (!kinds.count(s.fault.kind))
      r.fail(an["kind"], af + ".kind",
             "unknown fault \"" + s.fault.kind + "\" (image-pull, crash-loop, never-ready, stuck-in-init, failed)");
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

// ------------------------------------------------------------------ running

std::string ds_field(const DaemonSetStatus& s, const std::string& k, bool& known) {
  known = true;
  if (k == "currentNumberScheduled") return std::to_string(s.current_number_scheduled);
  if (k == "numberMisscheduled") return std::to_string(s.number_misscheduled);
  if (k == "desiredNumberScheduled") return std::to_string(s.desired_number_scheduled);
  if (k == "numberReady") return std::to_string(s.number_ready);
  if (k == "observedGeneration") return std::to_string(s.observed_generation);
  if (k == "updatedNumberScheduled") return std::to_string(s.updated_number_scheduled);
  if (k == "numberAvailable") return std::to_string(s.number_available);
  if (k == "numberUnavailable") return std::to_string(s.number_unavailable);
  known = false;
  return "";
}

bool controlled_by_ds(const Pod& p, const std::string& ds) {
  const OwnerReference* ref = p.metadata.controller_ref();
  return ref && ref->kind == "DaemonSet" && ref->name == ds;
}

std::vector<std::string> pod_reasons(const Pod& p) {
  std::vector<std::string> out;
  if (!p.status.reason.empty()) out.push_back(p.status.reason);
  for (const auto& c : p.status.conditions)
    if (c.status != "True" && !c.reason.empty()) out.push_back(c.reason);
  for (const auto& c : p.status.init_container_statuses)
    if (!c.reason.empty()) out.push_back(c.reason);
  for (const auto& c : p.status.container_statuses)
    if (!c.reason.empty()) out.push_back(c.reason);
  return out;
}

std::string describe_pod(const Pod& p) {
  std::string s = p.metadata.name + " phase=" + p.status.phase + " ready=" + (p.is_ready() ? "true" : "false");
  if (p.metadata.deletion_timestamp) s += " terminating";
  auto reasons = pod_reasons(p);
  if (!reasons.empty()) {
    s += " reasons=";
    for (size_t i = 0; i < reasons.size(); ++i) s += (i ? "," : "") + reasons[i];
  }
  return s;
}

std::vector<std::string> check_pod(const PodExpectation& pe, const ClusterState& state) {
  std::vector<const Pod*> pods;
  for (const auto& p : state.pods)
    if (controlled_by_ds(p, pe.daemonset) && p.target_node() == pe.node) pods.push_back(&p);
  std::string where = "pods (line " + std::to_string(pe.line) + "): " + pe.daemonset + " on " + pe.node + ": ";
  if (pe.absent) {
    if (pods.empty()) return {};
    return {where + "expected no pod, found " + describe_pod(*pods[0])};
  }
  if (pods.empty()) return {where + "expected a pod, found none"};
  std::string last;
  for (const Pod* p : pods) {
    std::vector<std::string> bad;
    if (pe.phase && p->status.phase != *pe.phase) bad.push_back("phase " + *pe.phase);
    if (pe.ready && p->is_ready() != *pe.ready) bad.push_back(std::string("ready ") + (*pe.ready ? "true" : "false"));
    if (pe.terminating && p->metadata.deletion_timestamp.has_value() != *pe.terminating)
      bad.push_back(*pe.terminating ? "terminating" : "not terminating");
    if (pe.reason) {
      auto rs = pod_reasons(*p);
      if (std::find(rs.begin(), rs.end(), *pe.reason) == rs.end()) bad.push_back("reason " + *pe.reason);
    }
    if (pe.message) {
      bool found = p->status.message.find(*pe.message) != std::string::npos;
      for (const auto& c : p->status.conditions) found = found || c.message.find(*pe.message) != std::string::npos;
      if (!found) bad.push_back("message containing \"" + *pe.message + "\"");
    }
    if (bad.empty()) return {};
    std::string want;
    for (size_t i = 0; i < bad.size(); ++i) want += (i ? ", " : "") + bad[i];
    last = "expected " + want + "; found " + describe_pod(*p);
    for (const auto& c : p->status.conditions)
      if (!c.message.empty()) last += "\n    " + c.type + ": " + c.message;
  }
  return {where + last};
}

std::vector<Object> decode_apply(const Step& s, const Scenario& sc) {
  std::vector<Document> docs;
  for (const auto& name : s.apply_operands) {
    const Operand* op = sc.catalog.by_name(name);
    auto d = read_documents(builtin_manifest(op->manifest), "manifests/" + op->manifest);
    docs.insert(docs.end(), d.begin(), d.end());
  }
  if (!s.apply_files.empty()) {
    auto d = read_paths(s.apply_files);
    docs.insert(docs.end(), d.begin(), d.end());
  }
  if (!s.apply_inline.empty()) {
    auto d = read_documents(s.apply_inline, sc.file + ":" + std::to_string(s.line) + " (inline)");
    docs.insert(docs.end(), d.begin(), d.end());
  }
  std::vector<Object> objs;
  for (const auto& d : docs) objs.push_back(decode_object(d));  // all validated before any write
  return objs;
}

void do_action(const Step& s, const Scenario& sc, Cluster& c, SimulationControls* sim) {
  const std::string& a = s.action;
  if (a.empty()) return;
  if (a == "createNamespace") c.create_namespace(s.name_arg);
  else if (a == "apply") c.apply(decode_apply(s, sc));
  else if (a == "label") {
    for (const auto& [k, v] : s.label_set) c.set_node_label(s.node, k, v);
    for (const auto& k : s.label_remove) c.set_node_label(s.node, k, std::nullopt);
  } else if (a == "addNode") c.add_node(s.new_node);
  else if (a == "deleteNode") c.delete_node(s.name_arg);
  else if (a == "taint" || a == "untaint") {
    ClusterState st = c.state(sc.namespace_);
    auto it = std::find_if(st.nodes.begin(), st.nodes.end(), [&](const Node& n) { return n.metadata.name == s.node; });
    if (it == st.nodes.end()) throw ClusterError("node \"" + s.node + "\" not found", 404);
    std::vector<Taint> taints;
    for (const auto& t : it->taints) {
      bool same = t.key == s.taint.key && (s.taint.effect.empty() || t.effect == s.taint.effect);
      if (!same) taints.push_back(t);
    }
    if (a == "taint") taints.push_back(s.taint);
    c.set_node_taints(s.node, taints);
  } else if (a == "cordon") c.set_node_unschedulable(s.name_arg, true);
  else if (a == "uncordon") c.set_node_unschedulable(s.name_arg, false);
  else if (a == "ready") c.set_node_ready(s.node, s.ready_status);
  else if (a == "deletePod") {
    ClusterState st = c.state(sc.namespace_);
    const Pod* found = nullptr;
    for (const auto& p : st.pods)
      if (controlled_by_ds(p, s.daemonset) && p.target_node() == s.node && !p.metadata.deletion_timestamp) found = &p;
    if (!found) throw ClusterError("no pod of DaemonSet \"" + s.daemonset + "\" on node \"" + s.node + "\"", 404);
    c.delete_pod(sc.namespace_, found->metadata.name);
  } else if (a == "fault") sim->inject_fault(s.fault);
  else if (a == "clearFaults") sim->clear_faults();
  else if (a == "advance") sim->advance(s.advance);
}

}  // namespace

StepObservation observe(const ClusterState& state, const Catalog& catalog) {
  StepObservation o;
  Report a = audit(state, catalog);
  o.audit = a.lines;
  o.audit_exit = a.exit_code;
  std::vector<std::string> names;
  for (const auto& n : state.nodes) names.push_back(n.metadata.name);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) o.order.push_back(n + " " + order_check(state, catalog, n).lines.at(0));
  o.matrix = matrix(state, catalog).lines;
  for (const auto& ds : state.daemonsets) {
    auto& f = o.daemonsets[ds.metadata.name];
    const DaemonSetStatus& st = ds.status;
    f["currentNumberScheduled"] = st.current_number_scheduled;
    f["numberMisscheduled"] = st.number_misscheduled;
    f["desiredNumberScheduled"] = st.desired_number_scheduled;
    f["numberReady"] = st.number_ready;
    f["observedGeneration"] = st.observed_generation;
    f["updatedNumberScheduled"] = st.updated_number_scheduled;
    f["numberAvailable"] = st.number_available;
    f["numberUnavailable"] = st.number_unavailable;
  }
  return o;
}

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

namespace {

// A line as the diff prints it: what a terminal would not show is escaped, so
// that two lines that differ only there do not print the same. A backslash is
// "\\", a carriage return (a CRLF line ending) "\r", a tab "\t", other
// control bytes "\xNN", and spaces at the end of the line "\x20".
std::string visible(const std::string& line) {
  size_t end = line.find_last_not_of(' ');
  end = end == std::string::npos ? 0 : end + 1;
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(line[i]);
    if (i >= end) {
      out += "\\x20";
    } else if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (ch < 0x20 || ch == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 0xf];
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

std::vector<std::string> visible(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (const auto& l : lines) out.push_back(visible(l));
  return out;
}

}  // namespace

std::string line_diff(const std::vector<std::string>& expected_lines, const std::vector<std::string>& actual_lines) {
  // Escaping is one-to-one, so the escaped lines differ exactly where the
  // lines do.
  std::vector<std::string> expected = visible(expected_lines), actual = visible(actual_lines);
  dtl::Diff<std::string, std::vector<std::string>> d(expected, actual);
  d.compose();
  d.composeUnifiedHunks();
  std::ostringstream os;
  os << "--- expected\n+++ actual\n";
  d.printUnifiedFormat(os);
  return os.str();
}

std::vector<std::string> check_expectations(const Expectations& e, const ClusterState& state, const Catalog& catalog) {
  std::vector<std::string> failures;
  if (e.audit_lines || e.audit_exit) {
    Report rep = audit(state, catalog);
    if (e.audit_lines && rep.lines != *e.audit_lines)
      failures.push_back("audit (line " + std::to_string(e.audit_line) + "): output differs\n" + line_diff(*e.audit_lines, rep.lines));
    if (e.audit_exit && rep.exit_code != *e.audit_exit)
      failures.push_back("audit (line " + std::to_string(e.audit_line) + "): exit code: expected " +
                         std::to_string(*e.audit_exit) + ", got " + std::to_string(rep.exit_code));
  }
  for (const auto& [node, want] : e.order) {
    // The binding captured by name: clang++ 14 refuses to capture a
    // structured binding implicitly (P1091, clang 16).
    bool known = std::any_of(state.nodes.begin(), state.nodes.end(),
                             [&node = node](const Node& n) { return n.metadata.name == node; });
    std::string got = known ? order_check(state, catalog, node).lines.at(0) : "(no such node)";
    if (got != want)
      failures.push_back("order (line " + std::to_string(e.order_line) + "): " + node + ": expected " + want + ", got " + got);
  }
  if (e.matrix) {
    Report rep = matrix(state, catalog);
    if (rep.lines != *e.matrix)
      failures.push_back("matrix (line " + std::to_string(e.matrix_line) + "): output differs\n" + line_diff(*e.matrix, rep.lines));
  }
  for (const auto& [name, fields] : e.daemonsets) {
    auto it = std::find_if(state.daemonsets.begin(), state.daemonsets.end(),
                           [&name = name](const DaemonSet& d) { return d.metadata.name == name; });
    std::string where = "daemonsets (line " + std::to_string(e.daemonsets_line) + "): " + name;
    if (it == state.daemonsets.end()) {
      failures.push_back(where + ": no such DaemonSet in " + state.namespace_);
      continue;
    }
    for (const auto& [k, v] : fields) {
      bool known = false;
      std::string got = ds_field(it->status, k, known);
      if (got != std::to_string(v))
        failures.push_back(where + ": status." + k + ": expected " + std::to_string(v) + ", got " + got);
    }
  }
  for (const auto& [name, want] : e.running) {
    std::vector<std::string> got;
    const DaemonSet* ds = nullptr;
    for (const auto& d : state.daemonsets)
      if (d.metadata.name == name) ds = &d;
    for (const auto& p : state.pods) {
      if (!controlled_by_ds(p, name) || p.spec.node_name.empty() || p.status.phase != "Running" ||
          p.metadata.deletion_timestamp)
        continue;
      const OwnerReference* ref = p.metadata.controller_ref();
      if (ds && !ds->metadata.uid.empty() && !ref->uid.empty() && ref->uid != ds->metadata.uid) continue;
      got.push_back(p.spec.node_name);
    }
    std::sort(got.begin(), got.end());
    if (got != want) {
      auto list = [](const std::vector<std::string>& v) {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
        return s + "]";
      };
      failures.push_back("running (line " + std::to_string(e.running_line) + "): " + name + ": expected Running on " +
                         list(want) + ", got " + list(got));
    }
  }
  for (const auto& pe : e.pods) {
    auto f = check_pod(pe, state);
    failures.insert(failures.end(), f.begin(), f.end());
  }
  for (const auto& [node, labels] : e.node_labels) {
    auto it = std::find_if(state.nodes.begin(), state.nodes.end(),
                           [&node = node](const Node& n) { return n.metadata.name == node; });
    std::string where = "nodes (line " + std::to_string(e.nodes_line) + "): " + node;
    if (it == state.nodes.end()) {
      failures.push_back(where + ": no such node");
      continue;
    }
    for (const auto& [k, v] : labels) {
      auto lt = it->metadata.labels.find(k);
      std::optional<std::string> got;
      if (lt != it->metadata.labels.end()) got = lt->second;
      if (got != v)
        failures.push_back(where + ": label " + k + ": expected " + (v ? "\"" + *v + "\"" : "absent") + ", got " +
                           (got ? "\"" + *got + "\"" : "absent"));
    }
  }
  return failures;
}

const char* const kNeedsEmptyCluster =
    "a scenario on a live cluster creates and deletes its own nodes and namespace, so it needs an empty cluster "
    "(gpuops serve, KWOK); nothing was changed";

std::string nodes_refusal(const ClusterState& state) {
  if (state.nodes.empty()) return "";
  std::vector<std::string> names;
  for (const auto& n : state.nodes) names.push_back(n.metadata.name);
  std::sort(names.begin(), names.end());
  std::string list;
  for (size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 5) list += ", ... (" + std::to_string(names.size()) + " nodes)";
  return "the cluster already has nodes (" + list + ")";
}

ScenarioResult run_scenario(const Scenario& sc, Cluster& c, SimulationControls* sim, const RunOptions& opt) {
  ScenarioResult res;
  res.file = sc.file;
  res.name = sc.name;
  if (sc.simulator_only && !sim) {
    StepResult sr;
    sr.title = "(whole scenario)";
    sr.status = StepResult::Status::kSkipped;
    sr.skip_reason = "simulator only (fault injection or virtual time)";
    res.steps.push_back(sr);
    if (opt.observe) res.observations.emplace_back();
    return res;
  }
  // A live cluster: the scenario creates and deletes its nodes and its
  // namespace, and its expectations speak of every node. Refuse a cluster
  // that already has nodes, or DaemonSets or pods in the namespace, rather
  // than change or delete what others put there.
  if (opt.clean_up) {
    std::string refusal;
    try {
      ClusterState before = c.state(sc.namespace_);
      refusal = nodes_refusal(before);
      if (refusal.empty() && (!before.daemonsets.empty() || !before.pods.empty())) {
        refusal = "namespace " + sc.namespace_ + " already has DaemonSets or pods";
      }
    } catch (const std::exception& e) {
      refusal = std::string("cannot read the cluster: ") + e.what();
    }
    if (!refusal.empty()) {
      res.passed = false;
      res.error = "not run: " + refusal + "; " + kNeedsEmptyCluster;
      for (const auto& s : sc.steps) {
        StepResult sr;
        sr.title = s.title();
        sr.line = s.line;
        sr.status = StepResult::Status::kSkipped;
        sr.skip_reason = "the scenario was not run";
        res.steps.push_back(sr);
        if (opt.observe) res.observations.emplace_back();
      }
      return res;
    }
  }
  std::vector<std::string> created_nodes;
  try {
    for (const auto& n : sc.nodes) {
      c.add_node(n);
      created_nodes.push_back(n.metadata.name);
    }
    c.settle();
  } catch (const std::exception& e) {
    res.passed = false;
    res.error = std::string("setting up the initial cluster: ") + e.what();
  }
  bool stop = !res.error.empty();
  for (const auto& s : sc.steps) {
    StepResult sr;
    sr.title = s.title();
    sr.line = s.line;
    if (stop) {
      sr.status = StepResult::Status::kSkipped;
      sr.skip_reason = "an earlier step failed";
      res.steps.push_back(sr);
      if (opt.observe) res.observations.emplace_back();
      continue;
    }
    if (s.simulator_only() && !sim) {
      sr.status = StepResult::Status::kSkipped;
      sr.skip_reason = std::string("simulator only (") + (s.settle ? s.action : "settle: false") + ")";
      res.steps.push_back(sr);
      if (opt.observe) res.observations.emplace_back();
      continue;
    }
    // The action.
    std::optional<std::string> error;
    int error_exit = 0;
    std::string error_field;
    int error_line = 0;
    try {
      do_action(s, sc, c, sim);
      if (s.settle) c.settle();
      else sim->run();
    } catch (const InputError& e) {
      error = e.what();
      error_exit = 2;
      error_field = e.field();
      error_line = e.line();
    } catch (const ClusterError& e) {
      error = e.what();
      error_exit = 3;
    }
    if (s.expect_error) {
      const ExpectedError& x = *s.expect_error;
      if (!error) {
        sr.failures.push_back("expectError: the action succeeded, expected it to fail");
      } else {
        if (x.exit && error_exit != x.exit)
          sr.failures.push_back("expectError: exit: expected " + std::to_string(x.exit) + ", got " +
                                std::to_string(error_exit) + " (" + *error + ")");
        if (!x.contains.empty() && error->find(x.contains) == std::string::npos)
          sr.failures.push_back("expectError: message: expected it to contain \"" + x.contains + "\", got \"" + *error + "\"");
        if (!x.field.empty() && error_field != x.field)
          sr.failures.push_back("expectError: field: expected " + x.field + ", got " + error_field);
        if (x.line && error_line != x.line)
          sr.failures.push_back("expectError: line: expected " + std::to_string(x.line) + ", got " + std::to_string(error_line));
      }
    } else if (error) {
      sr.failures.push_back(s.action + " failed: " + *error);
    }
    // The expectations, polled on a real cluster.
    std::optional<ClusterState> last;  // the state they were last checked on
    if (sr.failures.empty() && !s.expect.empty()) {
      Duration timeout = s.timeout.value_or(opt.default_timeout);
      Time deadline = opt.poll ? opt.now() + timeout : Time{};
      while (true) {
        try {
          last = c.state(sc.namespace_);
          sr.failures = check_expectations(s.expect, *last, sc.catalog);
        } catch (const std::exception& e) {
          last.reset();
          sr.failures = {std::string("reading the cluster: ") + e.what()};
        }
        if (sr.failures.empty() || !opt.poll || opt.now() >= deadline) break;
        opt.sleep(opt.poll_interval);
      }
      if (!sr.failures.empty() && opt.poll)
        sr.failures.push_back("(still failing after " + std::to_string(timeout.count() / 1000) + "s; last state shown)");
    }
    if (!sr.failures.empty()) {
      sr.status = StepResult::Status::kFailed;
      res.passed = false;
      if (opt.fail_fast) stop = true;
    }
    res.steps.push_back(std::move(sr));
    if (opt.observe) {
      std::optional<StepObservation> o;
      try {
        if (!last) last = c.state(sc.namespace_);
        o = observe(*last, sc.catalog);
      } catch (const std::exception&) {
      }
      res.observations.push_back(std::move(o));
    }
  }
  if (opt.clean_up) {
    for (const auto& s : sc.steps)
      if (s.action == "createNamespace") {
        try {
          c.delete_namespace(s.name_arg);
        } catch (const std::exception&) {
        }
      }
    for (const auto& s : sc.steps)
      if (s.action == "addNode") created_nodes.push_back(s.new_node.metadata.name);
    for (const auto& n : created_nodes) {
      try {
        c.delete_node(n);
      } catch (const std::exception&) {
      }
    }
  }
  return res;
}

std::string render_console(const std::vector<ScenarioResult>& results) {
  std::ostringstream os;
  int passed = 0, failed = 0, skipped_steps = 0;
  for (const auto& r : results) {
    int steps = static_cast<int>(r.steps.size());
    int skipped = 0;
    for (const auto& s : r.steps) skipped += s.status == StepResult::Status::kSkipped;
    skipped_steps += skipped;
    os << (r.passed ? "PASS " : "FAIL ") << r.name << " (" << steps << (steps == 1 ? " step" : " steps");
    if (skipped) os << ", " << skipped << " skipped";
    os << ")\n";
    if (!r.error.empty()) os << "  " << r.file << ": " << r.error << "\n";
    for (const auto& s : r.steps) {
      if (s.status == StepResult::Status::kFailed) {
        os << "  " << r.file << ":" << s.line << ": step \"" << s.title << "\"\n";
        for (const auto& f : s.failures) {
          std::istringstream in(f);
          for (std::string l; std::getline(in, l);) os << "    " << l << "\n";
        }
      } else if (s.status == StepResult::Status::kSkipped && s.skip_reason != "an earlier step failed") {
        os << "  skipped \"" << s.title << "\": " << s.skip_reason << "\n";
      }
    }
    (r.passed ? passed : failed)++;
  }
  os << passed << " passed, " << failed << " failed\n";
  return os.str();
}

std::string render_json(const std::vector<ScenarioResult>& results) {
  json::array arr;
  int passed = 0;
  for (const auto& r : results) {
    json::array steps;
    for (size_t i = 0; i < r.steps.size(); ++i) {
      const StepResult& s = r.steps[i];
      const char* st = s.status == StepResult::Status::kPassed   ? "passed"
                       : s.status == StepResult::Status::kFailed ? "failed"
                                                                 : "skipped";
      json::array failures;
      for (const auto& f : s.failures) failures.push_back(json::value(f));
      json::object so{{"title", s.title}, {"line", s.line}, {"status", st}, {"failures", failures}};
      if (!s.skip_reason.empty()) so["skipReason"] = s.skip_reason;
      if (i < r.observations.size() && r.observations[i]) {
        const StepObservation& o = *r.observations[i];
        auto lines = [](const std::vector<std::string>& v) {
          json::array a;
          for (const auto& l : v) a.push_back(json::value(l));
          return a;
        };
        json::object dss;
        for (const auto& [name, fields] : o.daemonsets) {
          json::object f;
          for (const auto& [k, v] : fields) f[k] = v;
          dss[name] = std::move(f);
        }
        so["observed"] = json::object{{"audit", lines(o.audit)},   {"auditExit", o.audit_exit},
                                      {"order", lines(o.order)},   {"matrix", lines(o.matrix)},
                                      {"daemonsets", std::move(dss)}};
      }
      steps.push_back(std::move(so));
    }
    json::object o{{"name", r.name}, {"file", r.file}, {"status", r.passed ? "passed" : "failed"},
                   {"seconds", r.seconds}, {"steps", steps}};
    if (!r.error.empty()) o["error"] = r.error;
    arr.push_back(std::move(o));
    passed += r.passed;
  }
  json::object doc{{"scenarios", arr},
                   {"passed", passed},
                   {"failed", static_cast<int>(results.size()) - passed}};
  return json::serialize(doc) + "\n";
}

namespace {

// Text for an XML 1.0 document: the characters XML cannot hold at all, even
// as references (control characters but tab, line feed and carriage return),
// written as "\xNN". property_tree's writer escapes the rest (& < > ").
std::string xml_text(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    unsigned char ch = static_cast<unsigned char>(c);
    if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_junit(const std::vector<ScenarioResult>& results) {
  namespace pt = boost::property_tree;
  std::vector<pt::ptree> cases;
  int failures = 0, skipped = 0;
  double total = 0;
  for (const auto& r : results) {
    pt::ptree tc;
    tc.put("<xmlattr>.name", xml_text(r.name));
    tc.put("<xmlattr>.classname", xml_text("gpuops." + fs::path(r.file).stem().string()));
    tc.put("<xmlattr>.file", xml_text(r.file));
    tc.put("<xmlattr>.time", r.seconds);
    total += r.seconds;
    bool all_skipped = !r.steps.empty() && std::all_of(r.steps.begin(), r.steps.end(), [](const StepResult& s) {
      return s.status == StepResult::Status::kSkipped;
    });
    if (!r.passed) {
      ++failures;
      std::string body = r.error;
      std::string first;
      for (const auto& s : r.steps) {
        if (s.status != StepResult::Status::kFailed) continue;
        if (first.empty()) first = "step \"" + s.title + "\" failed";
        body += (body.empty() ? "" : "\n") + r.file + ":" + std::to_string(s.line) + ": step \"" + s.title + "\"";
        for (const auto& f : s.failures) body += "\n  " + f;
      }
      pt::ptree f;
      f.put("<xmlattr>.message", xml_text(first.empty() ? r.error : first));
      f.put("<xmlattr>.type", "expectation");
      f.put_value(xml_text(body));
      tc.add_child("failure", f);
    } else if (all_skipped) {
      ++skipped;
      pt::ptree sk;
      sk.put("<xmlattr>.message", xml_text(r.steps.front().skip_reason));
      tc.add_child("skipped", sk);
    }
    cases.push_back(std::move(tc));
  }
  pt::ptree suite;
  suite.put("<xmlattr>.name", "gpuops scenarios");
  suite.put("<xmlattr>.tests", results.size());
  suite.put("<xmlattr>.failures", failures);
  suite.put("<xmlattr>.errors", 0);
  suite.put("<xmlattr>.skipped", skipped);
  suite.put("<xmlattr>.time", total);
  for (auto& tc : cases) suite.add_child("testcase", tc);
  pt::ptree root;
  root.add_child("testsuite", suite);
  std::ostringstream os;
  pt::write_xml(os, root, pt::xml_writer_make_settings<std::string>(' ', 2));
  return os.str();
}

}  // namespace gpuops::core
