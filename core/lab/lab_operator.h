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

// Labels every node's kernel version as NFD (installed with the chart) does,
// installs the operator of `operator_catalog`'s release with a ClusterPolicy
// `cluster-policy` at its defaults, settles, and compares `nodes` before and
// after. Throws what the cluster throws.
OperatorAct run_operator_act(Cluster& cluster, SimulationControls& sim, const Catalog& operator_catalog,
                             const std::string& ns, const std::vector<std::string>& nodes);

}  // namespace gpuops::core
