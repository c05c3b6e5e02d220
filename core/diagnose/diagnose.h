// core/diagnose/diagnose.h: why an operand is, or is not, on a node, in the GPU
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
// Rules come from docs/reference/gpu-operator.md (deploy label values and who
// writes them, GPU node recognition, workload configs, validation gates: §1-§3,
// §6 R1-R8) and docs/reference/daemonset-semantics.md (placement, pod phases, the
// STATUS column). Placement is core::should_run and presence is
// core::operand_present; neither is reimplemented here.
//
// The parts live in their own files: the operator's GPU node rules in
// core/gpu_operator/gpu_node_rules.h, the STATUS column in core/kube/pod_status.h, the result
// types in core/diagnose/finding.h and text/JSON output in core/diagnose_render.h. This
// header includes all four, so a caller of diagnose() has the whole API.
#pragma once

#include <string>
#include <vector>

#include "core/diagnose/diagnose_render.h"
#include "core/diagnose/finding.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/operands.h"
#include "core/kube/placement.h"
#include "core/kube/pod_status.h"
#include "core/model/model.h"

namespace gpuops::core {

// What diagnose() weighs beyond the state.
struct DiagnoseOptions {
  // How long a helper may hold a state mid-way (nvidia.com/mig.config.state
  // or nvidia.com/vgpu.config.state pending or rebooting, as the node's
  // managedFields date the write: core::last_label_write) before it is
  // called stuck, an error
  // (gpuops diagnose --stuck-after). The default, 30 minutes, is
  // mig-manager's own patience with margin: it waits at most 5 minutes for
  // each of the device plugin, GFD, the DCGM exporter, DCGM and the other GPU
  // clients to stop (25 minutes; waitForPodsToBeDeleted,
  // pkg/mig/reconfigure/reconfigure.go of NVIDIA/mig-parted), and when a
  // wait times out it returns without writing failed, so the state stays
  // pending for good.
  Duration stuck_after = std::chrono::minutes(30);
};

// The findings for `nodes` (every node of the state, sorted by name, when
// empty; otherwise in the order given, duplicates dropped). Per node, in this
// order: node findings; then per operand in catalog order its state finding
// followed by its `foreign-pod` findings; then consistency findings (needs in
// catalog order of the dependent operand, then `multiple-driver-pods`).
// Throws ClusterError (http_status 404) when a name in `nodes` is not a node of
// the state.
std::vector<Finding> diagnose(const ClusterState& state, const Catalog& catalog, const std::vector<std::string>& nodes,
                              const DiagnoseOptions& options = {});

// The Explanation (core/diagnose/finding.h) of one node/operand pair. Throws
// ClusterError (404) for an unknown node, InputError (field "operand") for an
// operand the catalog does not have.
Explanation explain(const ClusterState& state, const Catalog& catalog, const std::string& node,
                    const std::string& operand, const DiagnoseOptions& options = {});

// 1 (kExitFinding) when any finding is an error, else 0.
int exit_code(const std::vector<Finding>& findings);

}  // namespace gpuops::core
