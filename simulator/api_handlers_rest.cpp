// What the API server's verbs share: reading request bodies, decoding them
// for the route, the name and namespace checks. Mirrors k8s.io/apiserver
// pkg/endpoints/handlers/rest.go (and the checks of create.go, update.go,
// patch.go).
#include <vector>

#include "core/codec.h"
#include "simulator/api_server_impl.h"

namespace gpuops::simulator::internal {

namespace json = boost::json;

json::value read_body(const std::string& body) {
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && body[first] == '{') {
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
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

json::value parse_json(const std::string& body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) throw_api(400, "error decoding patch: " + ec.message());
  return v;
}

core::Object decode_value(const json::value& v, const std::string& file) {
  core::Document doc;
  doc.value = v;
  doc.file = file;
  return core::decode_manifest(doc);
}

core::Object decode_for_route(const ResourceRequest& r, json::value v) {
  json::object& o = v.as_object();
  o["apiVersion"] = api_version(r.res);
  o["kind"] = r.res.kind_name;
  try {
    return decode_value(v);
  } catch (const core::InputError& e) {
    throw to_api_error(e, &r.res, r.route.name);
  }
}

void check_name(const ResourceRequest& r, const core::ObjectMeta& m) {
  if (m.name != r.route.name)
    throw_api(400, "the name of the object (" + m.name + ") does not match the name on the URL (" + r.route.name + ")");
}

void ensure_namespace(const ResourceRequest& r, core::ObjectMeta& m) {
  if (!r.res.namespaced) return;
  if (m.namespace_.empty()) m.namespace_ = r.route.ns;
  if (m.namespace_ != r.route.ns)
    throw_api(400, "the namespace of the provided object does not match the namespace sent on the request");
}

}  // namespace gpuops::simulator::internal
