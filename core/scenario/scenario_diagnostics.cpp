// core/scenario/scenario_diagnostics.cpp: `catch:` and `finally:` read and
// run (core/scenario/scenario_diagnostics.h). The operations are gpuops'
// own diagnose, explain (core/diagnose/diagnose.h) and object encoding
// (core/codec/encode.h); nothing of them is redone here.
#include "core/scenario/scenario_diagnostics.h"

#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>

#include <algorithm>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "core/base/errors.h"
#include "core/cluster/diagnostic_reader.h"
#include "core/codec/encode.h"
#include "core/diagnose/diagnose.h"
#include "core/scenario/scenario.h"

namespace gpuops::core {

namespace json = boost::json;

std::string diagnostic_op_name(DiagnosticOp::Kind kind) { return kDiagnosticOpKeys[static_cast<int>(kind)]; }

namespace {

class OpReader {
 public:
  explicit OpReader(const std::string& file) : file_(file) {}
  [[noreturn]] void fail(const YAML::Node& at, const std::string& field, const std::string& message) const {
    throw InputError(file_, at.IsDefined() ? at.Mark().line + 1 : 0, field, message);
  }
  // The arguments of an operation: a map (null: none) of only `allowed`.
  void args(const YAML::Node& value, const std::string& field, const std::vector<std::string>& allowed) const {
    if (value.IsNull()) return;
    if (!value.IsMap()) fail(value, field, "must be a map");
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string list;
      for (const auto& name : allowed) list += (list.empty() ? "" : ", ") + name;
      fail(it->first, field + "." + key,
           "unknown field \"" + key + "\" (" + (list.empty() ? "it takes no arguments" : "expected one of: " + list) +
               ")");
    }
  }
  std::string str(const YAML::Node& map, const std::string& key, const std::string& field, bool required) const {
    const YAML::Node value = map.IsMap() ? map[key] : YAML::Node();
    if (!value) {
      if (required) fail(map, field + "." + key, "Required value");
      return "";
    }
    if (!value.IsScalar() || value.Scalar().empty()) fail(value, field + "." + key, "must be a non-empty string");
    return value.Scalar();
  }

 private:
  const std::string& file_;
};

DiagnosticOp read_op(const OpReader& reader, const YAML::Node& item, const std::string& field, const Catalog& catalog) {
  if (!item.IsMap() || item.size() != 1)
    reader.fail(item, field,
                "must be a map of one operation (diagnose, dump, explain, events or podLogs), e.g. {diagnose: {}}");
  const YAML::Node key = item.begin()->first;
  const YAML::Node value = item.begin()->second;
  const std::string name = key.Scalar();
  const std::string f = field + "." + name;
  DiagnosticOp op;
  op.line = item.Mark().line + 1;
  const auto* found = std::find_if(std::begin(kDiagnosticOpKeys), std::end(kDiagnosticOpKeys),
                                   [&](const char* k) { return name == k; });
  if (found == std::end(kDiagnosticOpKeys))
    reader.fail(key, f,
                "unknown operation \"" + name + "\" (expected one of: diagnose, dump, explain, events, podLogs)");
  op.kind = static_cast<DiagnosticOp::Kind>(found - std::begin(kDiagnosticOpKeys));
  switch (op.kind) {
    case DiagnosticOp::Kind::kDiagnose:
    case DiagnosticOp::Kind::kDump:
    case DiagnosticOp::Kind::kEvents: reader.args(value, f, {}); break;
    case DiagnosticOp::Kind::kExplain:
      if (!value.IsMap()) reader.fail(value, f, "must be a map: {daemonset, node}");
      reader.args(value, f, {"daemonset", "node"});
      op.daemonset = reader.str(value, "daemonset", f, true);
      op.node = reader.str(value, "node", f, true);
      if (!catalog.by_daemonset(op.daemonset))
        reader.fail(value["daemonset"], f + ".daemonset",
                    "no operand of the scenario's catalog has DaemonSet \"" + op.daemonset + "\"");
      break;
    case DiagnosticOp::Kind::kPodLogs:
      if (!value.IsMap()) reader.fail(value, f, "must be a map: {pod or selector, container?}");
      reader.args(value, f, {"pod", "selector", "container"});
      op.pod = reader.str(value, "pod", f, false);
      op.selector = reader.str(value, "selector", f, false);
      op.container = reader.str(value, "container", f, false);
      if (op.pod.empty() == op.selector.empty()) reader.fail(value, f, "needs exactly one of pod and selector");
      break;
  }
  return op;
}

std::vector<DiagnosticOp> read_list(const OpReader& reader, const YAML::Node& list, const std::string& field,
                                    const Catalog& catalog) {
  if (!list.IsSequence()) reader.fail(list, field, "must be a list of diagnostic operations");
  std::vector<DiagnosticOp> ops;
  for (size_t i = 0; i < list.size(); ++i)
    ops.push_back(read_op(reader, list[i], field + "[" + std::to_string(i) + "]", catalog));
  return ops;
}

// The state as `kubectl get nodes,daemonsets,pods,clusterpolicies -o json`
// would list it.
std::string dump_json(const ClusterState& state) {
  json::array items;
  for (const auto& node : state.nodes) items.push_back(encode(node));
  for (const auto& ds : state.daemonsets) items.push_back(encode(ds));
  for (const auto& pod : state.pods) items.push_back(encode(pod));
  for (const auto& cp : state.cluster_policies) items.push_back(encode(cp));
  return json::serialize(json::object{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}}) + "\n";
}

std::string op_text(const DiagnosticOp& op, const Scenario& scenario, const ClusterState& state, bool simulator,
                    DiagnosticReader* reader) {
  const std::string& ns = scenario.namespace_;
  switch (op.kind) {
    case DiagnosticOp::Kind::kDiagnose: {
      std::string text = render_text(diagnose(state, scenario.catalog, {}));
      return text.empty() ? "(no findings)\n" : text;
    }
    case DiagnosticOp::Kind::kDump: return dump_json(state);
    case DiagnosticOp::Kind::kExplain:
      return render_text(explain(state, scenario.catalog, op.node, scenario.catalog.by_daemonset(op.daemonset)->name));
    case DiagnosticOp::Kind::kEvents:
      if (simulator) return "events: unavailable on the simulator (it records no events)\n";
      if (reader) return reader->events_text(ns);
      return "events: this backend reads no events; read them with: kubectl get events -n " + ns +
             " --sort-by=.lastTimestamp\n";
    case DiagnosticOp::Kind::kPodLogs: {
      if (simulator) return "podLogs: unavailable on the simulator (its pods run no containers, so have no logs)\n";
      if (reader) return reader->pod_logs_text(ns, op.pod, op.selector, op.container, kPodLogLines);
      std::string command = "kubectl logs -n " + ns + (op.pod.empty() ? " -l " + op.selector : " " + op.pod) +
                            (op.container.empty() ? "" : " -c " + op.container);
      return "podLogs: this backend reads no logs; read them with: " + command + "\n";
    }
  }
  return "";
}

std::string base_file(const DiagnosticOp& op) {
  switch (op.kind) {
    case DiagnosticOp::Kind::kDiagnose: return "diagnose.txt";
    case DiagnosticOp::Kind::kDump: return "dump.json";
    case DiagnosticOp::Kind::kExplain: return path_safe("explain-" + op.node + "-" + op.daemonset) + ".txt";
    case DiagnosticOp::Kind::kEvents: return "events.txt";
    case DiagnosticOp::Kind::kPodLogs: return path_safe("podlogs-" + (op.pod.empty() ? op.selector : op.pod)) + ".txt";
  }
  return "";
}

}  // namespace

void read_diagnostic_blocks(const YAML::Node& parent, const std::string& file, const std::string& field,
                            const Catalog& catalog, DiagnosticBlocks& out) {
  OpReader reader(file);
  const std::string prefix = field.empty() ? "" : field + ".";
  if (const YAML::Node list = parent["catch"]) out.catch_ops = read_list(reader, list, prefix + "catch", catalog);
  if (const YAML::Node list = parent["finally"]) out.finally_ops = read_list(reader, list, prefix + "finally", catalog);
}

void run_diagnostics(const std::vector<DiagnosticOp>& ops, const std::string& block, const Scenario& scenario,
                     Cluster& cluster, bool simulator, std::vector<DiagnosticOutput>& out) {
  if (ops.empty()) return;
  std::optional<ClusterState> state;
  std::string read_error;
  try {
    state = cluster.state(scenario.namespace_);
  } catch (const std::exception& e) {
    read_error = std::string("error: reading the cluster: ") + e.what() + "\n";
  }
  std::set<std::string> files;
  for (const auto& o : out) files.insert(o.file);
  for (const auto& op : ops) {
    DiagnosticOutput output;
    output.block = block;
    output.op = diagnostic_op_name(op.kind);
    const std::string base = (block == "finally" ? "finally-" : "") + base_file(op);
    output.file = base;
    for (int n = 2; files.count(output.file); ++n) {
      const size_t dot = base.rfind('.');
      output.file = base.substr(0, dot) + "-" + std::to_string(n) + base.substr(dot);
    }
    files.insert(output.file);
    if (!state) {
      output.text = read_error;
    } else {
      try {
        output.text = op_text(op, scenario, *state, simulator, dynamic_cast<DiagnosticReader*>(&cluster));
      } catch (const std::exception& e) {
        output.text = std::string("error: ") + e.what() + "\n";
      }
    }
    out.push_back(std::move(output));
  }
}

std::string path_safe(const std::string& name) {
  std::string out;
  for (char c : name.substr(0, 100)) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || out == ".") return "_";
  if (out == "..") return "__";
  return out;
}

}  // namespace gpuops::core
