// core/kube/pod_status.h: the READY, STATUS and RESTARTS columns of
// `kubectl get pods`, as the API server's table printer computes them.
//
// One piece of code for every place gpuops shows a pod's status: diagnose's
// evidence and reasons (core/diagnose/diagnose.h) and the simulator's Table responses
// (simulator/apiserver/api_table.h). Pure functions of a core::Pod; nothing here reads
// the clock.
//
// Upstream: printPod, kubernetes pkg/printers/internalversion/printers.go
// (summarised in docs/reference/daemonset-semantics.md §5). Not modelled, because
// core::Pod does not carry them: restartable (sidecar) init containers
// (initContainers[].restartPolicy: Always, which count in READY's total and
// do not block initialization), terminated signal numbers ("Signal:N",
// "Init:Signal:N"), and the "(<age> ago)" suffix of RESTARTS (lastState is not
// modelled).
#pragma once

#include <optional>
#include <string>

#include "core/model/model.h"

namespace gpuops::core {

// One pod's row of `kubectl get pods`, the columns that depend on its status.
struct PodColumns {
  int ready = 0;       // READY numerator: regular containers Ready and running
  int total = 0;       // READY denominator: len(spec.containers)
  std::string status;  // STATUS, as pod_status_column
  int restarts = 0;    // RESTARTS, the number only
};

// Mirrors printPod (kubernetes pkg/printers/internalversion/printers.go):
//  * STATUS starts as status.phase, replaced by status.reason when set, by
//    "SchedulingGated" when a PodScheduled condition has that reason;
//  * then the first init container status that has not terminated with exit
//    code 0 gives "Init:<terminated reason>", "Init:ExitCode:<n>" (terminated
//    without a reason), "Init:<waiting reason>" (unless PodInitializing) or
//    "Init:<i>/<n>" (i its index, n the number of init containers) and marks
//    the pod initializing; RESTARTS sums the init statuses up to that one;
//  * when not initializing, or when the Initialized condition is True anyway,
//    RESTARTS restarts from 0 and the regular container statuses are walked
//    last to first: a waiting reason, a terminated reason or
//    "ExitCode:<n>" replaces STATUS; a Ready running container counts in
//    READY; each adds its restartCount; "Completed" with a running container
//    becomes "Running" (Ready condition True) or "NotReady";
//  * finally, with metadata.deletionTimestamp set: "Unknown" when
//    status.reason is "NodeLost" (NodeUnreachablePodReason), else
//    "Terminating" unless the phase is Succeeded or Failed.
// A terminated status without exitCode counts as exit code 0 (Go's zero
// value). One deviation, for kubectl dumps whose spec omits the init
// containers: <n> of "Init:<i>/<n>" is then the number of init container
// statuses.
PodColumns print_pod(const Pod& pod);

// print_pod(pod).status: the STATUS column, e.g. "Running", "Init:0/1",
// "Init:CrashLoopBackOff", "ContainerCreating", "Terminating".
std::string pod_status_column(const Pod& pod);

// A node's STATUS column, mirroring printNode (pkg/printers/internalversion/
// printers.go) for the conditions gpuops reads: the Ready condition's status
// `ready` ("True": Ready, "False": NotReady, anything else or "" when the
// node has none: Unknown), then ",SchedulingDisabled" when `unschedulable`.
std::string node_status_column(const std::string& ready, bool unschedulable);

// Phase Succeeded or Failed (IsPodPhaseTerminal, kubernetes pkg/api/v1/pod
// util.go).
bool is_pod_phase_terminal(const Pod& pod);

// The DaemonSet controller's pod order, mirroring
// podByCreationTimestampAndPhase.Less (kubernetes pkg/controller/daemon/
// daemon_controller.go): bound pods (spec.nodeName set) first, then the older
// creationTimestamp (an absent one is Go's zero time, the oldest), then the
// name.
bool pod_by_creation_timestamp_and_phase(const Pod* a, const Pod* b);

// The pod sits on its node with no container ever started, the shape the
// kubelet leaves while RunPodSandbox fails (kuberuntime SyncPod: a failed
// sandbox creation is retried with backoff and no container is created):
// bound (spec.nodeName), phase Pending, not terminating, the condition
// PodReadyToStartContainers not True, no pod IP (unless hostNetwork), and
// either every init and regular container status `waiting` with reason
// "", "ContainerCreating" or "PodInitializing" (no restart, no previous
// run), or no container status at all while PodReadyToStartContainers is
// False. A pod just bound has the same shape for a moment: how long it has
// lasted is the caller's to weigh (sandbox_wait_since).
bool sandbox_not_started(const Pod& pod);

// Since when the pod has waited for its sandbox: PodScheduled's
// lastTransitionTime, else status.startTime, else the creation timestamp;
// nullopt when the pod has none.
std::optional<Time> sandbox_wait_since(const Pod& pod);

}  // namespace gpuops::core
