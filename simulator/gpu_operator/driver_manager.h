// simulator/gpu_operator/driver_manager.h: internal to simulator/. k8s-driver-manager,
// the `k8s-driver-manager` init container of the GPU Operator's driver (and
// vGPU manager, VFIO manager) pods, played in the kubelet profile once the
// operator is installed, with the release's HelperRules
// (OperatorRules::driver_manager). Mirrors NVIDIA/k8s-driver-manager
// uninstallDriver (cmd/driver-manager/main.go, v0.12) and uninstall_driver
// (the driver-manager script, v0.8.1):
//  * a driver on the host (isHostDriver, NodeHost::Driver::kPreInstalled):
//    labels nvidia.com/gpu.deploy.driver=pre-installed
//    (disableContainerizedDriver), sleeps 60 s and fails; the DaemonSet
//    controller takes the pod away first, its selector no longer matching;
//  * fetchCurrentLabels; with no driver loaded and !evict_without_driver
//    (v0.12): straight to rescheduleGPUOperatorComponents;
//  * evictAllGPUOperatorComponents: the `pause` keys (and `pause_if_set`
//    ones read non-empty) written through maybeSetPaused (true ->
//    paused-for-driver-upgrade, false and "" kept, X -> X_paused-for-...;
//    an absent key is written ""), then waitForPodsToTerminate (`wait_for`,
//    5 min each; a time-out fails the run through cleanupOnFailure when
//    wait_timeout_fails, else it goes on);
//  * the unload: none when no driver is loaded, none when skip_same_config
//    and the loaded driver has this pod's config (shouldSkipUninstall; the
//    pod's controller-revision-hash stands for DRIVER_CONFIG_DIGEST); a
//    driver in use (NodeHost::driver_in_use) cannot be unloaded: the run
//    fails (cleanupOnFailure / _exit_failed: the labels are restored first);
//    else the modules are unloaded;
//  * rescheduleGPUOperatorComponents: the `restore` keys (and
//    `restore_if_set` ones read non-empty) written through maybeSetTrue
//    (false kept, paused-for-driver-upgrade -> true, the suffix stripped; ""
//    stays "": the stamp #491 reports), and the container completes.
// The run stops where it is when its pod is deleted (SIGTERM): labels
// paused until then stay paused (#316, #416), until another run restores
// them. With the stuck-in-init fault the run hangs before the unload,
// after the pause. A driver (or vGPU manager) pod that becomes Ready loads
// the modules (NodeHost::Driver::kLoaded, with its config); they stay
// loaded after the pod goes (the operands still hold them), until a run
// unloads them. Not played: GPU pod eviction and drain (enableGPUPodEviction,
// enableAutoDrain, off by default), nouveau, vfio-pci, MOFED, the DRA
// kubelet plugin's own eviction.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "simulator/gpu_operator/helper_labels.h"
#include "simulator/kube/cluster_context.h"
#include "simulator/kube/kubelet.h"

namespace gpuops::simulator::internal {

class DriverManager : public InitContainerAgent {
 public:
  DriverManager(ClusterContext& c, PodQueue& kubelet_queue) : c_(c), kubelet_queue_(kubelet_queue) {}
  DriverManager(const DriverManager&) = delete;
  DriverManager& operator=(const DriverManager&) = delete;

  // Plays the container for the operands of `catalog` (the installed
  // operator's; null: stops) in namespace `ns`. The catalog must outlive
  // the use.
  void install(const core::Catalog* catalog, const std::string& ns);

  bool runs(const PodRecord& pod, const core::Container& c) const override;
  InitRun progress(const PodRecord& pod, bool hang) override;
  void restart(const PodRecord& pod) override;

  // A pod event: a run whose pod goes stops; runs waiting on the node look
  // again; a driver pod turning Ready loads the driver.
  void on_pod(EventType type, const PodRecord& pod);

  bool has_work() const { return !queue_.empty(); }
  // Moves every queued run as far as it can go now.
  void run();

 private:
  enum class Phase { kStart, kHostDriverSleep, kWaiting, kUnload, kHung, kDone, kFailed };
  struct Run {
    uint64_t pod_id = 0;
    std::string node;
    std::string config;  // the pod's controller-revision-hash
    Phase phase = Phase::kStart;
    bool hang = false;
    ReadLabels read;
    WaitCursor wait;
    int32_t restarts = 0;
    core::Time finished{};
    std::string message;
  };
  void step(Run& r);
  void pause(Run& r);
  void reschedule(Run& r);
  void complete(Run& r);
  void fail(Run& r, std::string message);
  void queue(uint64_t pod_id) { queue_.push_back(pod_id); }

  ClusterContext& c_;
  PodQueue& kubelet_queue_;
  const core::Catalog* catalog_ = nullptr;
  std::string ns_;
  std::unordered_map<uint64_t, Run> runs_;  // by PodRecord::id
  std::vector<uint64_t> queue_;
  // Runs waiting for pods to leave a node, by node name: a pod event there
  // queues them.
  std::unordered_map<std::string, std::vector<uint64_t>> waiting_;
};

}  // namespace gpuops::simulator::internal
