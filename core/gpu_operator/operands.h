// core/gpu_operator/operands.h: the operand catalog, one data file.
//
// Built-in catalogs (data/operands/*.yaml, compiled into the binary):
//   "lab"          the reference lab's five operands (the default)
//   "gpu-operator" the GPU Operator's full set at v26.7 (docs/reference/gpu-operator.md §1)
//   "gpu-operator-v<line>" the same at v23.9, v24.3, v24.6, v24.9, v25.3, v25.10, v26.3
//                  (core::operator_catalog_name picks one for a release)
// The operator catalogs are generated from each release's assets by
// scripts/catalog-gen.py (docs/OPERATOR.md "Versions are data").
// A user can pass their own file with the same shape:
//
//   operands:
//     - name: container-toolkit                  # operand name (roster, audit)
//       label: nvidia.com/gpu.deploy.container-toolkit
//       daemonset: nvidia-container-toolkit-daemonset
//       app: nvidia-container-toolkit-daemonset # pod `app` label
//       column: toolkit                          # matrix column
//       image: nvcr.io/nvidia/k8s/container-toolkit:v1.16.2   # optional
//       memory: 128Mi                            # optional request
//       manifest: toolkit-ds.yaml                # optional lab file name
//       container: toolkit                       # optional container name
//       workload_configs: [container]            # optional
//       gates: [driver-validation]               # optional init containers
//       needs: [driver]                          # optional ordering (diagnose)
//       component: nvidia-driver                 # optional app.kubernetes.io/component
//
// Top-level keys besides `operands`: `audit` (below), `version`, the GPU
// Operator release line the catalog describes ("v26.7"; rules that differ
// between releases read it, core/gpu_operator/gpu_node_rules.h), and `operator`, the
// release's rules the simulated operator follows (OperatorRules below; each
// operand's rendering keys are in Operand).
//
// Order in the file is roster order, which is the audit's operand order.
#pragma once

#include <string>
#include <vector>

#include "core/base/errors.h"

namespace gpuops::core {

struct Operand {
  std::string name;
  std::string label;
  std::string daemonset;
  std::string app;
  std::string column;
  std::string image;
  std::string memory;
  std::string manifest;   // lab file name under k8s/ (e.g. toolkit-ds.yaml)
  std::string container;  // container name in the rendered DaemonSet
  std::vector<std::string> workload_configs;
  std::vector<std::string> gates;
  std::vector<std::string> needs;
  // The app.kubernetes.io/component value that identifies the operand's
  // DaemonSets whatever their names, in operator mode (core/gpu_operator/operator_install.h):
  // "nvidia-driver" for every driver variant. Empty: by name only.
  std::string component;

  // How the simulated GPU Operator renders the operand's DaemonSet
  // (simulator/gpu_operator/operator_object_controls.h), from the release's assets
  // (assets/<state>/*daemonset*.yaml of NVIDIA/gpu-operator, reference/
  // gpu-operator.md §1 and §4). All optional:
  //   state: state-device-plugin          # the asset state, as status messages name it
  //   selector: {app: nvidia-vfio-manager} # spec.selector.matchLabels (default {app: <app>})
  //   pod_labels: {app.kubernetes.io/part-of: nvidia-gpu}  # template labels besides selector and component
  //   node_selector: {nvidia.com/mps.capable: "true"}      # besides <label>: "true"
  //   update_strategy: OnDelete           # default RollingUpdate (maxUnavailable 1)
  //   runtime_class: true                 # runtimeClassName: nvidia
  //   host_paths: {host-root: /, driver-install-dir: /run/nvidia/driver}
  //                                       # the asset's hostPath volumes a ClusterPolicy field moves
  //                                       # (simulator/gpu_operator/operator_host_paths.h); absolute paths
  std::string state;
  std::vector<std::pair<std::string, std::string>> selector;
  std::vector<std::pair<std::string, std::string>> pod_labels;
  std::vector<std::pair<std::string, std::string>> node_selector;
  std::string update_strategy;
  bool runtime_class = false;
  std::vector<std::pair<std::string, std::string>> host_paths;
};

// A deploy label the operator sets without an operand DaemonSet of its own
// (v26.7: nvidia.com/gpu.deploy.client, a nodeSelector key for third-party
// GPU clients), catalog key `state_labels: [{label, workload_configs}]`.
struct StateLabel {
  std::string label;
  std::vector<std::string> workload_configs;
};

// Why a node update wakes the operator's node labelling: the predicates of
// addWatchNewGPUNode (v25.3, clusterpolicy_controller.go) and
// getNodeLabelUpdateReasons (v26.7, nodelabeling_controller.go), spelled
// gpu-label-missing (NFD GPU label, no gpu.present=true), gpu-label-outdated
// (gpu.present=true, no NFD GPU label), gpu-present-changed,
// mig-manager-label-missing (MIG-capable, no mig-manager key),
// mig-capable-changed, operands-changed (gpu.deploy.operands=false flipped),
// workload-config-changed, ostree-changed, driver-owner-changed.
enum class NodeWatchReason {
  kGpuLabelMissing,
  kGpuLabelOutdated,
  kGpuPresentChanged,
  kMigManagerLabelMissing,
  kMigCapableChanged,
  kOperandsChanged,
  kWorkloadConfigChanged,
  kOstreeChanged,
  kDriverOwnerChanged,
};

// A pod the helpers below wait for to leave the node (catalog: an `app`
// label value as a string, or a map {app | selector_key, if_set}):
// `app`: the pods labelled app=<app> in the operator's namespace;
// `selector_key`: the pods whose nodeSelector has that key (third-party GPU
// clients of nvidia.com/gpu.deploy.client); `if_set`: waited for only when
// that node label had a non-empty value when the helper read the labels.
struct HelperWait {
  std::string app;
  std::string selector_key;
  std::string if_set;
};

// An operand helper that pauses deploy labels on a node while it changes
// the GPU under them, then restores them (catalog keys
// `operator.driver_manager`, k8s-driver-manager's uninstall_driver, and
// `operator.mig_manager`, the MIG manager's reconfigure; every key
// optional, full label keys):
//   pause: [nvidia.com/gpu.deploy.operator-validator, ...]  # read, then written paused (an absent key as "")
//   pause_if_set: [nvidia.com/gpu.deploy.mig-manager]      # the same, only when read non-empty
//   restore: [...]          # written back after the change (default: pause)
//   restore_if_set: [...]   # (default: pause_if_set)
//   restore_on_exit: [...]  # mig-manager: written back when it stops early, failed or done at once (default: restore)
//   wait_for: [nvidia-operator-validator, {app: nvidia-mig-manager, if_set: nvidia.com/gpu.deploy.mig-manager}]
//                           # HelperWait, in order, up to 5 minutes each
//   wait_timeout_fails: true     # a wait that times out fails the helper (else it goes on)
//   evict_without_driver: true   # driver-manager: pauses even when no driver is loaded (v0.8.1 always
//                                # evicts; v0.12 skips eviction when /sys/module/nvidia is absent)
//   skip_same_config: true       # driver-manager: no unload when the loaded driver has this pod's config
//                                # (v0.12 DRIVER_CONFIG_DIGEST)
//   configs: [all-disabled, ...] # mig-manager: the config names of the mig-parted file (assets/state-mig-manager)
// The label values follow each tool's maybeSetPaused/maybeSetTrue, in code
// (simulator/gpu_operator/driver_manager.h, simulator/gpu_operator/mig_manager.h).
struct HelperRules {
  std::vector<std::string> pause, pause_if_set, restore, restore_if_set, restore_on_exit;
  std::vector<HelperWait> wait_for;
  bool wait_timeout_fails = false;
  bool evict_without_driver = false;
  bool skip_same_config = false;
  std::vector<std::string> configs;
  bool empty() const { return pause.empty() && pause_if_set.empty(); }
};

// What the simulated operator of a release does (catalog key `operator`,
// a map; every key optional):
//   reconcile_order: [driver, container-toolkit, ...]   # state order (ClusterPolicyController.init); default catalog
//   order state_labels: [{label, workload_configs}]           # StateLabel empty_label_is_absent: true    #
//   addGPUStateLabels sets "true" on a "" value too (v26.7); else any value is kept labels_need_gpu_present: true  #
//   every deploy label is removed from a node without gpu.present=true (v26.7
//                                  # updateGPUStateLabels); before, only on the gpu.present true -> false turn
//   relabel_on_daemonset_events: true  # node labels are reconciled on every event of an owned DaemonSet (v25.3:
//                                      # labelGPUNodes runs in the ClusterPolicy reconcile, which watches them)
//   node_label_watch: [gpu-label-missing, ...]          # NodeWatchReason
//   driver_manager_image: nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.8.1  # the Helm default
//   driver_manager: {...}  # HelperRules of the release's k8s-driver-manager
//   mig_manager: {...}     # HelperRules of the release's k8s-mig-manager
struct OperatorRules {
  std::string driver_manager_image;
  HelperRules driver_manager;
  HelperRules mig_manager;
  std::vector<std::string> reconcile_order;
  std::vector<StateLabel> state_labels;
  bool empty_label_is_absent = false;
  bool labels_need_gpu_present = false;
  bool relabel_on_daemonset_events = false;
  std::vector<NodeWatchReason> node_label_watch;
};

struct Catalog {
  std::vector<Operand> operands;
  // Which labelled operands the audit checks (catalog key `audit`):
  //   labelled (default, the lab's contract, LAB.md step 6): every operand whose
  //     deploy label is "true" on the node;
  //   deployed (the full GPU Operator set): only those whose DaemonSet exists in
  //     the namespace and whose nodeSelector's other keys match the node, since
  //     the ClusterPolicy deploys an operand only when it is enabled and some
  //     operands select on more than the deploy label (MPS also needs
  //     nvidia.com/mps.capable=true; docs/reference/gpu-operator.md §2.3).
  bool audit_deployed_only = false;
  // Catalog key `version`: "v25.3", "v26.7"; empty for a catalog that names
  // none (the lab's, a user's): the newest release's rules apply.
  std::string version;
  // Not a catalog key: set by the caller when the state is a GPU Operator
  // install (core::detect_operator_install). Then an operand counts only when
  // its pod is Running and Ready, and its DaemonSets are recognised by
  // component as well as by name (core/analysis/analysis.h, core/gpu_operator/operator_install.h).
  bool operator_mode = false;
  // Catalog key `operator` (OperatorRules above): the release's rules.
  OperatorRules rules;

  // nullptr if absent.
  const Operand* by_name(const std::string& name) const;
  const Operand* by_daemonset(const std::string& ds_name) const;
  const Operand* by_label(const std::string& label_key) const;
  // The operand names in catalog order, comma-separated ("driver,
  // container-toolkit, ..."), for error messages.
  std::string names() const;
};

// Parses a catalog from YAML text. Throws InputError naming `file`, the line
// and the field: a missing `name`/`label`/`daemonset`, a duplicate name or
// column, an unknown key, no operand at all, a `label` that is not a valid
// label key (IsQualifiedName), a `needs` or `operator.reconcile_order` entry that
// is not an operand of the catalog, a label map that is not a map of
// strings, an update_strategy other than RollingUpdate or OnDelete.
Catalog parse_catalog(const std::string& text, const std::string& file);

// "lab", "gpu-operator", or a path to a file. Throws InputError for an unknown
// name or an unreadable/invalid file.
Catalog load_catalog(const std::string& name_or_path);

// The built-in catalog text for "lab" or "gpu-operator" (empty if unknown).
std::string builtin_catalog_text(const std::string& name);

}  // namespace gpuops::core
