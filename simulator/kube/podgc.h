// simulator/kube/podgc.h: internal to simulator/. The pod garbage collector, as
// upstream's pkg/controller/podgc (gcOrphaned): pods bound to a node that
// no longer exists are marked Failed and deleted once the node has been gone
// for the quarantine time. Its 20 s loop runs as timers, only while there is
// work.
#pragma once

#include <map>
#include <set>
#include <string>

#include "simulator/kube/cluster_context.h"

namespace gpuops::simulator::internal {

class PodGC {
 public:
  explicit PodGC(ClusterContext& c) : c_(c) {}
  PodGC(const PodGC&) = delete;
  PodGC& operator=(const PodGC&) = delete;

  // A node deleted (node id `id`): if pods are still bound to it, it is
  // watched from the next tick on.
  void on_node_deleted(uint32_t id);
  // A bound pod added or updated: when its node is absent, that node is
  // watched.
  void on_bound_pod(const PodRecord& pod, const PodInfo& info) {
    if (!c_.node_table[info.bound].node && !c_.unseen_nodes.count(pod.node_name)) {
      missing_nodes_.insert(pod.node_name);
      schedule();
    }
  }

 private:
  void schedule();
  void gc_orphaned();

  ClusterContext& c_;
  std::set<std::string> missing_nodes_;     // nodes gone while pods are bound to them
  std::map<std::string, Time> quarantine_;  // node -> when its quarantine ends
  bool scheduled_ = false;
};

}  // namespace gpuops::simulator::internal
