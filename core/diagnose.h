// core/diagnose.h: why an operand is, or is not, on a node, in the GPU
// Operator's own terms.
//
// A pure function of a ClusterState (nodes, and the DaemonSets and pods of the
// operator's namespace) and an operand Catalog. Nothing here reads the wall
// clock or talks to a cluster: the same state gives the same findings, whether
// it came from the simulator, a real cluster or a kubectl dump.
//
// Every finding name, its severity and the source of its rule are listed in
// docs/DIAGNOSE.md. In short, for every node and every operand of the catalog
// diagnose() gives exactly one *state* finding (`running`, `label-false`,
// `untolerated-taint`, `stuck-in-init`, ...); on top of those come *node*
// findings (operand empty: `node-not-ready`, `missing-deploy-labels`, ...),
// `foreign-pod` findings, and *consistency* findings between operands of one
// node (`device-plugin-without-toolkit`, `multiple-driver-pods`, ...).
//
// Rules come from reference/gpu-operator.md (deploy label values and who
// writes them, GPU node recognition, workload configs, validation gates: §1-§3,
// §6 R1-R8) and reference/daemonset-semantics.md (placement, pod phases, the
// STATUS column). Placement is core::should_run and presence is
// core::operand_present; neither is reimplemented here.
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"
#include "core/operands.h"
#include "core/placement.h"

namespace gpuops::core {

enum class Severity { kInfo, kWarning, kError };

// "info", "warning", "error".
std::string severity_name(Severity s);

// One diagnosis. `evidence` is ordered key/value text, e.g.
//   {"label nvidia.com/gpu.deploy.device-plugin", ""}
//   {"taint", "dedicated=ml-team:NoSchedule"}
//   {"pod", "nvidia-device-plugin-daemonset-e8af9"}, {"phase", "Pending"},
//   {"status", "Init:0/1"}, {"gate", "toolkit-validation"},
//   {"scheduler", "0/2 nodes are available: 1 Insufficient memory, ..."}
// A key may repeat (several pods). An absent label is given the value
// "(absent)", which no label value can be (label values have no parentheses).
struct Finding {
  std::string name;     // stable machine name, e.g. "label-empty-value"
  Severity severity = Severity::kInfo;
  std::string node;
  std::string operand;  // empty for a node-level finding
  std::string reason;   // one line, no newline
  std::vector<std::pair<std::string, std::string>> evidence;
};

// The findings for `nodes` (every node of the state, sorted by name, when
// empty; otherwise in the order given, duplicates dropped). Per node, in this
// order: node findings; then per operand in catalog order its state finding
// followed by its `foreign-pod` findings; then consistency findings (needs in
// catalog order of the dependent operand, then `multiple-driver-pods`).
// Throws ClusterError (http_status 404) when a name in `nodes` is not a node of
// the state.
std::vector<Finding> diagnose(const ClusterState& state, const Catalog& catalog,
                              const std::vector<std::string>& nodes);

// One node/operand pair: the DaemonSet controller's verdict plus every finding
// that concerns the pair (the node's findings, the pair's state and
// foreign-pod findings, and consistency findings naming this operand).
struct Explanation {
  std::string node;
  std::string operand;
  std::string label;           // the operand's deploy label key
  std::optional<std::string> label_value;  // on the node; nullopt when absent
  std::string daemonset;       // the operand's DaemonSet name (catalog)
  bool daemonset_found = false;
  // core::should_run(DaemonSet, Node); nullopt when the DaemonSet is absent.
  std::optional<Placement> placement;
  std::vector<Finding> findings;
};

// Throws ClusterError (404) for an unknown node, InputError (field "operand")
// for an operand the catalog does not have.
Explanation explain(const ClusterState& state, const Catalog& catalog, const std::string& node,
                    const std::string& operand);

// Text, one line per finding:
//   <node> <operand or "-"> <severity> <name>: <reason>
// followed by one line per evidence entry, indented four spaces:
//       <key>: <value>           (an empty value is printed as "")
// Ends with a newline; empty input gives "".
std::string render_text(const std::vector<Finding>& findings);

// `explain` as text: a header
//   <node> <operand>: daemonset <name> <found|absent>; label <key>=<value or (absent)>
//   placement: shouldRun=<true|false> shouldContinueRunning=<true|false>
//     reason: <each should_run reason>
// (the placement lines are "placement: no DaemonSet" when it is absent),
// then render_text(findings).
std::string render_text(const Explanation& explanation);

// JSON array of findings, each
//   {"node":..,"operand":..,"severity":"error|warning|info","name":..,
//    "reason":..,"evidence":[{"key":..,"value":..},...]}
// serialized with Boost.JSON (boost::json::serialize of to_json).
boost::json::value to_json(const std::vector<Finding>& findings);
std::string render_json(const std::vector<Finding>& findings);

// {"node","operand","label","labelValue" (null when absent),"daemonset","daemonsetFound",
//  "placement": null | {"shouldRun","shouldContinueRunning","reasons":[..]},
//  "findings":[...]}
boost::json::value to_json(const Explanation& explanation);
std::string render_json(const Explanation& explanation);

// 1 (kExitFinding) when any finding is an error, else 0.
int exit_code(const std::vector<Finding>& findings);

// ---- building blocks, public for tests and for the CLI ----

// The STATUS column of `kubectl get pods` for this pod. Mirrors printPod
// (kubernetes pkg/printers/internalversion/printers.go): phase, replaced by
// status.reason, by SchedulingGated, by the first unfinished init container
// ("Init:<reason>", "Init:ExitCode:<n>", "Init:<i>/<n>"), by the last regular
// container's waiting/terminated reason, "Completed" back to Running/NotReady,
// and finally "Terminating" (deletionTimestamp, phase not terminal) or
// "Unknown" (deletionTimestamp and reason NodeLost). Not modelled: restartable
// (sidecar) init containers and signal numbers. When a dump's spec omits the
// init containers, <n> is the number of init container statuses.
std::string pod_status_column(const Pod& pod);

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
// pci-0302_10de.present or pci-0300_10de.present is "true" (gpuNodeLabels,
// gpu-operator controllers/state_manager.go).
bool is_gpu_node(const Node& node);

// NVIDIA PCI labels of NFD in a form the operator does not recognise, e.g.
// feature.node.kubernetes.io/pci-10de_2330.present (#1469). Sorted.
std::vector<std::string> unrecognised_nvidia_pci_labels(const Node& node);

// The node's workload config as the operator picks it (getWorkloadConfig): the
// value of nvidia.com/gpu.workload.config when it is container, vm-passthrough
// or vm-vgpu, else "container". Assumes sandboxWorkloads.enabled when the label
// is set (the ClusterPolicy is not part of the state).
std::string workload_config(const Node& node);

// Deploy label keys the operator sets on a GPU node of this workload config
// (gpuStateLabels): the labels of catalog operands listing the config, without
// duplicates, in catalog order; nvidia.com/gpu.deploy.mig-manager only on a
// MIG-capable container node (hasMIGCapableGPU).
std::vector<std::string> expected_deploy_labels(const Node& node, const Catalog& catalog);

}  // namespace gpuops::core
