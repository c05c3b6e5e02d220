// core/codec/decoder.cpp: codec_internal::Decoder (core/codec/codec_internal.h), the
// typed reads of one document with the API server's 400 and 422 errors, for
// the decoders of core/decode.cpp.
#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/errors.h"
#include "core/codec/codec_internal.h"
#include "core/codec/documents.h"
#include "core/model/quantity.h"
#include "core/model/rfc3339.h"

namespace gpuops::core::codec_internal {

namespace json = boost::json;

const char* json_kind(const json::value& v) {
  switch (v.kind()) {
    case json::kind::bool_: return "bool";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "number";
    case json::kind::string: return "string";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
    case json::kind::null: return "null";
  }
  return "value";
}

Decoder::Decoder(const Document& doc, std::string kind, std::string version, std::string group_kind)
    : doc_(doc), kind_(std::move(kind)), version_(std::move(version)), group_kind_(std::move(group_kind)) {}

void Decoder::type_error(const Path& p, const json::value& v, const char* go_struct, const char* go_type) const {
  throw InputError::with_status(400, doc_.file, doc_.line_of(p.segs()), p.field(),
                                kind_ + " in version \"" + version_ + "\" cannot be handled as a " + kind_ +
                                    ": json: cannot unmarshal " + json_kind(v) + " into Go struct field " + go_struct +
                                    "." + p.go() + " of type " + go_type);
}

void Decoder::invalid(const Path& p, const std::string& detail) const {
  std::string field = p.field();
  throw InputError::with_status(422, doc_.file, doc_.line_of(p.segs()), field,
                                group_kind_ + " \"" + name_ + "\" is invalid: " + field + ": " + detail);
}

void Decoder::invalid_all(const std::vector<FieldError>& errs) const {
  if (errs.empty()) return;
  std::vector<std::string> texts;
  texts.reserve(errs.size());
  for (const auto& fe : errs) texts.push_back(fe.field + ": " + fe.body);
  const std::string agg = aggregate(texts);
  InputError e = InputError::with_status(422, doc_.file, doc_.line_of(errs[0].segs), errs[0].field,
                                         group_kind_ + " \"" + name_ + "\" is invalid: " + agg);
  for (const auto& fe : errs) e.causes.push_back({fe.reason, fe.field, fe.body});
  throw e;
}

void Decoder::set_name(const std::string& n) { name_ = n; }

const json::object* Decoder::object(const json::value* v, const Path& p, const char* st, const char* type) const {
  if (!v || v->is_null()) return nullptr;
  if (!v->is_object()) type_error(p, *v, st, type);
  return &v->as_object();
}
const json::array* Decoder::array(const json::value* v, const Path& p, const char* st, const char* type) const {
  if (!v || v->is_null()) return nullptr;
  if (!v->is_array()) type_error(p, *v, st, type);
  return &v->as_array();
}
std::string Decoder::string(const json::value* v, const Path& p, const char* st) const {
  if (!v || v->is_null()) return "";
  if (!v->is_string()) type_error(p, *v, st, "string");
  return std::string(v->as_string());
}
bool Decoder::boolean(const json::value* v, const Path& p, const char* st) const {
  if (!v || v->is_null()) return false;
  if (!v->is_bool()) type_error(p, *v, st, "bool");
  return v->as_bool();
}
std::optional<int64_t> Decoder::integer(const json::value* v, const Path& p, const char* st, const char* type) const {
  if (!v || v->is_null()) return std::nullopt;
  // A number outside the Go type's range is refused as encoding/json refuses
  // it ("cannot unmarshal number 2147483648 into ... of type int32"); it
  // was cast, and wrapped.
  auto out_of_range = [&]() {
    // An infinity is a number float64 could not hold: its text as written.
    std::string number = json::serialize(*v);
    if (v->is_double() && std::isinf(v->as_double()) && doc_.out_of_range_number &&
        doc_.out_of_range_number->field == p.field())
      number = doc_.out_of_range_number->literal;
    throw InputError::with_status(400, doc_.file, doc_.line_of(p.segs()), p.field(),
                                  kind_ + " in version \"" + version_ + "\" cannot be handled as a " + kind_ +
                                      ": json: cannot unmarshal number " + number + " into Go struct field " + st +
                                      "." + p.go() + " of type " + type);
  };
  int64_t n = 0;
  if (v->is_int64()) {
    n = v->as_int64();
  } else if (v->is_uint64()) {
    if (v->as_uint64() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) out_of_range();
    n = static_cast<int64_t>(v->as_uint64());
  } else if (v->is_double()) {
    double x = v->as_double();
    // [-2^63, 2^63): the range a cast to int64 is defined on.
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) out_of_range();
    n = static_cast<int64_t>(x);
    if (static_cast<double>(n) != x) type_error(p, *v, st, type);
  } else {
    type_error(p, *v, st, type);
  }
  if (std::string_view(type) == "int32" &&
      (n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max()))
    out_of_range();
  return n;
}
Labels Decoder::string_map(const json::value* v, const Path& p, const char* st) const {
  LabelsBuilder out;
  const json::object* o = object(v, p, st, "map[string]string");
  if (!o) return out.take();
  for (const auto& kv : *o) {
    std::string_view key(kv.key());
    std::string_view value;
    if (!kv.value().is_null()) {
      if (!kv.value().is_string()) {
        type_error(p.map_key(key), kv.value(), st, "string");  // Go names the map field, not the key
      }
      value = kv.value().get_string();
    }
    // A key given twice: the last value wins, as in Go's map decoding.
    out.add(std::string(key), std::string(value));
  }
  return out.take();
}
std::optional<Time> Decoder::time(const json::value* v, const Path& p, const char* st) const {
  std::string s = string(v, p, st);
  if (s.empty()) return std::nullopt;
  try {
    return parse_time(s);
  } catch (const std::invalid_argument&) {
    throw InputError::with_status(400, doc_.file, doc_.line_of(p.segs()), p.field(),
                                  kind_ + " in version \"" + version_ + "\" cannot be handled as a " + kind_ +
                                      ": parsing time \"" + s + "\" as RFC3339");
  }
}
Quantity Decoder::quantity(const json::value* v, const Path& p, const char* st) const {
  std::string s;
  if (v && (v->is_int64() || v->is_uint64() || v->is_double())) {
    s = json::serialize(*v);  // a number is a valid quantity in JSON
  } else {
    s = string(v, p, st);
  }
  try {
    return Quantity::parse(s);
  } catch (const QuantityError&) {
    throw InputError::with_status(400, doc_.file, doc_.line_of(p.segs()), p.field(),
                                  kind_ + " in version \"" + version_ + "\" cannot be handled as a " + kind_ +
                                      ": quantities must match the regular expression "
                                      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  }
}

void Decoder::known_fields(const json::object& o, const Path& p, std::initializer_list<const char*> keys) const {
  for (const auto& kv : o) {
    bool ok = false;
    for (const char* k : keys) ok = ok || kv.key() == k;
    if (!ok) {
      Path kp = p.child(std::string_view(kv.key()));
      throw InputError::with_status(400, doc_.file, doc_.line_of(kp.segs()), kp.field(),
                                    "strict decoding error: unknown field \"" + kp.field() + "\"");
    }
  }
}

const Document& Decoder::doc() const { return doc_; }

}  // namespace gpuops::core::codec_internal
