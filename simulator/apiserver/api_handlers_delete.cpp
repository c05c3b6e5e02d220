// The delete verb: DELETE of an object, with DeleteOptions (preconditions,
// gracePeriodSeconds) and dryRun. Mirrors k8s.io/apiserver
// pkg/endpoints/handlers/delete.go (DeleteResource: the options from the
// body and the query; a graceful delete answers the object, a finished one a
// Success Status), with the precondition errors of
// pkg/registry/generic/registry/store.go.
#include "core/codec/codec.h"
#include "simulator/apiserver/api_server_impl.h"

namespace gpuops::simulator {

namespace json = boost::json;
using internal::details_for;
using internal::throw_api;

namespace {

// DeleteOptions.preconditions: a uid or resourceVersion that is not the
// object's is 409.
void check_preconditions(const internal::ResourceRequest& r, const json::object& pre, const core::ObjectMeta& m) {
  if (auto* uid = pre.if_contains("uid"); uid && uid->is_string() && uid->as_string() != m.uid)
    throw_api(
        409,
        "Precondition failed: UID in precondition: " + std::string(uid->as_string()) + ", UID in object meta: " + m.uid,
        details_for(&r.res, r.route.name, false));
  if (auto* rv = pre.if_contains("resourceVersion"); rv && rv->is_string() && rv->as_string() != m.resource_version)
    throw_api(409,
              "Precondition failed: ResourceVersion in precondition: " + std::string(rv->as_string()) +
                  ", ResourceVersion in object meta: " + m.resource_version,
              details_for(&r.res, r.route.name, false));
}

}  // namespace

json::value ApiServer::Impl::remove(const ResourceRequest& r, const std::optional<core::Object>& current) {
  const Resource& res = r.res;
  const std::string& name = r.route.name;
  std::string ns = res.namespaced ? r.route.ns : "";
  ObjectStore& store = cluster.store();
  if (r.route.status) internal::throw_method_not_allowed();
  if (!current) internal::throw_not_found(res, name);
  std::optional<int64_t> grace;
  std::string propagation;  // DeleteOptions.propagationPolicy ("" = the kind's default, background)
  json::value opts;
  if (!r.http.body().empty()) opts = internal::parse_json(r.http.body());
  if (auto* o = opts.if_object()) {
    if (auto* g = o->if_contains("gracePeriodSeconds"); g && g->is_int64()) grace = g->as_int64();
    if (auto* pp = o->if_contains("propagationPolicy"); pp && pp->is_string()) propagation = pp->as_string();
    // The deprecated orphanDependents: true is propagationPolicy Orphan.
    if (auto* od = o->if_contains("orphanDependents"); od && od->is_bool() && propagation.empty())
      propagation = od->as_bool() ? "Orphan" : "Background";
    if (auto* pre = o->if_contains("preconditions"); pre && pre->is_object())
      check_preconditions(r, pre->as_object(), meta_of(*current));
  }
  if (!r.param("propagationPolicy").empty()) propagation = r.param("propagationPolicy");
  if (!r.param("gracePeriodSeconds").empty()) {
    try {
      grace = std::stoll(r.param("gracePeriodSeconds"));
    } catch (const std::exception&) {
      throw_api(400, "invalid gracePeriodSeconds");
    }
  }
  std::string uid = meta_of(*current).uid;
  if (r.dry_run) return core::encode(*current);
  try {
    // Propagation applies to owners: of the kinds served, DaemonSets (the
    // garbage collector ignores it for objects without dependents).
    store.remove(res.kind, ns, name, grace, res.kind == Kind::kDaemonSet ? propagation : "");
  } catch (const core::ClusterError& e) {
    throw internal::to_api_error(e, &res, name);
  }
  // Forget applied configurations of the deleted object.
  std::string prefix = internal::object_key(res, ns, name) + "\n";
  for (auto it = applied.lower_bound(prefix); it != applied.end() && it->first.rfind(prefix, 0) == 0;)
    it = applied.erase(it);
  if (auto after = store.get(res.kind, ns, name)) return core::encode(*after);  // graceful
  json::object st;
  st["kind"] = "Status";
  st["apiVersion"] = "v1";
  st["metadata"] = json::object();
  st["status"] = "Success";
  json::object d = details_for(&res, name, false);
  d["uid"] = uid;
  st["details"] = d;
  return st;
}

}  // namespace gpuops::simulator
