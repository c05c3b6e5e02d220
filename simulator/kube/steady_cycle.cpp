#include "simulator/kube/steady_cycle.h"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>

#include <boost/json/serialize.hpp>

#include "core/codec/encode.h"

namespace gpuops::simulator::internal {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Drops the renewed fields of `v` and below (see steady_cycle_digest).
void strip_times(boost::json::value& v) {
  if (auto* o = v.if_object()) {
    for (auto it = o->begin(); it != o->end();) {
      std::string_view k = it->key();
      if (ends_with(k, "Time") || ends_with(k, "Timestamp") || ends_with(k, "At")) {
        it = o->erase(it);
      } else {
        strip_times(it->value());
        ++it;
      }
    }
  } else if (auto* a = v.if_array()) {
    for (auto& e : *a) strip_times(e);
  }
}

uint64_t digest_of(const core::Object& obj, bool drop_name) {
  boost::json::value v = core::encode(obj);
  if (auto* meta = v.as_object().if_contains("metadata"); meta && meta->is_object()) {
    auto& m = meta->as_object();
    for (const char* k : {"uid", "resourceVersion", "managedFields"}) m.erase(k);
    if (drop_name) m.erase("name");
  }
  strip_times(v);
  return std::hash<std::string>{}(boost::json::serialize(v));
}

}  // namespace

std::vector<uint64_t> steady_cycle_digest(const ObjectStore& store) {
  std::vector<uint64_t> out;
  for (Kind kind : {Kind::kNamespace, Kind::kNode, Kind::kDaemonSet, Kind::kPod, Kind::kControllerRevision,
                    Kind::kClusterPolicy, Kind::kNVIDIADriver}) {
    const size_t first = out.size();
    out.push_back(static_cast<uint64_t>(kind));
    for (const core::Object& obj : store.list(kind)) out.push_back(digest_of(obj, kind == Kind::kPod));
    // Pods as a multiset: their (generated) names order the list.
    if (kind == Kind::kPod) std::sort(out.begin() + static_cast<std::ptrdiff_t>(first) + 1, out.end());
  }
  return out;
}

}  // namespace gpuops::simulator::internal
