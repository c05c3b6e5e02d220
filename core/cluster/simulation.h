// core/cluster/simulation.h: what only an in-process simulator can do.
//
// The scenario runner (core/scenario/scenario.h) uses these for steps that inject
// faults or move virtual time. The CLI adapts simulator::FakeCluster to this
// interface; a real cluster has none, so such steps are reported as
// "simulator only" there, never silently skipped.
#pragma once

#include <optional>
#include <string>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::core {

// The faults the fake kubelet can apply to the pods it runs, in either
// profile (simulator::FaultKind is this type). A scenario spells them
// "image-pull", "crash-loop", "never-ready", "stuck-in-init" and "failed";
// load_scenario (core/scenario/scenario.h) reads that spelling, and nothing
// else does.
enum class FaultKind {
  // Pending; container waiting ErrImagePull, then ImagePullBackOff.
  kImagePull,
  // Running, not Ready; container waiting CrashLoopBackOff (restartCount 5).
  kCrashLoop,
  // Running, container running but never Ready (readiness probe failing).
  kNeverReady,
  // Pending; the first init container running and never finishing, the
  // containers waiting PodInitializing (kubectl: Init:0/N). No effect on pods
  // without init containers.
  kStuckInInit,
  // Rejected at admission: phase Failed, reason `reason` (default
  // "UnexpectedAdmissionError"). The DaemonSet controller deletes and
  // recreates such pods with its failed-pod backoff.
  kFailed,
};

// A fault for the fake kubelet (simulator::Fault is this type). Empty
// node/daemonset mean every node/DaemonSet.
struct FaultSpec {
  FaultKind kind = FaultKind::kCrashLoop;
  std::string node;
  std::string daemonset;
  std::string reason;  // "failed" only
};

// What is on a node's machine that no API object says, as the GPU
// Operator's helpers find it there (simulator only; a scenario's `host`
// action and cluster.nodes[].host). Unset fields keep their value; a node
// starts with no driver, nothing holding it, MIG config all-disabled and
// MIG changes that succeed.
struct HostSpec {
  std::string node;
  // "none"; "pre-installed": a driver installed on the host (`chroot /host
  // nvidia-smi` answers, k8s-driver-manager's isHostDriver); "loaded": the
  // modules of a containerized driver are loaded (/sys/module/nvidia/refcnt,
  // isDriverLoaded), as a driver pod leaves them.
  std::optional<std::string> driver;
  // A process holds the loaded driver (refcount): unloading it fails.
  std::optional<bool> driver_in_use;
  // The MIG config applied on the GPUs (what `nvidia-mig-parted assert` checks).
  std::optional<std::string> mig_config;
  // Applying a MIG config fails (`nvidia-mig-parted apply` exits non-zero).
  std::optional<bool> mig_apply_fails;
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
  // Sets host facts of node `host.node` (HostSpec); the helpers that read
  // them act on their next run.
  virtual void set_host(const HostSpec& host) = 0;
};

}  // namespace gpuops::core
