#include "core/gpu_operator/operands.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

#include "core/base/input_file.h"
#include "core/base/terminal.h"
#include "core/codec/yaml_load.h"
#include "core/kube/names.h"
#include "core/model/quantity.h"

namespace gpuops::core {

const Operand* Catalog::by_name(const std::string& name) const {
  for (const auto& o : operands)
    if (o.name == name) return &o;
  return nullptr;
}

const Operand* Catalog::by_daemonset(const std::string& ds_name) const {
  for (const auto& o : operands)
    if (o.daemonset == ds_name) return &o;
  return nullptr;
}

const Operand* Catalog::by_label(const std::string& label_key) const {
  for (const auto& o : operands)
    if (o.label == label_key) return &o;
  return nullptr;
}

std::string Catalog::names() const {
  std::string s;
  for (const auto& o : operands) s += (s.empty() ? "" : ", ") + o.name;
  return s;
}

namespace {

int line_of(const YAML::Node& n) { return n.Mark().line + 1; }

std::string str(const YAML::Node& n, const char* key, const std::string& file, const std::string& field,
                bool required) {
  YAML::Node v = n[key];
  if (!v || v.IsNull()) {
    if (required) throw InputError(file, line_of(n), field + "." + key, "Required value");
    return "";
  }
  if (!v.IsScalar()) throw InputError(file, line_of(v), field + "." + key, "must be a string");
  return v.Scalar();
}

std::vector<std::string> list(const YAML::Node& n, const char* key, const std::string& file, const std::string& field) {
  std::vector<std::string> out;
  YAML::Node v = n[key];
  if (!v || v.IsNull()) return out;
  if (!v.IsSequence()) throw InputError(file, line_of(v), field + "." + key, "must be a list of strings");
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].IsScalar())
      throw InputError(file, line_of(v[i]), field + "." + key + "[" + std::to_string(i) + "]", "must be a string");
    out.push_back(v[i].Scalar());
  }
  return out;
}

// Refuses a key of map `n` outside `allowed` (a typo would otherwise be
// silently ignored), as the API's strict decoding does.
void known_keys(const YAML::Node& n, const std::string& file, const std::string& field,
                std::initializer_list<const char*> allowed) {
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string k = it->first.IsScalar() ? it->first.Scalar() : "";
    bool ok = false;
    for (const char* a : allowed) ok = ok || k == a;
    if (!ok) {
      std::string known;
      for (const char* a : allowed) known += std::string(known.empty() ? "" : ", ") + a;
      throw InputError(file, line_of(it->first), field.empty() ? k : field + "." + k,
                       "unknown field \"" + k + "\" (known: " + known + ")");
    }
  }
}

// Why a catalog map's key or value is invalid, "" when it is not.
using StringCheck = std::string (*)(const std::string&);

// A host path: absolute.
std::string validate_absolute_path(const std::string& path) {
  return path.rfind('/', 0) == 0 ? "" : "must be an absolute path";
}

// A map of strings, in file order, each key and value validated by the
// checks given (a label's by default; host_paths: volume names, DNS-1123
// labels, to absolute paths).
std::vector<std::pair<std::string, std::string>> string_map(const YAML::Node& n, const char* key,
                                                            const std::string& file, const std::string& field,
                                                            StringCheck check_key = validate_label_key,
                                                            StringCheck check_value = validate_label_value) {
  std::vector<std::pair<std::string, std::string>> out;
  YAML::Node v = n[key];
  if (!v || v.IsNull()) return out;
  if (!v.IsMap()) throw InputError(file, line_of(v), field + "." + key, "must be a map of strings");
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it->first.IsScalar() || !it->second.IsScalar())
      throw InputError(file, line_of(it->first), field + "." + key, "must be a map of strings");
    std::string k = it->first.Scalar();
    if (std::string err = check_key(k); !err.empty())
      throw InputError(file, line_of(it->first), field + "." + key + "[" + k + "]",
                       "Invalid value: " + go_quote(k) + ": " + err);
    if (std::string err = check_value(it->second.Scalar()); !err.empty())
      throw InputError(file, line_of(it->second), field + "." + key + "[" + k + "]",
                       "Invalid value: " + go_quote(it->second.Scalar()) + ": " + err);
    out.emplace_back(k, it->second.Scalar());
  }
  return out;
}

bool boolean(const YAML::Node& n, const char* key, const std::string& file, const std::string& field) {
  YAML::Node v = n[key];
  if (!v || v.IsNull()) return false;
  if (!v.IsScalar() || (v.Scalar() != "true" && v.Scalar() != "false"))
    throw InputError(file, line_of(v), field.empty() ? key : field + "." + key, "must be true or false");
  return v.Scalar() == "true";
}

// What an operand's names are, as Kubernetes and the shell will take them:
// a catalog is a file anyone may hand to gpuops (--operands), and its names
// become label keys, DaemonSet and container names, file names under the
// lab's k8s/ and shell completion candidates. Throws InputError naming the
// field (apimachinery's message, the value quoted as Go's %q).
void check_operand_names(const YAML::Node& n, const Operand& o, const std::string& file, const std::string& field) {
  auto check = [&](const char* key, const std::string& value, const std::string& err) {
    if (err.empty()) return;
    YAML::Node v = n[key];
    throw InputError(file, line_of(v ? v : n), field + "." + key, "Invalid value: " + go_quote(value) + ": " + err);
  };
  check("name", o.name, validate_dns1123_label(o.name));  // the deploy label's suffix, a completion candidate
  check("daemonset", o.daemonset, validate_dns1123_subdomain(o.daemonset));
  check("app", o.app, validate_label_value(o.app));
  check("column", o.column, o.column.empty() ? "must be non-empty" : validate_label_value(o.column));
  check("container", o.container, validate_dns1123_label(o.container));
  check("component", o.component, validate_label_value(o.component));
  if (!o.state.empty()) check("state", o.state, validate_dns1123_label(o.state));
  // A file name the lab writes under k8s/ (and the name of a manifest of
  // manifests/): no '/', no "..".
  if (!o.manifest.empty() && (!validate_dns1123_subdomain(o.manifest).empty() ||
                              !(o.manifest.ends_with(".yaml") || o.manifest.ends_with(".yml"))))
    check("manifest", o.manifest,
          "must be a file name of lower case alphanumerics, '-' and '.', ending .yaml (e.g. 'driver-ds.yaml')");
  // An image reference: printable, no spaces (distribution/reference).
  for (char c : o.image)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      check("image", o.image, "must not contain spaces or control characters");
      break;
    }
  if (!o.memory.empty()) {
    try {
      (void)Quantity::parse(o.memory);
    } catch (const QuantityError&) {
      check("memory", o.memory, "must be a quantity (e.g. '128Mi')");
    }
  }
  const std::pair<const char*, const std::vector<std::string>*> lists[] = {
      {"workload_configs", &o.workload_configs}, {"gates", &o.gates}, {"needs", &o.needs}};
  for (const auto& [key, values] : lists)
    for (const auto& v : *values) check(key, v, validate_dns1123_label(v));
}

std::vector<std::string> label_keys(const YAML::Node& n, const char* key, const std::string& file,
                                    const std::string& field) {
  std::vector<std::string> out = list(n, key, file, field);
  for (size_t i = 0; i < out.size(); ++i)
    if (std::string err = validate_label_key(out[i]); !err.empty())
      throw InputError(file, line_of(n[key][i]), field + "." + key + "[" + std::to_string(i) + "]",
                       "Invalid value: \"" + out[i] + "\": " + err);
  return out;
}

HelperRules parse_helper(const YAML::Node& h, const std::string& file, const std::string& field) {
  HelperRules r;
  if (!h.IsMap()) throw InputError(file, line_of(h), field, "must be a map");
  known_keys(h, file, field,
             {"pause", "pause_if_set", "restore", "restore_if_set", "restore_on_exit", "wait_for", "wait_timeout_fails",
              "evict_without_driver", "skip_same_config", "configs"});
  r.pause = label_keys(h, "pause", file, field);
  r.pause_if_set = label_keys(h, "pause_if_set", file, field);
  r.restore = h["restore"] ? label_keys(h, "restore", file, field) : r.pause;
  r.restore_if_set = h["restore_if_set"] ? label_keys(h, "restore_if_set", file, field) : r.pause_if_set;
  r.restore_on_exit = h["restore_on_exit"] ? label_keys(h, "restore_on_exit", file, field) : r.restore;
  if (const YAML::Node w = h["wait_for"]) {
    if (!w.IsSequence()) throw InputError(file, line_of(w), field + ".wait_for", "must be a list");
    for (size_t i = 0; i < w.size(); ++i) {
      std::string f = field + ".wait_for[" + std::to_string(i) + "]";
      HelperWait wait;
      if (w[i].IsScalar()) {
        wait.app = w[i].Scalar();
      } else if (w[i].IsMap()) {
        known_keys(w[i], file, f, {"app", "selector_key", "if_set"});
        wait.app = str(w[i], "app", file, f, false);
        wait.selector_key = str(w[i], "selector_key", file, f, false);
        wait.if_set = str(w[i], "if_set", file, f, false);
      } else {
        throw InputError(file, line_of(w[i]), f, "must be an app label value or a map {app | selector_key, if_set}");
      }
      if (wait.app.empty() == wait.selector_key.empty())
        throw InputError(file, line_of(w[i]), f, "give exactly one of app and selector_key");
      r.wait_for.push_back(std::move(wait));
    }
  }
  r.wait_timeout_fails = boolean(h, "wait_timeout_fails", file, field);
  r.evict_without_driver = boolean(h, "evict_without_driver", file, field);
  r.skip_same_config = boolean(h, "skip_same_config", file, field);
  r.configs = list(h, "configs", file, field);
  return r;
}

OperatorRules parse_rules(const YAML::Node& op, const std::set<std::string>& names, const std::string& file) {
  OperatorRules r;
  if (!op.IsMap()) throw InputError(file, line_of(op), "operator", "must be a map");
  known_keys(
      op, file, "operator",
      {"reconcile_order", "state_labels", "empty_label_is_absent", "labels_need_gpu_present",
       "relabel_on_daemonset_events", "node_label_watch", "driver_manager_image", "driver_manager", "mig_manager"});
  r.driver_manager_image = str(op, "driver_manager_image", file, "operator", false);
  if (op["driver_manager"]) r.driver_manager = parse_helper(op["driver_manager"], file, "operator.driver_manager");
  if (op["mig_manager"]) r.mig_manager = parse_helper(op["mig_manager"], file, "operator.mig_manager");
  r.reconcile_order = list(op, "reconcile_order", file, "operator");
  for (size_t i = 0; i < r.reconcile_order.size(); ++i)
    if (!names.count(r.reconcile_order[i]))
      throw InputError(file, line_of(op["reconcile_order"]), "operator.reconcile_order[" + std::to_string(i) + "]",
                       "Not found: \"" + r.reconcile_order[i] + "\" is not an operand of this catalog");
  if (const YAML::Node sl = op["state_labels"]) {
    if (!sl.IsSequence()) throw InputError(file, line_of(sl), "operator.state_labels", "must be a list");
    for (size_t i = 0; i < sl.size(); ++i) {
      std::string field = "operator.state_labels[" + std::to_string(i) + "]";
      if (!sl[i].IsMap()) throw InputError(file, line_of(sl[i]), field, "must be a map");
      known_keys(sl[i], file, field, {"label", "workload_configs"});
      StateLabel l;
      l.label = str(sl[i], "label", file, field, true);
      if (std::string err = validate_label_key(l.label); !err.empty())
        throw InputError(file, line_of(sl[i]["label"]), field + ".label", "Invalid value: \"" + l.label + "\": " + err);
      l.workload_configs = list(sl[i], "workload_configs", file, field);
      r.state_labels.push_back(std::move(l));
    }
  }
  r.empty_label_is_absent = boolean(op, "empty_label_is_absent", file, "operator");
  r.labels_need_gpu_present = boolean(op, "labels_need_gpu_present", file, "operator");
  r.relabel_on_daemonset_events = boolean(op, "relabel_on_daemonset_events", file, "operator");
  static const std::pair<const char*, NodeWatchReason> kReasons[] = {
      {"gpu-label-missing", NodeWatchReason::kGpuLabelMissing},
      {"gpu-label-outdated", NodeWatchReason::kGpuLabelOutdated},
      {"gpu-present-changed", NodeWatchReason::kGpuPresentChanged},
      {"mig-manager-label-missing", NodeWatchReason::kMigManagerLabelMissing},
      {"mig-capable-changed", NodeWatchReason::kMigCapableChanged},
      {"operands-changed", NodeWatchReason::kOperandsChanged},
      {"workload-config-changed", NodeWatchReason::kWorkloadConfigChanged},
      {"ostree-changed", NodeWatchReason::kOstreeChanged},
      {"driver-owner-changed", NodeWatchReason::kDriverOwnerChanged},
  };
  std::vector<std::string> watch = list(op, "node_label_watch", file, "operator");
  for (size_t i = 0; i < watch.size(); ++i) {
    bool found = false;
    for (const auto& [name, reason] : kReasons)
      if (watch[i] == name) {
        r.node_label_watch.push_back(reason);
        found = true;
      }
    if (!found) {
      std::string known;
      for (const auto& [name, reason] : kReasons) known += std::string(known.empty() ? "" : ", ") + "\"" + name + "\"";
      throw InputError(file, line_of(op["node_label_watch"]), "operator.node_label_watch[" + std::to_string(i) + "]",
                       "Unsupported value: \"" + watch[i] + "\": supported values: " + known);
    }
  }
  return r;
}

}  // namespace

Catalog parse_catalog(const std::string& text, const std::string& file) {
  YAML::Node root = load_yaml(text, file);
  if (!root.IsMap() || !root["operands"] || !root["operands"].IsSequence())
    throw InputError(file, root ? line_of(root) : 0, "operands", "Required value: a list of operands");
  known_keys(root, file, "", {"operands", "audit", "version", "operator"});
  if (root["operands"].size() == 0)
    throw InputError(file, line_of(root["operands"]), "operands", "Required value: at least one operand");
  Catalog c;
  if (const YAML::Node a = root["audit"]) {
    std::string v = a.IsScalar() ? a.Scalar() : "";
    if (v != "labelled" && v != "deployed")
      throw InputError(file, line_of(a), "audit",
                       "Unsupported value: \"" + v + "\": supported values: \"labelled\", \"deployed\"");
    c.audit_deployed_only = v == "deployed";
  }
  if (const YAML::Node v = root["version"]) {
    if (!v.IsScalar()) throw InputError(file, line_of(v), "version", "must be a string");
    c.version = v.Scalar();
  }
  std::set<std::string> names, columns;
  const YAML::Node ops = root["operands"];
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string field = "operands[" + std::to_string(i) + "]";
    const YAML::Node& n = ops[i];
    if (!n.IsMap()) throw InputError(file, line_of(n), field, "must be a map");
    known_keys(n, file, field, {"name",       "label",         "daemonset",       "app",           "column",
                                "image",      "memory",        "manifest",        "container",     "workload_configs",
                                "gates",      "needs",         "component",       "state",         "selector",
                                "pod_labels", "node_selector", "update_strategy", "runtime_class", "host_paths"});
    Operand o;
    o.name = str(n, "name", file, field, true);
    o.label = str(n, "label", file, field, true);
    // A node label key (IsQualifiedName); the operator's are
    // nvidia.com/gpu.deploy.<operand>, a user's catalog may place by others.
    if (std::string err = validate_label_key(o.label); !err.empty())
      throw InputError(file, line_of(n["label"]), field + ".label", "Invalid value: \"" + o.label + "\": " + err);
    o.daemonset = str(n, "daemonset", file, field, true);
    o.app = str(n, "app", file, field, false);
    if (o.app.empty()) o.app = o.daemonset;
    o.column = str(n, "column", file, field, false);
    if (o.column.empty()) o.column = o.name;
    o.image = str(n, "image", file, field, false);
    o.memory = str(n, "memory", file, field, false);
    o.manifest = str(n, "manifest", file, field, false);
    o.container = str(n, "container", file, field, false);
    if (o.container.empty()) o.container = o.name;
    o.workload_configs = list(n, "workload_configs", file, field);
    o.gates = list(n, "gates", file, field);
    o.needs = list(n, "needs", file, field);
    o.component = str(n, "component", file, field, false);
    o.state = str(n, "state", file, field, false);
    o.selector = string_map(n, "selector", file, field);
    o.pod_labels = string_map(n, "pod_labels", file, field);
    o.node_selector = string_map(n, "node_selector", file, field);
    o.host_paths = string_map(n, "host_paths", file, field, validate_dns1123_label, validate_absolute_path);
    o.update_strategy = str(n, "update_strategy", file, field, false);
    if (!o.update_strategy.empty() && o.update_strategy != "RollingUpdate" && o.update_strategy != "OnDelete")
      throw InputError(
          file, line_of(n["update_strategy"]), field + ".update_strategy",
          "Unsupported value: \"" + o.update_strategy + "\": supported values: \"OnDelete\", \"RollingUpdate\"");
    o.runtime_class = boolean(n, "runtime_class", file, field);
    check_operand_names(n, o, file, field);
    if (!names.insert(o.name).second)
      throw InputError(file, line_of(n["name"]), field + ".name", "Duplicate value: \"" + o.name + "\"");
    if (!columns.insert(o.column).second)
      throw InputError(file, line_of(n), field + ".column", "Duplicate value: \"" + o.column + "\"");
    c.operands.push_back(std::move(o));
  }
  if (const YAML::Node op = root["operator"]) c.rules = parse_rules(op, names, file);
  for (size_t i = 0; i < c.operands.size(); ++i) {
    for (const auto& need : c.operands[i].needs) {
      if (!names.count(need))
        throw InputError(file, line_of(ops[i]["needs"]), "operands[" + std::to_string(i) + "].needs",
                         "Not found: \"" + need + "\" is not an operand of this catalog");
    }
  }
  return c;
}

Catalog load_catalog(const std::string& name_or_path) {
  std::string builtin = builtin_catalog_text(name_or_path);
  if (!builtin.empty()) return parse_catalog(builtin, "<builtin:" + name_or_path + ">");
  std::error_code ec;
  if (!std::filesystem::exists(name_or_path, ec))
    throw InputError(name_or_path, 0, "",
                     "no such operand catalog: give \"lab\", \"gpu-operator\" (v26.7), \"gpu-operator-v<release>\" "
                     "(v23.9, v24.3, v24.6, v24.9, v25.3, v25.10, v26.3) or the path of a catalog file");
  return parse_catalog(read_input_file(name_or_path), name_or_path);
}

}  // namespace gpuops::core
