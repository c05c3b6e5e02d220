// The rolling update, history and cascading deletion of DaemonSets
// (kubernetes pkg/controller/daemon/update.go, pkg/controller/garbagecollector).
// Each expected pod set is worked out from upstream's rules; the step length
// with the kubelet profile is the 30 s grace period plus the 2 s start
// delay. Nodes are visited in name order (upstream: map order), so the
// first batch is the first nodes by name.
#include <gtest/gtest.h>

#include <set>

#include "../helpers.h"

namespace gpuops::simulator {
namespace {

using namespace std::chrono_literals;
using namespace testing;

const char* kDs = "nvidia-driver-daemonset";

FakeCluster::Options kubelet_profile() {
  FakeCluster::Options o;
  o.profile = KubeletProfile::kKubelet;
  return o;
}

class RollingUpdateTest : public ::testing::Test {
 protected:
  explicit RollingUpdateTest(FakeCluster::Options o = kubelet_profile()) : c(o) { c.create_namespace(kNs); }
  void nodes(int n) {
    for (int i = 0; i < n; ++i)
      c.add_node(make_node(std::string(1, static_cast<char>('a' + i)), {{"nvidia.com/gpu.deploy.driver", "true"}}));
  }
  core::DaemonSet ds(const std::string& image, core::IntOrPercent max_unavailable = {1, false},
                     core::IntOrPercent max_surge = {0, false}) {
    core::DaemonSet d = lab_daemonset("driver");
    d.template_.spec.containers.at(0).image = image;
    d.max_unavailable = max_unavailable;
    d.max_surge = max_surge;
    return d;
  }
  // "<node>:<image>[:T]" per pod of the DaemonSet (T: terminating; P: not
  // yet Running), sorted.
  std::set<std::string> pods() {
    std::set<std::string> out;
    for (const auto& p : pods_of(c.state(kNs), kDs)) {
      std::string s = p.target_node() + ":" + p.spec.containers.at(0).image;
      if (p.metadata.deletion_timestamp) s += ":T";
      if (p.status.phase != "Running") s += ":P";
      out.insert(s);
    }
    return out;
  }
  core::DaemonSetStatus status_now() { return ds_of(c.state(kNs), kDs).status; }
  std::vector<core::ControllerRevision> revisions() {
    std::vector<core::ControllerRevision> out;
    for (auto& o : c.store().list(Kind::kControllerRevision, kNs)) out.push_back(std::get<core::ControllerRevision>(o));
    return out;
  }
  FakeCluster c;
};

// maxUnavailable 1 over 4 nodes: rollingUpdate deletes one available old pod
// (remaining = maxUnavailable - numUnavailable = 1); while it terminates its
// node counts as unavailable (no old and no new pod without a
// deletionTimestamp), so nothing else goes; the new pod is made by manage
// when the old one is gone, and the next old pod goes when it is available.
TEST_F(RollingUpdateTest, MaxUnavailableOneReplacesOnePodPerStep) {
  nodes(4);
  c.apply({ds("driver:1")});
  c.settle();
  c.apply({ds("driver:2")});
  c.run();
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:1:T", "b:driver:1", "c:driver:1", "d:driver:1"}));
  EXPECT_EQ(status_now(), status(4, 4, 0, 4, 0, 4, 0, 2)) << describe(status_now());
  c.advance(30s);  // the grace period ends: manage creates a's new pod, ContainerCreating
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:2:P", "b:driver:1", "c:driver:1", "d:driver:1"}));
  EXPECT_EQ(status_now(), status(4, 4, 0, 3, 1, 3, 1, 2)) << describe(status_now());
  c.advance(2s);  // a's new pod is Ready: b's old pod goes
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:2", "b:driver:1:T", "c:driver:1", "d:driver:1"}));
  c.advance(32s);
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:2", "b:driver:2", "c:driver:1:T", "d:driver:1"}));
  c.settle();
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:2", "b:driver:2", "c:driver:2", "d:driver:2"}));
  EXPECT_EQ(status_now(), status(4, 4, 0, 4, 4, 4, 0, 2)) << describe(status_now());
}

// maxUnavailable 2 of 5: two per step (a, b; then c, d; then e).
TEST_F(RollingUpdateTest, MaxUnavailableTwo) {
  nodes(5);
  c.apply({ds("driver:1", {2, false})});
  c.settle();
  c.apply({ds("driver:2", {2, false})});
  c.run();
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:1:T", "b:driver:1:T", "c:driver:1", "d:driver:1", "e:driver:1"}));
  c.advance(32s);
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:2", "b:driver:2", "c:driver:1:T", "d:driver:1:T", "e:driver:1"}));
  c.advance(32s);
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:2", "b:driver:2", "c:driver:2", "d:driver:2", "e:driver:1:T"}));
}

// maxUnavailable 50% of 5 desired: GetScaledValueFromIntOrPercent rounds
// 2.5 up to 3.
TEST_F(RollingUpdateTest, MaxUnavailablePercentRoundsUp) {
  EXPECT_EQ(core::scaled_value({50, true}, 5, true), 3);
  EXPECT_EQ(core::scaled_value({10, true}, 5000, true), 500);
  EXPECT_EQ(core::scaled_value({10, true}, 5, true), 1);
  nodes(5);
  c.apply({ds("driver:1", {50, true})});
  c.settle();
  c.apply({ds("driver:2", {50, true})});
  c.run();
  EXPECT_EQ(pods(),
            (std::set<std::string>{"a:driver:1:T", "b:driver:1:T", "c:driver:1:T", "d:driver:1", "e:driver:1"}));
}

// maxSurge 1, maxUnavailable 0: the new pod first, beside the old one; the
// old one goes once the new one is available, and the next surge starts in
// that same sync (numSurge counts only new pods not yet available).
TEST_F(RollingUpdateTest, MaxSurgeOneNewPodFirst) {
  nodes(3);
  c.apply({ds("driver:1", {0, false}, {1, false})});
  c.settle();
  c.apply({ds("driver:2", {0, false}, {1, false})});
  c.run();
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:1", "a:driver:2:P", "b:driver:1", "c:driver:1"}));
  EXPECT_EQ(status_now(), status(3, 3, 0, 3, 0, 3, 0, 2)) << describe(status_now());
  c.advance(2s);
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:1:T", "a:driver:2", "b:driver:1", "b:driver:2:P", "c:driver:1"}));
  c.settle();
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:2", "b:driver:2", "c:driver:2"}));
  EXPECT_EQ(status_now(), status(3, 3, 0, 3, 3, 3, 0, 2)) << describe(status_now());
}

// An old pod that is not available is replaced at once (allowedReplacementPods)
// and counts against maxUnavailable: with 1, no available pod goes while it is
// unavailable.
TEST_F(RollingUpdateTest, UnhealthyOldPodReplacedFirst) {
  nodes(3);
  c.apply({ds("driver:1")});
  c.settle();
  c.inject_fault(Fault{FaultKind::kNeverReady, "c", kDs, ""});
  c.settle();
  c.apply({ds("driver:2")});
  c.run();
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:1", "b:driver:1", "c:driver:1:T"}));
  c.settle();  // c's new pod is never Ready either: the rollout waits
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:1", "b:driver:1", "c:driver:2"}));
  c.clear_faults();
  c.settle();
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:2", "b:driver:2", "c:driver:2"}));
}

// minReadySeconds: a new pod counts as available (numberAvailable, and for
// the next batch) only after being Ready that long.
TEST_F(RollingUpdateTest, MinReadySecondsDelaysTheNextBatch) {
  nodes(2);
  core::DaemonSet v1 = ds("driver:1"), v2 = ds("driver:2");
  v1.min_ready_seconds = v2.min_ready_seconds = 10;
  c.apply({v1});
  c.settle();
  c.apply({v2});
  c.run();
  c.advance(32s);  // a's new pod Ready, not yet available
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:2", "b:driver:1"}));
  EXPECT_EQ(status_now().number_available, 1);
  c.advance(10s);
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:2", "b:driver:1:T"}));
}

// OnDelete: nothing is replaced until a pod is deleted; its replacement has
// the new template.
TEST_F(RollingUpdateTest, OnDeleteWaitsForDeletion) {
  nodes(2);
  core::DaemonSet v1 = ds("driver:1"), v2 = ds("driver:2");
  v1.update_strategy = v2.update_strategy = "OnDelete";
  c.apply({v1});
  c.settle();
  c.apply({v2});
  c.settle();
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:1", "b:driver:1"}));
  EXPECT_EQ(status_now().updated_number_scheduled, 0);
  for (const auto& p : pods_of(c.state(kNs), kDs))
    if (p.target_node() == "b") c.delete_pod(kNs, p.metadata.name);
  c.settle();
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:1", "b:driver:2"}));
  EXPECT_EQ(status_now().updated_number_scheduled, 1);
}

// constructHistory: one revision per template, named <ds>-<hash>, the pods'
// controller-revision-hash; going back to a template adopts its revision
// and renumbers it maxRevision(old) + 1, without a new one.
TEST_F(RollingUpdateTest, RollbackAdoptsTheOldRevision) {
  nodes(1);
  c.apply({ds("driver:1")});
  c.settle();
  ASSERT_EQ(revisions().size(), 1u);
  const std::string h1 = revisions()[0].metadata.labels.at("controller-revision-hash");
  EXPECT_EQ(revisions()[0].metadata.name, std::string(kDs) + "-" + h1);
  EXPECT_EQ(revisions()[0].revision, 1);
  c.apply({ds("driver:2")});
  c.settle();
  ASSERT_EQ(revisions().size(), 2u);
  c.apply({ds("driver:1")});
  c.settle();
  auto revs = revisions();
  ASSERT_EQ(revs.size(), 2u);
  for (const auto& r : revs) {
    bool first = r.metadata.labels.at("controller-revision-hash") == h1;
    EXPECT_EQ(r.revision, first ? 3 : 2) << r.metadata.name;
  }
  auto ps = pods_of(c.state(kNs), kDs);
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].metadata.labels.at("controller-revision-hash"), h1);
  EXPECT_EQ(ps[0].spec.containers.at(0).image, "driver:1");
  EXPECT_EQ(status_now().updated_number_scheduled, 1);
}

// cleanupHistory: with revisionHistoryLimit 1, of two old revisions without
// pods the lower one goes.
TEST_F(RollingUpdateTest, CleanupHistoryKeepsTheLimit) {
  nodes(1);
  for (const char* image : {"driver:1", "driver:2", "driver:3"}) {
    core::DaemonSet d = ds(image);
    d.revision_history_limit = 1;
    c.apply({d});
    c.settle();
  }
  auto revs = revisions();
  ASSERT_EQ(revs.size(), 2u);
  std::set<int64_t> numbers;
  for (const auto& r : revs) numbers.insert(r.revision);
  EXPECT_EQ(numbers, (std::set<int64_t>{2, 3}));
}

// Foreground: the DaemonSet stays (deletionTimestamp, foregroundDeletion)
// while its pods terminate, then goes.
TEST_F(RollingUpdateTest, ForegroundDeletionWaitsForPods) {
  nodes(2);
  c.apply({ds("driver:1")});
  c.settle();
  c.delete_daemonset(kNs, kDs, "foreground");
  c.run();
  auto s = c.state(kNs);
  ASSERT_EQ(s.daemonsets.size(), 1u);
  EXPECT_TRUE(s.daemonsets[0].metadata.deletion_timestamp.has_value());
  EXPECT_EQ(s.daemonsets[0].metadata.finalizers, std::vector<std::string>{"foregroundDeletion"});
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:1:T", "b:driver:1:T"}));
  c.advance(30s);
  s = c.state(kNs);
  EXPECT_TRUE(s.daemonsets.empty());
  EXPECT_TRUE(s.pods.empty());
  EXPECT_TRUE(revisions().empty());
}

// Orphan: the pods stay, without the owner reference; the DaemonSet goes.
TEST_F(RollingUpdateTest, OrphanDeletionKeepsPods) {
  nodes(2);
  c.apply({ds("driver:1")});
  c.settle();
  c.delete_daemonset(kNs, kDs, "orphan");
  c.settle();
  auto s = c.state(kNs);
  EXPECT_TRUE(s.daemonsets.empty());
  ASSERT_EQ(s.pods.size(), 2u);
  for (const auto& p : s.pods) {
    EXPECT_TRUE(p.metadata.owner_references.empty()) << p.metadata.name;
    EXPECT_FALSE(p.metadata.deletion_timestamp.has_value()) << p.metadata.name;
  }
  ASSERT_EQ(revisions().size(), 1u);
  EXPECT_TRUE(revisions()[0].metadata.owner_references.empty());
}

// Background: the DaemonSet goes at once, its pods and revisions after it.
TEST_F(RollingUpdateTest, BackgroundDeletion) {
  nodes(2);
  c.apply({ds("driver:1")});
  c.settle();
  c.delete_daemonset(kNs, kDs, "background");
  c.run();
  EXPECT_TRUE(c.state(kNs).daemonsets.empty());
  EXPECT_EQ(pods(), (std::set<std::string>{"a:driver:1:T", "b:driver:1:T"}));
  c.settle();
  EXPECT_TRUE(c.state(kNs).pods.empty());
  EXPECT_TRUE(revisions().empty());
  EXPECT_THROW(c.delete_daemonset(kNs, kDs, "sideways"), core::InputError);
}

}  // namespace
}  // namespace gpuops::simulator
