// What the API server's verbs share: reading request bodies, decoding them
// for the route, the name and namespace checks. Mirrors k8s.io/apiserver
// pkg/endpoints/handlers/rest.go (and the checks of create.go, update.go,
// patch.go).
#include <vector>

#include "core/codec/codec.h"
#include "core/codec/documents.h"
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

}  // namespace gpuops::simulator::internal
