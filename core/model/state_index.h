// core/model/state_index.h: a ClusterState indexed once, for analyses that look at
// every node.
//
// Looking up a node's pods by scanning state.pods costs the whole cluster per
// lookup, so an analysis doing it per (node, operand) pair grows with the
// square of the cluster. The index is built in one pass over the state; after
// that a node's pods cost what the node holds, and a DaemonSet or node by name
// a hash lookup.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/model.h"

namespace gpuops::core {

class StateIndex {
 public:
  // REQUIRES: `state` outlives the index and is not changed while it is used
  // (the index holds pointers into its vectors).
  explicit StateIndex(const ClusterState& state);

  StateIndex(const StateIndex&) = delete;
  StateIndex& operator=(const StateIndex&) = delete;

  const ClusterState& state() const { return state_; }

  // The pods whose Pod::target_node() is `node` (bound to it, or pinned to it
  // by the DaemonSet controller's node affinity), in state order. Pods with no
  // target node are listed under "". Empty when there are none.
  const std::vector<const Pod*>& pods_on(const std::string& node) const;

  // The pods of state.gpu_workloads whose target node is `node`, in state
  // order; empty when there are none or the state has no workloads read.
  const std::vector<const Pod*>& gpu_workloads_on(const std::string& node) const;

  // The first DaemonSet (state order) named `name`, or nullptr.
  const DaemonSet* daemonset(const std::string& name) const;

  // The first node (state order) named `name`, or nullptr.
  const Node* node(const std::string& name) const;

 private:
  const ClusterState& state_;
  std::unordered_map<std::string, std::vector<const Pod*>> pods_by_node_;
  std::unordered_map<std::string, std::vector<const Pod*>> workloads_by_node_;
  std::unordered_map<std::string, const DaemonSet*> daemonsets_;
  std::unordered_map<std::string, const Node*> nodes_;
};

}  // namespace gpuops::core
