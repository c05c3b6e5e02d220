// core/gpu_node_rules.h: the GPU Operator's node rules: which nodes are GPU
// nodes, their workload config, which deploy labels the operator sets on
// them, and what a deploy label's value means.
//
// Upstream: gpu-operator controllers/state_manager.go (labelGPUNodes and its
// helpers gpuNodeLabels/hasGPULabels, getWorkloadConfig, gpuStateLabels,
// hasMIGCapableGPU; v26.7 moves the writes to controllers/
// nodelabeling_controller.go), and the helpers that rewrite deploy label
// values (k8s-driver-manager, mig-manager, vgpu-device-manager). Rules are
// summarised in reference/gpu-operator.md §2 and R1-R8. Pure functions of a
// core::Node (and an operand Catalog); none throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/operands.h"

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

// The value of label `key` on the node, nullopt when the key is absent.
std::optional<std::string> node_label(const Node& node, const std::string& key);

// How the operator and its helpers write a deploy label value
// (reference/gpu-operator.md §2.5, §2.8, R3).
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

}  // namespace gpuops::core
