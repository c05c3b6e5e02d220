// Fake kubelet profiles, faults and scheduler filters.
#include <gtest/gtest.h>

#include "../helpers.h"

namespace gpuops::simulator {
namespace {

using namespace std::chrono_literals;
using namespace testing;

FakeCluster::Options kubelet_profile() {
  FakeCluster::Options o;
  o.profile = KubeletProfile::kKubelet;
  o.start_delay = 3s;
  return o;
}

// kubelet profile: Pending (ContainerCreating) for the start delay, then
// Running and Ready.
TEST(KubeletProfile, StartDelay) {
  FakeCluster c(kubelet_profile());
  c.create_namespace(kNs);
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.run();
  auto p = pods_of(c.state(kNs), "nvidia-driver-daemonset").at(0);
  EXPECT_EQ(p.status.phase, "Pending");
  EXPECT_EQ(p.spec.node_name, "a");
  ASSERT_EQ(p.status.container_statuses.size(), 1u);
  EXPECT_EQ(p.status.container_statuses[0].state, "waiting");
  EXPECT_EQ(p.status.container_statuses[0].reason, "ContainerCreating");
  c.advance(2999ms);
  EXPECT_EQ(pods_of(c.state(kNs), "nvidia-driver-daemonset").at(0).status.phase, "Pending");
  c.advance(1ms);
  p = pods_of(c.state(kNs), "nvidia-driver-daemonset").at(0);
  EXPECT_EQ(p.status.phase, "Running");
  EXPECT_TRUE(p.is_ready());
}

// kubelet profile: graceful deletion (CheckGracefulDelete): the pod keeps
// running with deletionTimestamp = now + terminationGracePeriodSeconds
// (default 30), then goes; the node counts it as misscheduled meanwhile and
// no replacement is made while it terminates.
TEST(KubeletProfile, GracePeriodAndNoReplacementWhileTerminating) {
  FakeCluster c(kubelet_profile());
  c.create_namespace(kNs);
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  core::Time t0 = c.now();
  std::string old = pods_of(c.state(kNs), "nvidia-driver-daemonset").at(0).metadata.name;
  c.delete_pod(kNs, old);
  c.advance(29s);
  auto pods = pods_of(c.state(kNs), "nvidia-driver-daemonset");
  ASSERT_EQ(pods.size(), 1u);  // no replacement while the old one terminates
  EXPECT_EQ(pods[0].metadata.name, old);
  EXPECT_EQ(pods[0].status.phase, "Running");
  ASSERT_TRUE(pods[0].metadata.deletion_timestamp.has_value());
  EXPECT_EQ(*pods[0].metadata.deletion_timestamp, t0 + 30s);
  EXPECT_EQ(pods[0].metadata.deletion_grace_period_seconds, 30);
  // Still current on a node that should run it.
  EXPECT_EQ(ds_of(c.state(kNs), "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
  c.advance(1s);  // t0+30 s: gone, replacement created (Pending for the start delay)
  pods = pods_of(c.state(kNs), "nvidia-driver-daemonset");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_NE(pods[0].metadata.name, old);
  EXPECT_EQ(pods[0].status.phase, "Pending");
  c.settle();
  EXPECT_EQ(pods_of(c.state(kNs), "nvidia-driver-daemonset").at(0).status.phase, "Running");
}

// terminationGracePeriodSeconds from the template is honoured.
TEST(KubeletProfile, TemplateGracePeriod) {
  FakeCluster c(kubelet_profile());
  c.create_namespace(kNs);
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver", {{}, {}, "5", 0})});
  c.settle();
  c.set_node_label("a", "nvidia.com/gpu.deploy.driver", "false");
  c.advance(4s);
  EXPECT_EQ(pods_of(c.state(kNs), "nvidia-driver-daemonset").size(), 1u);
  EXPECT_EQ(ds_of(c.state(kNs), "nvidia-driver-daemonset").status, status(0, 0, 1, 0, 0, 0, 0));
  c.advance(1s);
  EXPECT_TRUE(pods_of(c.state(kNs), "nvidia-driver-daemonset").empty());
}

// kwok profile: a deleted pod goes at once (pod-delete stage, grace 0).
TEST(KwokProfile, DeletionIsImmediate) {
  FakeCluster c;
  c.create_namespace(kNs);
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  c.set_node_label("a", "nvidia.com/gpu.deploy.driver", "false");
  c.run();
  EXPECT_TRUE(pods_of(c.state(kNs), "nvidia-driver-daemonset").empty());
}

// KWOK node-initialize: a node without allocatable gets cpu 1k, memory 1Ti,
// pods 1M, and the standard conditions with Ready=True.
TEST(KwokProfile, NodeInitializeDefaults) {
  FakeCluster c;
  c.add_node(make_node("a"));
  c.settle();
  auto n = c.state("x").nodes.at(0);
  EXPECT_EQ(n.allocatable.at("cpu"), core::Quantity::parse("1000"));
  EXPECT_EQ(n.allocatable.at("memory"), core::Quantity::parse("1Ti"));
  EXPECT_EQ(n.allocatable.at("pods"), core::Quantity::parse("1000000"));
  EXPECT_EQ(n.ready_status(), "True");
  EXPECT_EQ(n.conditions.size(), 5u);
}

// A node whose Ready condition has no status (a PUT of its status can leave
// it so): the standard Ready replaces it, the others are added once. Before,
// the five were appended behind it, ready_status() still read "", and the
// node was initialized again every round, 5 conditions longer each time
// (found by fuzz/fuzz_api_server: fuzz/regressions/api_server/).
TEST(KwokProfile, NodeInitializeReplacesAReadyWithoutStatus) {
  FakeCluster c;
  core::Node node = make_node("a");
  node.conditions = {{"Ready", "", "", ""}, {"MemoryPressure", "True", "Hand", "set by hand"}};
  c.add_node(node);
  c.settle();
  auto n = c.state("x").nodes.at(0);
  EXPECT_EQ(n.ready_status(), "True");
  ASSERT_EQ(n.conditions.size(), 5u);
  EXPECT_EQ(n.conditions[0].type, "Ready");
  EXPECT_EQ(n.conditions[1].type, "MemoryPressure");
  EXPECT_EQ(n.conditions[1].status, "True");  // kept
}

class FaultTest : public ::testing::TestWithParam<KubeletProfile> {
 protected:
  FaultTest()
      : c([] {
          FakeCluster::Options o;
          o.profile = GetParam();
          return o;
        }()) {
    c.create_namespace(kNs);
    c.add_node(make_node("a", all_deploy_labels()));
    c.add_node(make_node("b", all_deploy_labels()));
  }
  core::Pod pod_on(const std::string& ds, const std::string& node) {
    for (const auto& p : pods_of(c.state(kNs), ds))
      if (p.target_node() == node) return p;
    throw std::runtime_error("no pod");
  }
  FakeCluster c;
};

// Image pull failure: Pending, container waiting ErrImagePull (kubelet
// profile, first 10 s) then ImagePullBackOff. Only the faulted node.
TEST_P(FaultTest, ImagePull) {
  c.inject_fault(Fault{FaultKind::kImagePull, "a", "nvidia-driver-daemonset", ""});
  c.apply({lab_daemonset("driver")});
  c.settle();
  auto p = pod_on("nvidia-driver-daemonset", "a");
  EXPECT_EQ(p.status.phase, "Pending");
  EXPECT_EQ(p.spec.node_name, "a");
  EXPECT_EQ(p.status.container_statuses.at(0).reason, "ImagePullBackOff");
  EXPECT_EQ(p.status.container_statuses.at(0).message,
            "Back-off pulling image \"nvcr.io/nvidia/driver:550.90.07-ubuntu22.04\"");
  EXPECT_EQ(pod_on("nvidia-driver-daemonset", "b").status.phase, "Running");
  EXPECT_EQ(ds_of(c.state(kNs), "nvidia-driver-daemonset").status, status(2, 2, 0, 1, 2, 1, 1));
  // Clearing the fault: the kubelet pulls and starts it.
  c.clear_faults();
  c.settle();
  EXPECT_TRUE(pod_on("nvidia-driver-daemonset", "a").is_ready());
}

// Crash loop: Running, not Ready, waiting CrashLoopBackOff.
TEST_P(FaultTest, CrashLoop) {
  c.inject_fault(Fault{FaultKind::kCrashLoop, "", "nvidia-driver-daemonset", ""});
  c.apply({lab_daemonset("driver"), lab_daemonset("container-toolkit")});
  c.settle();
  auto p = pod_on("nvidia-driver-daemonset", "a");
  EXPECT_EQ(p.status.phase, "Running");
  EXPECT_FALSE(p.is_ready());
  EXPECT_EQ(p.status.container_statuses.at(0).reason, "CrashLoopBackOff");
  EXPECT_EQ(p.status.container_statuses.at(0).restart_count, 5);
  EXPECT_EQ(ds_of(c.state(kNs), "nvidia-driver-daemonset").status, status(2, 2, 0, 0, 2, 0, 2));
  EXPECT_TRUE(pod_on("nvidia-container-toolkit-daemonset", "a").is_ready());
}

// Never Ready: Running, container running, Ready False.
TEST_P(FaultTest, NeverReady) {
  c.inject_fault(Fault{FaultKind::kNeverReady, "b", "", ""});
  c.apply({lab_daemonset("driver")});
  c.settle();
  auto p = pod_on("nvidia-driver-daemonset", "b");
  EXPECT_EQ(p.status.phase, "Running");
  EXPECT_EQ(p.status.container_statuses.at(0).state, "running");
  EXPECT_FALSE(p.is_ready());
  EXPECT_EQ(p.condition("Ready")->reason, "ContainersNotReady");
  EXPECT_EQ(ds_of(c.state(kNs), "nvidia-driver-daemonset").status, status(2, 2, 0, 1, 2, 1, 1));
}

// Stuck in Init: Pending, first init container running, containers waiting
// PodInitializing, Initialized False.
TEST_P(FaultTest, StuckInInit) {
  c.inject_fault(Fault{FaultKind::kStuckInInit, "", "", ""});
  c.apply({lab_daemonset("device-plugin", {{}, {"toolkit-validation"}, "", 0}), lab_daemonset("driver")});
  c.settle();
  auto p = pod_on("nvidia-device-plugin-daemonset", "a");
  EXPECT_EQ(p.status.phase, "Pending");
  ASSERT_EQ(p.status.init_container_statuses.size(), 1u);
  EXPECT_EQ(p.status.init_container_statuses[0].name, "toolkit-validation");
  EXPECT_EQ(p.status.init_container_statuses[0].state, "running");
  EXPECT_EQ(p.status.container_statuses.at(0).reason, "PodInitializing");
  EXPECT_EQ(p.condition("Initialized")->status, "False");
  EXPECT_EQ(p.condition("Initialized")->message, "containers with incomplete status: [toolkit-validation]");
  // A pod without init containers is not affected.
  EXPECT_TRUE(pod_on("nvidia-driver-daemonset", "a").is_ready());
}

INSTANTIATE_TEST_SUITE_P(Profiles, FaultTest, ::testing::Values(KubeletProfile::kKwok, KubeletProfile::kKubelet));

// Scheduler: Too many pods (pods allocatable), and an untolerated taint seen
// by the scheduler (a pod created before the taint was added).
TEST(Scheduler, TooManyPods) {
  FakeCluster c;
  c.create_namespace(kNs);
  c.add_node(make_node("a", all_deploy_labels(), {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "1"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  c.apply({lab_daemonset("container-toolkit")});
  c.settle();
  auto p = pods_of(c.state(kNs), "nvidia-container-toolkit-daemonset").at(0);
  EXPECT_EQ(p.status.phase, "Pending");
  EXPECT_EQ(p.condition("PodScheduled")->message,
            "0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims "
            "found for incoming pod.");
  // Freeing the slot lets the scheduler place it (retry on pod deletion).
  c.set_node_label("a", "nvidia.com/gpu.deploy.driver", "false");
  c.settle();
  EXPECT_EQ(pods_of(c.state(kNs), "nvidia-container-toolkit-daemonset").at(0).status.phase, "Running");
}

// Resources are not the controller's business: a node whose memory frees up
// gets its pending pod bound without any DaemonSet change.
TEST(Scheduler, PendingPodBindsWhenMemoryFrees) {
  FakeCluster c;
  c.create_namespace(kNs);
  c.add_node(make_node("a", all_deploy_labels(), {{"cpu", "4"}, {"memory", "600Mi"}, {"pods", "110"}}));
  c.apply({lab_daemonset("container-toolkit"), lab_daemonset("device-plugin")});  // 256Mi
  c.settle();
  c.apply({lab_daemonset("driver")});  // 512Mi > 344Mi left
  c.settle();
  EXPECT_EQ(pods_of(c.state(kNs), "nvidia-driver-daemonset").at(0).status.phase, "Pending");
  c.set_node_label("a", "nvidia.com/gpu.deploy.device-plugin", "false");
  c.set_node_label("a", "nvidia.com/gpu.deploy.container-toolkit", "false");
  c.settle();
  EXPECT_EQ(pods_of(c.state(kNs), "nvidia-driver-daemonset").at(0).status.phase, "Running");
}

// A pod with no node affinity and no nodeName (not a DaemonSet's) is placed
// by the scheduler's own search, then belongs to that node like any other:
// the node lifecycle controller marks it not Ready when the node becomes
// unreachable (MarkPodsNotReady), and pod GC deletes it once the node is
// gone (gcOrphaned: 40 s quarantine on the 20 s loop).
TEST(NodeLifecycle, PodPlacedByTheSchedulerBelongsToItsNode) {
  FakeCluster c;
  c.create_namespace(kNs);
  c.add_node(make_node("a"));
  core::Pod p;
  p.metadata.namespace_ = kNs;
  p.metadata.name = "bare";
  p.spec.containers.push_back(core::Container{"c", "busybox", {}, {}});
  c.store().create(p);
  c.settle();
  const PodRecord* rec = c.store().find_pod(kNs, "bare");
  ASSERT_NE(rec, nullptr);
  EXPECT_EQ(rec->node_name, "a");
  EXPECT_TRUE(rec->is_ready());
  c.set_node_ready("a", "Unknown");
  c.settle();
  rec = c.store().find_pod(kNs, "bare");
  ASSERT_NE(rec, nullptr);
  EXPECT_FALSE(rec->is_ready());
  c.delete_node("a");
  c.advance(60s);
  EXPECT_EQ(c.store().find_pod(kNs, "bare"), nullptr);
}

// reconcileNodeLabels (pkg/controller/nodelifecycle, labelReconcileInfo):
// on every node add and update, beta.kubernetes.io/os and
// beta.kubernetes.io/arch are set to kubernetes.io/os and kubernetes.io/arch
// when missing or different (the stable label is the source of truth); a node
// without the stable label is left alone, and nothing removes a beta label.
TEST(NodeLifecycle, BetaOsAndArchLabelsFollowTheStableOnes) {
  FakeCluster c;
  c.add_node(make_node("a", {{"kubernetes.io/os", "linux"}, {"kubernetes.io/arch", "amd64"}}));
  c.add_node(make_node("b", {{"beta.kubernetes.io/arch", "arm64"}}));
  c.settle();
  auto labels = [&](const std::string& n) { return c.store().find_node(n)->metadata.labels; };
  EXPECT_EQ(labels("a").at("beta.kubernetes.io/os"), "linux");
  EXPECT_EQ(labels("a").at("beta.kubernetes.io/arch"), "amd64");
  EXPECT_EQ(labels("b").count("beta.kubernetes.io/os"), 0u);      // no kubernetes.io/os
  EXPECT_EQ(labels("b").at("beta.kubernetes.io/arch"), "arm64");  // no kubernetes.io/arch: kept
  c.set_node_label("a", "kubernetes.io/arch", "arm64");
  c.settle();
  EXPECT_EQ(labels("a").at("beta.kubernetes.io/arch"), "arm64");  // differs: the stable value
  c.set_node_label("a", "beta.kubernetes.io/os", std::nullopt);
  c.settle();
  EXPECT_EQ(labels("a").at("beta.kubernetes.io/os"), "linux");  // removed: added back
  c.set_node_label("a", "kubernetes.io/os", std::nullopt);
  c.settle();
  EXPECT_EQ(labels("a").count("kubernetes.io/os"), 0u);
  EXPECT_EQ(labels("a").at("beta.kubernetes.io/os"), "linux");  // the stable one gone: left as is
}

}  // namespace
}  // namespace gpuops::simulator
