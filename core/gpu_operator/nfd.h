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

}  // namespace gpuops::core
