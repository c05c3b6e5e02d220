// simulator/store/pod_json.h: stored pods (PodRecord) to their API JSON, cheaply.
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
// append_serialized() writes the same pod as text without building it: the
// prototype is serialised once (Boost.JSON) with a marker in each per-pod
// slot, cut at the markers, and each pod is the pieces with its own values
// serialised between them. A list page is then its items' text joined, as
// the API server's streaming list encoder writes a list item by item
// (as streamingEncodeList / encodeItemsObjectIterator,
// apimachinery/pkg/runtime/serializer/json/collections.go).
//
// Not thread-safe; callers serialize access (the API server's mutex).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/storage_ptr.hpp>

#include <boost/json/serializer.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/model/model.h"
#include "simulator/store/object_store.h"

namespace gpuops::simulator {

class PodJsonEncoder {
 public:
  // The pod as core::encode(rec.pod()) renders it, allocated from `sp`.
  // REQUIRES: rec.base and rec.status are not null (as in the store).
  boost::json::object encode(const PodRecord& rec, boost::json::storage_ptr sp = {});
  // Appends boost::json::serialize(encode(rec)) to `out`, byte for byte.
  // REQUIRES: as encode().
  void append_serialized(const PodRecord& rec, std::string& out);

  // At most this many prototypes are kept: a new one beyond it drops all
  // the others first. A simulated cluster's pods share a few statuses
  // (a handful of prototypes per DaemonSet); pods imported from a real
  // cluster (serve --snapshot) each have their own, and a paged list of
  // 520,000 of them grew the server by 7 GB without the bound.
  static constexpr size_t kMaxPrototypes = 4096;

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
    // The serialised prototype cut at its per-pod slots: pieces[0],
    // slot[0]'s value, pieces[1], ...; built at the first
    // append_serialized(). `text_ok` false when a marker was not found
    // exactly once (a template carrying the marker's own text): that key
    // is serialised from encode() instead.
    bool text_built = false;
    bool text_ok = false;
    std::vector<std::string> pieces;
    std::vector<unsigned> slots;  // Shape bits, in text order
  };
  using Key = std::tuple<const core::Pod*, const core::PodStatus*, unsigned>;
  Proto& proto(const PodRecord& rec, unsigned shape);
  void build_text(Proto& p, unsigned shape);
  void append_string(std::string& out, std::string_view s);
  std::map<Key, Proto> protos_;
  boost::json::serializer value_writer_;  // reused: one pod's values at a time
};

}  // namespace gpuops::simulator
