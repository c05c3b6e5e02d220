// real/client_internal.h: what client.cpp (transport, credentials, requests)
// and exec_credential.cpp (the exec credential plugin) share. Internal to real/:
// included by those two files only, nothing here is part of the API.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "real/client.h"
#include "real/kubeconfig.h"

namespace gpuops::real::internal {

// `s` without the whitespace (std::isspace) at either end.
std::string trim(std::string s);

// What an exec plugin answered (ExecCredential status): a bearer token, a PEM
// client certificate and key, or both; expiry from expirationTimestamp,
// nullopt when it gave none (valid until a 401).
struct ExecCredential {
  std::string token, cert, key;
  std::optional<std::chrono::system_clock::time_point> expiry;
};

// Runs `cfg.exec` (which must be set) once, as exec.go refreshCredsLocked
// does: the host environment plus the configured env and
// KUBERNETES_EXEC_INFO (an ExecCredential with spec.interactive, and
// spec.cluster when provideClusterInfo), standard input the terminal only in
// interactive mode (interactiveMode Always refuses a non-terminal
// opt.stdin_fd; IfAvailable is interactive when it is one), standard output
// read up to opt.exec_output_limit bytes within opt.exec_timeout, else the
// plugin is killed. Throws core::ClusterError when the plugin cannot run,
// is killed, exits non-zero or prints anything but a valid ExecCredential
// of the configured apiVersion; the message never holds the plugin's output.
ExecCredential run_exec_plugin(const RestConfig& cfg, const ClientOptions& opt);

}  // namespace gpuops::real::internal
