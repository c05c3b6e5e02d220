// simulator/pod_json.h: stored pods (PodRecord) to their API JSON, cheaply.
//
// core::encode(record.pod()) materialises the pod and builds its JSON field by
// field, about 100 K instructions per pod, although most of a pod is its
// shared template part (`base`) and its shared `status`. PodJsonEncoder builds
// that JSON once per (base, status, shape) and, for each pod, copies it and
// sets the per-pod fields (name, uid, resourceVersion, creation and deletion
// times, deletionGracePeriodSeconds, spec.nodeName, the pinned node of the
// node affinity). The shape is which of those optional fields are present, so
// the copy has every key where core::encode would put it: the result is equal
// to core::encode(record.pod()), key order included.
//
// Not thread-safe; callers serialize access (the API server's mutex).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/storage_ptr.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "core/model.h"
#include "simulator/object_store.h"

namespace gpuops::simulator {

class PodJsonEncoder {
 public:
  // The pod as core::encode(rec.pod()) renders it, allocated from `sp`.
  // REQUIRES: rec.base and rec.status are not null (as in the store).
  boost::json::object encode(const PodRecord& rec, boost::json::storage_ptr sp = {});

  // Prototypes kept (one per (base, status, shape) seen since the last clear).
  size_t size() const { return protos_.size(); }
  // Drops every prototype (and the base and status parts they keep alive).
  void clear() { protos_.clear(); }

 private:
  struct Proto {
    // Held so that the addresses in the key are not reused while cached.
    std::shared_ptr<const core::Pod> base;
    std::shared_ptr<const core::PodStatus> status;
    boost::json::object json;
  };
  using Key = std::tuple<const core::Pod*, const core::PodStatus*, unsigned>;
  std::map<Key, Proto> protos_;
};

}  // namespace gpuops::simulator
