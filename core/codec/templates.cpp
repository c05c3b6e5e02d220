// core/codec/templates.cpp: a template told from a manifest (core/codec/templates.h).
#include "core/codec/templates.h"

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace gpuops::core {

namespace json = boost::json;

namespace {

bool space(char c) { return c == ' ' || c == '\t'; }

// Whether a YAML node may start at `i` of `line` (block context: the line's
// first text, after "key: " or a "- " / "? " indicator; flow context: after
// '[', '{' or ','): where '{' opens a flow mapping, '\'' and '"' a quoted
// scalar, '|' and '>' a block scalar. Elsewhere they are text of a plain
// scalar (`--format={{.ID}}`, `it's`).
bool node_start(std::string_view line, size_t i) {
  size_t j = i;
  while (j > 0 && space(line[j - 1])) --j;
  if (j == 0) return true;
  char p = line[j - 1];
  if (p == '[' || p == '{' || p == ',') return true;
  if (j == i) return false;  // an indicator needs a space after it
  if (p == ':') return true;
  return (p == '-' || p == '?') && (j == 1 || space(line[j - 2]));
}

}  // namespace

int template_action_line(const std::string& text) {
  size_t at = 0;
  int number = 0;
  int block = -1;  // indentation of the line that opened a block scalar, whose deeper lines are its text
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    ++number;
    std::string_view line(text.data() + at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    int indent = static_cast<int>(first);
    if (block >= 0 && indent > block) continue;
    block = -1;
    char quote = 0;  // the quote of the scalar being read, or 0
    for (size_t i = first; i < line.size(); ++i) {
      char c = line[i];
      if (quote == '\'') {
        if (c == '\'' && i + 1 < line.size() && line[i + 1] == '\'')
          ++i;  // '' is a quote
        else if (c == '\'')
          quote = 0;
        continue;
      }
      if (quote == '"') {
        if (c == '\\')
          ++i;
        else if (c == '"')
          quote = 0;
        continue;
      }
      if (c == '#' && (i == 0 || space(line[i - 1]))) break;  // a comment to the end of the line
      if (!node_start(line, i)) continue;
      if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '{' && i + 1 < line.size() && line[i + 1] == '{') {
        return number;
      } else if (c == '|' || c == '>') {
        std::string_view rest = line.substr(i + 1);
        size_t k = 0;
        while (k < rest.size() && (rest[k] == '-' || rest[k] == '+' || (rest[k] >= '1' && rest[k] <= '9'))) ++k;
        while (k < rest.size() && space(rest[k])) ++k;
        if (k == rest.size() || rest[k] == '#') {
          block = indent;
          break;
        }
      }
    }
  }
  return 0;
}

namespace {

bool find_placeholder(const json::value& v, std::vector<std::string>& path, const Document& doc, int depth, int& line) {
  if (depth > 1000) return false;
  auto holds = [](std::string_view s) { return s.find(kOperatorPlaceholder) != std::string_view::npos; };
  if (v.is_string()) {
    if (!holds(v.get_string())) return false;
    line = doc.line_of(path);
    return true;
  }
  if (v.is_array()) {
    const auto& a = v.get_array();
    for (size_t i = 0; i < a.size(); ++i) {
      path.push_back(std::to_string(i));
      bool found = find_placeholder(a[i], path, doc, depth + 1, line);
      path.pop_back();
      if (found) return true;
    }
    return false;
  }
  if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      path.emplace_back(kv.key());
      bool found =
          holds(kv.key()) ? (line = doc.line_of(path), true) : find_placeholder(kv.value(), path, doc, depth + 1, line);
      path.pop_back();
      if (found) return true;
    }
  }
  return false;
}

}  // namespace

int operator_placeholder_line(const Document& doc) {
  std::vector<std::string> path;
  int line = -1;
  return find_placeholder(doc.value, path, doc, 0, line) ? line : -1;
}

InputError go_template_error(const std::string& file, int line) {
  return InputError(file, line, "",
                    "this is a template (Helm/Go \"{{ }}\"), not a manifest: render it first (helm template ...)");
}

InputError operator_asset_error(const std::string& file, int line) {
  return InputError(file, line, "",
                    "this is a template (the GPU Operator's \"FILLED BY THE OPERATOR\" placeholders), not a "
                    "manifest: the operator fills them in when it deploys its assets; lint what it made instead "
                    "(kubectl get daemonsets -n gpu-operator -o yaml)");
}

}  // namespace gpuops::core
