// What the API server's verbs share: reading request bodies, decoding them
// for the route, the name and namespace checks. Mirrors k8s.io/apiserver
// pkg/endpoints/handlers/rest.go (and the checks of create.go, update.go,
// patch.go).
#include <algorithm>
#include <cstdio>
#include <string_view>
#include <vector>

#include <boost/url/encoding_opts.hpp>
#include <boost/url/params_view.hpp>

#include "core/base/terminal.h"
#include "core/codec/codec.h"
#include "core/codec/documents.h"
#include "core/codec/encode.h"
#include "core/codec/patch.h"
#include "simulator/apiserver/api_server_impl.h"

namespace gpuops::simulator::internal {

namespace json = boost::json;

json::value read_body(const std::string& body) {
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && body[first] == '{') {
    boost::system::error_code ec;
    json::value v = json::parse(body, ec, {}, core::json_parse_options());
    if (ec) throw_api(400, "the object provided is unrecognized: " + ec.message());
    return v;
  }
  std::vector<core::Document> docs;
  try {
    docs = core::read_documents(body, "request body");
  } catch (const core::InputError& e) {
    throw_api(400, "the object provided is unrecognized: " + e.message());
  }
  if (docs.size() != 1)
    throw_api(400, "the object provided is unrecognized: expected one object, got " + std::to_string(docs.size()));
  return docs[0].value;
}

bool decode_elsewhere(const Request& req) {
  namespace http = boost::beast::http;
  const std::string& body = req.body();
  if (body.size() < kDecodeElsewhereBytes) return false;
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || body[first] == '{') return false;
  std::string_view ctype = req[http::field::content_type];
  if (req.method() == http::verb::post || req.method() == http::verb::put)
    return !ctype.starts_with("application/vnd.kubernetes.protobuf");
  return req.method() == http::verb::patch && ctype.starts_with("application/apply-patch+yaml");
}

json::value parse_json(const std::string& body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec, {}, core::json_parse_options());
  if (ec) throw_api(400, "error decoding patch: " + ec.message());
  return v;
}

void check_stored_size(const core::Object& obj) {
  if (json::serialize(core::encode(obj)).size() > kMaxStoredObjectBytes)
    throw ApiError{500, "", "etcdserver: request is too large", {}};
}

core::Object decode_value(const json::value& v, const std::string& file,
                          const std::optional<core::OutOfRangeNumber>& big) {
  core::Document doc;
  doc.value = v;
  doc.file = file;
  doc.out_of_range_number = big;
  return core::decode_manifest(doc);
}

std::optional<core::OutOfRangeNumber> body_out_of_range_number(const ResourceRequest& r) {
  const std::string& body = r.http.body();
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || (body[first] != '{' && body[first] != '[')) return std::nullopt;
  std::optional<core::OutOfRangeNumber> big = core::first_out_of_range_number(body);
  // mirrors the unstructured decoding of a custom resource (encoding/json
  // into interface{}): the whole body is refused before anything else.
  if (big && r.res.custom)
    throw_api(400, std::string(r.res.kind_name) + " in version \"" + r.res.version + "\" cannot be handled as a " +
                       r.res.kind_name + ": json: cannot unmarshal number " + big->literal +
                       " into Go value of type float64");
  return big;
}

core::Object decode_for_route(const ResourceRequest& r, json::value v) {
  json::object& o = v.as_object();
  o["apiVersion"] = api_version(r.res);
  o["kind"] = r.res.kind_name;
  try {
    return decode_value(v, "request body", body_out_of_range_number(r));
  } catch (const core::InputError& e) {
    throw to_api_error(e, &r.res, r.route.name);
  }
}

void check_name(const ResourceRequest& r, const core::ObjectMeta& m) {
  try {
    check_object_name(m.name, r.route.name);
  } catch (const core::InputError& e) {
    throw_api(e.http_status, e.message());
  }
}

void check_identity(const ResourceRequest& r, const json::value& v) {
  try {
    check_patched_identity(v, r.route.name, r.res.custom, r.res.kind_name, api_version(r.res));
  } catch (const core::InputError& e) {
    if (e.http_status != 422) throw_api(e.http_status, e.message());
    // errors.NewInvalid(qualifiedKind, name, errs): the details name the
    // object's own group and kind, as its message does.
    const json::object& o = v.as_object();
    const json::value* av = o.if_contains("apiVersion");
    const json::value* kv = o.if_contains("kind");
    std::string version = av && av->is_string() ? std::string(av->get_string()) : "";
    json::object details;
    details["name"] = r.route.name;
    if (size_t slash = version.find('/'); slash != std::string::npos) details["group"] = version.substr(0, slash);
    details["kind"] = kv && kv->is_string() ? std::string(kv->get_string()) : "";
    json::array causes;
    for (const auto& c : e.causes)
      causes.push_back(json::object{{"reason", c.reason}, {"message", c.message}, {"field", c.field}});
    details["causes"] = std::move(causes);
    throw_api(422, e.message(), std::move(details));
  }
}

void ensure_namespace(const ResourceRequest& r, core::ObjectMeta& m) {
  if (!r.res.namespaced) return;
  if (m.namespace_.empty()) m.namespace_ = r.route.ns;
  if (m.namespace_ != r.route.ns)
    throw_api(400, "the namespace of the provided object does not match the namespace sent on the request");
}

std::vector<std::string> query_values(const ResourceRequest& r, const std::string& k) {
  std::vector<std::string> out;
  boost::urls::encoding_opts opt;
  opt.space_as_plus = true;
  for (auto p : r.url.params(opt))
    if (p.key == k) out.emplace_back(p.has_value ? std::string(p.value) : "");
  return out;
}

void throw_invalid(const std::string& group, const std::string& kind, const std::string& name,
                   const std::vector<FieldError>& errs) {
  // field.ErrorList.ToAggregate: each distinct "<field>: <body>" once, one
  // alone as it is, several as "[a, b]".
  std::vector<std::string> texts;
  json::array causes;
  for (const auto& e : errs) {
    std::string text = e.field + ": " + e.body;
    if (std::find(texts.begin(), texts.end(), text) == texts.end()) texts.push_back(text);
    causes.push_back(json::object{{"reason", e.reason}, {"message", e.body}, {"field", e.field}});
  }
  std::string all;
  for (size_t i = 0; i < texts.size(); ++i) all += (i ? ", " : "") + texts[i];
  if (texts.size() > 1) all = "[" + all + "]";
  json::object details;
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  details["kind"] = kind;
  details["causes"] = std::move(causes);
  const std::string qualified = group.empty() ? kind : kind + "." + group;
  throw_api(422, qualified + " " + core::go_quote(name) + " is invalid: " + all, std::move(details));
}

std::string json_string_list(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + core::go_json_string(values[i]);
  return out + "]";
}

std::vector<FieldError> validate_dry_run(const std::vector<std::string>& dry_run) {
  for (const auto& v : dry_run)
    if (v != "All")
      return {{"FieldValueNotSupported", "dryRun",
               "Unsupported value: " + json_string_list(dry_run) + ": supported values: \"All\""}};
  return {};
}

namespace {

// mirrors ValidateFieldManager (apimachinery pkg/apis/meta/v1/validation):
// at most FieldManagerMaxLength (128) bytes, and every character printable
// (unicode.IsPrint; a byte that is not UTF-8 reads as U+FFFD, which is).
void validate_field_manager(const std::string& manager, std::vector<FieldError>& errs) {
  if (manager.size() > 128)
    errs.push_back({"FieldValueTooLong", "fieldManager", "Too long: may not be more than 128 bytes"});
  std::string_view rest(manager);
  size_t at = 0;
  while (!rest.empty()) {
    auto [r, width] = core::decode_rune(rest);
    if (width == 0)
      width = 1;  // U+FFFD, printable
    else if (!core::go_is_print(r)) {
      char cp[16];
      std::snprintf(cp, sizeof cp, "U+%04X", static_cast<unsigned>(r));
      errs.push_back({"FieldValueInvalid", "fieldManager",
                      "Invalid value: " + core::go_quote(manager) + ": invalid character " + cp + " (at position " +
                          std::to_string(at) + ")"});
    }
    rest.remove_prefix(width);
    at += width;
  }
}

}  // namespace

void validate_write_options(const ResourceRequest& r, const char* kind, bool apply) {
  std::vector<FieldError> errs;
  const std::vector<std::string> managers = query_values(r, "fieldManager");
  const std::string manager = managers.empty() ? "" : managers.front();
  if (std::string(kind) == "PatchOptions") {
    // ValidatePatchOptions: apply needs a field manager; force is for apply
    // only.
    if (apply && manager.empty())
      errs.push_back({"FieldValueRequired", "fieldManager", "Required value: is required for apply patch"});
    if (!apply && !query_values(r, "force").empty())
      errs.push_back({"FieldValueForbidden", "force", "Forbidden: may not be specified for non-apply patch"});
  }
  validate_field_manager(manager, errs);
  for (auto& e : validate_dry_run(query_values(r, "dryRun"))) errs.push_back(std::move(e));
  // ValidateFieldValidation.
  const std::vector<std::string> fv = query_values(r, "fieldValidation");
  if (!fv.empty() && fv.front() != "" && fv.front() != "Ignore" && fv.front() != "Warn" && fv.front() != "Strict")
    errs.push_back({"FieldValueNotSupported", "fieldValidation",
                    "Unsupported value: " + core::go_quote(fv.front()) +
                        ": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""});
  if (!errs.empty()) throw_invalid("meta.k8s.io", kind, "", errs);
}

}  // namespace gpuops::simulator::internal
