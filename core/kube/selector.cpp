#include "core/kube/selector.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>

#include "core/base/errors.h"
#include "core/kube/names.h"
#include "core/kube/placement.h"

namespace gpuops::core {
namespace json = boost::json;
namespace {

[[noreturn]] void bad(const std::string& message) { throw core::InputError::with_status(400, "", 0, "", message); }

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// Splits at commas outside parentheses.
std::vector<std::string> split_requirements(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

void check_key(const std::string& key, const std::string& req) {
  std::string msg = core::validate_label_key(key);
  if (key.empty() || !msg.empty())
    bad("unable to parse requirement: " + (key.empty() ? "found '" + req + "', expected: identifier" : msg));
}

void check_value(const std::string& value) {
  std::string msg = core::validate_label_value(value);
  if (!msg.empty()) bad("unable to parse requirement: " + msg);
}

// Reads "(a, b)" into values.
std::vector<std::string> parse_set(const std::string& rest, const std::string& req) {
  std::string r = trim(rest);
  if (r.size() < 2 || r.front() != '(' || r.back() != ')')
    bad("unable to parse requirement: found '" + r + "', expected: '('");
  std::vector<std::string> values;
  std::string inner = r.substr(1, r.size() - 2);
  size_t start = 0;
  while (true) {
    size_t comma = inner.find(',', start);
    std::string v = trim(inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    check_value(v);
    values.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  (void)req;
  return values;
}

// Splits "word rest" at the first run of spaces after a word.
bool word_op(const std::string& req, const std::string& word, std::string* key, std::string* rest) {
  // key<space>word<space or (>...
  size_t sp = req.find_first_of(" \t");
  if (sp == std::string::npos) return false;
  std::string k = req.substr(0, sp);
  std::string after = trim(req.substr(sp));
  if (after.compare(0, word.size(), word) != 0) return false;
  std::string tail = after.substr(word.size());
  if (!tail.empty() && !is_space(tail[0]) && tail[0] != '(') return false;
  *key = k;
  *rest = tail;
  return true;
}

}  // namespace

LabelQuery LabelQuery::parse(const std::string& text) {
  LabelQuery q;
  if (trim(text).empty()) return q;
  for (const std::string& raw : split_requirements(text)) {
    std::string req = trim(raw);
    core::Requirement r;
    std::string key, rest;
    if (req.empty()) bad("unable to parse requirement: found '', expected: !, identifier, or 'end of string'");
    if (req[0] == '!') {
      r.key = trim(req.substr(1));
      r.op = core::SelectorOperator::kDoesNotExist;
    } else if (word_op(req, "notin", &key, &rest)) {
      r.key = key;
      r.op = core::SelectorOperator::kNotIn;
      r.values = parse_set(rest, req);
    } else if (word_op(req, "in", &key, &rest)) {
      r.key = key;
      r.op = core::SelectorOperator::kIn;
      r.values = parse_set(rest, req);
    } else {
      size_t pos = req.find_first_of("=!<>");
      if (pos == std::string::npos) {
        r.key = req;
        r.op = core::SelectorOperator::kExists;
      } else {
        r.key = trim(req.substr(0, pos));
        std::string value;
        if (req.compare(pos, 2, "==") == 0) {
          r.op = core::SelectorOperator::kIn;
          value = req.substr(pos + 2);
        } else if (req.compare(pos, 2, "!=") == 0) {
          r.op = core::SelectorOperator::kNotIn;
          value = req.substr(pos + 2);
        } else if (req[pos] == '=') {
          r.op = core::SelectorOperator::kIn;
          value = req.substr(pos + 1);
        } else if (req[pos] == '>' || req[pos] == '<') {
          r.op = req[pos] == '>' ? core::SelectorOperator::kGt : core::SelectorOperator::kLt;
          value = trim(req.substr(pos + 1));
          try {
            size_t used = 0;
            (void)std::stoll(value, &used);
            if (used != value.size()) throw std::invalid_argument("x");
          } catch (const std::exception&) {
            bad("unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer");
          }
        } else {
          bad("unable to parse requirement: found '" + req.substr(pos) + "', expected: '=', '!=', '==', 'in', notin'");
        }
        value = trim(value);
        if (r.op != core::SelectorOperator::kGt && r.op != core::SelectorOperator::kLt) check_value(value);
        r.values = {value};
      }
    }
    check_key(r.key, req);
    q.reqs_.push_back(std::move(r));
  }
  return q;
}

// Requirement.Matches (apimachinery pkg/labels/selector.go) is
// core::requirement_matches, shared with placement.
bool LabelQuery::matches(const core::Labels& labels) const {
  for (const auto& r : reqs_)
    if (!core::requirement_matches(r, labels)) return false;
  return true;
}

// mirrors fields.ParseSelector (apimachinery pkg/fields/selector.go)
FieldQuery FieldQuery::parse(const std::string& text) {
  FieldQuery q;
  if (text.empty()) return q;
  // Split on unescaped commas, keeping escapes for the next stage.
  std::vector<std::string> parts;
  std::string cur;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      cur.push_back(text[i]);
      cur.push_back(text[++i]);
    } else if (text[i] == ',') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(text[i]);
    }
  }
  parts.push_back(cur);
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    Term t;
    size_t i = 0;
    std::string field;
    bool found = false;
    for (; i < part.size(); ++i) {
      if (part[i] == '\\' && i + 1 < part.size()) {
        field.push_back(part[++i]);
        continue;
      }
      if (part.compare(i, 2, "!=") == 0) {
        t.negate = true;
        i += 2;
        found = true;
        break;
      }
      if (part.compare(i, 2, "==") == 0) {
        i += 2;
        found = true;
        break;
      }
      if (part[i] == '=') {
        i += 1;
        found = true;
        break;
      }
      field.push_back(part[i]);
    }
    if (!found) bad("invalid selector: '" + text + "'; can't understand '" + part + "'");
    std::string value;
    for (; i < part.size(); ++i) {
      if (part[i] == '\\' && i + 1 < part.size()) {
        value.push_back(part[++i]);
      } else {
        value.push_back(part[i]);
      }
    }
    t.field = field;
    t.value = value;
    q.terms_.push_back(std::move(t));
  }
  return q;
}

void FieldQuery::check_supported(const std::string& kind) const {
  static const std::set<std::string> pod = {
      "spec.nodeName",    "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
      "spec.hostNetwork", "status.phase",       "status.podIP",       "status.nominatedNodeName"};
  for (const auto& t : terms_) {
    if (t.field == "metadata.name" || t.field == "metadata.namespace") continue;
    if (kind == "Pod" && pod.count(t.field)) continue;
    if (kind == "Node" && t.field == "spec.unschedulable") continue;
    if (kind == "Namespace" && t.field == "status.phase") continue;
    bad("field label not supported: " + t.field);
  }
}

namespace {

// The value a field selector compares, as the registry's GetAttrs /
// ToSelectableFields render it (bools as "true"/"false", absent as "").
std::string field_value(const json::object& obj, const std::string& path) {
  const json::value* v = nullptr;
  const json::object* cur = &obj;
  size_t start = 0;
  while (cur) {
    size_t dot = path.find('.', start);
    std::string seg = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    v = cur->if_contains(seg);
    if (!v) return path == "spec.unschedulable" || path == "spec.hostNetwork" ? "false" : "";
    if (dot == std::string::npos) break;
    cur = v->if_object();
    start = dot + 1;
  }
  if (!v) return "";
  if (v->is_string()) return std::string(v->as_string());
  if (v->is_bool()) return v->as_bool() ? "true" : "false";
  if (v->is_null()) return "";
  return json::serialize(*v);
}

}  // namespace

const std::string* FieldQuery::exact_match(const std::string& field) const {
  for (const auto& t : terms_)
    if (t.field == field && !t.negate) return &t.value;
  return nullptr;
}

std::optional<bool> FieldQuery::matches_name(std::string_view ns, std::string_view name) const {
  bool all = true;
  for (const auto& t : terms_) {
    std::string_view v;
    if (t.field == "metadata.name")
      v = name;
    else if (t.field == "metadata.namespace")
      v = ns;
    else
      return std::nullopt;
    if ((v == t.value) == t.negate) all = false;
  }
  return all;
}

bool FieldQuery::matches(const json::object& obj) const {
  for (const auto& t : terms_) {
    bool eq = field_value(obj, t.field) == t.value;
    if (eq == t.negate) return false;
  }
  return true;
}

}  // namespace gpuops::core
