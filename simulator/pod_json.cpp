#include "simulator/pod_json.h"

#include <boost/json.hpp>

#include <string>

#include "core/encode.h"
#include "core/rfc3339.h"

namespace gpuops::simulator {

namespace json = boost::json;

namespace {

// Which optional per-pod fields core::encode writes for this record.
enum Shape : unsigned {
  kUid = 1,
  kResourceVersion = 2,
  kCreation = 4,
  kDeletion = 8,
  kGrace = 16,
  kNodeName = 32,
  kPinned = 64,
};

unsigned shape_of(const PodRecord& r) {
  unsigned s = 0;
  if (!r.uid.empty()) s |= kUid;
  if (r.resource_version) s |= kResourceVersion;
  if (r.creation_timestamp) s |= kCreation;
  if (r.deletion_timestamp) s |= kDeletion;
  if (r.deletion_grace_period_seconds) s |= kGrace;
  if (!r.node_name.empty()) s |= kNodeName;
  if (!r.pinned_node.empty()) s |= kPinned;
  return s;
}

json::object& at_object(json::object& o, const char* key) { return o.at(key).as_object(); }

}  // namespace

json::object PodJsonEncoder::encode(const PodRecord& rec, json::storage_ptr sp) {
  unsigned shape = shape_of(rec);
  Key key{rec.base.get(), rec.status.get(), shape};
  auto it = protos_.find(key);
  if (it == protos_.end()) {
    // The first pod of this key is its own prototype; the fields set below
    // overwrite its per-pod values with the same ones.
    it = protos_.emplace(key, Proto{rec.base, rec.status, core::encode(rec.pod())}).first;
  }
  json::object o(it->second.json, std::move(sp));
  // What encode_meta and encode_pod_spec write from the per-pod fields
  // (PodRecord::pod), each into the slot the prototype already has.
  json::object& m = at_object(o, "metadata");
  m.at("name") = rec.name;
  if (shape & kUid) m.at("uid") = rec.uid;
  if (shape & kResourceVersion) m.at("resourceVersion") = std::to_string(rec.resource_version);
  if (shape & kCreation) m.at("creationTimestamp") = core::format_time(*rec.creation_timestamp);
  if (shape & kDeletion) m.at("deletionTimestamp") = core::format_time(*rec.deletion_timestamp);
  if (shape & kGrace) m.at("deletionGracePeriodSeconds") = *rec.deletion_grace_period_seconds;
  if (shape & (kNodeName | kPinned)) {
    json::object& spec = at_object(o, "spec");
    if (shape & kNodeName) spec.at("nodeName") = rec.node_name;
    if (shape & kPinned) {
      // spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
      //   .nodeSelectorTerms[0].matchFields[0].values[0] (pin_terms)
      json::object& req = at_object(at_object(at_object(spec, "affinity"), "nodeAffinity"),
                                    "requiredDuringSchedulingIgnoredDuringExecution");
      json::object& term = req.at("nodeSelectorTerms").as_array().at(0).as_object();
      json::object& field = term.at("matchFields").as_array().at(0).as_object();
      field.at("values").as_array().at(0) = rec.pinned_node;
    }
  }
  return o;
}

}  // namespace gpuops::simulator
