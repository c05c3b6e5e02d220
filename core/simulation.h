// core/simulation.h: what only an in-process simulator can do.
//
// The scenario runner (core/scenario.h) uses these for steps that inject
// faults or move virtual time. The CLI adapts simulator::FakeCluster to this
// interface; a real cluster has none, so such steps are reported as
// "simulator only" there, never silently skipped.
#pragma once

#include <string>

#include "core/model.h"
#include "core/operands.h"

namespace gpuops::core {

// The faults the fake kubelet can apply (simulator::FaultKind says what each
// does to a pod). A scenario spells them "image-pull", "crash-loop",
// "never-ready", "stuck-in-init" and "failed"; load_scenario
// (core/scenario.h) reads that spelling, and nothing else does.
enum class FaultKind {
  kImagePull,
  kCrashLoop,
  kNeverReady,
  kStuckInInit,
  kFailed,
};

// A fault for the fake kubelet. Empty node/daemonset mean every
// node/DaemonSet.
struct FaultSpec {
  FaultKind kind = FaultKind::kCrashLoop;
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
  // Applies `fault` to the pods it selects, from now on and to those already
  // there, until clear_faults.
  virtual void inject_fault(const FaultSpec& fault) = 0;
  virtual void clear_faults() = 0;
  // Starts the simulated GPU Operator of `catalog`'s release with its
  // operands in namespace `ns` (its CRDs installed, the namespace created);
  // stops it. The ClusterPolicy itself is written through core::Cluster.
  virtual void install_operator(const Catalog& catalog, const std::string& ns) = 0;
  virtual void uninstall_operator() = 0;
};

}  // namespace gpuops::core
