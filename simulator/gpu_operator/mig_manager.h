// simulator/gpu_operator/mig_manager.h: internal to simulator/. The MIG manager
// (k8s-mig-manager, the nvidia-mig-manager DaemonSet's main container),
// played in the kubelet profile once the operator is installed, with the
// release's HelperRules (OperatorRules::mig_manager). Mirrors
// NVIDIA/mig-parted cmd/nvidia-mig-manager/main.go (start: a process per
// Running and Ready pod, reconfiguring whenever its node's
// nvidia.com/mig.config changes to a non-empty value it has not read yet,
// the first read included: SyncableMigConfig) and Reconfigure.Run
// (pkg/mig/reconfigure/reconfigure.go, v0.15; reconfigure-mig.sh, v0.12.3):
//  * a config not in the mig-parted file (`configs`): state failed;
//  * the config already applied (NodeHost::mig_config): state success;
//    both through setState, which first writes the `restore_on_exit` keys
//    back through maybeSetTrue (false kept, anything else "true");
//  * else nvidia.com/mig.config.state=pending, the `pause` keys (and
//    `pause_if_set` ones read non-empty) through maybeSetPaused (false kept,
//    anything else, "" included, paused-for-mig-change), the waits
//    (`wait_for`, 5 min each: a time-out with wait_timeout_fails ends the run
//    there, labels paused and the state pending), the nvidia-cuda-validator
//    and nvidia-device-plugin-validator pods deleted, the config applied
//    (NodeHost::mig_apply_fails: state failed through setState), the
//    operator-validator pod deleted (restartValidatorPod), the `restore`
//    keys written back and state success.
// The run stops where it is when the pod goes. Not played: reboots for a
// MIG mode change (WITH_REBOOT), host systemd services, CDI.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "simulator/gpu_operator/helper_labels.h"
#include "simulator/kube/cluster_context.h"

namespace gpuops::simulator::internal {

class MigManager {
 public:
  explicit MigManager(ClusterContext& c) : c_(c) {}
  MigManager(const MigManager&) = delete;
  MigManager& operator=(const MigManager&) = delete;

  // Plays the mig-manager pods of `catalog` (the installed operator's;
  // null: stops) in namespace `ns`. The catalog must outlive the use.
  void install(const core::Catalog* catalog, const std::string& ns);

  // Watches (they only mark work).
  void on_node(EventType type, const core::Node& node);
  void on_pod(EventType type, const PodRecord& pod);

  bool has_work() const { return !queue_.empty(); }
  void run();

 private:
  struct Manager {
    uint64_t pod_id = 0;
    std::string last_read;  // SyncableMigConfig.lastRead
    bool waiting = false;   // a reconfiguration waits for pods to go
    std::string target;
    ReadLabels read;
    WaitCursor wait;
  };
  void reconfigure(const std::string& node, Manager& m);
  void go_on(const std::string& node, Manager& m);
  void set_state(const std::string& node, Manager& m, const std::string& state);
  void delete_pods(const std::string& node, const std::string& app);
  bool is_manager_pod(const PodRecord& pod) const;

  ClusterContext& c_;
  const core::Catalog* catalog_ = nullptr;
  std::string ns_;
  std::unordered_map<std::string, Manager> nodes_;  // by node name
  std::vector<std::string> queue_;
};

}  // namespace gpuops::simulator::internal
