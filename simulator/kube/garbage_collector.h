// simulator/kube/garbage_collector.h: internal to simulator/. The garbage
// collector, as upstream's pkg/controller/garbagecollector, for the owner
// kinds the simulator creates dependents of: a DaemonSet (its pods and
// ControllerRevisions), with the three propagation policies, and a
// ClusterPolicy (the DaemonSets it controls, background):
//  * background: the DaemonSet is gone; its dependents are deleted next
//    (attemptToDeleteItem);
//  * foreground: the DaemonSet has a deletionTimestamp and the
//    `foregroundDeletion` finalizer; its dependents (all with
//    blockOwnerDeletion) are deleted, and once none is left the finalizer is
//    removed, which deletes it (processDeletingDependentsItem);
//  * orphan: the DaemonSet has the `orphan` finalizer; the owner reference
//    to it is removed from its dependents, then the finalizer
//    (attemptToOrphan).
#pragma once

#include <string>

#include "simulator/kube/cluster_context.h"
#include "simulator/kube/daemon_controller.h"

namespace gpuops::simulator::internal {

class GarbageCollector {
 public:
  // `daemonsets` answers whether an owner still exists and lists its pods.
  GarbageCollector(ClusterContext& c, const DaemonSetController& daemonsets) : c_(c), daemonsets_(daemonsets) {}
  GarbageCollector(const GarbageCollector&) = delete;
  GarbageCollector& operator=(const GarbageCollector&) = delete;

  // A DaemonSet is gone: its pods (its state's) and its ControllerRevisions
  // are queued.
  void on_owner_deleted(const DaemonSetState& owner);
  // A DaemonSet with a deletionTimestamp was written: queued for its
  // finalizers' work.
  void on_owner_deleting(const core::DaemonSet& owner) {
    owners.push(ObjectStore::key(owner.metadata.namespace_, owner.metadata.name));
  }
  // A pod of `owner` is gone: a foreground deletion may be done.
  void on_dependent_deleted(const DaemonSetState& owner);

  // mirrors attemptToDeleteItem, pkg/controller/garbagecollector/garbagecollector.go,
  // for the pod "ns/name": deleted when it has a controller owner and that
  // owner is gone (a pod without owner references is never collected).
  void attempt_to_delete_item(const std::string& key);
  // The same for the ControllerRevision "ns/name".
  void attempt_to_delete_revision(const std::string& key);
  // The DaemonSet "ns/name" being deleted: mirrors attemptToOrphan (orphan
  // finalizer) and processDeletingDependentsItem (foregroundDeletion),
  // pkg/controller/garbagecollector/garbagecollector.go.
  void process_deleting_owner(const std::string& key);

  // A ClusterPolicy is deleted: the DaemonSets it controls are queued.
  void on_cluster_policy_deleted(const std::string& uid) {
    for (const auto& [key, d] : c_.store.daemonsets())
      if (const core::OwnerReference* ref = d.metadata.controller_ref(); ref && ref->uid == uid)
        daemonset_queue.push(key);
  }

  // mirrors attemptToDeleteItem for the DaemonSet "ns/name": deleted when its
  // controller owner (a ClusterPolicy) is gone.
  void attempt_to_delete_daemonset(const std::string& key);

  KeyQueue queue;            // pods to check
  KeyQueue revisions;        // ControllerRevisions to check
  KeyQueue owners;           // DaemonSets being deleted with a finalizer
  KeyQueue daemonset_queue;  // DaemonSets whose ClusterPolicy was deleted

 private:
  std::vector<std::string> owned_revisions(const std::string& ns, const std::string& uid) const;

  ClusterContext& c_;
  const DaemonSetController& daemonsets_;
};

}  // namespace gpuops::simulator::internal
