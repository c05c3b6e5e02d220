// simulator/store/object_store_internal.h: what object_store.cpp (storage) and
// object_store_strategy.cpp (what the registry does before storing) share.
// Internal to simulator/store/: included by the object store's files only.
#pragma once

#include <string>

#include <boost/json/object.hpp>

#include "core/base/errors.h"

#include "core/model/model.h"
#include "simulator/store/object_store.h"

namespace gpuops::simulator::internal {

// Lower-case plural resource names, as API errors name them
// ("daemonsets.apps").
const char* resource_name(Kind kind);

// Throws ClusterError 404 "<resource> \"<name>\" not found".
[[noreturn]] void not_found(Kind kind, const std::string& name);

// 409 Conflict when `given` names a resourceVersion other than the stored
// one (an optimistic-concurrency update).
template <class T>
void check_version(const T& given, const T& stored, Kind kind) {
  if (!given.metadata.resource_version.empty() && given.metadata.resource_version != stored.metadata.resource_version)
    throw core::ClusterError(std::string("Operation cannot be fulfilled on ") + resource_name(kind) + " \"" +
                                 stored.metadata.name +
                                 "\": the object has been modified; please apply your changes to "
                                 "the latest version and try again",
                             409);
}

// Fields the client cannot change through an update (BeforeUpdate,
// k8s.io/apiserver pkg/registry/rest/update.go).
template <class T>
void keep_system_meta(T& given, const T& stored) {
  given.metadata.namespace_ = stored.metadata.namespace_;
  given.metadata.uid = stored.metadata.uid;
  given.metadata.creation_timestamp = stored.metadata.creation_timestamp;
  given.metadata.deletion_timestamp = stored.metadata.deletion_timestamp;
  given.metadata.deletion_grace_period_seconds = stored.metadata.deletion_grace_period_seconds;
  given.metadata.generation = stored.metadata.generation;
}

// The raw JSON's `key` ("spec", "status") as stored, over whatever `given`
// carries.
inline void keep_raw(boost::json::object& given, const boost::json::object& stored, const char* key) {
  if (const boost::json::value* v = stored.if_contains(key))
    given[key] = *v;
  else
    given.erase(key);
}

// Replaces what `rec` holds with `pod`, keeping the store's own fields (id,
// created_rv), which are not part of the API object.
void replace_record(PodRecord& rec, core::Pod pod);

}  // namespace gpuops::simulator::internal

namespace gpuops::simulator {

template <class Map>
void ObjectStore::commit_remove(Kind kind, Map& table, typename Map::iterator it) {
  const std::string key = it->first;
  auto obj = std::move(it->second);
  created_rv_.erase(&it->first);
  table.erase(it);
  uint64_t old = std::stoull(obj.metadata.resource_version);
  obj.metadata.resource_version = std::to_string(next_rv());
  index(kind, key, old, 0);
  emit(EventType::kDeleted, obj);
  tombstone(WatchEvent{EventType::kDeleted, kind, rv_, core::Object(std::move(obj))});
}

}  // namespace gpuops::simulator
