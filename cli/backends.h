// cli/backends.h: opening backends for the commands, and the simulator's
// controls behind the core::SimulationControls interface.
#pragma once

#include <memory>
#include <string>

#include "core/cluster.h"
#include "core/simulation.h"

namespace gpuops::cli {

// A built-in simulated cluster with its controls. `profile` is "kwok" or
// "kubelet". Throws UsageError when the simulator is not built in.
struct SimBackend {
  std::unique_ptr<core::Cluster> cluster;
  core::SimulationControls* controls = nullptr;  // owned by `cluster`'s holder
  std::shared_ptr<void> keep;                    // keeps the adapter alive
};
SimBackend open_simulator(const std::string& profile);

// A live cluster through its API: kubeconfig rules as kubectl (real/).
// `namespace_out` receives the namespace the kubeconfig context names, or ""
// when it names none. Throws InputError (kubeconfig) / ClusterError.
std::unique_ptr<core::Cluster> open_real(const std::string& kubeconfig, const std::string& context,
                                         const std::string& ns, std::string* namespace_out);

}  // namespace gpuops::cli
