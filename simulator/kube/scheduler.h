// simulator/kube/scheduler.h: internal to simulator/. The scheduler, as upstream's
// pkg/scheduler with the default profile: a queue of unbound pods, the
// scheduler cache (each node's bound, non-terminal pods' requests), the
// filter plugins below run in the default profile's order, the DefaultBinder,
// and for a pod that fits nowhere PodScheduled=False/Unschedulable with the
// FitError message.
//
// Filter plugins modelled, one function each: NodeUnschedulable,
// TaintToleration, NodeAffinity (with its PreFilter, which narrows a pinned
// pod to its node), NodeResourcesFit. (NodeName is not modelled: a pod with
// spec.nodeName never reaches the scheduler, so it would always pass.)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "simulator/kube/cluster_context.h"

namespace gpuops::simulator::internal {

// ---- filter plugins (pkg/scheduler/framework/plugins). Each returns the
// failure reason of its Filter, null when the node passes.

// mirrors NodeUnschedulable.Filter, plugins/nodeunschedulable: a cordoned
// node, unless the pod tolerates node.kubernetes.io/unschedulable:NoSchedule.
const char* node_unschedulable_filter(const core::PodSpec& spec, const core::Node& node);
// mirrors TaintToleration.Filter, plugins/tainttoleration: a NoSchedule or
// NoExecute taint the pod does not tolerate.
const char* taint_toleration_filter(const core::PodSpec& spec, const core::Node& node);
// mirrors NodeAffinity.Filter, plugins/nodeaffinity: nodeSelector and
// required node affinity.
const char* node_affinity_filter(const PodRecord& pod, const core::Node& node);
// mirrors NodeResourcesFit.Filter (fitsRequest), plugins/noderesources:
// appends one reason per insufficient resource ("Too many pods",
// "Insufficient <name>") to `reasons`, given the node's usage `u` and the
// pod's requests `req`.
void node_resources_fit_filter(const core::Node& node, const Usage& u, const Amounts& req,
                               std::vector<std::string>& reasons);

// mirrors PodRequests (computePodResourceRequest), pkg/api/v1/resource: the
// sum of the containers' requests (each defaulted to its limit as the API
// server does), raised to any single init container's request.
Amounts pod_requests(const core::PodSpec& spec);

class Scheduler {
 public:
  explicit Scheduler(ClusterContext& c) : c_(c) {}
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // A node event: the pods parked as unschedulable for it (and those with
  // no target node) are queued again.
  void on_node(uint32_t id) { retry_unschedulable(id); }
  // A pod event: keeps the cache; queues a new unbound pod.
  void on_pod(EventType type, const PodRecord& pod, PodInfo& info);

  // mirrors schedulingCycle / ScheduleOne, pkg/scheduler/schedule_one.go,
  // for the pod with PodRecord::id `id`: binds it, or parks it with
  // PodScheduled=False and the FitError message (with DefaultPreemption's
  // PostFilter message appended).
  void schedule_one(uint64_t id);

  // Pods to schedule (not deduplicated; schedule_one is idempotent).
  PodQueue queue;

 private:
  void retry_unschedulable(uint32_t node);
  void account(EventType type, const PodRecord& pod, PodInfo& info);
  const std::shared_ptr<const Amounts>& requests_of(const PodRecord& pod);
  std::vector<std::string> run_filter_plugins(const PodRecord& pod, const core::Node& node, const Usage& u,
                                              const Amounts& req, bool& resolvable);
  void bind(const PodRecord& p, const std::string& node);

  ClusterContext& c_;
  // pod_requests of the last template part asked for.
  std::pair<std::shared_ptr<const core::Pod>, std::shared_ptr<const Amounts>> requests_memo_;
  StatusMemo bind_memo_;
};

}  // namespace gpuops::simulator::internal
