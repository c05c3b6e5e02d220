#include "core/model/state_index.h"

namespace gpuops::core {

StateIndex::StateIndex(const ClusterState& state) : state_(state) {
  pods_by_node_.reserve(state.nodes.size() + 1);
  for (const auto& p : state.pods) pods_by_node_[p.target_node()].push_back(&p);
  if (state.gpu_workloads)
    for (const auto& p : *state.gpu_workloads) workloads_by_node_[p.target_node()].push_back(&p);
  daemonsets_.reserve(state.daemonsets.size());
  for (const auto& d : state.daemonsets) daemonsets_.emplace(d.metadata.name, &d);  // keeps the first
  nodes_.reserve(state.nodes.size());
  for (const auto& n : state.nodes) nodes_.emplace(n.metadata.name, &n);
}

const std::vector<const Pod*>& StateIndex::pods_on(const std::string& node) const {
  static const std::vector<const Pod*> kNone;
  auto it = pods_by_node_.find(node);
  return it == pods_by_node_.end() ? kNone : it->second;
}

const std::vector<const Pod*>& StateIndex::gpu_workloads_on(const std::string& node) const {
  static const std::vector<const Pod*> kNone;
  auto it = workloads_by_node_.find(node);
  return it == workloads_by_node_.end() ? kNone : it->second;
}

const DaemonSet* StateIndex::daemonset(const std::string& name) const {
  auto it = daemonsets_.find(name);
  return it == daemonsets_.end() ? nullptr : it->second;
}

const Node* StateIndex::node(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second;
}

}  // namespace gpuops::core
