// ObjectStore (simulator/store/object_store.h), the GPU Operator's custom
// resources: ClusterPolicy (nvidia.com/v1) and NVIDIADriver
// (nvidia.com/v1alpha1), both cluster-scoped, both with the status
// subresource. Mirrors apiextensions-apiserver pkg/registry/customresource
// strategy.go: PrepareForCreate (generation 1; with the status subresource
// the status a create carries is dropped), PrepareForUpdate (the main
// resource keeps the stored status, generation bumped when the spec
// changes) and statusStrategy.PrepareForUpdate (the stored spec and
// metadata but labels/annotations kept, the request's status written).
#include "simulator/store/object_store.h"

#include "core/codec/crd_schema.h"
#include "core/gpu_operator/cluster_policy.h"
#include "simulator/store/object_store_internal.h"

namespace gpuops::simulator {

using core::ClusterError;
using internal::check_version;
using internal::keep_raw;
using internal::keep_system_meta;
using internal::not_found;

namespace {

const boost::json::value* spec_of(const boost::json::object& raw) { return raw.if_contains("spec"); }

bool same_spec(const boost::json::object& a, const boost::json::object& b) {
  const auto *x = spec_of(a), *y = spec_of(b);
  if (!x || !y) return !x && !y;
  return *x == *y;
}

// The status fields of each kind: what the main resource keeps and what
// /status writes.
// Both kinds' status is status.state and status.conditions (typed) plus the
// raw "status".
template <class T>
void keep_status(T& given, const T& stored) {
  given.state = stored.state;
  given.conditions = stored.conditions;
  keep_raw(given.raw, stored.raw, "status");
}
void keep_spec(core::ClusterPolicy& given, const core::ClusterPolicy& stored) {
  keep_raw(given.raw, stored.raw, "spec");
}
void keep_spec(core::NVIDIADriver& given, const core::NVIDIADriver& stored) {
  given.driver_type = stored.driver_type;
  given.node_selector = stored.node_selector;
  keep_raw(given.raw, stored.raw, "spec");
}
template <class T>
void clear_status(T& obj) {
  obj.state.clear();
  obj.conditions.clear();
  obj.raw.erase("status");
}

// The CRDs' structural schemas and (NVIDIADriver) CEL rules, as the API
// server's validation of a custom resource answers them (core/codec/crd_schema.h:
// types, enums, minimums, int-or-string, the required spec fields and the
// immutable fields, measured against a v1.37 API server with the
// operator's CRDs, docs/FIDELITY.md). `old`: the stored object of an update
// (null on create).
void validate_custom(const core::ClusterPolicy& cp, const core::ClusterPolicy*) {
  core::validate_cluster_policy_spec(cp.metadata.name, cp.raw);
}
void validate_custom(const core::NVIDIADriver& d, const core::NVIDIADriver* old) {
  core::validate_nvidia_driver_spec(d.metadata.name, d.raw, old ? &old->raw : nullptr);
}

template <class T>
constexpr Kind kind_for() {
  return std::is_same_v<T, core::ClusterPolicy> ? Kind::kClusterPolicy : Kind::kNVIDIADriver;
}

}  // namespace

template <>
std::map<std::string, core::ClusterPolicy>& ObjectStore::custom_table<core::ClusterPolicy>() {
  return cluster_policies_;
}
template <>
std::map<std::string, core::NVIDIADriver>& ObjectStore::custom_table<core::NVIDIADriver>() {
  return nvidia_drivers_;
}

void ObjectStore::check_custom(Kind kind) const {
  if (!gpu_operator_crds_)
    throw ClusterError(
        std::string("the server could not find the requested resource (") + internal::resource_name(kind) + ")", 404);
}

template <class T>
core::Object ObjectStore::create_custom(T obj) {
  // create() has stamped uid and creationTimestamp and checked the name. An
  // imported object was valid under its own cluster's CRD, whatever
  // version that was: it is kept as it is.
  if (!restoring_) {
    validate_custom(obj, static_cast<const T*>(nullptr));
    clear_status(obj);
    obj.metadata.generation = 1;
  } else if (obj.metadata.generation < 1) {
    obj.metadata.generation = 1;
  }
  obj.metadata.resource_version = std::to_string(next_rv());
  auto& table = custom_table<T>();
  auto [slot, fresh] = table.try_emplace(obj.metadata.name);
  (void)fresh;
  created_rv_[&slot->first] = rv_;
  T& stored = slot->second = std::move(obj);
  index(kind_for<T>(), stored.metadata.name, 0, rv_);
  emit(EventType::kAdded, stored);
  return core::Object(stored);
}

template <class T>
core::Object ObjectStore::update_custom(T given, bool status) {
  constexpr Kind kind = kind_for<T>();
  auto& table = custom_table<T>();
  auto it = table.find(given.metadata.name);
  if (it == table.end()) not_found(kind, given.metadata.name);
  T& stored = it->second;
  check_version(given, stored, kind);
  keep_system_meta(given, stored);
  if (status) {
    keep_spec(given, stored);
  } else {
    validate_custom(given, &stored);
    keep_status(given, stored);
    if (!same_spec(given.raw, stored.raw)) given.metadata.generation = stored.metadata.generation + 1;
  }
  uint64_t old = std::stoull(stored.metadata.resource_version);
  given.metadata.resource_version = std::to_string(next_rv());
  index(kind, given.metadata.name, old, rv_);
  stored = std::move(given);
  emit(EventType::kModified, stored);
  return core::Object(stored);
}

template core::Object ObjectStore::create_custom(core::ClusterPolicy);
template core::Object ObjectStore::create_custom(core::NVIDIADriver);
template core::Object ObjectStore::update_custom(core::ClusterPolicy, bool);
template core::Object ObjectStore::update_custom(core::NVIDIADriver, bool);

void ObjectStore::mutate_cluster_policy_status(const std::string& name, const std::string& state,
                                               const std::vector<core::Condition>& conditions) {
  auto it = cluster_policies_.find(name);
  if (it == cluster_policies_.end()) not_found(Kind::kClusterPolicy, name);
  core::ClusterPolicy& cp = it->second;
  cp.state = state;
  cp.conditions = conditions;
  uint64_t old = std::stoull(cp.metadata.resource_version);
  cp.metadata.resource_version = std::to_string(next_rv());
  index(Kind::kClusterPolicy, name, old, rv_);
  emit(EventType::kModified, cp);
}

void ObjectStore::remove_custom(Kind kind, const std::string& name) {
  check_custom(kind);
  auto go = [&](auto& table) {
    auto it = table.find(name);
    if (it == table.end()) not_found(kind, name);
    commit_remove(kind, table, it);
  };
  if (kind == Kind::kClusterPolicy)
    go(cluster_policies_);
  else
    go(nvidia_drivers_);
}

}  // namespace gpuops::simulator
