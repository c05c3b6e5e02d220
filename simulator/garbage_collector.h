// simulator/garbage_collector.h: internal to simulator/. The garbage
// collector, as upstream's pkg/controller/garbagecollector with background
// propagation, for the owner kinds the simulator creates dependents of: when
// a DaemonSet is deleted, its pods are deleted next; when a ClusterPolicy is,
// the DaemonSets it controls (and then their pods).
#pragma once

#include <string>

#include "simulator/cluster_context.h"
#include "simulator/daemon_controller.h"

namespace gpuops::simulator::internal {

class GarbageCollector {
 public:
  // `daemonsets` answers whether an owner still exists.
  GarbageCollector(ClusterContext& c, const DaemonSetController& daemonsets) : c_(c), daemonsets_(daemonsets) {}
  GarbageCollector(const GarbageCollector&) = delete;
  GarbageCollector& operator=(const GarbageCollector&) = delete;

  // A DaemonSet is being deleted: its pods (its state's) are queued.
  void on_owner_deleted(const DaemonSetState& owner) {
    for (const auto& on_node : owner.nodes)
      for (const PodRecord* p : on_node.pods) queue.push(ObjectStore::key(p->namespace_(), p->name));
  }

  // mirrors attemptToDeleteItem, pkg/controller/garbagecollector/garbagecollector.go,
  // for the pod "ns/name": deleted when its controller owner is gone.
  void attempt_to_delete_item(const std::string& key);

  // A ClusterPolicy is deleted: the DaemonSets it controls are queued.
  void on_cluster_policy_deleted(const std::string& uid) {
    for (const auto& [key, d] : c_.store.daemonsets())
      if (const core::OwnerReference* ref = d.metadata.controller_ref(); ref && ref->uid == uid) daemonset_queue.push(key);
  }

  // mirrors attemptToDeleteItem for the DaemonSet "ns/name": deleted when its
  // controller owner (a ClusterPolicy) is gone.
  void attempt_to_delete_daemonset(const std::string& key);

  KeyQueue queue;            // dependent pods to check
  KeyQueue daemonset_queue;  // dependent DaemonSets to check

 private:
  ClusterContext& c_;
  const DaemonSetController& daemonsets_;
};

}  // namespace gpuops::simulator::internal
