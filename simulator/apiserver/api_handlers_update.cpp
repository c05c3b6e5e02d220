// The update verb: PUT of an object or its /status, and the storing of a
// new state that patches go through too. Mirrors k8s.io/apiserver
// pkg/endpoints/handlers/update.go (UpdateResource), with the UID
// precondition of pkg/registry/rest/update.go (defaultUpdatedObjectInfo)
// and the conflict errors of pkg/storage/errors/storage.go.
#include "core/codec/codec.h"
#include "simulator/apiserver/api_server_impl.h"

namespace gpuops::simulator {

namespace json = boost::json;
using internal::details_for;
using internal::qualified;
using internal::throw_api;
using internal::to_api_error;

namespace {

// A uid in the new state that is not the stored object's. A PUT body's uid
// is a precondition (defaultUpdatedObjectInfo.Preconditions,
// apiserver/pkg/registry/rest/update.go), checked by
// storage.Preconditions.Check in the etcd3 store's GuaranteedUpdate as a
// StorageError (invalid object, code 4, the etcd key, ResourceVersion 0),
// which InterpretUpdateError (apiserver/pkg/storage/errors/storage.go)
// makes a 409 Conflict. A patch has no precondition
// (DefaultUpdatedObjectInfo(nil, ...) in handlers/patch.go): the patched uid
// reaches rest.BeforeUpdate, whose validateCommonFields and the kind's
// ValidateUpdate (ValidateNodeUpdate, ValidatePodUpdate,
// ValidateDaemonSetUpdate, ValidateNamespaceUpdate) each run
// ValidateObjectMetaUpdate -> ValidateImmutableField(uid): the same error
// twice in the causes, once in the (deduplicated) message.
[[noreturn]] void refuse_uid(const internal::ResourceRequest& r, const std::string& ns, const std::string& uid,
                             const std::string& old_uid, bool patched) {
  const internal::Resource& res = r.res;
  const std::string& name = r.route.name;
  if (!patched) {
    std::string key = res.kind == Kind::kNode ? "/registry/minions/" + name
                      : res.namespaced        ? "/registry/" + std::string(res.plural) + "/" + ns + "/" + name
                                              : "/registry/" + std::string(res.plural) + "/" + name;
    throw_api(409,
              "Operation cannot be fulfilled on " + qualified(res) + " \"" + name +
                  "\": StorageError: invalid object, Code: 4, Key: " + key +
                  ", ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: " + uid +
                  ", UID in object meta: " + old_uid,
              details_for(&res, name, false));
  }
  std::string body = "Invalid value: \"" + uid + "\": field is immutable";
  json::object cause{{"reason", "FieldValueInvalid"}, {"message", body}, {"field", "metadata.uid"}};
  json::object details = details_for(&res, name, true);
  details["causes"] = json::array{cause, cause};
  throw_api(422, internal::group_kind(res) + " \"" + name + "\" is invalid: metadata.uid: " + body, std::move(details));
}

}  // namespace

json::value ApiServer::Impl::update(const ResourceRequest& r, const std::optional<core::Object>& current) {
  internal::validate_write_options(r, "UpdateOptions", false);
  if (!current) internal::throw_not_found(r.res, r.route.name);
  json::value body = read_request_body(r);
  if (!body.is_object()) throw_api(400, "the object provided is unrecognized");
  internal::check_identity(r, body);  // update.go: checkName, then the strategy's validation
  return store_update(r, current, body, false);
}

json::value ApiServer::Impl::store_update(const ResourceRequest& r, const std::optional<core::Object>& current,
                                          json::value v, bool patched) {
  const Resource& res = r.res;
  const std::string& name = r.route.name;
  std::string ns = res.namespaced ? r.route.ns : "";
  core::Object obj = internal::decode_for_route(r, std::move(v));
  core::ObjectMeta& m = meta_of(obj);
  internal::check_name(r, m);
  internal::ensure_namespace(r, m);
  if (current && !m.uid.empty() && m.uid != meta_of(*current).uid)
    refuse_uid(r, ns, m.uid, meta_of(*current).uid, patched);
  if (r.dry_run) {
    if (!current) internal::throw_not_found(res, name);
    if (!m.resource_version.empty() && m.resource_version != meta_of(*current).resource_version)
      throw_api(409,
                "Operation cannot be fulfilled on " + qualified(res) + " \"" + name +
                    "\": the object has been modified; please apply your changes to the latest version and try again",
                details_for(&res, name, false));
    return core::encode(obj);
  }
  internal::check_stored_size(obj);
  ObjectStore& store = cluster.store();
  try {
    core::Object stored = r.route.status ? store.update_status(obj) : store.update(obj);
    return core::encode(stored);
  } catch (const core::ClusterError& e) {
    throw to_api_error(e, &res, name);
  } catch (const core::InputError& e) {
    throw to_api_error(e, &res, name);
  }
}

}  // namespace gpuops::simulator
