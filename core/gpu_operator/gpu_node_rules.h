// core/gpu_operator/gpu_node_rules.h: the GPU Operator's node rules: which nodes are GPU
// nodes, their workload config, which deploy labels the operator sets on
// them, and what a deploy label's value means.
//
// Upstream: gpu-operator controllers/state_manager.go (labelGPUNodes and its
// helpers gpuNodeLabels/hasGPULabels, getWorkloadConfig, gpuStateLabels,
// hasMIGCapableGPU; v26.7 moves the writes to controllers/
// nodelabeling_controller.go), and the helpers that rewrite deploy label
// values (k8s-driver-manager, mig-manager, vgpu-device-manager). Rules are
// summarised in docs/reference/gpu-operator.md §2 and R1-R8. Pure functions of a
// core::Node (and an operand Catalog); none throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::core {

// Label keys the rules read.
inline constexpr const char* kDeployLabelPrefix = "nvidia.com/gpu.deploy.";
inline constexpr const char* kDriverDeployLabel = "nvidia.com/gpu.deploy.driver";
inline constexpr const char* kMigManagerDeployLabel = "nvidia.com/gpu.deploy.mig-manager";
inline constexpr const char* kValidatorDeployLabel = "nvidia.com/gpu.deploy.operator-validator";
// "false" removes every deploy label (R8, removeAllGPUStateLabels).
inline constexpr const char* kOperandsDeployLabel = "nvidia.com/gpu.deploy.operands";
inline constexpr const char* kWorkloadConfigLabel = "nvidia.com/gpu.workload.config";
inline constexpr const char* kGpuPresentLabel = "nvidia.com/gpu.present";
// The driver upgrade controller's per-node state (k8s-operator-libs).
inline constexpr const char* kDriverUpgradeStateLabel = "nvidia.com/gpu-driver-upgrade-state";
// The driver upgrade controller's clocks (k8s-operator-libs pkg/upgrade
// consts.go, DriverName "gpu"): node annotations holding the Unix second a
// wait began, set when the node enters wait-for-jobs-required (only with a
// waitForCompletion timeout) and validation-required, removed ("null") when
// the wait ends. Past validationTimeoutSeconds (600, validation_manager.go)
// the controller sets upgrade-failed.
inline constexpr const char* kUpgradeWaitForPodCompletionStartTimeAnnotation =
    "nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time";
inline constexpr const char* kUpgradeValidationStartTimeAnnotation =
    "nvidia.com/gpu-driver-upgrade-validation-start-time";
inline constexpr int kUpgradeValidationTimeoutSeconds = 600;

// The time in one of those annotations, read as strconv.ParseInt(v, 10, 64)
// does (an optional sign, decimal digits, no spaces). nullopt when the
// annotation is absent or not such a number (the controller logs an error
// and retries; gpuops shows no duration), or when the time is outside years
// 1 to 9999 (RFC 3339's).
std::optional<Time> upgrade_start_time(const Node& node, const char* annotation);

// nvidia.com/gpu.present=true among `labels`: the node is one of the
// operator's GPU nodes (mirrors hasCommonGPULabel, controllers/state_manager.go).
bool has_common_gpu_label(const Labels& labels);

// The value of label `key` on the node, nullopt when the key is absent.
std::optional<std::string> node_label(const Node& node, const std::string& key);

// How the operator and its helpers write a deploy label value
// (docs/reference/gpu-operator.md §2.5, §2.8, R3).
enum class LabelClass {
  kAbsent,
  kTrue,
  kFalse,
  kPreInstalled,            // "pre-installed": host driver (k8s-driver-manager)
  kPausedForDriverUpgrade,  // "paused-for-driver-upgrade" or "<X>_paused-for-driver-upgrade"
  kPausedForMigChange,      // "paused-for-mig-change" (mig-manager)
  kPausedForVgpuChange,     // "paused-for-vgpu-change" (vgpu-device-manager)
  kEmpty,                   // "": stale pause marker
  kOther,                   // anything else ("True", "yes", ...)
};
LabelClass classify_label(const std::optional<std::string>& value);

// The values the operator and its helpers write to a deploy label, the one
// table classify_label reads and the admission policy (admission_policy.h)
// is generated from: an exact value, or (suffix) any value ending with the
// text: k8s-driver-manager's maybeSetPaused writes "<X>_paused-for-driver-
// upgrade" for a value X it does not know (cmd/driver-manager/main.go).
struct WrittenValue {
  const char* text;
  bool suffix;
  LabelClass cls;
};
const std::vector<WrittenValue>& operator_written_values();

// The workload configs the operator reads from nvidia.com/gpu.workload.config
// (getWorkloadConfig, state_manager.go): container, vm-passthrough, vm-vgpu.
// Another value is not an error there: the default workload is used.
const std::vector<std::string>& workload_configs();
bool is_workload_config(const std::string& value);

// The NFD labels of which one "true" makes a GPU node (gpuNodeLabels,
// state_manager.go), as is_gpu_node reads them.
const std::vector<std::string>& nfd_gpu_labels();

// True when one of NFD's feature.node.kubernetes.io/pci-10de.present,
// pci-0302_10de.present or pci-0300_10de.present is "true". Mirrors
// hasGPULabels over gpuNodeLabels (gpu-operator controllers/state_manager.go).
bool is_gpu_node(const Node& node);

// NVIDIA PCI labels of NFD in a form the operator does not recognise, e.g.
// feature.node.kubernetes.io/pci-10de_2330.present (#1469): keys
// feature.node.kubernetes.io/pci-<fields>.present, other than the three of
// is_gpu_node, with a "_"-separated field 10de. Sorted.
std::vector<std::string> unrecognised_nvidia_pci_labels(const Node& node);

// The node's workload config as the operator picks it. Mirrors
// getWorkloadConfig (state_manager.go): the value of
// nvidia.com/gpu.workload.config when it is container, vm-passthrough or
// vm-vgpu, else "container" (sandboxWorkloads.defaultWorkload's default).
// Assumes sandboxWorkloads.enabled when the label is set (the ClusterPolicy is
// not part of the state).
std::string workload_config(const Node& node);

// Mirrors hasMIGCapableGPU (state_manager.go): false when
// nvidia.com/vgpu.host-driver-version is non-empty; else nvidia.com/mig.capable
// == "true" when that label exists; else nvidia.com/gpu.product contains h100,
// a100 or a30 (case-insensitive).
bool has_mig_capable_gpu(const Node& node);

// Deploy label keys the operator sets on a GPU node of this workload config
// (gpuStateLabels, as labelGPUNodes applies them): the labels of catalog
// operands listing the config, without duplicates, in catalog order;
// nvidia.com/gpu.deploy.mig-manager only on a MIG-capable container node
// (has_mig_capable_gpu). Does not check is_gpu_node.
std::vector<std::string> expected_deploy_labels(const Node& node, const Catalog& catalog);

// The GPU resources of a pod: the amounts its containers and init
// containers ask for (requests, else limits: extended resources cannot be
// overcommitted, so a limit alone is the request) of the resources the
// device plugin advertises (k8s-device-plugin): nvidia.com/gpu, its renamed
// shares nvidia.com/gpu.<suffix> (time-slicing or MPS with renameByDefault:
// nvidia.com/gpu.shared) and the MIG resources nvidia.com/mig-<profile> (mixed
// strategy), as "nvidia.com/gpu: 2" joined by ", ". Empty when the pod asks
// for none.
std::string gpu_resources(const Pod& pod);

// A pod holds GPUs: gpu_resources is not empty and the pod is not in a
// terminal phase (Succeeded, Failed).
bool holds_gpu(const Pod& pod);

// ---- the node labeller (labelGPUNodes) ----

inline constexpr const char* kMigConfigLabel = "nvidia.com/mig.config";
inline constexpr const char* kMigConfigStateLabel = "nvidia.com/mig.config.state";
inline constexpr const char* kOstreeVersionLabel = "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION";
inline constexpr const char* kDriverOwnerLabel = "nvidia.com/gpu-operator.driver.owner";

// What of a ClusterPolicy the node labeller reads (ClusterPolicyController.init
// and labelGPUNodes): sandboxWorkloads.enabled, .defaultWorkload, .mode,
// migManager.enabled (IsEnabled default true) and migManager.config.default.
struct LabellerPolicy {
  bool sandbox_enabled = false;
  std::string default_workload = "container";
  std::string sandbox_mode;  // "", "kubevirt", "kata"
  bool mig_manager_enabled = true;
  std::string mig_config_default;  // e.g. "all-disabled"
};

// Mirrors getWorkloadConfig (state_manager.go): "container" when sandbox
// workloads are off; else the node's nvidia.com/gpu.workload.config when it
// is container, vm-passthrough or vm-vgpu; else `default_workload`.
std::string workload_config(const Node& node, bool sandbox_enabled, const std::string& default_workload);

// Mirrors gpuStateLabels[config] through getEffectiveStateLabels
// (state_manager.go): the labels of catalog operands listing `config`, plus
// the catalog's operator.state_labels for it; on vm-passthrough with mode
// "kata" kata-sandbox-device-plugin's label instead of sandbox-device-plugin's
// (when the catalog has both). Without the mig-manager label (added apart).
std::vector<std::string> state_labels(const std::string& config, const std::string& sandbox_mode,
                                      const Catalog& catalog);

// Every key removeAllGPUStateLabels deletes: gpuStateLabels of every config
// (the catalog's deploy labels and state labels) and mig-manager's. Sorted.
std::vector<std::string> all_state_labels(const Catalog& catalog);

// One node's turn of labelGPUNodes (v25.3 state_manager.go; v26.7
// nodelabeling_controller.go reconcileCommonGPULabel + updateGPUStateLabels),
// on `labels` in place; true when they changed:
//  * NFD GPU label and no gpu.present=true: gpu.present=true;
//    gpu.present=true and no NFD GPU label: gpu.present=false and every
//    state label removed;
//  * with gpu.present=true: gpu.deploy.operands=false removes every state
//    label; else the labels of other workload configs go
//    (removeGPUStateLabels), the node's config's are added where the key is
//    absent (or "" with rules.empty_label_is_absent), mig-manager's on a
//    MIG-capable container node without the key, and nvidia.com/mig.config
//    =all-disabled when the policy's default says so and the node has none;
//  * without gpu.present=true and rules.labels_need_gpu_present: every state
//    label removed (v26.7); else nothing.
bool reconcile_gpu_node_labels(Labels& labels, const LabellerPolicy& policy, const Catalog& catalog);

// Whether a node update from `old_labels` to `new_labels` wakes the labeller
// under the catalog's operator.node_label_watch (addWatchNewGPUNode's
// UpdateFunc in v25.3, getNodeLabelUpdateReasons in v26.7).
bool node_update_triggers_labelling(const Labels& old_labels, const Labels& new_labels, const Catalog& catalog);

}  // namespace gpuops::core
