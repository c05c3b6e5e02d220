// The kinds of state in tests/data/cases, produced on the simulator by ordinary
// actions plus fault injection, audit the same as their kubectl dumps.
#include <gtest/gtest.h>

#include "core/analysis/analysis.h"
#include "core/cluster/snapshot.h"
#include "helpers.h"

namespace gpuops::simulator {
namespace {

using namespace std::chrono_literals;
using namespace testing;

const std::vector<std::string> kOperands = {"driver", "container-toolkit", "device-plugin", "gpu-feature-discovery",
                                            "dcgm-exporter"};
const std::map<std::string, std::string> kBig = {{"cpu", "16"}, {"memory", "64Gi"}, {"pods", "110"}};
const DsExtras kGpuToleration{{"{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"}, {}, "", 0};

core::ClusterState dump(const std::string& name) {
  core::SnapshotCluster snap({std::string(GPUOPS_CASES_DIR) + "/" + name + "/cluster.json"});
  return snap.state(kNs);
}

void expect_same_audit(const core::ClusterState& sim, const core::ClusterState& dumped) {
  auto a = core::audit(sim, lab_catalog());
  auto b = core::audit(dumped, lab_catalog());
  EXPECT_EQ(a.text(), b.text());
  EXPECT_EQ(a.exit_code, b.exit_code);
}

// Driver (512Mi) on a node whose memory the other operands already took.
TEST(Cases, PendingInsufficientMemory) {
  FakeCluster c;
  c.create_namespace(kNs);
  c.add_node(make_node("gpu-a", all_deploy_labels(), kBig));
  c.add_node(make_node("gpu-small", all_deploy_labels(), {{"cpu", "4"}, {"memory", "640Mi"}, {"pods", "110"}}));
  for (const auto& op : kOperands)
    if (op != "driver") c.apply({lab_daemonset(op, kGpuToleration)});
  c.settle();
  c.apply({lab_daemonset("driver", kGpuToleration)});
  c.settle();
  auto s = c.state(kNs);
  auto d = dump("pending-insufficient-memory");
  expect_same_audit(s, d);
  EXPECT_EQ(core::audit(s, lab_catalog()).text(), "gpu-a OK\ngpu-small MISSING driver\n");
  EXPECT_EQ(core::matrix(s, lab_catalog()).lines.back(), "TOTAL_PODS=9");
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status, ds_of(d, "nvidia-driver-daemonset").status);
  int on_small = 0;  // the assertions below must have a pod to speak of
  for (const auto& p : pods_of(s, "nvidia-driver-daemonset"))
    if (p.target_node() == "gpu-small") {
      ++on_small;
      EXPECT_EQ(p.status.phase, "Pending");
      EXPECT_EQ(p.condition("PodScheduled")->reason, "Unschedulable");
      EXPECT_NE(p.condition("PodScheduled")->message.find("1 Insufficient memory"), std::string::npos);
    }
  EXPECT_EQ(on_small, 1);
}

// A team taint the operands do not tolerate: desired 1 each, gpu-b empty.
TEST(Cases, UntoleratedTaint) {
  FakeCluster c;
  c.create_namespace(kNs);
  c.add_node(make_node("gpu-a", all_deploy_labels(), kBig));
  c.add_node(make_node("gpu-b", all_deploy_labels(), kBig));
  c.set_node_taints("gpu-b", {core::Taint{"dedicated", "ml-team", "NoSchedule", std::nullopt}});
  for (const auto& op : kOperands) c.apply({lab_daemonset(op, kGpuToleration)});
  c.settle();
  auto s = c.state(kNs);
  auto d = dump("untolerated-taint");
  expect_same_audit(s, d);
  for (const auto& op : kOperands) {
    const auto& name = lab_catalog().by_name(op)->daemonset;
    EXPECT_EQ(ds_of(s, name).status, ds_of(d, name).status) << name;
  }
}

// kubelet profile: read right after the opt-out, the pod is terminating.
TEST(Cases, TerminatingAfterOptout) {
  FakeCluster::Options o;
  o.profile = KubeletProfile::kKubelet;
  FakeCluster c(o);
  c.create_namespace(kNs);
  c.add_node(make_node("gpu-a", all_deploy_labels(), kBig));
  c.add_node(make_node("gpu-b", all_deploy_labels(), kBig));
  for (const auto& op : kOperands) c.apply({lab_daemonset(op, kGpuToleration)});
  c.settle();
  c.set_node_label("gpu-b", "nvidia.com/gpu.deploy.dcgm-exporter", "false");
  c.advance(5s);  // within the 30 s grace period
  auto s = c.state(kNs);
  auto d = dump("terminating-after-optout");
  expect_same_audit(s, d);
  EXPECT_EQ(core::matrix(s, lab_catalog()).text(), core::matrix(d, lab_catalog()).text());
  EXPECT_EQ(ds_of(s, "nvidia-dcgm-exporter").status, ds_of(d, "nvidia-dcgm-exporter").status);
  bool terminating = false;
  for (const auto& p : pods_of(s, "nvidia-dcgm-exporter"))
    if (p.spec.node_name == "gpu-b") terminating = p.metadata.deletion_timestamp && p.status.phase == "Running";
  EXPECT_TRUE(terminating);
}

// Device plugin, GFD and DCGM stuck in Init behind toolkit-validation.
TEST(Cases, StuckInInit) {
  FakeCluster c;
  c.create_namespace(kNs);
  c.add_node(make_node("gpu-a", all_deploy_labels(), kBig));
  DsExtras gated = kGpuToleration;
  gated.init_containers = {"toolkit-validation"};
  for (const auto& op : kOperands) {
    bool gate = op == "device-plugin" || op == "gpu-feature-discovery" || op == "dcgm-exporter";
    c.apply({lab_daemonset(op, gate ? gated : kGpuToleration)});
  }
  c.inject_fault(Fault{FaultKind::kStuckInInit, "", "", ""});
  c.settle();
  auto s = c.state(kNs);
  auto d = dump("stuck-in-init");
  expect_same_audit(s, d);
  EXPECT_EQ(core::audit(s, lab_catalog()).text(),
            "gpu-a MISSING device-plugin\ngpu-a MISSING gpu-feature-discovery\ngpu-a MISSING dcgm-exporter\n");
  for (const auto& op : kOperands) {
    const auto& name = lab_catalog().by_name(op)->daemonset;
    EXPECT_EQ(ds_of(s, name).status, ds_of(d, name).status) << name;
  }
}

}  // namespace
}  // namespace gpuops::simulator
