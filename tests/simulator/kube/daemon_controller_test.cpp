// DaemonSet controller rules (kubernetes pkg/controller/daemon), each with
// expected values worked out from upstream's code as summarized in
// shared/reference/daemonset-semantics.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include <vector>

#include <string>

#include <optional>

#include <map>

#include <memory>

#include "../helpers.h"
#include "core/kube/placement.h"
#include "core/model/rfc3339.h"

namespace gpuops::simulator {
namespace {

using namespace std::chrono_literals;
using namespace testing;

class DaemonSetTest : public ::testing::Test {
 protected:
  explicit DaemonSetTest(FakeCluster::Options o = {}) : c(o) { c.create_namespace(kNs); }
  core::ClusterState st() { return c.state(kNs); }
  FakeCluster c;
};

// NodeShouldRunDaemonPod via core::should_run: nodeSelector must match;
// desiredNumberScheduled counts only matching nodes; one pod per such node.
TEST_F(DaemonSetTest, OnePodPerMatchingNode) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.add_node(make_node("b", {{"nvidia.com/gpu.deploy.driver", "false"}}));
  c.add_node(make_node("c"));
  c.apply({lab_daemonset("driver")});
  c.settle();
  auto s = st();
  auto pods = pods_of(s, "nvidia-driver-daemonset");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].spec.node_name, "a");
  EXPECT_EQ(pods[0].status.phase, "Running");
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
}

// CreatePodTemplate + ReplaceDaemonSetPodNodeNameNodeAffinity
// (pkg/controller/daemon/util/daemonset_util.go): the pod is pinned by a
// single matchFields metadata.name term (no nodeName at creation), carries the
// default daemon tolerations, controller-revision-hash and
// pod-template-generation labels, a `<ds>-xxxxx` name and a controller
// ownerReference with the DaemonSet's uid.
TEST_F(DaemonSetTest, CreatedPodIsPinnedAndTolerant) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver", {{"{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"}, {}, "", 0})});
  c.run();  // one pass: created, bound, running; inspect the created shape
  auto s = st();
  auto pods = pods_of(s, "nvidia-driver-daemonset");
  ASSERT_EQ(pods.size(), 1u);
  const core::Pod& p = pods[0];
  const core::DaemonSet& d = ds_of(s, "nvidia-driver-daemonset");
  // Name: generateName "<ds>-" plus 5 characters of utilrand's alphabet.
  ASSERT_EQ(p.metadata.name.size(), std::string("nvidia-driver-daemonset-").size() + 5);
  EXPECT_EQ(p.metadata.name.rfind("nvidia-driver-daemonset-", 0), 0u);
  EXPECT_EQ(p.metadata.name.substr(24).find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos);
  // Pinning.
  ASSERT_TRUE(p.spec.required_node_affinity.has_value());
  ASSERT_EQ(p.spec.required_node_affinity->size(), 1u);
  const auto& term = p.spec.required_node_affinity->at(0);
  EXPECT_TRUE(term.match_expressions.empty());
  ASSERT_EQ(term.match_fields.size(), 1u);
  EXPECT_EQ(term.match_fields[0].key, "metadata.name");
  EXPECT_EQ(term.match_fields[0].op_text(), "In");
  EXPECT_EQ(term.match_fields[0].values, std::vector<std::string>{"a"});
  EXPECT_EQ(p.target_node(), "a");
  // The user toleration first, then the six defaults (no hostNetwork).
  ASSERT_EQ(p.spec.tolerations.size(), 7u);
  EXPECT_EQ(p.spec.tolerations[0].key, "nvidia.com/gpu");
  EXPECT_EQ(p.spec.tolerations, core::with_daemon_tolerations(d.template_.spec.tolerations, false));
  // Labels and owner.
  EXPECT_EQ(p.metadata.labels.at("app"), "nvidia-driver-daemonset");
  EXPECT_FALSE(p.metadata.labels.at("controller-revision-hash").empty());
  EXPECT_EQ(p.metadata.labels.at("pod-template-generation"), "1");
  const core::OwnerReference* ref = p.metadata.controller_ref();
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(ref->kind, "DaemonSet");
  EXPECT_EQ(ref->api_version, "apps/v1");
  EXPECT_EQ(ref->name, "nvidia-driver-daemonset");
  EXPECT_EQ(ref->uid, d.metadata.uid);
  // API defaulting.
  EXPECT_EQ(p.spec.termination_grace_period_seconds, 30);
}

// The scheduler binds the pinned pod: nodeName set, PodScheduled=True.
TEST_F(DaemonSetTest, SchedulerBindsToPinnedNode) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.add_node(make_node("b", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  for (const auto& p : pods_of(st(), "nvidia-driver-daemonset")) {
    EXPECT_EQ(p.spec.node_name, p.target_node());
    ASSERT_NE(p.condition("PodScheduled"), nullptr);
    EXPECT_EQ(p.condition("PodScheduled")->status, "True");
  }
}

// updateDaemonSetStatus: a pod the scheduler cannot place (Insufficient
// memory) is counted in desired, current and updated, not in ready or
// available, and is unavailable.
TEST_F(DaemonSetTest, PendingPodCountsAsCurrentNotReady) {
  c.add_node(make_node("big", {{"nvidia.com/gpu.deploy.driver", "true"}},
                       {{"memory", "64Gi"}, {"cpu", "16"}, {"pods", "110"}}));
  c.add_node(make_node("small", {{"nvidia.com/gpu.deploy.driver", "true"}},
                       {{"memory", "256Mi"}, {"cpu", "4"}, {"pods", "110"}}));
  c.apply({lab_daemonset("driver")});  // requests 512Mi
  c.settle();
  auto s = st();
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, status(2, 2, 0, 1, 2, 1, 1));
  for (const auto& p : pods_of(s, "nvidia-driver-daemonset")) {
    if (p.target_node() != "small") continue;
    EXPECT_EQ(p.status.phase, "Pending");
    EXPECT_TRUE(p.spec.node_name.empty());
    const core::PodCondition* sc = p.condition("PodScheduled");
    ASSERT_NE(sc, nullptr);
    EXPECT_EQ(sc->status, "False");
    EXPECT_EQ(sc->reason, "Unschedulable");
    // FitError: the pinned node fails NodeResourcesFit (preemption finds no
    // victims), the other is outside the NodeAffinity PreFilter result.
    EXPECT_EQ(sc->message,
              "0/2 nodes are available: 1 Insufficient memory, 1 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
              "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is "
              "not helpful for scheduling.");
  }
}

// SetDefaults_Pod: a container with a memory limit and no request asks for
// its limit, so the scheduler counts it (the template itself is not
// defaulted).
TEST_F(DaemonSetTest, LimitWithoutRequestIsTheRequest) {
  c.add_node(make_node("small", {{"nvidia.com/gpu.deploy.driver", "true"}},
                       {{"memory", "256Mi"}, {"cpu", "4"}, {"pods", "110"}}));
  core::DaemonSet d = lab_daemonset("driver");  // requests 512Mi
  d.template_.spec.containers[0].limits = d.template_.spec.containers[0].requests;
  d.template_.spec.containers[0].requests.clear();
  d.raw = boost::json::object();  // the typed fields only
  c.apply({d});
  c.settle();
  auto pods = pods_of(st(), "nvidia-driver-daemonset");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].status.phase, "Pending");
  EXPECT_NE(pods[0].condition("PodScheduled")->message.find("1 Insufficient memory"), std::string::npos);
}

// (false, false) -> delete: the node's label stops matching.
TEST_F(DaemonSetTest, LabelRemovedDeletesPod) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  c.set_node_label("a", "nvidia.com/gpu.deploy.driver", "false");
  c.settle();
  auto s = st();
  EXPECT_TRUE(pods_of(s, "nvidia-driver-daemonset").empty());
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, status(0, 0, 0, 0, 0, 0, 0));
}

// (false, true) -> keep: a NoSchedule taint added after the pod runs keeps
// the pod. syncNodeUpdate (v1.37) does not enqueue the DaemonSet for it
// (shouldRun false, shouldContinueRunning true, scheduled, numberMisscheduled
// 0), so the status stays as it was; the next sync for any other reason (here
// a new node that should run it) recounts: node a left desired, its pod is
// misscheduled. Untainting then enqueues (scheduled && numberMisscheduled > 0,
// PR #132477's trigger). Seen on kube-controller-manager v1.37.2
// (docs/FIDELITY.md, noschedule-after-pods-run).
TEST_F(DaemonSetTest, NoScheduleTaintKeepsPodMisscheduled) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  c.set_node_taints("a", {core::Taint{"dedicated", "ml-team", "NoSchedule", std::nullopt}});
  c.settle();
  auto s = st();
  auto pods = pods_of(s, "nvidia-driver-daemonset");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_FALSE(pods[0].metadata.deletion_timestamp.has_value());
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
  c.add_node(make_node("b", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.settle();
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 1, 1, 1, 1, 0));
  c.set_node_taints("a", {});
  c.settle();
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(2, 2, 0, 2, 2, 2, 0));
}

// (false, false) via an untolerated NoExecute taint -> deleted.
TEST_F(DaemonSetTest, NoExecuteTaintDeletesPod) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  c.set_node_taints("a", {core::Taint{"dedicated", "ml-team", "NoExecute", std::nullopt}});
  c.settle();
  auto s = st();
  EXPECT_TRUE(pods_of(s, "nvidia-driver-daemonset").empty());
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, status(0, 0, 0, 0, 0, 0, 0));
}

// A tolerated taint does not matter (ToleratesTaint with operator Exists).
TEST_F(DaemonSetTest, ToleratedTaintStillRuns) {
  core::Node n = make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}});
  n.taints.push_back(core::Taint{"nvidia.com/gpu", "present", "NoSchedule", std::nullopt});
  c.add_node(n);
  c.apply({lab_daemonset("driver", {{"{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"}, {}, "", 0})});
  c.settle();
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
}

// Cordon: the controller's default toleration for unschedulable:NoSchedule
// keeps the node desired, and new pods still land (NodeUnschedulable passes
// pods tolerating that taint).
TEST_F(DaemonSetTest, CordonedNodeStillGetsPods) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.set_node_unschedulable("a", true);
  c.settle();
  auto node = st().nodes.at(0);
  ASSERT_EQ(node.taints.size(), 1u);
  EXPECT_EQ(core::format_taint(node.taints[0]), "node.kubernetes.io/unschedulable:NoSchedule");
  c.apply({lab_daemonset("driver")});
  c.settle();
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
}

// Node NotReady posted by the kubelet: the node lifecycle controller adds
// not-ready NoSchedule and NoExecute taints. DaemonSet pods tolerate only the
// NoExecute one, so shouldRun is false and shouldContinueRunning true; but
// neither the lifecycle controller (MarkPodsNotReady only when it turns an
// observed Ready=True into Unknown itself) nor syncNodeUpdate (see
// NoScheduleTaintKeepsPodMisscheduled) touches anything else: the pod stays
// Ready and the status as it was. Seen on kube-controller-manager v1.37.2
// (docs/FIDELITY.md, notready-node).
TEST_F(DaemonSetTest, NotReadyNodeLeavesDesiredPodMisscheduled) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.add_node(make_node("b", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  c.set_node_ready("a", "False");
  c.settle();
  auto s = st();
  std::vector<std::string> taints;
  for (const auto& t : s.nodes.at(0).taints) taints.push_back(core::format_taint(t));
  EXPECT_EQ(taints, (std::vector<std::string>{"node.kubernetes.io/not-ready:NoSchedule",
                                              "node.kubernetes.io/not-ready:NoExecute"}));
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, status(2, 2, 0, 2, 2, 2, 0));
  for (const auto& p : pods_of(s, "nvidia-driver-daemonset")) {
    EXPECT_FALSE(p.metadata.deletion_timestamp.has_value());
    EXPECT_TRUE(p.is_ready()) << p.spec.node_name;
  }
  // The next sync (a pod deleted on b) recounts: a left desired, its pod is
  // misscheduled.
  for (const auto& p : pods_of(st(), "nvidia-driver-daemonset"))
    if (p.spec.node_name == "b") c.delete_pod(p.metadata.namespace_, p.metadata.name);
  c.settle();
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 1, 1, 1, 1, 0));
  // Back to Ready: taints removed, scheduled && numberMisscheduled > 0 syncs.
  c.set_node_ready("a", "True");
  c.settle();
  s = st();
  EXPECT_TRUE(s.nodes.at(0).taints.empty());
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, status(2, 2, 0, 2, 2, 2, 0));
}

// Unreachable (Ready=Unknown): unreachable taints, same DaemonSet outcome.
TEST_F(DaemonSetTest, UnreachableNodeKeepsPod) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  c.set_node_ready("a", "Unknown");
  c.settle();
  auto s = st();
  ASSERT_EQ(s.nodes.at(0).taints.size(), 2u);
  EXPECT_EQ(core::format_taint(s.nodes.at(0).taints[0]), "node.kubernetes.io/unreachable:NoSchedule");
  EXPECT_EQ(core::format_taint(s.nodes.at(0).taints[1]), "node.kubernetes.io/unreachable:NoExecute");
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, status(0, 0, 1, 0, 0, 0, 0));
}

// templateGeneration + 1 on a template change reads the stored annotation as
// the API's conversion does (strconv.ParseInt, base 10, int64; wrapping as
// Go's int64 does). An imported DaemonSet may carry any text there: one that
// is no int64 threw std::invalid_argument out of the update ("stoll", exit 3
// from plan); the update is now refused, naming the annotation, and the
// DaemonSet is as it was.
TEST(DaemonSetTemplateGeneration, TheStoredAnnotationIsReadAsParseIntDoes) {
  const std::map<std::string, std::string> next = {
      {"7", "8"}, {"+5", "6"}, {"-3", "-2"}, {"9223372036854775807", "-9223372036854775808"}};
  const std::vector<std::string> refused = {"abc", "", "1.5", "+-5", "99999999999999999999", " 1", "0x10"};
  auto run = [](const std::string& stored) {
    core::ClusterState s;
    s.namespace_ = "gpu-operator";
    core::DaemonSet ds = lab_daemonset("driver");
    ds.metadata.annotations["deprecated.daemonset.template.generation"] = stored;
    s.daemonsets.push_back(ds);
    FakeCluster c;
    c.import_state(s, nullptr);
    core::DaemonSet changed = lab_daemonset("driver");
    changed.template_.spec.containers[0].image = "nvcr.io/nvidia/driver:560.35.03-ubuntu22.04";
    std::optional<core::InputError> error;
    try {
      c.apply({changed});
    } catch (const core::InputError& e) {
      error = e;
    }
    const auto state = c.state("gpu-operator");
    return std::make_pair(error, state.daemonsets.at(0));
  };
  for (const auto& [stored, expected] : next) {
    SCOPED_TRACE(stored);
    auto [error, ds] = run(stored);
    EXPECT_FALSE(error) << error->what();
    EXPECT_EQ(ds.metadata.annotations.at("deprecated.daemonset.template.generation"), expected);
  }
  for (const auto& stored : refused) {
    SCOPED_TRACE(stored);
    auto [error, ds] = run(stored);
    ASSERT_TRUE(error);
    EXPECT_EQ(error->field(), "metadata.annotations[deprecated.daemonset.template.generation]");
    EXPECT_EQ(ds.metadata.annotations.at("deprecated.daemonset.template.generation"), stored);
    EXPECT_EQ(ds.template_.spec.containers[0].image, lab_daemonset("driver").template_.spec.containers[0].image);
  }
}

// A DaemonSet spec change bumps generation; observedGeneration follows, and
// the template generation label of new pods.
TEST_F(DaemonSetTest, GenerationAndObservedGeneration) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").metadata.generation, 1);
  core::DaemonSet changed = lab_daemonset("driver");
  changed.template_.spec.containers[0].image = "nvcr.io/nvidia/driver:560.35.03-ubuntu22.04";
  c.apply({changed});
  c.settle();
  auto s = st();
  const auto& d = ds_of(s, "nvidia-driver-daemonset");
  EXPECT_EQ(d.metadata.generation, 2);
  EXPECT_EQ(d.metadata.annotations.at("deprecated.daemonset.template.generation"), "2");
  // rollingUpdate (maxUnavailable 1) replaced the pod: the new one is of
  // template generation 2.
  EXPECT_EQ(d.status, status(1, 1, 0, 1, 1, 1, 0, 2));
  auto pods = pods_of(s, "nvidia-driver-daemonset");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].metadata.labels.at("pod-template-generation"), "2");
  // Re-applying the same spec changes nothing.
  c.apply({changed});
  c.settle();
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").metadata.generation, 2);
}

// Deleting the DaemonSet: the garbage collector removes its pods.
TEST_F(DaemonSetTest, DeletedDaemonSetPodsCollected) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  c.store().remove(Kind::kDaemonSet, kNs, "nvidia-driver-daemonset");
  c.settle();
  EXPECT_TRUE(st().pods.empty());
}

// A user-deleted pod is replaced (kwok: it goes at once).
TEST_F(DaemonSetTest, DeletedPodReplaced) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  std::string old = pods_of(st(), "nvidia-driver-daemonset").at(0).metadata.name;
  c.delete_pod(kNs, old);
  c.settle();
  auto pods = pods_of(st(), "nvidia-driver-daemonset");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_NE(pods[0].metadata.name, old);
  EXPECT_EQ(pods[0].status.phase, "Running");
}

// Node deleted: the DaemonSet controller has no node delete handler, so the
// status keeps counting the node until something syncs the DaemonSet; the
// bound pod stays until pod GC (gc_controller.go: 20 s loop, 40 s quarantine)
// marks it Failed and deletes it, and that deletion syncs it. Deleted at
// start+5 s: first GC tick at start+20 s quarantines the node, the tick at
// start+60 s deletes the pod.
TEST_F(DaemonSetTest, NodeDeletePodGarbageCollected) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.add_node(make_node("b", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver")});
  c.settle();
  core::Time t0 = c.now();
  c.advance(5s);
  c.delete_node("a");
  c.run();
  auto s = st();
  EXPECT_EQ(pods_of(s, "nvidia-driver-daemonset").size(), 2u);
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, status(2, 2, 0, 2, 2, 2, 0));
  c.advance(54s);  // start+59 s
  EXPECT_EQ(pods_of(st(), "nvidia-driver-daemonset").size(), 2u);
  c.advance(1s);  // start+60 s
  auto pods = pods_of(st(), "nvidia-driver-daemonset");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].spec.node_name, "b");
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
  EXPECT_EQ(c.now() - t0, 60s);
}

// A node deleted and created again under the same name is a new node to every
// controller: once pod GC has removed the old node's pod (and with it the
// scheduler cache's hold on the node's memory), the DaemonSet creates a pod
// for the new node and the scheduler binds it. The node fits exactly one
// driver pod (512Mi), so requests still counted for the old pod would leave
// the new one Pending with "Insufficient memory".
TEST_F(DaemonSetTest, NodeRecreatedUnderSameNameGetsAFreshPod) {
  const core::Labels labels{{"nvidia.com/gpu.deploy.driver", "true"}};
  const std::map<std::string, std::string> alloc{{"memory", "512Mi"}, {"cpu", "4"}, {"pods", "110"}};
  c.add_node(make_node("a", labels, alloc));
  c.apply({lab_daemonset("driver")});
  c.settle();
  auto before = pods_of(st(), "nvidia-driver-daemonset");
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].status.phase, "Running");
  c.delete_node("a");
  c.advance(60s);  // pod GC: quarantine, then the pod goes
  EXPECT_TRUE(pods_of(st(), "nvidia-driver-daemonset").empty());
  c.add_node(make_node("a", labels, alloc));
  c.settle();
  auto s = st();
  auto after = pods_of(s, "nvidia-driver-daemonset");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0].metadata.name, before[0].metadata.name);
  EXPECT_EQ(after[0].spec.node_name, "a");
  EXPECT_EQ(after[0].status.phase, "Running");
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
}

// Failed pods (here: rejected by the kubelet) are deleted with the
// flowcontrol backoff NewBackOff(1s, 15min): the first at once, then after
// 1 s, 2 s, 4 s since the previous deletion.
TEST_F(DaemonSetTest, FailedPodBackoff) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.inject_fault(Fault{FaultKind::kFailed, "a", "", "OutOfmemory"});
  c.apply({lab_daemonset("driver")});
  c.run();
  // t=0: pod 1 created, rejected, deleted at once (not in backoff), pod 2
  // created and rejected; it waits out the 1 s backoff.
  auto names = [&] {
    std::vector<std::string> n;
    for (const auto& p : pods_of(st(), "nvidia-driver-daemonset")) n.push_back(p.metadata.name);
    return n;
  };
  auto first = names();
  ASSERT_EQ(first.size(), 1u);
  auto pod = pods_of(st(), "nvidia-driver-daemonset")[0];
  EXPECT_EQ(pod.status.phase, "Failed");
  EXPECT_EQ(pod.status.reason, "OutOfmemory");
  c.advance(999ms);
  EXPECT_EQ(names(), first);
  c.advance(1ms);  // t=1 s: deleted, replaced; backoff now 2 s
  auto second = names();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(second, first);
  c.advance(1999ms);  // t=2.999 s
  EXPECT_EQ(names(), second);
  c.advance(1ms);  // t=3 s
  auto third = names();
  EXPECT_NE(third, second);
  c.advance(3999ms);  // t=6.999 s
  EXPECT_EQ(names(), third);
  c.advance(1ms);  // t=7 s
  EXPECT_NE(names(), third);
  // Failed pods keep current but never ready.
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 0, 0, 1, 0, 1));
  // settle() cannot converge: it reports the live-lock.
  try {
    c.settle();
    FAIL() << "settle returned";
  } catch (const core::ClusterError& e) {
    EXPECT_NE(std::string(e.what()).find("live-lock"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("failed-pod backoff"), std::string::npos) << e.what();
  }
  // Clearing the fault lets it recover.
  c.clear_faults();
  c.settle();
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
}

// The failed-pod backoff's cycle at its cap (15 min, reached after the kills
// at 1, 3, 7, ..., 511 and 1023 s) repeats for as long as the fault lasts.
// A long advance carries it forward whole periods instead of playing each
// (a hostile-input run: `advance: 2562047h` took a quarter of an hour and
// gigabytes). What it leaves must be what playing each cycle leaves: the
// same pods, statuses and pending expiry (the kills tick at 1023 + 900 k s:
// after 100 h the next is at 360,123 s, and settle() plays its hour up to
// 363,723 s, the first past it).
TEST(FailedPodCycle, CarriedForwardLeavesWhatPlayingEachCycleLeaves) {
  auto make = [] {
    auto c = std::make_unique<FakeCluster>();
    c->create_namespace(kNs);
    c->add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
    c->add_node(make_node("b", {{"nvidia.com/gpu.deploy.driver", "true"}}));
    c->inject_fault(Fault{FaultKind::kFailed, "a", "", "OutOfmemory"});
    c->apply({lab_daemonset("driver")});
    c->run();
    return c;
  };
  auto carried = make(), played = make();
  const core::Time start = carried->now();
  carried->advance(100h);
  // 40 min at a time: less than the three periods a carry needs.
  for (int i = 0; i < 150; ++i) played->advance(40min);
  ASSERT_EQ(carried->now(), start + 100h);
  ASSERT_EQ(played->now(), start + 100h);
  // Far fewer writes: the cycles were not played one by one (about 800
  // writes in 100 h when they are).
  EXPECT_LT(carried->store().resource_version() * 4, played->store().resource_version());
  auto shape = [](FakeCluster& c) {
    std::vector<std::string> out;
    auto s = c.state(kNs);
    for (const auto& p : s.pods)
      out.push_back(p.spec.node_name + " " + p.status.phase + " " + p.status.reason + " " +
                    std::to_string(p.metadata.creation_timestamp == c.now() - 777s));
    std::sort(out.begin(), out.end());  // by node: the pods' names differ
    return out;
  };
  // The pod on a was created at the last kill, 100 h - 777 s (the next is
  // at 100 h + 123 s); b's runs since the start.
  EXPECT_EQ(shape(*played), (std::vector<std::string>{"a Failed OutOfmemory 1", "b Running  0"}));
  EXPECT_EQ(shape(*carried), shape(*played));
  EXPECT_EQ(ds_of(carried->state(kNs), "nvidia-driver-daemonset").status,
            ds_of(played->state(kNs), "nvidia-driver-daemonset").status);
  auto pending = [](FakeCluster& c) {
    try {
      c.settle();
    } catch (const core::ClusterError& e) {
      std::string m = e.what();
      return m.substr(m.find("still pending"));
    }
    return std::string("settled");
  };
  const std::string next =
      "still pending: failed-pod backoff for DaemonSet gpu-operator/nvidia-driver-daemonset on node a at " +
      core::format_time(start + 363723s);
  EXPECT_EQ(pending(*carried), next);
  EXPECT_EQ(pending(*played), next);
}

// A timer that is not part of the cycle (here a terminating pod's grace
// period, 50 h, kubelet profile) does not stop the carry: the cycle is
// carried up to it, it fires at its time, and the carry goes on after it
// (a hostile-input run: with such a timer pending the cycle was played one
// by one, 8.5 min and 1.3 GB for `advance: 2562047h` on eight nodes).
// Checked against the same cluster played 40 min at a time.
TEST(FailedPodCycle, CarriedAroundATimerOutsideTheCycle) {
  auto make = [] {
    FakeCluster::Options o;
    o.profile = KubeletProfile::kKubelet;
    auto c = std::make_unique<FakeCluster>(o);
    c->create_namespace(kNs);
    c->add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
    c->add_node(make_node("b", {{"nvidia.com/gpu.deploy.dcgm-exporter", "true"}}));
    DsExtras long_grace;
    long_grace.grace = "180000";
    c->apply({lab_daemonset("dcgm-exporter", long_grace)});
    c->run();
    c->set_node_label("b", "nvidia.com/gpu.deploy.dcgm-exporter", "false");  // its pod: 50 h to go
    c->inject_fault(Fault{FaultKind::kFailed, "a", "", "OutOfmemory"});
    c->apply({lab_daemonset("driver")});
    c->run();
    return c;
  };
  auto carried = make(), played = make();
  const core::Time start = carried->now();
  auto dcgm = [](FakeCluster& c) { return pods_of(c.state(kNs), "nvidia-dcgm-exporter"); };
  ASSERT_EQ(dcgm(*carried).size(), 1u);
  ASSERT_TRUE(dcgm(*carried)[0].metadata.deletion_timestamp.has_value());
  const core::Time due = *dcgm(*carried)[0].metadata.deletion_timestamp;
  carried->advance(100h);
  for (int i = 0; i < 150; ++i) played->advance(40min);
  ASSERT_EQ(carried->now(), start + 100h);
  ASSERT_EQ(played->now(), start + 100h);
  EXPECT_EQ(due, start + 180000s);
  EXPECT_TRUE(dcgm(*carried).empty());
  EXPECT_TRUE(dcgm(*played).empty());
  EXPECT_LT(carried->store().resource_version() * 4, played->store().resource_version());
  auto shape = [](FakeCluster& c) {
    std::vector<std::string> out;
    for (const auto& p : c.state(kNs).pods)
      out.push_back(p.spec.node_name + " " + p.status.phase + " " + p.status.reason + " " +
                    core::format_time(p.metadata.creation_timestamp.value_or(core::Time{})));
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(shape(*carried), shape(*played));
  ASSERT_EQ(shape(*played).size(), 1u);
  EXPECT_EQ(ds_of(carried->state(kNs), "nvidia-driver-daemonset").status,
            ds_of(played->state(kNs), "nvidia-driver-daemonset").status);
}

// The longest advance a scenario may ask (2562047h, time.ParseDuration's
// maximum) ends at once with the cycle where upstream's backoff puts it: the
// pod replaced exactly at the next tick (1023 + 900 k s, 123 s past the
// end), and, once the fault is cleared, Running.
TEST_F(DaemonSetTest, FailedPodCycleOverTheLongestAdvance) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.inject_fault(Fault{FaultKind::kFailed, "a", "", "OutOfmemory"});
  c.apply({lab_daemonset("driver")});
  c.run();
  const core::Time start = c.now();
  c.advance(2562047h);
  ASSERT_EQ(c.now(), start + 2562047h);
  auto pods = [&] { return pods_of(st(), "nvidia-driver-daemonset"); };
  ASSERT_EQ(pods().size(), 1u);
  const std::string name = pods()[0].metadata.name;
  EXPECT_EQ(pods()[0].status.phase, "Failed");
  c.advance(122s + 999ms);
  EXPECT_EQ(pods()[0].metadata.name, name);
  c.advance(1ms);
  ASSERT_EQ(pods().size(), 1u);
  EXPECT_NE(pods()[0].metadata.name, name);
  EXPECT_EQ(pods()[0].status.phase, "Failed");
  c.clear_faults();
  c.settle();
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
}

// apply() validates the whole list first: a DaemonSet in a namespace that
// does not exist (404) refuses the batch, and nothing is half-applied.
TEST_F(DaemonSetTest, ApplyRefusesMissingNamespaceAtomically) {
  core::DaemonSet good = lab_daemonset("driver");
  core::DaemonSet bad = lab_daemonset("container-toolkit");
  bad.metadata.namespace_ = "nowhere";
  try {
    c.apply({good, bad});
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.http_status, 404);
  }
  EXPECT_TRUE(st().daemonsets.empty());
}

// apply() checks the DaemonSet selector's immutability with the rest,
// before writing anything: a changed selector refuses the batch (422 on
// spec.selector) and nothing of it is applied.
TEST_F(DaemonSetTest, ApplyRefusesSelectorChangeAtomically) {
  c.apply({lab_daemonset("driver")});
  core::DaemonSet changed = lab_daemonset("driver");
  changed.selector.match_labels["extra"] = "x";
  changed.template_.labels["extra"] = "x";
  try {
    c.apply({lab_daemonset("container-toolkit"), changed});
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.http_status, 422);
    EXPECT_EQ(e.field(), "spec.selector");
    EXPECT_EQ(e.message(), "field is immutable");
  }
  ASSERT_EQ(st().daemonsets.size(), 1u);
  EXPECT_EQ(st().daemonsets[0].selector.match_labels.count("extra"), 0u);
}

// minReadySeconds: a Ready pod counts as available only after it has been
// Ready that long (podutil.IsPodAvailable).
TEST_F(DaemonSetTest, MinReadySeconds) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  c.apply({lab_daemonset("driver", {{}, {}, "", 10})});
  c.run();
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 0, 1));
  c.advance(9s);
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status.number_available, 0);
  c.advance(1s);
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
}

// minReadySeconds past settle()'s one-hour horizon (a valid int32): the wait
// is owed, not a live-lock; settle() runs to it (a hostile-input run found
// plan failing with "live-lock" on minReadySeconds: 3601). A crash loop
// still ends in a live-lock error past the horizon.
TEST_F(DaemonSetTest, MinReadySecondsPastAnHourSettle) {
  c.add_node(make_node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  const core::Time start = c.now();
  c.apply({lab_daemonset("driver", {{}, {}, "", 7200})});
  ASSERT_NO_THROW(c.settle());
  EXPECT_EQ(ds_of(st(), "nvidia-driver-daemonset").status, status(1, 1, 0, 1, 1, 1, 0));
  EXPECT_GE(c.now() - start, std::chrono::seconds(7200));
}

}  // namespace
}  // namespace gpuops::simulator
