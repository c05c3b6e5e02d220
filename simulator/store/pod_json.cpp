#include "simulator/store/pod_json.h"

#include <boost/json.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/codec/encode.h"
#include "core/model/rfc3339.h"

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

// metadata.name, in every shape (not a Shape bit: a slot id beside them).
constexpr unsigned kName = 0;

// Sets each per-pod slot of `shape` in the prototype copy `o` to
// value(slot), where encode_meta and encode_pod_spec write it (PodRecord::pod),
// in the order the slots are listed here. The one place that knows where the
// slots are: encode() fills them with a pod's values, build_text() with
// markers.
template <class Value>
void set_slots(json::object& o, unsigned shape, const Value& value) {
  json::object& m = at_object(o, "metadata");
  m.at("name") = value(kName);
  if (shape & kUid) m.at("uid") = value(kUid);
  if (shape & kResourceVersion) m.at("resourceVersion") = value(kResourceVersion);
  if (shape & kCreation) m.at("creationTimestamp") = value(kCreation);
  if (shape & kDeletion) m.at("deletionTimestamp") = value(kDeletion);
  if (shape & kGrace) m.at("deletionGracePeriodSeconds") = value(kGrace);
  if (shape & (kNodeName | kPinned)) {
    json::object& spec = at_object(o, "spec");
    if (shape & kNodeName) spec.at("nodeName") = value(kNodeName);
    if (shape & kPinned) {
      // spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
      //   .nodeSelectorTerms[0].matchFields[0].values[0] (pin_terms)
      json::object& req = at_object(at_object(at_object(spec, "affinity"), "nodeAffinity"),
                                    "requiredDuringSchedulingIgnoredDuringExecution");
      json::object& term = req.at("nodeSelectorTerms").as_array().at(0).as_object();
      json::object& field = term.at("matchFields").as_array().at(0).as_object();
      field.at("values").as_array().at(0) = value(kPinned);
    }
  }
}

// A slot's marker: a string no modelled value holds (control characters,
// which the serialiser escapes); build_text checks that each occurs once.
std::string marker(unsigned slot) { return std::string("\x01gpuops-pod-slot-") + std::to_string(slot) + "\x01"; }

}  // namespace

PodJsonEncoder::Proto& PodJsonEncoder::proto(const PodRecord& rec, unsigned shape) {
  Key key{rec.base.get(), rec.status.get(), shape};
  auto it = protos_.find(key);
  if (it == protos_.end()) {
    // Bounded: pods imported from a real cluster each have a status of
    // their own, so a list of them would keep one prototype per pod
    // (about 14 KB each: 7 GB over 520,000 pods, on top of the store).
    if (protos_.size() >= kMaxPrototypes) protos_.clear();
    // The first pod of this key is its own prototype; the fields set below
    // overwrite its per-pod values with the same ones.
    Proto p;
    p.base = rec.base;
    p.status = rec.status;
    p.json = core::encode(rec.pod());
    it = protos_.emplace(key, std::move(p)).first;
  }
  return it->second;
}

json::object PodJsonEncoder::encode(const PodRecord& rec, json::storage_ptr sp) {
  unsigned shape = shape_of(rec);
  json::object o(proto(rec, shape).json, std::move(sp));
  // Each value built in `o`'s storage, so that setting it moves it.
  const json::storage_ptr& st = o.storage();
  auto str = [&](std::string_view v) { return json::value(json::string_view(v.data(), v.size()), st); };
  set_slots(o, shape, [&](unsigned slot) -> json::value {
    switch (slot) {
      case kName: return str(rec.name);
      case kUid: return str(rec.uid);
      case kResourceVersion: return str(std::to_string(rec.resource_version));
      case kCreation: return str(core::format_time(*rec.creation_timestamp));
      case kDeletion: return str(core::format_time(*rec.deletion_timestamp));
      case kGrace: return json::value(*rec.deletion_grace_period_seconds, st);
      case kNodeName: return str(rec.node_name);
      default: return str(rec.pinned_node);  // kPinned
    }
  });
  return o;
}

void PodJsonEncoder::build_text(Proto& p, unsigned shape) {
  p.text_built = true;
  // The prototype with each present slot's value replaced by its marker
  // (deletionGracePeriodSeconds, a number, too: only its text is looked for).
  json::object o = p.json;
  std::vector<std::pair<std::string, unsigned>> quoted;  // (marker as serialised, slot)
  set_slots(o, shape, [&](unsigned slot) -> json::value {
    std::string mark = marker(slot);
    quoted.emplace_back(json::serialize(json::string_view(mark)), slot);
    return json::string(mark);
  });
  std::string text = json::serialize(o);
  std::vector<std::pair<size_t, size_t>> at;  // (offset, index in quoted)
  for (size_t i = 0; i < quoted.size(); ++i) {
    size_t pos = text.find(quoted[i].first);
    if (pos == std::string::npos || text.find(quoted[i].first, pos + 1) != std::string::npos)
      return;  // text_ok stays false
    at.emplace_back(pos, i);
  }
  std::sort(at.begin(), at.end());
  size_t from = 0;
  for (auto [pos, i] : at) {
    p.pieces.push_back(text.substr(from, pos - from));
    p.slots.push_back(quoted[i].second);
    from = pos + quoted[i].first.size();
  }
  p.pieces.push_back(text.substr(from));
  p.text_ok = true;
}

void PodJsonEncoder::append_string(std::string& out, std::string_view s) {
  value_writer_.reset(json::string_view(s.data(), s.size()));
  char buf[512];
  while (!value_writer_.done()) {
    json::string_view part = value_writer_.read(buf, sizeof buf);
    out.append(part.data(), part.size());
  }
}

void PodJsonEncoder::append_serialized(const PodRecord& rec, std::string& out) {
  unsigned shape = shape_of(rec);
  Proto& p = proto(rec, shape);
  if (!p.text_built) build_text(p, shape);
  if (!p.text_ok) {
    out += json::serialize(encode(rec));
    return;
  }
  out += p.pieces[0];
  for (size_t i = 0; i < p.slots.size(); ++i) {
    // The values encode() sets (as text: no json::value built per pod),
    // serialised as the serialiser writes them.
    switch (p.slots[i]) {
      case kName: append_string(out, rec.name); break;
      case kUid: append_string(out, rec.uid); break;
      case kResourceVersion: append_string(out, std::to_string(rec.resource_version)); break;
      case kCreation: append_string(out, core::format_time(*rec.creation_timestamp)); break;
      case kDeletion: append_string(out, core::format_time(*rec.deletion_timestamp)); break;
      case kGrace: out += json::serialize(json::value(*rec.deletion_grace_period_seconds)); break;
      case kNodeName: append_string(out, rec.node_name); break;
      case kPinned: append_string(out, rec.pinned_node); break;
    }
    out += p.pieces[i + 1];
  }
}

}  // namespace gpuops::simulator
