// The lab-contract analyses (LAB.md steps 1, 6, 7, 8) on hand-built states.
#include <gtest/gtest.h>

#include "../../common/builders.h"
#include "core/analysis/analysis.h"
#include "core/base/errors.h"
#include "core/gpu_operator/operands.h"

using namespace gpuops;
using namespace gpuops::testing;

namespace {

const char* kDriver = "nvidia.com/gpu.deploy.driver";
const char* kToolkit = "nvidia.com/gpu.deploy.container-toolkit";
const char* kPlugin = "nvidia.com/gpu.deploy.device-plugin";

core::Catalog lab() { return core::load_catalog("lab"); }

// The three lab nodes after step 1 and DaemonSets of the lab's operands.
core::ClusterState lab_state() {
  core::ClusterState s;
  s.namespace_ = "gpu-operator";
  core::Labels gpu = {{"feature.node.kubernetes.io/pci-10de.present", "true"}, {"nvidia.com/gpu.present", "true"}};
  for (const auto& op : lab().operands) gpu[op.label] = "true";
  core::Labels host_driver = gpu;
  host_driver[kDriver] = "false";
  // Deliberately out of name order: the audit sorts nodes by name.
  s.nodes = {node("lab-node-2"), node("lab-node-0", gpu), node("lab-node-1", host_driver)};
  for (const auto& op : lab().operands) s.daemonsets.push_back(daemonset(op.daemonset, op.label));
  return s;
}

const core::DaemonSet& ds(const core::ClusterState& s, const std::string& name) {
  for (const auto& d : s.daemonsets)
    if (d.metadata.name == name) return d;
  throw std::runtime_error("no ds " + name);
}

}  // namespace

TEST(Roster, LabCatalogInRosterOrder) {
  EXPECT_EQ(core::roster(lab()).text(),
            "driver=nvidia.com/gpu.deploy.driver\n"
            "container-toolkit=nvidia.com/gpu.deploy.container-toolkit\n"
            "device-plugin=nvidia.com/gpu.deploy.device-plugin\n"
            "gpu-feature-discovery=nvidia.com/gpu.deploy.gpu-feature-discovery\n"
            "dcgm-exporter=nvidia.com/gpu.deploy.dcgm-exporter\n");
}

TEST(Audit, EveryTrueLabelWithoutRunningPodIsMissing) {
  core::ClusterState s = lab_state();
  // Only the toolkit runs on lab-node-0; lab-node-1 has nothing yet.
  s.pods.push_back(pod(ds(s, "nvidia-container-toolkit-daemonset"), "lab-node-0"));
  core::Report r = core::audit(s, lab());
  EXPECT_EQ(r.exit_code, 1);
  // Nodes by name, operands in roster order; lab-node-1's driver=false is not expected.
  EXPECT_EQ(r.text(),
            "lab-node-0 MISSING driver\n"
            "lab-node-0 MISSING device-plugin\n"
            "lab-node-0 MISSING gpu-feature-discovery\n"
            "lab-node-0 MISSING dcgm-exporter\n"
            "lab-node-1 MISSING container-toolkit\n"
            "lab-node-1 MISSING device-plugin\n"
            "lab-node-1 MISSING gpu-feature-discovery\n"
            "lab-node-1 MISSING dcgm-exporter\n"
            "lab-node-2 OK\n");
}

TEST(Audit, AllPresentIsOk) {
  core::ClusterState s = lab_state();
  for (const auto& op : lab().operands) {
    s.pods.push_back(pod(ds(s, op.daemonset), "lab-node-0", "Running", "n0"));
    if (op.name != "driver") s.pods.push_back(pod(ds(s, op.daemonset), "lab-node-1", "Running", "n1"));
  }
  core::Report r = core::audit(s, lab());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.text(), "lab-node-0 OK\nlab-node-1 OK\nlab-node-2 OK\n");
}

// The presence rule: controlled by the operand's DaemonSet, bound, Running,
// not being deleted.
TEST(Presence, OnlyRunningBoundControlledUndeletedPodsCount) {
  core::ClusterState s = lab_state();
  const core::Catalog catalog = lab();
  const core::Operand& driver = *catalog.by_name("driver");
  const core::DaemonSet& d = ds(s, driver.daemonset);

  s.pods = {pod(d, "lab-node-0", "Pending")};
  EXPECT_FALSE(core::operand_present(s, catalog, driver, "lab-node-0"));

  core::Pod terminating = pod(d, "lab-node-0");
  terminating.metadata.deletion_timestamp = core::Time(std::chrono::seconds(100));
  s.pods = {terminating};
  EXPECT_FALSE(core::operand_present(s, catalog, driver, "lab-node-0"));

  core::Pod impostor = pod(d, "lab-node-0");  // right app label, wrong owner
  impostor.metadata.owner_references[0].kind = "ReplicaSet";
  impostor.metadata.owner_references[0].name = "someone-else";
  s.pods = {impostor};
  EXPECT_FALSE(core::operand_present(s, catalog, driver, "lab-node-0"));

  core::Pod orphan = pod(d, "lab-node-0");
  orphan.metadata.owner_references.clear();
  s.pods = {orphan};
  EXPECT_FALSE(core::operand_present(s, catalog, driver, "lab-node-0"));

  core::Pod old_ds = pod(d, "lab-node-0");  // same name, earlier DaemonSet (other uid)
  old_ds.metadata.owner_references[0].uid = "uid-of-a-deleted-daemonset";
  s.pods = {old_ds};
  EXPECT_FALSE(core::operand_present(s, catalog, driver, "lab-node-0"));

  core::Pod unbound = pod(d, "");
  unbound.status.phase = "Running";
  s.pods = {unbound};
  EXPECT_FALSE(core::operand_present(s, catalog, driver, "lab-node-0"));

  s.pods = {pod(d, "lab-node-0", "Failed")};
  EXPECT_FALSE(core::operand_present(s, catalog, driver, "lab-node-0"));

  s.pods = {pod(d, "lab-node-0")};
  EXPECT_TRUE(core::operand_present(s, catalog, driver, "lab-node-0"));
  EXPECT_FALSE(core::operand_present(s, catalog, driver, "lab-node-1"));
}

// The present rule through a StateIndex (what diagnose and matrix ask per
// node) answers as the scan over state.pods does, and picks the same pod.
TEST(Presence, IndexedRuleAgreesWithTheScan) {
  core::ClusterState s = lab_state();
  const core::Catalog catalog = lab();
  const core::Operand& driver = *catalog.by_name("driver");
  const core::DaemonSet& d = ds(s, driver.daemonset);

  core::Pod terminating = pod(d, "lab-node-0", "Running", "term1");
  terminating.metadata.deletion_timestamp = core::Time(std::chrono::seconds(100));
  core::Pod old_ds = pod(d, "lab-node-1", "Running", "old01");
  old_ds.metadata.owner_references[0].uid = "uid-of-a-deleted-daemonset";
  core::Pod pinned = pod(d, "", "Pending", "pin01");  // mapped to lab-node-2 by the controller's affinity
  pinned.spec.required_node_affinity = std::vector<core::NodeSelectorTerm>{core::NodeSelectorTerm{
      {}, {core::Requirement{"metadata.name", core::SelectorOperator::kIn, {"lab-node-2"}, ""}}}};
  core::Pod unbound = pod(d, "", "Running", "unb01");
  s.pods = {terminating,
            pod(d, "lab-node-2", "Pending", "pend1"),
            old_ds,
            pinned,
            unbound,
            pod(d, "lab-node-0", "Running", "run01"),
            pod(d, "lab-node-0", "Running", "run02")};

  const core::StateIndex index(s);
  for (const std::string n : {"lab-node-0", "lab-node-1", "lab-node-2", "", "no-such-node"})
    EXPECT_EQ(core::operand_present(index, catalog, driver, n), core::operand_present(s, catalog, driver, n)) << n;
  // Of two present pods, the one core::operand_pod_on picks (no creation times: by name).
  const core::Pod* p = core::present_pod(index, catalog, driver, "lab-node-0");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->metadata.name, d.metadata.name + "-run01");
  EXPECT_EQ(core::present_pod(index, catalog, driver, "lab-node-1"), nullptr);

  // Pods by target node, in state order: bound ones and the pinned one.
  std::vector<std::string> on2;
  for (const core::Pod* q : index.pods_on("lab-node-2")) on2.push_back(q->metadata.name);
  EXPECT_EQ(on2, (std::vector<std::string>{d.metadata.name + "-pend1", d.metadata.name + "-pin01"}));
  EXPECT_EQ(index.pods_on("lab-node-0").size(), 3u);
  EXPECT_EQ(index.pods_on("").size(), 1u);  // the unbound, unpinned one
  EXPECT_TRUE(index.pods_on("no-such-node").empty());
  EXPECT_EQ(index.daemonset(driver.daemonset), &d);
  EXPECT_EQ(index.daemonset("no-such-daemonset"), nullptr);
  EXPECT_EQ(index.node("lab-node-1"), &s.nodes[2]);
  EXPECT_EQ(index.node("no-such-node"), nullptr);
}

// LAB.md warns against judging by desiredNumberScheduled: the status says 2
// but only one pod runs.
TEST(Audit, IgnoresDaemonSetStatus) {
  core::ClusterState s = lab_state();
  for (auto& d : s.daemonsets) d.status.desired_number_scheduled = d.status.number_ready = 2;
  s.pods.push_back(pod(ds(s, "nvidia-container-toolkit-daemonset"), "lab-node-0"));
  core::Report r = core::audit(s, lab());
  EXPECT_EQ(r.lines.at(4), "lab-node-1 MISSING container-toolkit");
}

TEST(Audit, NoNodesPrintsNothing) {
  core::ClusterState s;
  core::Report r = core::audit(s, lab());
  EXPECT_TRUE(r.lines.empty());
  EXPECT_EQ(r.exit_code, 0);
}

TEST(OrderCheck, DevicePluginWithoutToolkit) {
  core::ClusterState s = lab_state();
  s.nodes[0].metadata.labels[kPlugin] = "true";  // the hand-applied label of step 7
  s.pods.push_back(pod(ds(s, "nvidia-device-plugin-daemonset"), "lab-node-2"));
  core::Report r = core::order_check(s, lab(), "lab-node-2");
  EXPECT_EQ(r.text(), "device-plugin-without-toolkit\n");
  EXPECT_EQ(r.exit_code, 1);

  s.pods.push_back(pod(ds(s, "nvidia-container-toolkit-daemonset"), "lab-node-2"));
  r = core::order_check(s, lab(), "lab-node-2");
  EXPECT_EQ(r.text(), "ok\n");
  EXPECT_EQ(r.exit_code, 0);
}

TEST(OrderCheck, PendingDevicePluginIsNotRunning) {
  core::ClusterState s = lab_state();
  s.pods.push_back(pod(ds(s, "nvidia-device-plugin-daemonset"), "lab-node-2", "Pending"));
  EXPECT_EQ(core::order_check(s, lab(), "lab-node-2").text(), "ok\n");
  // A terminating toolkit is on its way out: the device plugin stands alone.
  s.pods.push_back(pod(ds(s, "nvidia-device-plugin-daemonset"), "lab-node-1", "Running", "dp1"));
  core::Pod tk = pod(ds(s, "nvidia-container-toolkit-daemonset"), "lab-node-1");
  tk.metadata.deletion_timestamp = core::Time(std::chrono::seconds(1));
  s.pods.push_back(tk);
  EXPECT_EQ(core::order_check(s, lab(), "lab-node-1").exit_code, 1);
}

TEST(OrderCheck, CatalogWithoutTheOperandsIsAnInputError) {
  core::Catalog c = core::parse_catalog("operands:\n  - {name: driver, label: a/b, daemonset: d}\n", "c.yaml");
  EXPECT_THROW(core::order_check(lab_state(), c, "lab-node-0"), core::InputError);
}

TEST(Matrix, LabFinalStateShape) {
  core::ClusterState s = lab_state();
  for (const auto& op : lab().operands) s.pods.push_back(pod(ds(s, op.daemonset), "lab-node-0", "Running", "n0"));
  for (const char* name :
       {"nvidia-container-toolkit-daemonset", "nvidia-device-plugin-daemonset", "gpu-feature-discovery"})
    s.pods.push_back(pod(ds(s, name), "lab-node-1", "Running", "n1"));
  s.pods.push_back(pod(ds(s, "nvidia-device-plugin-daemonset"), "lab-node-2", "Running", "n2"));
  // Not counted anywhere: a terminating DCGM exporter pod after the opt-out.
  core::Pod going = pod(ds(s, "nvidia-dcgm-exporter"), "lab-node-1", "Running", "gone");
  going.metadata.deletion_timestamp = core::Time(std::chrono::seconds(1));
  s.pods.push_back(going);
  core::Report r = core::matrix(s, lab());
  EXPECT_EQ(r.text(),
            "lab-node-0 driver=yes toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
            "lab-node-1 driver=no toolkit=yes device-plugin=yes gfd=yes dcgm=no\n"
            "lab-node-2 driver=no toolkit=no device-plugin=yes gfd=no dcgm=no\n"
            "TOTAL_PODS=9\n");
  EXPECT_EQ(r.exit_code, 0);
}

TEST(Matrix, TotalCountsEveryDaemonSetPodButNotOthers) {
  core::ClusterState s = lab_state();
  core::DaemonSet validator = daemonset("nvidia-operator-validator", "nvidia.com/gpu.deploy.operator-validator");
  s.pods.push_back(pod(validator, "lab-node-0"));  // a DaemonSet pod outside the catalog
  core::Pod job_pod = pod(validator, "lab-node-0", "Running", "job");
  job_pod.metadata.owner_references[0].kind = "Job";
  s.pods.push_back(job_pod);
  EXPECT_EQ(core::matrix(s, lab()).lines.back(), "TOTAL_PODS=1");
}

TEST(Catalog, BuiltinsAndErrors) {
  core::Catalog c = lab();
  ASSERT_EQ(c.operands.size(), 5u);
  EXPECT_EQ(c.by_name("container-toolkit")->daemonset, "nvidia-container-toolkit-daemonset");
  EXPECT_EQ(c.by_name("gpu-feature-discovery")->column, "gfd");
  EXPECT_EQ(c.by_label(kToolkit)->name, "container-toolkit");
  EXPECT_EQ(c.by_daemonset("nvidia-dcgm-exporter")->column, "dcgm");
  EXPECT_EQ(c.by_name("driver")->memory, "512Mi");
  EXPECT_EQ(c.by_name("nope"), nullptr);
  try {
    core::parse_catalog("operands:\n  - name: a\n    label: x/a\n", "mine.yaml");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.file(), "mine.yaml");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "operands[0].daemonset");
  }
  try {
    core::parse_catalog("operands:\n  - {name: a, label: x/a, daemonset: d}\n  - {name: a, label: x/b, daemonset: e}\n",
                        "dup.yaml");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "operands[1].name");
    EXPECT_EQ(e.line(), 3);
  }
  EXPECT_THROW(core::load_catalog("/no/such/catalog.yaml"), core::InputError);
  EXPECT_THROW(core::parse_catalog("operands: 3\n", "x.yaml"), core::InputError);
}

// `audit: deployed` (the gpu-operator catalog): an operand is audited on a
// node only when its DaemonSet exists and the rest of its nodeSelector matches
// (docs/reference/gpu-operator.md §2.3); the lab catalog audits every "true" label.
TEST(Audit, GpuOperatorCatalogAuditsOnlyWhatTheOperatorDeploys) {
  core::Catalog full = core::load_catalog("gpu-operator");
  ASSERT_TRUE(full.audit_deployed_only);
  EXPECT_FALSE(lab().audit_deployed_only);
  core::ClusterState s = lab_state();
  // Every lab operand Running where labelled, so only the extra operands count.
  for (const auto& n : s.nodes)
    for (const auto& op : lab().operands)
      if (auto it = n.metadata.labels.find(op.label); it != n.metadata.labels.end() && it->second == "true")
        s.pods.push_back(pod(ds(s, op.daemonset), n.metadata.name, "Running", n.metadata.name));
  // operator-validator: labelled "true", but no DaemonSet (not enabled).
  s.nodes[1].metadata.labels["nvidia.com/gpu.deploy.operator-validator"] = "true";
  // MPS: its DaemonSet selects on the device-plugin label and mps.capable.
  core::DaemonSet mps = daemonset("nvidia-device-plugin-mps-control-daemon", kPlugin);
  mps.template_.spec.node_selector["nvidia.com/mps.capable"] = "true";
  s.daemonsets.push_back(mps);
  core::Report r = core::audit(s, full);
  EXPECT_EQ(r.text(), "lab-node-0 OK\nlab-node-1 OK\nlab-node-2 OK\n");
  EXPECT_EQ(r.exit_code, 0);
  // mps.capable on lab-node-0: now the operator wants MPS there, and it is missing.
  s.nodes[1].metadata.labels["nvidia.com/mps.capable"] = "true";
  r = core::audit(s, full);
  EXPECT_EQ(r.text(), "lab-node-0 MISSING mps-control-daemon\nlab-node-1 OK\nlab-node-2 OK\n");
  EXPECT_EQ(r.exit_code, 1);
}

TEST(Catalog, AuditKeyIsValidated) {
  core::Catalog c =
      core::parse_catalog("audit: deployed\noperands:\n  - {name: a, label: l/a, daemonset: a}\n", "c.yaml");
  EXPECT_TRUE(c.audit_deployed_only);
  try {
    core::parse_catalog("audit: sometimes\noperands:\n  - {name: a, label: l/a, daemonset: a}\n", "c.yaml");
    FAIL() << "no throw";
  } catch (const core::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "c.yaml:1: audit: Unsupported value: \"sometimes\": supported values: \"labelled\", \"deployed\"");
  }
}
