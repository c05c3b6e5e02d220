#include "core/operands.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

#include "core/input_file.h"
#include "core/validation.h"
#include "core/yaml_load.h"

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

}  // namespace

Catalog parse_catalog(const std::string& text, const std::string& file) {
  YAML::Node root = load_yaml(text, file);
  if (!root.IsMap() || !root["operands"] || !root["operands"].IsSequence())
    throw InputError(file, root ? line_of(root) : 0, "operands", "Required value: a list of operands");
  known_keys(root, file, "", {"operands", "audit", "version"});
  if (root["operands"].size() == 0)
    throw InputError(file, line_of(root["operands"]), "operands", "Required value: at least one operand");
  Catalog c;
  if (const YAML::Node a = root["audit"]) {
    std::string v = a.IsScalar() ? a.Scalar() : "";
    if (v != "labelled" && v != "deployed")
      throw InputError(file, line_of(a), "audit", "Unsupported value: \"" + v + "\": supported values: \"labelled\", \"deployed\"");
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
    known_keys(n, file, field,
               {"name", "label", "daemonset", "app", "column", "image", "memory", "manifest", "container",
                "workload_configs", "gates", "needs", "component"});
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
    if (!names.insert(o.name).second)
      throw InputError(file, line_of(n["name"]), field + ".name", "Duplicate value: \"" + o.name + "\"");
    if (!columns.insert(o.column).second)
      throw InputError(file, line_of(n), field + ".column", "Duplicate value: \"" + o.column + "\"");
    c.operands.push_back(std::move(o));
  }
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
                     "no such operand catalog: give \"lab\", \"gpu-operator\" (v26.7), \"gpu-operator-v25.3\" or the path of a catalog file");
  return parse_catalog(read_input_file(name_or_path), name_or_path);
}

}  // namespace gpuops::core
