// Unit tests for core/pod_status.h. Each expected value is what upstream's
// printPod (kubernetes pkg/printers/internalversion/printers.go; summarised in
// docs/reference/daemonset-semantics.md §5) prints for the pod; the comment on each
// case names the rule of printPod that decides it.
#include "core/kube/pod_status.h"

#include <gtest/gtest.h>

namespace gpuops::core {
namespace {

ContainerStatus running(const std::string& name, bool ready, int32_t restarts = 0) {
  return {name, ready, restarts, "running", "", "", std::nullopt};
}
ContainerStatus waiting(const std::string& name, const std::string& reason, int32_t restarts = 0) {
  return {name, false, restarts, "waiting", reason, "", std::nullopt};
}
ContainerStatus terminated(const std::string& name, const std::string& reason, std::optional<int32_t> code,
                           int32_t restarts = 0) {
  return {name, false, restarts, "terminated", reason, "", code};
}

Pod pod(const std::string& phase, size_t containers = 1, size_t init_containers = 0) {
  Pod p;
  p.metadata.name = "p";
  p.status.phase = phase;
  for (size_t i = 0; i < containers; ++i) p.spec.containers.push_back({"c" + std::to_string(i), "", {}, {}});
  for (size_t i = 0; i < init_containers; ++i) p.spec.init_containers.push_back({"i" + std::to_string(i), "", {}, {}});
  return p;
}

void condition(Pod& p, const std::string& type, const std::string& status, const std::string& reason = "") {
  p.status.conditions.push_back({type, status, reason, "", std::nullopt});
}

// `reason := string(pod.Status.Phase)`.
TEST(PrintPod, StartsWithThePhase) {
  EXPECT_EQ(pod_status_column(pod("Pending")), "Pending");
  EXPECT_EQ(pod_status_column(pod("Running")), "Running");
}

// `if pod.Status.Reason != "" { reason = pod.Status.Reason }`: a kubelet
// admission rejection.
TEST(PrintPod, StatusReasonReplacesThePhase) {
  Pod p = pod("Failed");
  p.status.reason = "OutOfmemory";
  EXPECT_EQ(pod_status_column(p), "OutOfmemory");
}

// `condition.Type == api.PodScheduled && condition.Reason ==
// apiv1.PodReasonSchedulingGated`: the reason becomes SchedulingGated.
TEST(PrintPod, SchedulingGated) {
  Pod p = pod("Pending");
  condition(p, "PodScheduled", "False", "SchedulingGated");
  EXPECT_EQ(pod_status_column(p), "SchedulingGated");
  // Another PodScheduled reason leaves the phase.
  Pod q = pod("Pending");
  condition(q, "PodScheduled", "False", "Unschedulable");
  EXPECT_EQ(pod_status_column(q), "Pending");
}

// Init containers: `State.Terminated != nil && ExitCode == 0` continues;
// otherwise the `default:` case gives fmt.Sprintf("Init:%d/%d", i,
// len(pod.Spec.InitContainers)) for a running (or PodInitializing) one.
TEST(PrintPod, InitProgress) {
  Pod p = pod("Pending", 1, 3);
  p.status.init_container_statuses = {terminated("i0", "Completed", 0), running("i1", false),
                                      waiting("i2", "PodInitializing")};
  p.status.container_statuses = {waiting("c0", "PodInitializing")};
  EXPECT_EQ(pod_status_column(p), "Init:1/3");
  // A waiting PodInitializing init container is the `default:` case too.
  p.status.init_container_statuses[1] = waiting("i1", "PodInitializing");
  EXPECT_EQ(pod_status_column(p), "Init:1/3");
}

// `State.Waiting != nil && len(Reason) > 0 && Reason != "PodInitializing"`:
// "Init:" + the waiting reason.
TEST(PrintPod, InitWaitingReason) {
  Pod p = pod("Pending", 1, 1);
  p.status.init_container_statuses = {waiting("i0", "CrashLoopBackOff", 3)};
  EXPECT_EQ(pod_status_column(p), "Init:CrashLoopBackOff");
}

// `State.Terminated != nil` with a non-zero exit code: "Init:" + the
// terminated reason, or fmt.Sprintf("Init:ExitCode:%d") without a reason.
TEST(PrintPod, InitFailed) {
  Pod p = pod("Pending", 1, 1);
  p.status.init_container_statuses = {terminated("i0", "Error", 1)};
  EXPECT_EQ(pod_status_column(p), "Init:Error");
  p.status.init_container_statuses = {terminated("i0", "", 2)};
  EXPECT_EQ(pod_status_column(p), "Init:ExitCode:2");
}

// Regular containers are walked `for i := len(ContainerStatuses) - 1; i >=
// 0; i--`, and each waiting/terminated reason overwrites the previous one, so
// the first container in the list that has one wins.
TEST(PrintPod, ContainerReasonsLastToFirst) {
  Pod p = pod("Pending", 2);
  p.status.container_statuses = {waiting("c0", "ContainerCreating"), waiting("c1", "ErrImagePull")};
  EXPECT_EQ(pod_status_column(p), "ContainerCreating");
  Pod q = pod("Running", 1);
  q.status.container_statuses = {waiting("c0", "CrashLoopBackOff", 5)};
  EXPECT_EQ(pod_status_column(q), "CrashLoopBackOff");
}

// `State.Terminated != nil && Reason == ""`: fmt.Sprintf("ExitCode:%d").
TEST(PrintPod, ContainerExitCode) {
  Pod p = pod("Failed");
  p.status.container_statuses = {terminated("c0", "", 137)};
  EXPECT_EQ(pod_status_column(p), "ExitCode:137");
  p.status.container_statuses = {terminated("c0", "OOMKilled", 137)};
  EXPECT_EQ(pod_status_column(p), "OOMKilled");
}

// `if reason == "Completed" && hasRunning`: "Running" when
// hasPodReadyCondition, else "NotReady".
TEST(PrintPod, CompletedWithARunningContainer) {
  Pod p = pod("Running", 2);
  p.status.container_statuses = {terminated("c0", "Completed", 0), running("c1", true)};
  EXPECT_EQ(pod_status_column(p), "NotReady");
  condition(p, "Ready", "True");
  EXPECT_EQ(pod_status_column(p), "Running");
}

// `if !initializing || isPodInitializedConditionTrue(&pod.Status)`: with
// Initialized=True the regular containers are read although an init
// container has not finished.
TEST(PrintPod, InitializedConditionReadsContainers) {
  Pod p = pod("Running", 1, 1);
  p.status.init_container_statuses = {running("i0", false, 2)};
  p.status.container_statuses = {waiting("c0", "CrashLoopBackOff", 4)};
  EXPECT_EQ(pod_status_column(p), "Init:0/1");
  condition(p, "Initialized", "True");
  PodColumns row = print_pod(p);
  EXPECT_EQ(row.status, "CrashLoopBackOff");
  // `restarts = restartableInitContainerRestarts` (no sidecars: 0) before
  // the regular containers add theirs.
  EXPECT_EQ(row.restarts, 4);
}

// `pod.DeletionTimestamp != nil && pod.Status.Reason ==
// node.NodeUnreachablePodReason` ("NodeLost"): "Unknown"; else
// `DeletionTimestamp != nil && !IsPodPhaseTerminal(podPhase)`: "Terminating".
TEST(PrintPod, Deletion) {
  Pod p = pod("Running");
  p.status.container_statuses = {running("c0", true)};
  p.metadata.deletion_timestamp = Time(Duration(5));
  EXPECT_EQ(pod_status_column(p), "Terminating");
  p.status.reason = "NodeLost";
  EXPECT_EQ(pod_status_column(p), "Unknown");
  // A pending pod being deleted is Terminating too.
  Pod q = pod("Pending", 1, 1);
  q.status.init_container_statuses = {running("i0", false)};
  q.metadata.deletion_timestamp = Time(Duration(5));
  EXPECT_EQ(pod_status_column(q), "Terminating");
}

// IsPodPhaseTerminal: a Succeeded or Failed pod keeps its status when deleted.
TEST(PrintPod, FinishedPodsAreNotTerminating) {
  Pod f = pod("Failed");
  f.status.reason = "OutOfmemory";
  f.metadata.deletion_timestamp = Time(Duration(5));
  EXPECT_EQ(pod_status_column(f), "OutOfmemory");
  Pod s = pod("Succeeded");
  s.status.container_statuses = {terminated("c0", "Completed", 0)};
  s.metadata.deletion_timestamp = Time(Duration(5));
  EXPECT_EQ(pod_status_column(s), "Completed");
  EXPECT_TRUE(is_pod_phase_terminal(f));
  EXPECT_TRUE(is_pod_phase_terminal(s));
  EXPECT_FALSE(is_pod_phase_terminal(pod("Running")));
  EXPECT_FALSE(is_pod_phase_terminal(pod("Pending")));
}

// READY: `totalContainers := len(pod.Spec.Containers)`; `readyContainers++`
// for a container that is `Ready && State.Running != nil`. RESTARTS: the sum
// of restartCount, init containers included only while initializing.
TEST(PrintPod, ReadyAndRestarts) {
  Pod p = pod("Running", 3, 1);
  p.status.init_container_statuses = {terminated("i0", "Completed", 0, 7)};
  p.status.container_statuses = {running("c0", true, 1), running("c1", false, 2), waiting("c2", "CrashLoopBackOff", 3)};
  PodColumns row = print_pod(p);
  EXPECT_EQ(row.ready, 1);
  EXPECT_EQ(row.total, 3);
  EXPECT_EQ(row.restarts, 6);  // 1 + 2 + 3; the init container's 7 is dropped once initialized
  EXPECT_EQ(row.status, "CrashLoopBackOff");
  // Initializing: the init restarts up to the unfinished one count.
  Pod q = pod("Pending", 1, 2);
  q.status.init_container_statuses = {terminated("i0", "Completed", 0, 1), waiting("i1", "CrashLoopBackOff", 4)};
  q.status.container_statuses = {waiting("c0", "PodInitializing")};
  PodColumns init_row = print_pod(q);
  EXPECT_EQ(init_row.restarts, 5);
  EXPECT_EQ(init_row.ready, 0);
  EXPECT_EQ(init_row.total, 1);
}

// The shape kuberuntime leaves while RunPodSandbox fails: SyncPod returns
// before it creates a container, so every status is the waiting one
// generateAPIPodStatus gives a container never started, and no pod IP.
Pod never_started() {
  Pod p;
  p.spec.node_name = "gpu-1";
  p.status.phase = "Pending";
  p.status.init_container_statuses = {waiting("toolkit-validation", "PodInitializing")};
  p.status.container_statuses = {waiting("nvidia-device-plugin", "PodInitializing")};
  return p;
}

TEST(SandboxNotStarted, NoContainerEverStartedAndNoPodIP) {
  EXPECT_TRUE(sandbox_not_started(never_started()));
  Pod p = never_started();
  p.status.container_statuses[0].reason = "ContainerCreating";
  EXPECT_TRUE(sandbox_not_started(p));
  p.status.container_statuses[0].reason = "";
  EXPECT_TRUE(sandbox_not_started(p));
  // A gate running (its loop waits for a file) means the sandbox is up.
  p = never_started();
  p.status.init_container_statuses[0] = running("toolkit-validation", false);
  EXPECT_FALSE(sandbox_not_started(p));
  // A container that ran before, or an image that cannot be pulled.
  p = never_started();
  p.status.init_container_statuses[0].restart_count = 1;
  EXPECT_FALSE(sandbox_not_started(p));
  p = never_started();
  p.status.init_container_statuses[0].reason = "ErrImagePull";
  EXPECT_FALSE(sandbox_not_started(p));
  // A pod IP is the sandbox's; a hostNetwork pod has the node's from the start.
  p = never_started();
  p.status.pod_ip = "10.244.1.7";
  EXPECT_FALSE(sandbox_not_started(p));
  p.spec.host_network = true;
  EXPECT_TRUE(sandbox_not_started(p));
  // PodReadyToStartContainers True: the sandbox runs.
  p = never_started();
  p.status.conditions.push_back({"PodReadyToStartContainers", "True", "", "", std::nullopt});
  EXPECT_FALSE(sandbox_not_started(p));
  // No status at all: only the condition False says so.
  p = never_started();
  p.status.init_container_statuses.clear();
  p.status.container_statuses.clear();
  EXPECT_FALSE(sandbox_not_started(p));
  p.status.conditions.push_back({"PodReadyToStartContainers", "False", "", "", std::nullopt});
  EXPECT_TRUE(sandbox_not_started(p));
  // Unbound, not Pending, or terminating: not this shape.
  p = never_started();
  p.spec.node_name.clear();
  EXPECT_FALSE(sandbox_not_started(p));
  p = never_started();
  p.status.phase = "Running";
  EXPECT_FALSE(sandbox_not_started(p));
  p = never_started();
  p.metadata.deletion_timestamp = Time{};
  EXPECT_FALSE(sandbox_not_started(p));
}

TEST(SandboxNotStarted, WaitsSinceScheduledElseStartElseCreation) {
  Pod p = never_started();
  EXPECT_EQ(sandbox_wait_since(p), std::nullopt);
  p.metadata.creation_timestamp = Time{std::chrono::seconds(100)};
  EXPECT_EQ(sandbox_wait_since(p), Time{std::chrono::seconds(100)});
  p.status.start_time = Time{std::chrono::seconds(200)};
  EXPECT_EQ(sandbox_wait_since(p), Time{std::chrono::seconds(200)});
  p.status.conditions.push_back({"PodScheduled", "True", "", "", Time{std::chrono::seconds(150)}});
  EXPECT_EQ(sandbox_wait_since(p), Time{std::chrono::seconds(150)});
}

}  // namespace
}  // namespace gpuops::core
