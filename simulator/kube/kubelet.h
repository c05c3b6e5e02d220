// simulator/kube/kubelet.h: internal to simulator/. The fake kubelet of every
// node: KWOK's node-initialize stage for new nodes, and for bound pods the
// status a kubelet (generateAPIPodStatus / getPhase) or KWOK's fast pod
// stages would write, in the profile of FakeCluster::Options (see
// KubeletProfile), with the injected faults (see Fault), and the end of
// graceful deletion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "simulator/kube/cluster_context.h"

namespace gpuops::simulator::internal {

// How far the run of an init container whose process the simulator plays
// (InitContainerAgent) has got.
struct InitRun {
  enum State { kRunning, kCompleted, kFailed };
  State state = kRunning;
  int32_t restarts = 0;   // runs before this one (restartCount)
  core::Time finished{};  // kFailed: when it exited
  std::string message;    // kFailed: its last log line (lastState.terminated.message)
};

// An init container whose process the simulator plays (the GPU Operator's
// k8s-driver-manager, driver_manager.h) instead of completing it at once:
// the kubelet asks it how the current run goes when the pod reaches the
// container, and restarts a failed run after the kubelet's back-off.
class InitContainerAgent {
 public:
  virtual ~InitContainerAgent() = default;
  // Whether it plays init container `c` of `pod`.
  virtual bool runs(const PodRecord& pod, const core::Container& c) const = 0;
  // The current run of that container (one is started when there is none).
  // `hang`: the pod has the stuck-in-init fault (the process hangs before
  // its end). Writes nothing itself: the agent works in its own loop turn
  // and queues the pod for the kubelet when the run's state changes.
  virtual InitRun progress(const PodRecord& pod, bool hang) = 0;
  // The kubelet starts the failed container again (a new run, restarts+1).
  virtual void restart(const PodRecord& pod) = 0;
};

// What holds a bound pod's init containers beyond the kubelet itself: a
// node's own validations that must pass before an init container may
// complete (the GPU Operator's validation gates implement it,
// simulator/gpu_operator/operator_validation.h). The kubelet asks it only in
// the kubelet profile, for pods not yet Initialized.
class InitContainerGates {
 public:
  virtual ~InitContainerGates() = default;
  // How many of `pod`'s init containers, from the first, may complete on
  // `node`, whose bound pods are `node_pods`. `host_driver`: the node's
  // machine has a driver installed (NodeHost::Driver::kPreInstalled).
  // `played(c)`: nullopt for a container no InitContainerAgent plays, else
  // whether its run has completed.
  virtual size_t passed(const PodRecord& pod, const core::Node& node, const std::vector<const PodRecord*>& node_pods,
                        bool host_driver,
                        const std::function<std::optional<bool>(const core::Container&)>& played) const = 0;
};

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

  // The gates that hold init containers (null: none), in the kubelet
  // profile only. They must outlive the kubelet's use.
  void set_init_gates(const InitContainerGates* gates) { gates_ = gates; }
  // The agent that plays some init containers (null: none); kubelet profile
  // only. It must outlive the kubelet's use.
  void set_init_agent(InitContainerAgent* agent) { agent_ = agent; }

  // The imported pods (FakeCluster::import_state), the store's pods of ids
  // `first` to `last` (inclusive; ids are never reused), keep the status the
  // real kubelet wrote until they are deleted: the simulator knows nothing
  // of why a real container is not ready.
  void keep_statuses(uint64_t first, uint64_t last) {
    kept_first_ = first;
    kept_last_ = last;
  }

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
  // The init containers of a bound pod the validation gates and the agent
  // let complete; `run`: the agent's run of the next one, when it plays it.
  size_t gate(const PodRecord& pod, std::optional<InitRun>& run);
  void resync_node_pods(const std::string& node);

  ClusterContext& c_;
  bool writing_ = false;  // inside sync_pod's status write
  std::map<int, Fault> faults_;
  int next_fault_ = 1;
  StatusMemo memo_;
  const InitContainerGates* gates_ = nullptr;
  InitContainerAgent* agent_ = nullptr;
  uint64_t kept_first_ = 1, kept_last_ = 0;  // none
};

}  // namespace gpuops::simulator::internal
