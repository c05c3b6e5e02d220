// core/gpu_operator/nfd.h: where the chain begins, Node Feature Discovery.
//
// The operator counts a node as a GPU node only by NFD's labels (hasGPULabels,
// controllers/state_manager.go). NFD's worker (a DaemonSet; the GPU
// Operator's chart deploys it as <release>-node-feature-discovery-worker with
// labels app.kubernetes.io/name=node-feature-discovery, role=worker) reads a
// node's PCI devices and nfd-master writes the feature.node.kubernetes.io/
// labels. A node the worker never ran on has none of them, and whether it has
// a GPU is then unknown to the operator. Used by diagnose (nfd-not-labelled)
// and audit (UNLABELLED). Pure functions; none throws.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "core/model/state_index.h"

namespace gpuops::core {

// The node carries a feature.node.kubernetes.io/ label: NFD labelled it.
bool has_nfd_labels(const Node& node);

// What on a node says it has an NVIDIA GPU when NFD has not labelled it: the
// taint GPU nodes are commonly given (nvidia.com/gpu), a label under
// nvidia.com/ (written by the operator, GFD or a person), allocatable
// nvidia.com/gpu. Evidence pairs ("taint", "nvidia.com/gpu:NoSchedule").
std::vector<std::pair<std::string, std::string>> unlabelled_gpu_signs(const Node& node);

// The NFD worker DaemonSets of the state's namespace, in state order: the
// chart's labels, or the names the chart and the NFD operator give them
// (*node-feature-discovery-worker, nfd-worker).
std::vector<const DaemonSet*> nfd_workers(const ClusterState& state);

// Why NFD has not labelled `node` (call only when !has_nfd_labels(node)), from
// the first NFD worker DaemonSet: `why` a short phrase ("its worker does not
// tolerate taint dedicated=ml:NoSchedule", "no NFD worker DaemonSet in
// namespace gpu-operator", ...), `detail` what to do about it, and the
// evidence (the DaemonSet, its pod on the node, the taint).
struct NfdGap {
  std::string why;
  std::string detail;
  std::vector<std::pair<std::string, std::string>> evidence;
};
NfdGap nfd_gap(const StateIndex& index, const Node& node);

// The NFD labels the operator reads off the first GPU node to render the
// driver (nvidia.com/gpu.present=true; the first of its cache's List, in no
// set order: the simulator takes the first by name).
inline constexpr const char* kKernelVersionFullLabel = "feature.node.kubernetes.io/kernel-version.full";
inline constexpr const char* kOsReleaseIdLabel = "feature.node.kubernetes.io/system-os_release.ID";
inline constexpr const char* kOsVersionIdLabel = "feature.node.kubernetes.io/system-os_release.VERSION_ID";

// The driver image tag's OS suffix the operator of `release` (a catalog's
// version: "v25.3", "v26.7"; "" = the newest rules) derives from `node`'s
// NFD labels: ID and VERSION_ID joined ("ubuntu24.04"), "" when either is
// missing. From v26.7 ol, rocky and rhel keep the major version only
// ("rhel9"; mirrors getGPUNodeOSInfo, controllers/state_manager.go v26.7.0);
// v26.3 does so for rocky, and rhel 10 and later (getGPUNodeOSTag, v26.3.0);
// before v26.3 the version is taken whole (kernelFullVersion,
// controllers/object_controls.go v25.3.4), and the kernel label is needed
// too: without it the tag is "".
std::string driver_os_tag(const Node& node, const std::string& release);

// What the operator of `release` cannot read off `node`, taken as its first
// GPU node, to render the driver, and where it stops (messages as the
// ClusterPolicy's Error condition shows them):
//  * before v26.3 (kernelFullVersion, resolveDriverTag,
//    controllers/object_controls.go v25.3.4): no kernel-version.full fails
//    state-driver, "ERROR: Could not find kernel full version: ('', '')",
//    and the states after it are not reconciled; no OS ID or VERSION_ID
//    is not an error, but the image tag then ends in "-" ("580.82.07-":
//    resolveDriverTag appends "-" and the empty tag), an image no registry has;
//  * from v26.3 (init, getGPUNodeOSTag / getGPUNodeOSInfo): no OS ID or
//    VERSION_ID fails the whole reconcile before any state,
//    "failed to retrieve GPU node OS tag|info: unable to retrieve OS
//    name|version from label <key>"; the kernel label is not read. v26.3
//    also fails on a major version strconv.Atoi refuses ("error processing
//    OS major version ..."), v26.7 on an empty ID ("GPU node OS info is
//    empty: release=\"\", tag=\"22.04\""); `missing` stays empty then.
// Empty `missing` when nothing is missing.
struct DriverInputGap {
  std::vector<std::string> missing;  // label keys, in the order the operator reads them
  std::string failure;               // "" when the operator goes on
  bool fails_init = false;           // the whole reconcile fails (v26.3+), not state-driver alone
  bool bad_image_tag = false;        // it goes on, with a driver image tag ending in "-"
};
DriverInputGap driver_input_gap(const Node& node, const std::string& release);

// When the GPU nodes (nvidia.com/gpu.present=true) disagree on whether the
// operator stops (driver_input_gap's failure on some, not on others), the
// ones it would stop on, sorted by name: the operator reads whichever node
// its cache lists first, so whether it stops is not determined by the state.
// Empty when they all agree.
std::vector<std::string> driver_input_disagreement(const ClusterState& state, const std::string& release);

}  // namespace gpuops::core
