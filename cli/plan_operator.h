// cli/plan_operator.h: what a ClusterPolicy change does to the operator's
// DaemonSets, for gpuops plan (cli/cmd_plan.cpp, docs/PLAN.md).
#pragma once

#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"
#include "core/plan/plan.h"

namespace gpuops::cli {

// For a plan whose ClusterPolicy's spec differs between `before` and
// `after` (the settled states of the copy):
//  * a template change of a DaemonSet the simulated operator rendered (it
//    carries nvidia.com/last-applied-hash) becomes the difference between
//    the operator's renders for the policy before and after
//    (simulator/gpu_operator/operator_render.h): the input's DaemonSet holds
//    fields the simulation does not render, which would read as removed;
//  * returns one line per top-level spec key that changed but whose change
//    alone changes no operand's render nor which operands are enabled
//    (core::state_enabled): its effect on the DaemonSets is not predicted.
// Nothing when neither state has a ClusterPolicy or its spec is unchanged.
std::vector<std::string> refine_operator_changes(core::PlanResult& plan, const core::ClusterState& before,
                                                 const core::ClusterState& after, const core::Catalog& catalog,
                                                 const std::string& ns);

}  // namespace gpuops::cli
