// cli/backends.h: opening backends for the commands, and the simulator's
// controls behind the core::SimulationControls interface.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/cluster/cluster.h"
#include "core/cluster/simulation.h"

namespace gpuops::simulator {
class FakeCluster;
}

namespace gpuops::cli {

// A built-in simulated cluster with its controls. `profile` is "kwok" or
// "kubelet". Throws UsageError when the simulator is not built in.
struct SimBackend {
  std::unique_ptr<core::Cluster> cluster;
  core::SimulationControls* controls = nullptr;  // owned by `cluster`'s holder
  std::shared_ptr<void> keep;                    // keeps the adapter alive
};
SimBackend open_simulator(const std::string& profile);
// The controls of a simulated cluster made elsewhere (`gpuops serve`'s), the
// same adapter open_simulator gives; `cluster` must outlive them. Only in a
// build with the simulator (GPUOPS_HAVE_SIMULATOR).
std::unique_ptr<core::SimulationControls> simulation_controls(simulator::FakeCluster& cluster);

// A live cluster through its API: kubeconfig rules as kubectl (real/).
// `namespace_out` receives the namespace the kubeconfig context names, or ""
// when it names none. Throws InputError (kubeconfig) / ClusterError.
// `overrides` are kubectl's flags over the kubeconfig (clientcmd
// ConfigOverrides, mirrors DirectClientConfig.getCluster and getAuthInfo,
// k8s.io/client-go tools/clientcmd/client_config.go): `server` replaces the
// cluster's URL, and with no kubeconfig at all is the whole configuration;
// `token` replaces the user's credentials (a token file, an exec plugin,
// basic auth); `certificate_authority` (a PEM file) or
// `insecure_skip_tls_verify` replace the cluster's TLS trust, both together
// being the InputError "specifying a root certificates file with the insecure
// flag is not allowed".
struct ConnectionOverrides {
  std::string server;
  std::string token;
  std::string certificate_authority;
  bool insecure_skip_tls_verify = false;
};
// `interrupted`: polled by the cluster's settle(), which throws ClusterError
// "interrupted" once it is true (real::ApiClusterOptions::interrupted).
std::unique_ptr<core::Cluster> open_real(const std::string& kubeconfig, const std::string& context,
                                         const std::string& ns, std::string* namespace_out,
                                         const ConnectionOverrides& overrides = {},
                                         const std::function<bool()>& interrupted = {});

}  // namespace gpuops::cli
