// core/diagnose/diagnoser.h: the parts of diagnose() (core/diagnose/diagnose.h) shared by its
// files. Internal to core/diagnose/: included only by its files.
//
// Diagnoser holds one node's diagnosis; its member functions live where
// their rules are: core/diagnose/diagnose.cpp (the per-operand state finding and the
// run), core/diagnose/diagnose_node.cpp (node findings: GPU node recognition, deploy
// labels, readiness, upgrades), core/diagnose/diagnose_labels.cpp (what a deploy
// label's value means), core/diagnose/diagnose_pods.cpp (a pod's state, foreign pods,
// the consistency between operands).
#pragma once

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/analysis/analysis.h"
#include "core/base/errors.h"
#include "core/diagnose/diagnose.h"
#include "core/diagnose/hints.h"
#include "core/diagnose/root_cause.h"
#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/operator_install.h"
#include "core/model/state_index.h"

namespace gpuops::core::diagnose_internal {

inline constexpr const char* kDriverComponentKey = "app.kubernetes.io/component";
inline constexpr const char* kDriverComponent = "nvidia-driver";
inline constexpr const char* kAbsent = "(absent)";
inline constexpr const char* kToolkitDeployLabel = "nvidia.com/gpu.deploy.container-toolkit";
// gpuops' threshold, not upstream's: the pause image and the network plugin's
// ADD take seconds, so a sandbox not up after two minutes has failed at
// least once (kubectl describe pod then lists FailedCreatePodSandBox).
inline constexpr int kSandboxStartGraceSeconds = 120;

inline std::string shown(const std::optional<std::string>& v) { return v ? *v : kAbsent; }

// kubectl's form of a label for a reason line: key="value" or key (absent).
inline std::string label_phrase(const std::string& key, const std::optional<std::string>& v) {
  return v ? key + "=\"" + *v + "\"" : key + " (absent)";
}

inline bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
inline bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// Pods of `op` (core::pod_of_operand over its DaemonSets `dss`) mapped to
// `node` (getNodesToDaemonPods: bound or pinned through the injected
// affinity), in the DaemonSet controller's order.
inline std::vector<const Pod*> pair_pods(const StateIndex& index, const Catalog& catalog, const Operand& op,
                                         const std::vector<const DaemonSet*>& dss, const std::string& node) {
  std::vector<const Pod*> out;
  for (const Pod* p : index.pods_on(node))
    if (pod_of_operand(catalog, op, dss, *p)) out.push_back(p);
  std::sort(out.begin(), out.end(), pod_by_creation_timestamp_and_phase);
  return out;
}

inline const Operand* driver_operand(const Catalog& c) { return c.by_label(kDriverDeployLabel); }

// A driver pod (R7): controlled by the catalog's driver DaemonSet, or carrying
// app.kubernetes.io/component=nvidia-driver (precompiled, DTK and NVIDIADriver
// DaemonSets have other names).
inline bool is_driver_pod(const StateIndex& index, const Catalog& catalog, const Pod& p) {
  auto it = p.metadata.labels.find(kDriverComponentKey);
  if (it != p.metadata.labels.end() && it->second == kDriverComponent) return true;
  const Operand* d = driver_operand(catalog);
  return d && pod_of_operand(catalog, *d, operand_daemonsets(index.state(), catalog, *d), p);
}

inline std::vector<const Pod*> driver_pods(const StateIndex& index, const Catalog& catalog, const std::string& node) {
  std::vector<const Pod*> out;
  for (const Pod* p : index.pods_on(node))
    if (is_driver_pod(index, catalog, *p)) out.push_back(p);
  std::sort(out.begin(), out.end(), pod_by_creation_timestamp_and_phase);
  return out;
}

inline bool image_pull_reason(const std::string& r) {
  return r == "ErrImagePull" || r == "ImagePullBackOff" || r == "InvalidImageName" || r == "ErrImageNeverPull";
}

// The first waiting image-pull reason of any init or regular container.
inline std::string image_pull_failure(const Pod& p) {
  for (const auto* list : {&p.status.init_container_statuses, &p.status.container_statuses})
    for (const auto& c : *list)
      if (c.state == "waiting" && image_pull_reason(c.reason)) return c.name + ": " + c.reason;
  return "";
}

// The first init container that has not finished with exit code 0.
inline const ContainerStatus* unfinished_init(const Pod& p) {
  for (const auto& c : p.status.init_container_statuses) {
    if (c.state == "terminated" && c.exit_code.value_or(-1) == 0) continue;
    return &c;
  }
  return nullptr;
}

inline std::string ready_count(const Pod& p) {
  int ready = 0;
  for (const auto& c : p.status.container_statuses)
    if (c.ready) ++ready;
  size_t total = std::max(p.spec.containers.size(), p.status.container_statuses.size());
  return std::to_string(ready) + "/" + std::to_string(total);
}

// The RESTARTS column (printPod): the init containers' restarts while the pod
// initializes, the regular containers' after.
inline int restarts(const Pod& p) { return print_pod(p).restarts; }

// What each validation gate (init container of the GPU Operator's operands)
// waits for: docs/reference/gpu-operator.md §3.
inline std::string gate_meaning(const std::string& gate) {
  if (gate == "toolkit-validation")
    return "waits for /run/nvidia/validations/toolkit-ready, which only the operator-validator's "
           "toolkit-validation writes";
  if (gate == "driver-validation")
    return "waits for a usable driver (driver-ready: the driver pod's startup probe passed, or a host "
           "driver answers nvidia-smi)";
  if (gate == "cuda-validation") return "runs the nvidia-cuda-validator pod and waits for cuda-ready";
  if (gate == "plugin-validation")
    return "waits for nvidia.com/gpu in the node's capacity, which the device plugin advertises";
  if (gate == "k8s-driver-manager")
    return "k8s-driver-manager: pauses the GPU operands and unloads the old driver before the driver starts";
  if (gate == "config-manager-init") return "device plugin config manager: reads nvidia.com/device-plugin.config";
  if (gate == "mps-control-daemon-mounts") return "prepares the MPS control daemon's mounts";
  if (gate == "vgpu-manager-validation") return "waits for vgpu-manager-ready or host-vgpu-manager-ready";
  if (gate == "vfio-pci-validation") return "waits for vfio-pci-ready (GPUs bound to vfio-pci)";
  if (gate == "vgpu-devices-validation") return "waits for vgpu-devices-ready";
  if (gate == "cc-manager-validation") return "waits for cc-manager-ready";
  if (gate == "nvidia-fs-validation") return "waits for nvidia-fs-ready (GPUDirect Storage)";
  if (gate == "gdrcopy-validation") return "waits for gdrcopy-ready";
  return "";
}

inline void pod_evidence(Finding& f, const Pod& p) {
  f.evidence.emplace_back("pod", p.metadata.name);
  f.evidence.emplace_back("phase", p.status.phase);
  f.evidence.emplace_back("status", pod_status_column(p));
  f.evidence.emplace_back("ready", ready_count(p));
  f.evidence.emplace_back("restarts", std::to_string(restarts(p)));
}

inline Finding make(std::string name, Severity sev, const std::string& node, const std::string& operand,
                    std::string reason) {
  Finding f;
  f.name = std::move(name);
  f.severity = sev;
  f.node = node;
  f.operand = operand;
  f.reason = std::move(reason);
  return f;
}

// Everything diagnose() says about one node, grouped so explain() can pick.
struct NodeDiagnosis {
  std::vector<Finding> node_level;
  std::vector<std::vector<Finding>> per_operand;  // catalog order: state, foreign pods
  std::vector<Finding> consistency;
};

// Per operand of the catalog (catalog order): its DaemonSets in the state
// (core::operand_daemonsets), computed once per diagnose.
using OperandDaemonSets = std::vector<std::vector<const DaemonSet*>>;

inline OperandDaemonSets operand_daemonsets_of(const StateIndex& index, const Catalog& catalog) {
  OperandDaemonSets out;
  for (const auto& op : catalog.operands) out.push_back(operand_daemonsets(index.state(), catalog, op));
  return out;
}

class Diagnoser {
 public:
  Diagnoser(const StateIndex& index, const Catalog& catalog, const OperandDaemonSets& dss, const Node& node,
            const DiagnoseOptions& options)
      : index_(index), catalog_(catalog), dss_(dss), options_(options), node_(node), name_(node.metadata.name) {
    gpu_ = is_gpu_node(node);
    operands_off_ = node_label(node, kOperandsDeployLabel) == std::optional<std::string>("false");
    if (gpu_) {
      auto exp = expected_deploy_labels(node, catalog);
      expected_.insert(exp.begin(), exp.end());
    }
  }

  NodeDiagnosis run();

 private:
  // ---- node level ----
  void node_findings(std::vector<Finding>& out);

  // A node without NFD's NVIDIA PCI label (core/diagnose/diagnose_nfd.cpp):
  // `not-a-gpu-node` (info) when NFD labelled it (its feature labels are
  // there) and found no NVIDIA device; else `nfd-not-labelled`, which says
  // why NFD has not (its worker DaemonSet's placement on the node, its pod's
  // state), an error when the node shows signs of a GPU
  // (core::unlabelled_gpu_signs; why: core::nfd_gap), a warning otherwise: the operator counts it
  // as a non-GPU node either way.
  Finding nfd_finding() const;

  // The driver upgrade controller's state (k8s-operator-libs
  // pkg/upgrade: nvidia.com/gpu-driver-upgrade-state) and mig-manager's and
  // vgpu-device-manager's (nvidia.com/mig.config.state,
  // nvidia.com/vgpu.config.state): failed is an error, a state mid-way a
  // warning (docs/reference/gpu-operator.md §2.8).
  void upgrade_findings(std::vector<Finding>& out);

  // A helper's state label mid-way (nvidia.com/mig.config.state or
  // nvidia.com/vgpu.config.state pending or rebooting): how long it has held
  // at least, from the node's managedFields (core::last_label_write) and the
  // state's observed_at; nullopt when the input does not tell or the label
  // is not mid-way.
  std::optional<Duration> helper_state_held(const char* key) const;

  // helper_state_held(key) is at least options_.stuck_after.
  bool helper_stuck(const char* key) const;

  // `mig-config-in-progress` / `vgpu-config-in-progress` (warning) or
  // `mig-config-stuck` / `vgpu-config-stuck` (error, and the helper's link
  // broken) for a state label mid-way.
  void helper_progress_findings(std::vector<Finding>& out);

  // The durations of an upgrade in `state` (the upgrade state label's
  // value), as evidence of `f`: waiting for jobs for, validating for and
  // the validation timeout.
  void upgrade_time_evidence(Finding& f, const std::string& state) const;

  // ---- one finding per operand ----
  Finding state_finding(const Operand& op);

  // Label "true", no DaemonSet of the operand. Without a ClusterPolicy in the
  // state: disabled or not deployed (R4). With one: what isStateEnabled says
  // (core/gpu_operator/cluster_policy.h); enabled yet absent is the operator's failure to
  // render it, an error its status explains.
  Finding no_daemonset_finding(const Operand& op, const std::vector<const Pod*>& pods);

  static std::string join(const std::vector<std::string>& v);

  void placement_evidence(Finding& f, const DaemonSet& ds, const Placement& pl);

  Finding no_pod_finding(const Operand& op, const DaemonSet& ds, const Placement& pl);

  Finding pod_state_finding(const Operand& op, const Pod& p);

  // Why driver-validation may never pass on this node (#398, #378, #487).
  std::string driver_gate_hint() const;

  static std::string first_sentence(const std::string& msg);

  Finding label_finding(const Operand& op, const std::optional<std::string>& value, LabelClass cls);

  // Operator mode: what the operator of the detected release does with "" on
  // this key. A key outside the node's workload config the operator deletes
  // (removeGPUStateLabels); an operand it does not render leaves the label
  // doing nothing; otherwise v26.7 and later re-set "true" on the next node
  // reconcile, earlier releases keep "" forever (addGPUStateLabels honours any
  // existing value), docs/reference/gpu-operator.md §2.5.
  Finding operator_empty_label(const Operand& op, const std::optional<std::string>& value, bool expected);

  Finding paused_driver(const Operand& op, const std::optional<std::string>& value);

  void foreign_pods(const Operand& op, std::vector<Finding>& out);

  // ---- the container runtime and what holds the driver
  // (core/diagnose/diagnose_runtime.cpp) ----

  // A pod of `op` whose sandbox never started (core::sandbox_not_started):
  // `sandbox-not-started`, an error once it has lasted
  // kSandboxStartGraceSeconds or a message says the sandbox failed, blamed
  // on the runtime handler its RuntimeClass names (the container toolkit's
  // configuration for "nvidia"); else `pending`, a warning.
  Finding sandbox_finding(const Operand& op, const Pod& p);

  // After the state findings: when pods of the node get no sandbox with a
  // RuntimeClass while the container toolkit's own pod is fine, the toolkit's
  // link is the broken one (failed_): it writes the runtime handler.
  void runtime_attribution(const NodeDiagnosis& d);

  // Why a driver is loaded on this node although no driver pod runs: a
  // driver-validation init container that passed (the validator found a
  // working driver: driver-ready), or nvidia.com/gpu in the node's
  // allocatable (the device plugin found GPUs through a driver). Empty when
  // nothing in the input says so.
  std::string loaded_driver_evidence() const;

  // Evidence of the GPU workloads on this node (ClusterState.gpu_workloads),
  // one `GPU workload` entry each; or what is not known about them.
  void gpu_workload_evidence(Finding& f) const;

  // The driver operand's state finding, when its pod is not Running and
  // Ready: what holds the driver (the loaded driver, the GPU workloads).
  void driver_holders(NodeDiagnosis& d) const;

  // ---- consistency between operands of the node ----
  bool host_driver_marker() const;

  bool driver_pod_running() const;

  void needs(std::vector<Finding>& out);

  void multiple_drivers(std::vector<Finding>& out);

  // op's DaemonSets; op is an element of catalog_.operands.
  const std::vector<const DaemonSet*>& dss(const Operand& op) const { return dss_[index_of(op)]; }

  // One of op's DaemonSets selects the node but for the deploy label
  // (core::selects_node_but_label).
  bool rendered_for_node(const Operand& op) const;

  // The DaemonSet of `op` that speaks for it on this node: the first that
  // wants the node (several in operator mode: one driver DaemonSet per kernel
  // or NVIDIADriver), else the first; nullptr when it has none.
  const DaemonSet* daemonset_for_node(const Operand& op) const;

  size_t index_of(const Operand& op) const { return static_cast<size_t>(&op - catalog_.operands.data()); }

  // How long since `since`, as evidence reads it: "2h13m (since
  // 2026-11-30T08:00:00Z)", the duration measured to the state's observed_at
  // (core::human_duration); "since 2026-11-30T08:00:00Z" when the state has
  // no observed_at. Empty when `since` is unknown.
  std::string for_how_long(const std::optional<Time>& since) const;

  // Evidence of the validator's workload pod on this node behind `gate`
  // (cuda-validation, plugin-validation; nothing for other gates).
  void workload_validator_evidence(Finding& f, const std::string& gate) const;

  // A driver pod's k8s-driver-manager init container, when it is running,
  // else nullptr.
  static const ContainerStatus* running_driver_manager(const Pod& driver_pod);

  const StateIndex& index_;
  const Catalog& catalog_;
  const OperandDaemonSets& dss_;
  const DiagnoseOptions& options_;
  // Per operand, set by state_finding: what it waits on (gate_writer of the
  // gate its pod is stuck at), and the pod its finding shows.
  std::vector<std::string> waits_on_;
  std::vector<const Pod*> shown_pod_;
  std::vector<std::string> failed_;  // per operand: why it is broken beside its state finding
  // Per operand, set by sandbox_finding: the RuntimeClass of its pod whose
  // sandbox does not start ("" for none, or no such pod).
  std::vector<std::string> sandbox_class_;
  const Node& node_;
  std::string name_;
  bool gpu_ = false;
  bool operands_off_ = false;
  std::set<std::string> expected_;
};

// Operator mode: for each of `targets` that is a GPU node (gpu.present=true)
// labelled by NFD yet lacking a label the operator reads off its first GPU
// node to render the driver (core::driver_input_gap, per the catalog's
// release), one finding `nfd-driver-labels-missing` (operand driver): what
// is missing, where the operator stops without it, whether that depends on
// which GPU node it lists first (core::driver_input_disagreement), and the
// ClusterPolicy's Error condition when it says so. Error when the
// ClusterPolicy's condition quotes the failure (or a driver image tag ends in
// "-"), else a warning. diagnose_nfd.cpp.
std::vector<Finding> nfd_driver_input_findings(const ClusterState& state, const Catalog& catalog,
                                               const std::vector<const Node*>& targets);

}  // namespace gpuops::core::diagnose_internal
