// core/scenario/scenario_bindings.cpp: a scenario's bindings, matrix and
// their substitution (core/scenario/scenario_bindings.h).
#include "core/scenario/scenario_bindings.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/codec/yaml_load.h"

namespace gpuops::core::scenario_bindings {

namespace {

int line_of(const YAML::Node& node) { return node.IsDefined() ? node.Mark().line + 1 : 0; }

// The map `yaml` (at `field` of `file`) as bindings, its keys checked.
Bindings read_map(const YAML::Node& yaml, const std::string& file, const std::string& field) {
  if (!yaml.IsMap()) throw InputError(file, line_of(yaml), field, "must be a map of bindings, e.g. {version: v26.7}");
  Bindings out;
  for (auto it = yaml.begin(); it != yaml.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    if (!is_identifier(key))
      throw InputError(file, line_of(it->first), field + "." + key,
                       "a binding's name is an identifier ([A-Za-z_][A-Za-z0-9_]*), not \"" + key + "\"");
    set_binding(out, key, it->second);
  }
  return out;
}

// The name inside a use "($name)", or "" when `text` is not one.
std::string use_of(const std::string& text) {
  if (text.size() < 3 || !text.starts_with("($") || !text.ends_with(")")) return "";
  return text.substr(2, text.size() - 3);
}

// Whether `text` holds "($" + an identifier + ")" somewhere.
bool holds_use(const std::string& text) {
  for (size_t at = text.find("($"); at != std::string::npos; at = text.find("($", at + 1)) {
    size_t end = text.find(')', at);
    if (end != std::string::npos && is_identifier(text.substr(at + 2, end - at - 2))) return true;
  }
  return false;
}

std::string names_of(const Bindings& bindings) {
  std::string list;
  for (const auto& [name, value] : bindings) list += (list.empty() ? "" : ", ") + name;
  return list;
}

class Substitution {
 public:
  Substitution(const Bindings& bindings, const std::string& file) : bindings_(bindings), file_(file) {}

  // `node` at `field`: a use replaced, or its children searched.
  void walk(YAML::Node node, const std::string& field) {
    if (node.IsScalar()) {
      const std::string& text = node.Scalar();
      const std::string name = use_of(text);
      if (name.empty()) {
        if (holds_use(text))
          throw InputError(
              file_, line_of(node), field,
              "a binding is used as a whole value: write the value as \"($name)\" alone, not inside \"" + text + "\"");
        return;
      }
      if (!is_identifier(name))
        throw InputError(file_, line_of(node), field,
                         "\"" + text + "\" is not a binding: ($ and ) around an identifier");
      auto found = std::find_if(bindings_.begin(), bindings_.end(), [&](const auto& b) { return b.first == name; });
      if (found == bindings_.end())
        throw InputError(file_, line_of(node), field,
                         "unknown binding \"" + name + "\" (" +
                             (bindings_.empty() ? std::string("no bindings: give them under bindings:, matrix:, "
                                                              "--values or --set")
                                                : "bindings: " + names_of(bindings_)) +
                             ")");
      node = found->second;  // the node's content becomes the value's (YAML::Node's = writes through)
      ++count_;
    } else if (node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it) {
        const std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
        if (field.empty() && (key == "bindings" || key == "matrix")) continue;
        walk(it->second, field.empty() ? key : field + "." + key);
      }
    } else if (node.IsSequence()) {
      for (size_t i = 0; i < node.size(); ++i) walk(node[i], field + "[" + std::to_string(i) + "]");
    }
  }
  size_t count() const { return count_; }

 private:
  const Bindings& bindings_;
  const std::string& file_;
  size_t count_ = 0;
};

}  // namespace

void set_binding(Bindings& bindings, const std::string& name, const YAML::Node& value) {
  auto found = std::find_if(bindings.begin(), bindings.end(), [&](const auto& b) { return b.first == name; });
  if (found != bindings.end())
    found->second.reset(value);  // rebound: `=` would write into the node it refers to
  else
    bindings.emplace_back(name, value);
}

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }) &&
         std::all_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

Bindings read_overrides(const BindingOverrides& overrides) {
  Bindings out;
  if (!overrides.values_file.empty()) {
    const std::string& file = overrides.values_file;
    YAML::Node root = load_yaml(read_input_file(file), file);
    if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    for (auto& [name, value] : read_map(root, file, "")) set_binding(out, name, value);
  }
  for (const std::string& item : overrides.set) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw InputError("--set", 0, item, "give a binding as NAME=VALUE (e.g. --set version=v26.7)");
    const std::string name = item.substr(0, eq);
    if (!is_identifier(name))
      throw InputError("--set", 0, name,
                       "a binding's name is an identifier ([A-Za-z_][A-Za-z0-9_]*), not \"" + name + "\"");
    YAML::Node value = load_yaml(item.substr(eq + 1), "--set " + name);
    if (!value.IsDefined() || value.IsNull()) value = YAML::Node(YAML::NodeType::Null);
    set_binding(out, name, value);
  }
  return out;
}

size_t entry_count(const YAML::Node& root, const std::string& file) {
  if (const YAML::Node bindings = root["bindings"]) read_map(bindings, file, "bindings");
  const YAML::Node matrix = root["matrix"];
  if (!matrix) return 1;
  if (!matrix.IsSequence() || matrix.size() == 0)
    throw InputError(file, line_of(matrix), "matrix", "must be a list of maps of bindings, e.g. [{version: v26.7}]");
  for (size_t i = 0; i < matrix.size(); ++i) read_map(matrix[i], file, "matrix[" + std::to_string(i) + "]");
  return matrix.size();
}

Entry entry(const YAML::Node& root, size_t index, const Bindings& overrides) {
  Entry out;
  if (const YAML::Node bindings = root["bindings"])
    for (auto it = bindings.begin(); it != bindings.end(); ++it)
      set_binding(out.bindings, it->first.Scalar(), it->second);
  std::vector<std::string> keys;
  if (const YAML::Node matrix = root["matrix"]) {
    const YAML::Node item = matrix[index];
    for (auto it = item.begin(); it != item.end(); ++it) {
      keys.push_back(it->first.Scalar());
      set_binding(out.bindings, it->first.Scalar(), it->second);
    }
  }
  for (const auto& [name, value] : overrides) set_binding(out.bindings, name, value);
  if (!root["matrix"]) return out;
  std::string suffix;
  for (const auto& key : keys) {
    auto found = std::find_if(out.bindings.begin(), out.bindings.end(), [&](const auto& b) { return b.first == key; });
    const YAML::Node& value = found->second;
    if (!value.IsScalar()) continue;
    const std::string& text = value.Scalar();
    if (std::any_of(text.begin(), text.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
      continue;
    suffix += (suffix.empty() ? "" : ",") + key + "=" + text;
  }
  out.suffix = "[" + suffix + "]";
  return out;
}

size_t substitute(YAML::Node& root, const Bindings& bindings, const std::string& file) {
  Substitution substitution(bindings, file);
  substitution.walk(root, "");
  return substitution.count();
}

}  // namespace gpuops::core::scenario_bindings
