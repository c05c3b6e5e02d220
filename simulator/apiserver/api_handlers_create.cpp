// The create verb: POST to a collection. Mirrors k8s.io/apiserver
// pkg/endpoints/handlers/create.go (createHandler: decode the body, the
// namespace check, dryRun, then the registry's Create), with the
// Namespace's PrepareForCreate of pkg/registry/core/namespace/strategy.go.
#include "core/codec/codec.h"
#include "simulator/apiserver/api_proto.h"
#include "simulator/apiserver/api_server_impl.h"

namespace gpuops::simulator {

namespace json = boost::json;
namespace http = boost::beast::http;
using internal::details_for;
using internal::kResources;
using internal::throw_api;
using internal::to_api_error;

json::value ApiServer::Impl::create(const ResourceRequest& r, int& status) {
  const Resource& res = r.res;
  if (r.route.status) internal::throw_method_not_allowed();
  internal::validate_write_options(r, "CreateOptions", false);
  std::string ctype;
  if (auto it = r.http.find(http::field::content_type); it != r.http.end()) ctype = std::string(it->value());
  json::value body;
  if (ctype.rfind("application/vnd.kubernetes.protobuf", 0) == 0) {
    try {
      body = decode_protobuf_object(r.http.body());
    } catch (const core::InputError& e) {
      throw_api(e.http_status, e.message());
    }
  } else {
    body = read_request_body(r);
  }
  // The registry's Create generates a name from metadata.generateName when
  // the name is empty, before the object is validated (rest.BeforeCreate):
  // for every kind served.
  if (json::object* o = body.if_object()) {
    json::value* md = o->if_contains("metadata");
    json::object* mo = md ? md->if_object() : nullptr;
    const json::value* gen = mo ? mo->if_contains("generateName") : nullptr;
    const json::value* name = mo ? mo->if_contains("name") : nullptr;
    if (gen && gen->is_string() && !gen->get_string().empty() &&
        (!name || name->is_null() || (name->is_string() && name->get_string().empty())))
      (*mo)["name"] =
          cluster.store().generate_name(res.kind, res.namespaced ? r.route.ns : "", std::string(gen->get_string()));
  }
  const std::optional<core::OutOfRangeNumber> big =
      ctype.rfind("application/vnd.kubernetes.protobuf", 0) == 0 ? std::nullopt : internal::body_out_of_range_number(r);
  core::Object obj;
  try {
    obj = internal::decode_value(body, "request body", big);
  } catch (const core::InputError& e) {
    std::string name;
    if (auto* m = body.is_object() ? body.as_object().if_contains("metadata") : nullptr)
      if (m->is_object() && m->as_object().if_contains("name") && m->as_object().at("name").is_string())
        name = std::string(m->as_object().at("name").as_string());
    throw to_api_error(e, &res, name);
  }
  if (kind_of(obj) != res.kind)
    throw_api(400, "the API version in the data (" + std::string(body.as_object().at("apiVersion").as_string()) +
                       ") does not match the expected API version (" + internal::api_version(res) + ")");
  core::ObjectMeta& m = meta_of(obj);
  internal::ensure_namespace(r, m);
  if (res.kind == Kind::kNamespace) {
    // PrepareForCreate, pkg/registry/core/namespace: phase Active and
    // the kubernetes finalizer.
    auto& ns = std::get<core::Namespace>(obj);
    ns.raw["status"] = json::object{{"phase", "Active"}};
    ns.raw["spec"] = json::object{{"finalizers", json::array{"kubernetes"}}};
  }
  m.resource_version.clear();
  if (r.dry_run) {
    if (cluster.store().get(res.kind, m.namespace_, m.name))
      throw_api(409, internal::qualified(res) + " \"" + m.name + "\" already exists", details_for(&res, m.name, false));
    status = 201;
    return core::encode(obj);
  }
  json::object out = core::encode(store_create(r, obj));
  status = 201;
  return out;
}

core::Object ApiServer::Impl::store_create(const ResourceRequest& r, const core::Object& obj) {
  internal::check_stored_size(obj);
  try {
    return cluster.store().create(obj);
  } catch (const core::ClusterError& e) {
    // A missing namespace is named as the namespace it is.
    throw to_api_error(e, e.http_status() == 404 ? &kResources[0] : &r.res,
                       e.http_status() == 404 ? r.route.ns : meta_of(obj).name);
  } catch (const core::InputError& e) {
    throw to_api_error(e, &r.res, meta_of(obj).name);
  }
}

}  // namespace gpuops::simulator
