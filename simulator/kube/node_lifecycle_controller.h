// simulator/kube/node_lifecycle_controller.h: internal to simulator/. The node
// lifecycle controller, as upstream's pkg/controller/nodelifecycle: it keeps
// the condition and cordon taints of each node in sync, the beta OS and arch
// labels equal to the stable ones, and, when a node's Ready goes from True to
// Unknown, marks the node's pods not Ready.
#pragma once

#include <string>
#include <unordered_map>

#include "simulator/kube/cluster_context.h"

namespace gpuops::simulator::internal {

class NodeLifecycleController {
 public:
  explicit NodeLifecycleController(ClusterContext& c) : c_(c) {}
  NodeLifecycleController(const NodeLifecycleController&) = delete;
  NodeLifecycleController& operator=(const NodeLifecycleController&) = delete;

  // A node added or updated: queued for monitor_node.
  void on_node(const std::string& name) { queue.push(name); }
  // A node deleted: its observed Ready status is forgotten.
  void on_node_deleted(const std::string& name) { observed_ready_.erase(name); }

  // mirrors monitorNodeHealth with doNoScheduleTaintingPass and
  // doNoExecuteTaintingPass, and reconcileNodeLabels,
  // pkg/controller/nodelifecycle, for one node.
  void monitor_node(const std::string& name);
  // mirrors reconcileNodeLabels: beta.kubernetes.io/{os,arch} follow
  // kubernetes.io/{os,arch}.
  void reconcile_labels(const std::string& name);

  KeyQueue queue;  // nodes to monitor

 private:
  ClusterContext& c_;
  std::unordered_map<std::string, std::string> observed_ready_;  // node -> Ready status last seen
};

}  // namespace gpuops::simulator::internal
