// simulator/gpu_operator/operator_object_controls.h: internal to simulator/. What the
// simulated GPU Operator renders for an operand, and when it calls an
// operand's DaemonSet ready. Mirrors NVIDIA/gpu-operator
// controllers/object_controls.go: the asset DaemonSet of the operand's state
// (here the catalog's rendering keys, core/gpu_operator/operands.h, one catalog per
// release) through preProcessDaemonSet's transforms as far as placement goes
// (applyCommonDaemonsetConfig: spec.daemonsets.tolerations replaces the
// template's, spec.daemonsets.priorityClassName; applyUpdateStrategyConfig;
// setRuntimeClassName; the validator image in the validation init
// containers; ImagePath for spec.<component>.repository/image/version), and
// isDaemonSetReady.
//
// The policy's per-container fields (imagePullPolicy, imagePullSecrets,
// resources, args, env): operator_container_config.h.
//
// Not rendered: volumes, the asset's own env, probes, security contexts, the
// asset's own resources (none the scheduler reads but vfio-manager's and
// cc-manager's; docs/OPERATOR.md lists what is left out).
#pragma once

#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"
#include "simulator/store/object_store.h"

namespace gpuops::simulator::internal {

// The operand's DaemonSet as the operator of the catalog's release renders
// it for `policy`, in namespace `ns`, controlled by the ClusterPolicy
// (ownerReference nvidia.com/v1 ClusterPolicy, controller and
// blockOwnerDeletion). `os_tag` ("ubuntu22.04", from the first GPU node's
// NFD os_release labels) suffixes the driver image when the policy names a
// driver version. A field of the wrong type counts as absent, as
// core/gpu_operator/cluster_policy.h reads them. Throws core::InputError
// (field `spec.<component>`) where the release's transform fails: from
// v26.7 an image spec with some but not all of repository, image and
// version (gpuv1.ImagePath); the caller fails the state with its message.
core::DaemonSet render_operand_daemonset(const core::Operand& op, const core::ClusterPolicy& policy,
                                         const core::Catalog& catalog, const std::string& ns,
                                         const std::string& os_tag);

// Mirrors isDaemonSetReady (object_controls.go): ready when
// desiredNumberScheduled is 0; not ready while numberUnavailable is not 0;
// ready for RollingUpdate; for OnDelete, ready only when the DaemonSet has
// pods (`pods`: those matching its template labels) and each is Running,
// of the DaemonSet's current revision (controller-revision-hash `hash`), with
// every container Ready.
bool operand_daemonset_ready(const core::DaemonSet& ds, const std::vector<const PodRecord*>& pods,
                             const std::string& hash);

}  // namespace gpuops::simulator::internal
