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
// `server` and `token`, when not empty, replace the resolved cluster's server
// URL and the user's credentials (a bearer token in place of a token file or
// an exec plugin), as kubectl's --server and --token override the kubeconfig
// (clientcmd ConfigOverrides); a kubeconfig (or the in-cluster config) is
// still needed.
std::unique_ptr<core::Cluster> open_real(const std::string& kubeconfig, const std::string& context,
                                         const std::string& ns, std::string* namespace_out,
                                         const std::string& server = "", const std::string& token = "");

}  // namespace gpuops::cli
