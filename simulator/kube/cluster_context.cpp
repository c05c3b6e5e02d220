#include "simulator/kube/cluster_context.h"

#include <set>

#include "core/model/rfc3339.h"

namespace gpuops::simulator::internal {

void Timers::shift(Duration d) {
  std::vector<Timer> all;
  all.reserve(timers_.size());
  while (!timers_.empty()) {
    all.push_back(timers_.top());
    timers_.pop();
  }
  for (Timer& t : all) {
    if (t.period > Duration(0)) t.at += d;
    timers_.push(std::move(t));
  }
}

std::string Timers::description() const {
  auto copy = timers_;
  std::set<std::string> seen;
  std::string s;
  while (!copy.empty() && seen.size() < 5) {
    const Timer& t = copy.top();
    if (seen.insert(t.what).second) s += (s.empty() ? "" : "; ") + t.what + " at " + core::format_time(t.at);
    copy.pop();
  }
  return s;
}

const std::vector<uint32_t>& ClusterContext::stored_node_ids() {
  if (sorted_node_ids_stale) {
    sorted_node_ids.clear();
    for (const auto& [name, n] : store.nodes()) sorted_node_ids.push_back(node_id(name));
    sorted_node_ids_stale = false;
  }
  return sorted_node_ids;
}

}  // namespace gpuops::simulator::internal
