#include "core/codec/crd_schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/codec/codec_internal.h"

namespace gpuops::core {

namespace json = boost::json;

namespace {

using Cause = InputError::Cause;

// The API server decodes a JSON number as Go's int64 when its text is an
// integer that fits, else as float64 (sigs.k8s.io/json, UseNumber then
// int64 or float64): Boost.JSON's int64 kind is the first, its uint64 (past
// int64) and double kinds the second.
bool go_float64(const json::value& v) { return v.is_uint64() || v.is_double(); }

// swag.IsFloat64AJSONInteger: integral and within ±(2^53 - 1).
bool json_integer(double d) {
  constexpr double kMax = 9007199254740991.0;
  return std::isfinite(d) && d == std::floor(d) && d >= -kMax && d <= kMax;
}

// kube-openapi's name for the JSON type of `v`: an int64 is an "integer",
// a float64 too when swag.IsFloat64AJSONInteger says so, else a "number".
// "null" for null (an array's item: nulls in objects are pruned first).
std::string type_of(const json::value& v) {
  switch (v.kind()) {
    case json::kind::bool_: return "boolean";
    case json::kind::int64: return "integer";
    case json::kind::uint64: return json_integer(static_cast<double>(v.get_uint64())) ? "integer" : "number";
    case json::kind::double_: return json_integer(v.get_double()) ? "integer" : "number";
    case json::kind::string: return "string";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
    case json::kind::null: break;
  }
  return "null";
}

// Go's %v of a float64 (strconv.FormatFloat(f, 'g', -1, 64)): the shortest
// digits, with an exponent ("1e+19", "-9.223372036854776e+18") when the
// decimal exponent is below -4 or 6 and over, else plain ("-1.5", "100000").
std::string go_float(double d) {
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  if (std::isnan(d)) return "NaN";
  char buf[64];
  auto sci = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view text(buf, static_cast<size_t>(sci.ptr - buf));
  const size_t e = text.find('e');
  int exp = 0;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+'), text.data() + text.size(), exp);
  if (exp < -4 || exp >= 6) return std::string(text);
  auto fixed = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
  return std::string(buf, fixed.ptr);
}

// Go's %#v of a JSON scalar as the API server holds it: a string quoted
// (strconv.Quote), an int64 in decimal, a float64 as go_float, a boolean.
std::string go_value(const json::value& v) {
  if (v.is_string()) return codec_internal::go_quote(std::string(v.get_string()));
  if (v.is_uint64()) return go_float(static_cast<double>(v.get_uint64()));
  if (v.is_double()) return go_float(v.get_double());
  return json::serialize(v);
}

// A number of `v` as a double. REQUIRES: an integer or number.
double number(const json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  return v.get_double();
}

// A schema number as Go's %v prints it in kube-openapi's messages.
std::string bound_text(const json::value& v) {
  if (v.is_double()) {
    double d = v.get_double();
    if (d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<int64_t>(d));
  }
  return json::serialize(v);
}

const json::object* props(const json::object& schema, const char* key) {
  const json::value* v = schema.if_contains(key);
  return v ? v->if_object() : nullptr;
}

bool digit(char c) { return c >= '0' && c <= '9'; }

// Digits from `i`: how many (0: none).
size_t digits(std::string_view s, size_t i) {
  size_t n = 0;
  while (i + n < s.size() && digit(s[i + n])) ++n;
  return n;
}

// ([0-9]+(\.[0-9]*)?)|(\.[0-9]+) from `i`: its end, or npos.
size_t decimal(std::string_view s, size_t i) {
  if (size_t n = digits(s, i)) {
    i += n;
    if (i < s.size() && s[i] == '.') i += 1 + digits(s, i + 1);
    return i;
  }
  if (i < s.size() && s[i] == '.')
    if (size_t n = digits(s, i + 1)) return i + 1 + n;
  return std::string_view::npos;
}

// The resource quantity expression of the CRDs (what controller-gen writes
// for resource.Quantity):
// ^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$
bool quantity_matches(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  i = decimal(s, i);
  if (i == std::string_view::npos) return false;
  if (i == s.size()) return true;
  std::string_view rest = s.substr(i);
  if (rest.size() == 2 && std::string_view("KMGTPE").find(rest[0]) != std::string_view::npos && rest[1] == 'i')
    return true;
  if (rest.size() == 1 && std::string_view("numkMGTPE").find(rest[0]) != std::string_view::npos) return true;
  if (rest[0] != 'e' && rest[0] != 'E') return false;
  size_t j = 1;
  if (j < rest.size() && (rest[j] == '+' || rest[j] == '-')) ++j;
  j = decimal(rest, j);
  return j == rest.size();
}

// The Prometheus Operator's duration expression (ServiceMonitor intervals):
// ^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$
// Each unit at most once, in that order; "5ms" is milliseconds (the only
// reading under which the expression matches).
bool monitoring_duration_matches(std::string_view s) {
  if (s == "0") return true;
  static constexpr std::string_view kUnits[] = {"y", "w", "d", "h", "m", "s", "ms"};
  size_t i = 0, next_unit = 0;
  while (i < s.size()) {
    size_t n = digits(s, i);
    if (!n) return false;
    i += n;
    std::string_view unit = s.substr(i, i + 1 < s.size() && s[i] == 'm' && s[i + 1] == 's' ? 2 : 1);
    size_t u = next_unit;
    while (u < std::size(kUnits) && kUnits[u] != unit) ++u;
    if (u == std::size(kUnits)) return false;
    next_unit = u + 1;
    i += unit.size();
  }
  return true;
}

// Whether `s` matches the CRD pattern `pattern`, for the expressions the
// operator's CRDs use; nullopt for any other (not checked: no regular
// expression engine runs on request data).
std::optional<bool> pattern_matches(std::string_view pattern, std::string_view s) {
  if (pattern ==
      R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)")
    return quantity_matches(s);
  if (pattern == R"([a-zA-Z0-9\-]+)")  // not anchored: one such character anywhere
    return std::any_of(s.begin(), s.end(),
                       [](char c) { return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-'; });
  if (pattern == R"(^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$)")
    return monitoring_duration_matches(s);
  if (pattern == R"(^[a-zA-Z_][a-zA-Z0-9_]*$)")
    return !s.empty() && !digit(s[0]) && std::all_of(s.begin(), s.end(), [](char c) {
      return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    });
  return std::nullopt;
}

void type_invalid(std::vector<Cause>& out, const std::string& path, const std::string& got, const std::string& want) {
  out.push_back({"FieldValueTypeInvalid", path,
                 "Invalid value: \"" + got + "\": " + path + " in body must be of type " + want + ": \"" + got + "\""});
}
// An error kube-openapi gives without a field name: the API server's
// field.Invalid on a nil path, printed "<nil>".
void unnamed(std::vector<Cause>& out, const std::string& message) {
  out.push_back({"FieldValueInvalid", "<nil>", "Invalid value: \"\": " + message});
}

void check(const json::object& schema, const json::value& value, const std::string& path, std::vector<Cause>& out) {
  const std::string got = type_of(value);
  const json::value* type = schema.if_contains("type");
  const json::value* ios = schema.if_contains("x-kubernetes-int-or-string");
  if (ios && ios->is_bool() && ios->get_bool()) {
    // x-kubernetes-int-or-string: type [integer, string], then anyOf's
    // first branch (integer) reported.
    if (got != "integer" && got != "string") {
      type_invalid(out, path, got, "integer,string");
      unnamed(out, "\"" + path + "\" must validate at least one schema (anyOf)");
      type_invalid(out, path, got, "integer");
      if (got == "number") unnamed(out, "Checked value must be of type integer (default format) in " + path);
    }
  } else if (type && type->is_string()) {
    const std::string want(type->get_string());
    const json::value* f = schema.if_contains("format");
    const std::string format = f && f->is_string() ? std::string(f->get_string()) : "";
    if (want == "integer" && (format == "int32" || format == "int64") && value.is_number()) {
      // The format's own check: a float64 that is not an integer (within
      // ±(2^53 - 1)) in the format's range is of the wrong type; an int64
      // past int32 only fails the format.
      const double d = number(value);
      const bool in_range =
          format == "int64" || (d >= std::numeric_limits<int32_t>::min() && d <= std::numeric_limits<int32_t>::max());
      if (go_float64(value) && !(json_integer(d) && in_range)) {
        type_invalid(out, path, "float64", format);
        unnamed(out, "Checked value must be of type integer with format " + format + " in " + path);
      } else if (!in_range) {
        unnamed(out, "Checked value must be of type integer with format " + format + " in " + path);
      }
    } else if (got != want && !(want == "number" && got == "integer")) {
      type_invalid(out, path, got, want);
      if (want == "integer" && got == "number")
        unnamed(out, "Checked value must be of type integer (default format) in " + path);
    }
  }
  if (const json::value* pat = schema.if_contains("pattern"); pat && pat->is_string() && value.is_string()) {
    const std::string_view text(value.get_string());
    if (pattern_matches(pat->get_string(), text) == false)
      out.push_back({"FieldValueInvalid", path,
                     "Invalid value: " + go_value(value) + ": " + path + " in body should match '" +
                         std::string(pat->get_string()) + "'"});
  }
  if (got == "integer" || got == "number") {
    const double d = number(value);
    if (const json::value* min = schema.if_contains("minimum"); min && min->is_number() && d < min->to_number<double>())
      out.push_back({"FieldValueInvalid", path,
                     "Invalid value: " + go_value(value) + ": " + path +
                         " in body should be greater than or equal to " + bound_text(*min)});
    if (const json::value* max = schema.if_contains("maximum"); max && max->is_number() && d > max->to_number<double>())
      out.push_back({"FieldValueInvalid", path,
                     "Invalid value: " + go_value(value) + ": " + path + " in body should be less than or equal to " +
                         bound_text(*max)});
  }
  if (const json::value* e = schema.if_contains("enum"); e && e->is_array()) {
    const json::array& allowed = e->get_array();
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + go_value(a);
      out.push_back(
          {"FieldValueNotSupported", path, "Unsupported value: " + go_value(value) + ": supported values: " + list});
    }
  }
  if (const json::object* o = value.if_object()) {
    const json::object* properties = props(schema, "properties");
    const json::object* additional = props(schema, "additionalProperties");
    for (const auto& [key, v] : *o) {
      if (v.is_null()) continue;  // pruned (nullable: false) before validation
      const std::string child = path + "." + std::string(key);
      if (properties)
        if (const json::value* s = properties->if_contains(key); s && s->is_object()) {
          check(s->get_object(), v, child, out);
          continue;
        }
      if (additional) check(*additional, v, child, out);
      // Otherwise an unknown field: pruned by the API server, not an error.
    }
    if (const json::value* req = schema.if_contains("required"); req && req->is_array()) {
      for (const auto& r : req->get_array()) {
        if (!r.is_string()) continue;
        const json::value* present = o->if_contains(r.get_string());
        if (present && !present->is_null()) continue;
        const json::value* rs = properties ? properties->if_contains(r.get_string()) : nullptr;
        if (rs && rs->is_object() && rs->get_object().contains("default")) continue;  // defaulted first
        out.push_back({"FieldValueRequired", path + "." + std::string(r.get_string()), "Required value"});
      }
    }
  } else if (const json::array* a = value.if_array()) {
    if (const json::object* items = props(schema, "items"))
      for (size_t i = 0; i < a->size(); ++i) check(*items, (*a)[i], path + "[" + std::to_string(i) + "]", out);
  }
}

}  // namespace

const json::value& crd_schema(const std::string& name) {
  static const json::value cluster_policy = json::parse(crd_schema_text("clusterpolicy"));
  static const json::value nvidia_driver = json::parse(crd_schema_text("nvidiadriver"));
  if (name == "clusterpolicy") return cluster_policy;
  if (name == "nvidiadriver") return nvidia_driver;
  throw std::invalid_argument("no CRD schema named " + name);
}

std::vector<InputError::Cause> schema_errors(const json::value& schema, const json::value& value,
                                             const std::string& path) {
  std::vector<Cause> out;
  if (schema.is_object()) check(schema.get_object(), value, path, out);
  return out;
}

namespace {

// The 422 of a custom resource: `<Kind>.nvidia.com "NAME" is invalid: ...`
// with each distinct message once (field.ErrorList.ToAggregate) and every
// error a cause. REQUIRES: !errs.empty().
[[noreturn]] void throw_invalid(const char* group_kind, const std::string& name, std::vector<Cause> errs) {
  std::vector<std::string> texts;
  texts.reserve(errs.size());
  for (const auto& c : errs) texts.push_back(c.field + ": " + c.message);
  // An error on no field ("<nil>") leaves field() empty: the message has it.
  InputError e = InputError::with_status(
      422, "", 0, errs[0].field == "<nil>" ? "" : errs[0].field,
      std::string(group_kind) + " \"" + name + "\" is invalid: " + codec_internal::aggregate(texts));
  e.causes = std::move(errs);
  throw e;
}

// spec.<key> as stored: the value, else the schema's default (the API
// server stores defaulted objects; gpuops keeps them as written), else
// null.
json::value stored_value(const json::value& schema, const json::object* spec, std::string_view key) {
  if (spec)
    if (const json::value* v = spec->if_contains(key); v && !v->is_null()) return *v;
  if (const json::object* p = props(schema.as_object(), "properties"))
    if (const json::value* s = p->if_contains(key); s && s->is_object())
      if (const json::value* d = s->get_object().if_contains("default")) return *d;
  return nullptr;
}

}  // namespace

void validate_cluster_policy_spec(const std::string& name, const json::object& raw) {
  const json::value* spec = raw.if_contains("spec");
  if (!spec || spec->is_null()) return;
  std::vector<Cause> errs = schema_errors(crd_schema("clusterpolicy"), *spec, "spec");
  if (!errs.empty()) throw_invalid("ClusterPolicy.nvidia.com", name, std::move(errs));
}

void validate_nvidia_driver_spec(const std::string& name, const json::object& raw, const json::object* old_raw) {
  const json::value* spec = raw.if_contains("spec");
  if (!spec || spec->is_null()) return;
  const json::value& schema = crd_schema("nvidiadriver");
  std::vector<Cause> errs = schema_errors(schema, *spec, "spec");
  if (!errs.empty()) {
    // The CRD has CEL rules, which the API server does not run on an
    // object its schema refused, and says so.
    errs.push_back({"FieldValueInvalid", "<nil>",
                    "Invalid value: null: some validation rules were not checked because the object was invalid; "
                    "correct the existing errors to complete validation"});
    throw_invalid("NVIDIADriver.nvidia.com", name, std::move(errs));
  }
  const json::object* s = spec->if_object();
  // The x-kubernetes-validations of v26.7.0's CRD, the object's rule first,
  // then its properties' (apiextensions-apiserver's CEL validator visits a
  // node's rules before its children's).
  // spec: has(self.default) && self.default ? !has(self.nodeSelector) ||
  //   size(self.nodeSelector) == 0 : true
  const json::value def = stored_value(schema, s, "default");
  if (def.is_bool() && def.get_bool()) {
    const json::value* ns = s ? s->if_contains("nodeSelector") : nullptr;
    if (ns && ns->is_object() && !ns->get_object().empty())
      errs.push_back({"FieldValueInvalid", "spec", "Invalid value: default NVIDIADriver must not use nodeSelector"});
  }
  // spec.driverType and spec.usePrecompiled: self == oldSelf (a transition
  // rule: only on update, only when both the old and the new value exist).
  if (old_raw) {
    const json::value* old_spec_v = old_raw->if_contains("spec");
    const json::object* old_spec = old_spec_v ? old_spec_v->if_object() : nullptr;
    for (const char* key : {"driverType", "usePrecompiled"}) {
      const json::value now = stored_value(schema, s, key), before = stored_value(schema, old_spec, key);
      if (now.is_null() || before.is_null() || now == before) continue;
      errs.push_back({"FieldValueInvalid", std::string("spec.") + key,
                      "Invalid value: " + go_value(now) + ": " + key +
                          " is an immutable field. Please create a new NvidiaDriver resource instead when you want "
                          "to change this setting."});
    }
  }
  if (!errs.empty()) throw_invalid("NVIDIADriver.nvidia.com", name, std::move(errs));
}

}  // namespace gpuops::core
