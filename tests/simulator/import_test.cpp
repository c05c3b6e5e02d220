// FakeCluster::import_state: a real cluster's state loaded into the
// simulator is a fixed point when healthy (the requirement: "settling a healthy
// imported cluster creates and deletes nothing"), on every field case and
// operator dump of the tests.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/cluster/snapshot.h"
#include "core/gpu_operator/operator_install.h"
#include "simulator/fake_cluster.h"
#include "tests/simulator/helpers.h"

namespace gpuops::simulator {
namespace {

namespace fs = std::filesystem;

struct Imported {
  core::ClusterState before;  // as read
  core::ClusterState after;   // imported and settled
};

Imported import_and_settle(const std::string& path, const std::string& ns = "gpu-operator") {
  core::SnapshotCluster snap({path});
  Imported out;
  out.before = snap.state(ns);
  core::OperatorInstall install = core::detect_operator_install(out.before);
  std::optional<core::Catalog> catalog;
  if (install.detected) catalog = core::load_catalog(core::operator_catalog_name(install.version));
  FakeCluster::Options o;
  o.start = FakeCluster::import_start(out.before);
  FakeCluster c(o);
  c.import_state(out.before, catalog ? &*catalog : nullptr);
  c.settle();
  out.after = c.state(ns);
  return out;
}

std::set<std::string> pod_uids(const core::ClusterState& s, bool live_only) {
  std::set<std::string> out;
  for (const auto& p : s.pods)
    if (!live_only || !p.metadata.deletion_timestamp) out.insert(p.metadata.uid);
  return out;
}

std::map<std::string, core::Labels> node_labels(const core::ClusterState& s) {
  std::map<std::string, core::Labels> out;
  for (const auto& n : s.nodes) out[n.metadata.name] = n.metadata.labels;
  return out;
}

// Every dump: the pods that were live stay (same uids: nothing deleted or
// replaced), nothing new is created, except where the dump itself is
// mid-way (a pod the DaemonSet controller no longer wants, listed in
// `converging`), and the nodes' labels are what they were (the simulated
// operator's labeller agrees with the real one's writes).
TEST(Import, EveryDumpIsAFixedPoint) {
  // Dumps taken mid-change: what settling them does is what the real
  // cluster was about to do (README.md of each case).
  const std::map<std::string, std::string> converging = {
      {"terminating-after-optout", "the terminating pod goes after its grace period"},
  };
  // Hand-written dumps that list fewer pods than their DaemonSets want: the
  // pod the real DaemonSet controller would have created.
  const std::map<std::string, std::vector<std::string>> incomplete = {
      // The NFD worker DaemonSet (no nodeSelector, tolerates nvidia.com/gpu)
      // lists pods on gpu-node-1 and cpu-node-1 only.
      {"sandbox-vfio-crashloop", {"gpu-operator-node-feature-discovery-worker- on gpu-node-2"}},
  };
  const auto all = testing::dumps();
  ASSERT_GE(all.size(), 15u);
  for (const auto& dir : all) {
    SCOPED_TRACE(dir);
    const std::string name = fs::path(dir).filename().string();
    Imported r = import_and_settle(dir);
    ASSERT_FALSE(r.before.nodes.empty());
    std::set<std::string> before = pod_uids(r.before, true), after = pod_uids(r.after, false);
    if (converging.count(name)) {
      EXPECT_LE(after.size(), pod_uids(r.before, false).size());
      continue;
    }
    std::vector<std::string> created, deleted;
    for (const auto& p : r.after.pods)
      if (!before.count(p.metadata.uid)) {
        // A created pod's name is generateName plus 5 random characters.
        std::string n = p.metadata.name;
        created.push_back(n.substr(0, n.size() >= 5 ? n.size() - 5 : 0) + " on " + p.spec.node_name);
      }
    for (const auto& p : r.before.pods)
      if (before.count(p.metadata.uid) && !after.count(p.metadata.uid))
        deleted.push_back(p.metadata.name + " on " + p.spec.node_name);
    auto want = incomplete.find(name);
    EXPECT_EQ(created, want == incomplete.end() ? std::vector<std::string>{} : want->second) << "pods created";
    EXPECT_EQ(deleted, std::vector<std::string>{}) << "pods deleted";
    // The dumps are rebuilt by hand and some lack the beta OS and arch
    // labels every real node carries: the node lifecycle controller adds
    // them (reconcileNodeLabels), from kubernetes.io/os and kubernetes.io/arch.
    auto want_labels = node_labels(r.before);
    for (auto& [node, labels] : want_labels)
      for (const auto& [stable, beta] :
           {std::pair<std::string, std::string>{"kubernetes.io/os", "beta.kubernetes.io/os"},
            {"kubernetes.io/arch", "beta.kubernetes.io/arch"}})
        if (labels.count(stable)) {
          std::string value = labels.at(stable);  // a copy: inserting beta moves the pairs after it
          labels[beta] = value;
        }
    EXPECT_EQ(node_labels(r.after), want_labels);
    // The simulated operator's verdict: the dump's, unless a pod of a
    // DaemonSet the policy owns is not ready, where isDaemonSetReady
    // (numberUnavailable != 0) makes it notReady whatever the hand-written
    // dump's status says.
    std::set<std::string> owned;
    for (const auto& d : r.before.daemonsets)
      if (const core::OwnerReference* ref = d.metadata.controller_ref(); ref && ref->kind == "ClusterPolicy")
        owned.insert(d.metadata.name);
    bool all_ready = true;
    for (const auto& p : r.before.pods)
      if (const core::OwnerReference* ref = p.metadata.controller_ref(); ref && owned.count(ref->name))
        all_ready = all_ready && p.is_ready();
    ASSERT_EQ(r.after.cluster_policies.size(), r.before.cluster_policies.size());
    for (size_t i = 0; i < r.before.cluster_policies.size(); ++i)
      EXPECT_EQ(r.after.cluster_policies[i].state, all_ready ? r.before.cluster_policies[i].state : "notReady")
          << r.before.cluster_policies[i].metadata.name;
    // Statuses are the real kubelet's: a pod that was not ready stays so.
    for (const auto& p : r.before.pods)
      for (const auto& q : r.after.pods)
        if (p.metadata.uid == q.metadata.uid) {
          EXPECT_EQ(q.is_ready(), p.is_ready()) << p.metadata.name;
        }
  }
}

TEST(Import, RefusesAClusterThatHoldsOne) {
  FakeCluster c;
  c.add_node(testing::make_node("a"));
  core::ClusterState s;
  s.namespace_ = "gpu-operator";
  try {
    c.import_state(s, nullptr);
    FAIL() << "no error";
  } catch (const core::ClusterError& e) {
    EXPECT_EQ(e.http_status(), 409);
  }
}

// resourceVersion is opaque to clients (API conventions): a dump from
// another store may carry any string. The import gives each object the
// simulator's own version, pods as nodes and DaemonSets; a pod's version
// that was no decimal number, or past uint64, threw std::invalid_argument /
// std::out_of_range out of the import ("gpuops: error: stoull" from plan).
TEST(Import, AnyResourceVersionIsReplacedByTheStores) {
  for (const std::string rv : {"abc", "99999999999999999999999", "-5", "12abc", "", "7"}) {
    SCOPED_TRACE(rv);
    core::ClusterState s;
    s.namespace_ = "gpu-operator";
    core::Node n = testing::make_node("a");
    n.metadata.resource_version = rv;
    s.nodes.push_back(n);
    core::Pod p;
    p.metadata.name = "p";
    p.metadata.namespace_ = "gpu-operator";
    p.metadata.uid = "uid-p";
    p.metadata.resource_version = rv;
    p.spec.node_name = "a";
    p.spec.containers.push_back(core::Container{});
    p.spec.containers.back().name = "c";
    p.status.phase = "Running";
    s.pods.push_back(p);
    FakeCluster c;
    ASSERT_NO_THROW(c.import_state(s, nullptr));
    core::ClusterState after = c.state("gpu-operator");
    ASSERT_EQ(after.pods.size(), 1u);
    ASSERT_EQ(after.nodes.size(), 1u);
    // The store's versions: decimal, distinct, the pod's after the node's
    // (the import restores nodes first).
    const std::string& pod_rv = after.pods[0].metadata.resource_version;
    const std::string& node_rv = after.nodes[0].metadata.resource_version;
    ASSERT_FALSE(pod_rv.empty());
    EXPECT_EQ(pod_rv.find_first_not_of("0123456789"), std::string::npos) << pod_rv;
    EXPECT_GT(std::stoull(pod_rv), std::stoull(node_rv));
    EXPECT_EQ(after.pods[0].metadata.uid, "uid-p");
  }
}

// Found by a hostile-input run: a merge patch that sets the ClusterPolicy's
// metadata to null, a string, a list or a number threw boost::json's
// invalid_argument ("not an object") out of patch_cluster_policy, which ended
// `gpuops run` (std::terminate on its worker thread). It is refused, naming
// metadata, and the policy is as it was. (metadata null leaves no name: 400,
// as kube-apiserver v1.37.2 answered it (measured): the test below.)
TEST(Import, APatchLeavingNoMetadataObjectIsRefused) {
  const std::string dump = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/healthy-v26.7";
  core::SnapshotCluster snap({dump});
  core::ClusterState state = snap.state("gpu-operator");
  core::OperatorInstall install = core::detect_operator_install(state);
  ASSERT_TRUE(install.detected);
  core::Catalog catalog = core::load_catalog(core::operator_catalog_name(install.version));
  ASSERT_FALSE(state.cluster_policies.empty());
  const std::string name = state.cluster_policies[0].metadata.name;
  FakeCluster::Options o;
  o.start = FakeCluster::import_start(state);
  FakeCluster c(o);
  c.import_state(state, &catalog);
  c.settle();
  const std::string before = c.state("gpu-operator").cluster_policies.at(0).metadata.resource_version;
  for (const char* patch : {R"({"metadata":"x"})", R"({"metadata":[]})", R"({"metadata":5})"}) {
    SCOPED_TRACE(patch);
    try {
      c.patch_cluster_policy(name, boost::json::parse(patch).as_object());
      ADD_FAILURE() << "accepted";
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.field(), "metadata");
      EXPECT_EQ(e.http_status, 422);
    }
    EXPECT_EQ(c.state("gpu-operator").cluster_policies.at(0).metadata.resource_version, before);
  }
}

// A merge patch that renames the ClusterPolicy or changes its kind or
// apiVersion is refused as kube-apiserver v1.37.2 refuses it (measured with
// the v25.3.4 CRDs, PATCH application/merge-patch+json): the name first
// (checkName, 400 BadRequest), then the custom resource's type meta (422
// Invalid, the message naming the patched object's own kind and group).
// It was ignored (the name put back, the kind dropped). Nothing is written.
TEST(Import, APatchRenamingOrChangingTheKindOfTheClusterPolicyIsRefused) {
  const std::string dump = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/healthy-v26.7";
  core::SnapshotCluster snap({dump});
  core::ClusterState state = snap.state("gpu-operator");
  core::OperatorInstall install = core::detect_operator_install(state);
  core::Catalog catalog = core::load_catalog(core::operator_catalog_name(install.version));
  const std::string name = state.cluster_policies.at(0).metadata.name;
  ASSERT_EQ(name, "cluster-policy");
  FakeCluster::Options o;
  o.start = FakeCluster::import_start(state);
  FakeCluster c(o);
  c.import_state(state, &catalog);
  c.settle();
  const std::string before = c.state("gpu-operator").cluster_policies.at(0).metadata.resource_version;
  struct Case {
    const char* patch;
    int status;
    const char* message;
  };
  const Case cases[] = {
      {R"({"metadata":{"name":"other"}})", 400,
       "the name of the object (other) does not match the name on the URL (cluster-policy)"},
      {R"({"metadata":{"name":""}})", 400,
       "the name of the object (cluster-policy based on URL) was undeterminable: name must be provided"},
      {R"({"metadata":{"name":null}})", 400,
       "the name of the object (cluster-policy based on URL) was undeterminable: name must be provided"},
      {R"({"metadata":null})", 400,
       "the name of the object (cluster-policy based on URL) was undeterminable: name must be provided"},
      {R"({"kind":"Other","metadata":{"name":"other"}})", 400,
       "the name of the object (other) does not match the name on the URL (cluster-policy)"},
      {R"({"kind":"Other"})", 422,
       "Other.nvidia.com \"cluster-policy\" is invalid: kind: Invalid value: \"Other\": must be ClusterPolicy"},
      {R"({"kind":"NVIDIADriver"})", 422,
       "NVIDIADriver.nvidia.com \"cluster-policy\" is invalid: kind: Invalid value: \"NVIDIADriver\": must be "
       "ClusterPolicy"},
      {R"({"apiVersion":"nvidia.com/v2"})", 422,
       "ClusterPolicy.nvidia.com \"cluster-policy\" is invalid: apiVersion: Invalid value: \"nvidia.com/v2\": must "
       "be nvidia.com/v1"},
      {R"({"apiVersion":"v1"})", 422,
       "ClusterPolicy \"cluster-policy\" is invalid: apiVersion: Invalid value: \"v1\": must be nvidia.com/v1"},
      {R"({"kind":"Other","apiVersion":"x.io/v9"})", 422,
       "Other.x.io \"cluster-policy\" is invalid: [kind: Invalid value: \"Other\": must be ClusterPolicy, "
       "apiVersion: Invalid value: \"x.io/v9\": must be nvidia.com/v1]"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.patch);
    try {
      c.patch_cluster_policy(name, boost::json::parse(k.patch).as_object());
      ADD_FAILURE() << "accepted";
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.http_status, k.status);
      EXPECT_EQ(e.message(), k.message);
    }
    EXPECT_EQ(c.state("gpu-operator").cluster_policies.at(0).metadata.resource_version, before);
  }
  // The same values as it has are no change of identity.
  EXPECT_NO_THROW(c.patch_cluster_policy(
      name, boost::json::parse(R"({"kind":"ClusterPolicy","apiVersion":"nvidia.com/v1","metadata":{"name":)"
                               R"("cluster-policy"}})")
                .as_object()));
}

// A policy the API server takes can still render a DaemonSet it refuses
// (spec.daemonsets.tolerations is a list of objects to the CRD; a
// toleration's operator "Bogus" is refused only in the DaemonSet,
// validateTolerations): the operator's write fails, and with it the state,
// as a reconcile error does (ReconcileFailed, notReady, the API server's
// message), and the DaemonSets stay as they were. Found by a hostile-input
// run: the patch was a 422 of the patch itself, exit 2 from plan.
TEST(Import, APolicyRenderingADaemonSetTheApiServerRefusesFailsTheState) {
  const std::string dump = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/healthy-v26.7";
  core::SnapshotCluster snap({dump});
  core::ClusterState state = snap.state("gpu-operator");
  core::OperatorInstall install = core::detect_operator_install(state);
  core::Catalog catalog = core::load_catalog(core::operator_catalog_name(install.version));
  const std::string name = state.cluster_policies.at(0).metadata.name;
  FakeCluster::Options o;
  o.start = FakeCluster::import_start(state);
  FakeCluster c(o);
  c.import_state(state, &catalog);
  c.settle();
  const auto before = c.state("gpu-operator");
  ASSERT_NO_THROW(c.patch_cluster_policy(
      name,
      boost::json::parse(R"({"spec":{"daemonsets":{"tolerations":[{"key":"a","operator":"Bogus"}]}}})").as_object()));
  c.settle();
  const auto after = c.state("gpu-operator");
  const core::ClusterPolicy& cp = after.cluster_policies.at(0);
  EXPECT_EQ(cp.state, "notReady");
  bool found = false;
  for (const auto& cond : cp.conditions)
    if (cond.type == "Error" && cond.status == "True") {
      found = true;
      EXPECT_EQ(cond.reason, "ReconcileFailed");
      EXPECT_NE(cond.message.find("DaemonSet.apps \"nvidia-driver-daemonset\" is invalid: "
                                  "spec.template.spec.tolerations[0].operator: Unsupported value: \"Bogus\": "
                                  "supported values: \"Equal\", \"Exists\""),
                std::string::npos)
          << cond.message;
    }
  EXPECT_TRUE(found);
  ASSERT_EQ(after.daemonsets.size(), before.daemonsets.size());
  for (size_t i = 0; i < after.daemonsets.size(); ++i)
    EXPECT_EQ(after.daemonsets[i].metadata.resource_version, before.daemonsets[i].metadata.resource_version)
        << after.daemonsets[i].metadata.name;
}

}  // namespace
// An untolerated NoSchedule taint over running pods enqueues no DaemonSet
// since v1.33 (syncNodeUpdate), so the real statuses still count those pods
// desired. tests/data/operator/noschedule-taint-stale-status is such a real
// cluster (gpu-node-1 tainted gpuops.test/dedicated=ml:NoSchedule, every
// DaemonSet desiredNumberScheduled 2, numberMisscheduled 0). Imported, the
// statuses stay; the next sync of a DaemonSet for any reason counts every
// node again as updateDaemonSetStatus does: gpu-node-1's pod misscheduled.
TEST(Import, AStatusTheRealControllerLeftStaleStaysUntilTheNextSync) {
  const std::string path =
      std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/noschedule-taint-stale-status/dump.json";
  core::SnapshotCluster snap({path});
  core::ClusterState before = snap.state("gpu-operator");
  core::Catalog catalog = core::load_catalog("gpu-operator-v25.3");
  FakeCluster::Options o;
  o.start = FakeCluster::import_start(before);
  FakeCluster c(o);
  c.import_state(before, &catalog);
  c.settle();
  auto status = [&](const char* name) {
    for (const auto& d : c.state("gpu-operator").daemonsets)
      if (d.metadata.name == name) return d.status;
    ADD_FAILURE() << name;
    return core::DaemonSetStatus{};
  };
  EXPECT_EQ(status("nvidia-device-plugin-daemonset").desired_number_scheduled, 2);
  EXPECT_EQ(status("nvidia-device-plugin-daemonset").number_misscheduled, 0);
  // A pod of the device plugin deleted on gpu-node-2: the DaemonSet syncs.
  for (const auto& p : c.state("gpu-operator").pods)
    if (p.spec.node_name == "gpu-node-2" && p.metadata.name.rfind("nvidia-device-plugin-daemonset-", 0) == 0)
      c.delete_pod("gpu-operator", p.metadata.name);
  c.settle();
  EXPECT_EQ(status("nvidia-device-plugin-daemonset").desired_number_scheduled, 1);
  EXPECT_EQ(status("nvidia-device-plugin-daemonset").number_misscheduled, 1);
  // The others, not synced since, keep theirs.
  EXPECT_EQ(status("nvidia-container-toolkit-daemonset").desired_number_scheduled, 2);
}

}  // namespace gpuops::simulator
