// core/simulation.h: what only an in-process simulator can do.
//
// The scenario runner (core/scenario.h) uses these for steps that inject
// faults or move virtual time. The CLI adapts simulator::FakeCluster to this
// interface; a real cluster has none, so such steps are reported as
// "simulator only" there, never silently skipped.
#pragma once

#include <string>

#include "core/model.h"

namespace gpuops::core {

// A fault for the fake kubelet. kind is one of "image-pull", "crash-loop",
// "never-ready", "stuck-in-init", "failed". Empty node/daemonset mean every
// node/DaemonSet.
struct FaultSpec {
  std::string kind;
  std::string node;
  std::string daemonset;
  std::string reason;  // "failed" only
};

class SimulationControls {
 public:
  virtual ~SimulationControls() = default;
  // Runs the controllers until none has work, without moving virtual time.
  virtual void run() = 0;
  // Moves virtual time forward, running the controllers on the way.
  virtual void advance(Duration d) = 0;
  // Throws InputError for an unknown kind.
  virtual void inject_fault(const FaultSpec& fault) = 0;
  virtual void clear_faults() = 0;
};

}  // namespace gpuops::core
