// simulator/kubelet.h: internal to simulator/. The fake kubelet of every
// node: KWOK's node-initialize stage for new nodes, and for bound pods the
// status a kubelet (generateAPIPodStatus / getPhase) or KWOK's fast pod
// stages would write, in the profile of FakeCluster::Options (see
// KubeletProfile), with the injected faults (see Fault), and the end of
// graceful deletion.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/operands.h"
#include "simulator/cluster_context.h"

namespace gpuops::simulator::internal {

class Kubelet {
 public:
  explicit Kubelet(ClusterContext& c) : c_(c) {}
  Kubelet(const Kubelet&) = delete;
  Kubelet& operator=(const Kubelet&) = delete;

  // A node added or updated (node id `id`): initialize it, re-sync its pods.
  void on_node(uint32_t id);
  // A bound pod added or updated: sync it (not for the kubelet's own writes).
  void on_bound_pod(const PodRecord& pod) {
    if (!writing_) pod_queue.push(pod.id);
  }

  // KWOK node-initialize stage (what a real kubelet's node status sync
  // posts): a node without a Ready status gets the standard conditions
  // (each replacing a status-less Ready, added when its type is absent);
  // without allocatable, cpu 1k, memory 1Ti, pods 1M.
  void initialize_node(const std::string& name);
  // mirrors syncPod, pkg/kubelet/kubelet.go (simplified), for the pod with
  // PodRecord::id `id`: writes its status, or removes it once its graceful
  // deletion is over.
  void sync_pod(uint64_t id);

  // The GPU Operator's validation gates (operator_validation.h) for the
  // operands of `catalog` (the installed operator's; null: none), in the
  // kubelet profile only. The catalog must outlive the kubelet's use.
  void set_validation_gates(const core::Catalog* catalog) { gates_ = catalog; }

  // As FakeCluster::inject_fault, clear_fault, clear_faults.
  int inject_fault(const Fault& fault);
  void clear_fault(int id);
  void clear_faults();

  KeyQueue node_queue;  // nodes to initialize
  PodQueue pod_queue;   // pods to sync

 private:
  const Fault* fault_for(const PodRecord& pod) const;
  // `gated`: set when the status depends on other pods (a validation gate).
  core::PodStatus generate_api_pod_status(const PodRecord& pod, const std::string& key, const Fault* f, bool& timed,
                                          bool& gated);
  // The init containers of a bound pod the validation gates let complete.
  size_t gate(const PodRecord& pod) const;
  void resync_node_pods(const std::string& node);

  ClusterContext& c_;
  bool writing_ = false;  // inside sync_pod's status write
  std::map<int, Fault> faults_;
  int next_fault_ = 1;
  StatusMemo memo_;
  const core::Catalog* gates_ = nullptr;
};

}  // namespace gpuops::simulator::internal
