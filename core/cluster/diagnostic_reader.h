// core/cluster/diagnostic_reader.h: what a live cluster can read for a
// scenario's `podLogs` and `events` diagnostics (core/scenario/
// scenario_diagnostics.h) beyond core::ClusterState. Implemented beside
// core::Cluster by real::ApiCluster; the runner finds it with dynamic_cast,
// and a backend without it (the simulator) says they are unavailable.
#pragma once

#include <string>

namespace gpuops::core {

class DiagnosticReader {
 public:
  virtual ~DiagnosticReader() = default;
  // The events of namespace `ns`, one line each, oldest first (by their
  // last time):
  //   <lastTimestamp or eventTime> <type> <reason> <kind>/<name>: <message>[ (xN)]
  // ("(xN)" when count > 1); "(no events in namespace NS)\n" when none.
  // Throws core::ClusterError.
  virtual std::string events_text(const std::string& ns) = 0;
  // The last `tail_lines` lines of the log of `pod`, or of each pod that the
  // label selector `selector` selects (by name, each under "==> NS/POD <==");
  // `container` "" for the pod's only (or default) container. "(no pod
  // matches SELECTOR in namespace NS)\n" when the selector selects none.
  // Throws core::ClusterError (a pod that is not there, a container that is
  // not the pod's, a node that serves no logs).
  virtual std::string pod_logs_text(const std::string& ns, const std::string& pod, const std::string& selector,
                                    const std::string& container, int tail_lines) = 0;
};

}  // namespace gpuops::core
