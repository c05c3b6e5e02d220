// simulator/gpu_operator/operator_render.h: what the simulated GPU Operator
// renders, for callers outside the simulator: gpuops plan shows a
// ClusterPolicy change as the difference between the operator's render of an
// operand's DaemonSet for the policy before and after it
// (cli/plan_operator.cpp), not against a DaemonSet read from a cluster, which
// carries what the simulation does not render.
#pragma once

#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::simulator {

// The annotation the operator stamps on what it renders: the hash of the
// render (utils.GetObjectHash, internal/utils/utils.go); a DaemonSet without
// it was not written by the (simulated) operator.
inline constexpr const char* kLastAppliedHash = "nvidia.com/last-applied-hash";

// The operand's DaemonSet as the simulated operator renders it for `policy`
// in namespace `ns` (its raw JSON holds the whole object): see
// simulator/gpu_operator/operator_object_controls.h for what is rendered and
// what is not; `os_tag` is core::driver_os_tag of the first GPU node. Throws core::InputError where the API server
// would refuse the render (a component enabled without an image), as the operator's create then fails the state.
core::DaemonSet rendered_daemonset(const core::Operand& op, const core::ClusterPolicy& policy,
                                   const core::Catalog& catalog, const std::string& ns, const std::string& os_tag);

}  // namespace gpuops::simulator
