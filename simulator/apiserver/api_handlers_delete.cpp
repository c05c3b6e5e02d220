// The delete verb: DELETE of an object, with DeleteOptions (preconditions,
// gracePeriodSeconds) and dryRun. Mirrors k8s.io/apiserver
// pkg/endpoints/handlers/delete.go (DeleteResource: the options from the
// body and the query; a graceful delete answers the object, a finished one a
// Success Status), with the precondition errors of
// pkg/registry/generic/registry/store.go.
#include <optional>
#include <string>
#include <vector>

#include "core/base/terminal.h"
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

// mirrors ValidateDeleteOptions (apimachinery pkg/apis/meta/v1/validation/
// validation.go), which the delete handler runs before it deletes: 422
// Invalid naming DeleteOptions.meta.k8s.io. The policy's value is a
// *DeletionPropagation, which a field error writes as JSON.
void validate_delete_options(const std::optional<std::string>& propagation, const std::optional<bool>& orphan,
                             const std::vector<std::string>& dry_run) {
  std::vector<internal::FieldError> errs;
  if (propagation && orphan)
    errs.push_back({"FieldValueInvalid", "propagationPolicy",
                    "Invalid value: " + core::go_json_string(*propagation) +
                        ": orphanDependents and deletionPropagation cannot be both set"});
  if (propagation && *propagation != "Foreground" && *propagation != "Background" && *propagation != "Orphan")
    errs.push_back({"FieldValueNotSupported", "propagationPolicy",
                    "Unsupported value: " + core::go_json_string(*propagation) +
                        ": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""});
  for (auto& e : internal::validate_dry_run(dry_run)) errs.push_back(std::move(e));
  if (!errs.empty()) internal::throw_invalid("meta.k8s.io", "DeleteOptions", "", errs);
}

}  // namespace

json::value ApiServer::Impl::remove(const ResourceRequest& r, const std::optional<core::Object>& current) {
  const Resource& res = r.res;
  const std::string& name = r.route.name;
  std::string ns = res.namespaced ? r.route.ns : "";
  ObjectStore& store = cluster.store();
  if (r.route.status) internal::throw_method_not_allowed();
  // delete.go reads DeleteOptions from the body when there is one, else
  // from the query (never both).
  std::optional<int64_t> grace;
  std::optional<std::string> propagation;  // propagationPolicy, as given
  std::optional<bool> orphan;              // the deprecated orphanDependents
  std::vector<std::string> dry_run;
  json::value preconditions;
  if (!r.http.body().empty()) {
    json::value opts = internal::parse_json(r.http.body());
    if (auto* o = opts.if_object()) {
      if (auto* g = o->if_contains("gracePeriodSeconds"); g && g->is_int64()) grace = g->as_int64();
      if (auto* pp = o->if_contains("propagationPolicy"); pp && pp->is_string())
        propagation = std::string(pp->as_string());
      if (auto* od = o->if_contains("orphanDependents"); od && od->is_bool()) orphan = od->as_bool();
      if (auto* dr = o->if_contains("dryRun"); dr && dr->is_array())
        for (const auto& v : dr->as_array())
          if (v.is_string()) dry_run.emplace_back(v.as_string());
      if (auto* pre = o->if_contains("preconditions"); pre && pre->is_object()) preconditions = *pre;
    }
  } else {
    if (auto v = internal::query_values(r, "propagationPolicy"); !v.empty()) propagation = v.front();
    if (auto v = internal::query_values(r, "orphanDependents"); !v.empty()) orphan = internal::truthy(v.front());
    dry_run = internal::query_values(r, "dryRun");
    if (!r.param("gracePeriodSeconds").empty()) {
      try {
        grace = std::stoll(r.param("gracePeriodSeconds"));
      } catch (const std::exception&) {
        throw_api(400, "invalid gracePeriodSeconds");
      }
    }
  }
  validate_delete_options(propagation, orphan, dry_run);
  // The registry's Delete: the object, then the preconditions.
  if (!current) internal::throw_not_found(res, name);
  if (preconditions.is_object()) check_preconditions(r, preconditions.as_object(), meta_of(*current));
  // The propagation applied: the policy, else orphanDependents' (true is
  // Orphan), else the kind's default (background).
  std::string policy = propagation ? *propagation : orphan ? (*orphan ? "Orphan" : "Background") : "";
  const bool dry = !dry_run.empty();  // every value is "All"
  std::string uid = meta_of(*current).uid;
  if (dry) return core::encode(*current);
  try {
    // Propagation applies to owners: of the kinds served, DaemonSets (the
    // garbage collector ignores it for objects without dependents).
    store.remove(res.kind, ns, name, grace, res.kind == Kind::kDaemonSet ? policy : "");
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
