// Which nodes a change touched; see touched_nodes.h.
#include "simulator/store/touched_nodes.h"

#include <algorithm>
#include <vector>

#include "core/base/errors.h"
#include "core/codec/encode.h"

namespace gpuops::simulator {

namespace {

// A DaemonSet without its status and version, to compare across a change.
boost::json::value without_status(core::DaemonSet d) {
  d.status = {};
  d.metadata.resource_version.clear();
  return core::encode(d);
}

}  // namespace

std::optional<std::set<std::string>> touched_nodes(const ObjectStore& store, uint64_t since,
                                                   const core::ClusterState& before) {
  std::vector<WatchEvent> events;
  try {
    events = store.events_since(since);
  } catch (const core::ClusterError&) {
    return std::nullopt;
  }
  std::set<std::string> nodes;
  for (const auto& e : events) {
    if (e.kind == Kind::kNode) {
      nodes.insert(std::get<core::Node>(e.object).metadata.name);
    } else if (e.kind == Kind::kPod) {
      const auto& p = std::get<core::Pod>(e.object);
      if (p.metadata.namespace_ != before.namespace_) continue;
      if (std::string target = p.target_node(); !target.empty()) nodes.insert(target);
    } else if (e.kind == Kind::kDaemonSet) {
      const auto& d = std::get<core::DaemonSet>(e.object);
      if (d.metadata.namespace_ != before.namespace_) continue;
      if (e.type != EventType::kModified) return std::nullopt;
      auto was = std::find_if(before.daemonsets.begin(), before.daemonsets.end(),
                              [&](const core::DaemonSet& b) { return b.metadata.name == d.metadata.name; });
      if (was == before.daemonsets.end() || without_status(*was) != without_status(d)) return std::nullopt;
    }
  }
  return nodes;
}

}  // namespace gpuops::simulator
