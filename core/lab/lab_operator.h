// core/lab/lab_operator.h: the lab's optional ninth act (LabRunOptions::
// operator_catalog, `gpuops lab run --operator`): the simulated GPU Operator
// installed on the lab's nodes, and what it did to them.
#pragma once

#include <string>
#include <vector>

#include "core/cluster/cluster.h"
#include "core/cluster/simulation.h"
#include "core/gpu_operator/operands.h"

namespace gpuops::core {

struct OperatorAct {
  // One line per nvidia.com/ label of each node (kept, overwritten, removed
  // and why, added), per DaemonSet of `ns` that existed before (taken over
  // by the operator, left as it was, gone) and per ClusterPolicy (its state
  // and the message of its True condition).
  std::vector<std::string> lines;
  ClusterState before, after;  // the namespace `ns` before the install and after settle
};

// The GPU Operator as its chart installs it on the lab's nodes, the one
// start-up of the ninth act (run_operator_act) and of `gpuops serve --lab
// --operator`: NFD (installed with the chart) labels each of `nodes` with
// its kernel version and OS release, as its default sources do (the driver
// needs them: core::driver_input_gap); settle; `before`, when given,
// receives the state of namespace `ns` then; the simulated operator of
// `operator_catalog`'s release is started in `ns`
// (SimulationControls::install_operator) and a ClusterPolicy
// `cluster-policy` at its defaults (core::cluster_policy_object({})) is
// applied; settle. Nodes without NFD's GPU label stay without operator
// labels until one is given (labelGPUNodes). Throws what the cluster throws.
void start_lab_operator(Cluster& cluster, SimulationControls& sim, const Catalog& operator_catalog,
                        const std::string& ns, const std::vector<std::string>& nodes, ClusterState* before = nullptr);

// The ninth act: start_lab_operator, then the labels of `nodes` before the
// install compared with after, and the lab's DaemonSets and the policy said. Throws what the cluster throws.
OperatorAct run_operator_act(Cluster& cluster, SimulationControls& sim, const Catalog& operator_catalog,
                             const std::string& ns, const std::vector<std::string>& nodes);

}  // namespace gpuops::core
