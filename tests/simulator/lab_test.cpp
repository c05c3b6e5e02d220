// LAB.md's eight steps driven through core::Cluster on the simulator, with
// LAB.md's expected results, read back with core's analyses.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/analysis/analysis.h"
#include "helpers.h"

namespace gpuops::simulator {
namespace {

using namespace testing;

std::vector<std::string> nodes_with_pod(core::ClusterReader& c, const std::string& ds) {
  std::vector<std::string> out;
  for (const auto& p : pods_of(c.state(kNs), ds))
    if (p.status.phase == "Running" && !p.metadata.deletion_timestamp) out.push_back(p.spec.node_name);
  std::sort(out.begin(), out.end());
  return out;
}

void run_lab(core::Cluster& c) {
  const core::Catalog& cat = lab_catalog();

  // Step 1: namespace, node labels, roster.
  c.create_namespace(kNs);
  core::Labels gpu{{"feature.node.kubernetes.io/pci-10de.present", "true"}, {"nvidia.com/gpu.present", "true"}};
  c.add_node(make_node("lab-node-0"));
  c.add_node(make_node("lab-node-1"));
  c.add_node(make_node("lab-node-2"));
  for (const std::string node : {"lab-node-0", "lab-node-1"}) {
    for (const auto& [k, v] : gpu) c.set_node_label(node, k, v);
    for (const auto& op : cat.operands) c.set_node_label(node, op.label, "true");
  }
  c.set_node_label("lab-node-1", "nvidia.com/gpu.deploy.driver", "false");
  c.settle();
  EXPECT_EQ(core::roster(cat).text(),
            "driver=nvidia.com/gpu.deploy.driver\n"
            "container-toolkit=nvidia.com/gpu.deploy.container-toolkit\n"
            "device-plugin=nvidia.com/gpu.deploy.device-plugin\n"
            "gpu-feature-discovery=nvidia.com/gpu.deploy.gpu-feature-discovery\n"
            "dcgm-exporter=nvidia.com/gpu.deploy.dcgm-exporter\n");

  // Step 2: the toolkit lands on the two GPU nodes.
  c.apply({lab_daemonset("container-toolkit")});
  c.settle();
  EXPECT_EQ(ds_of(c.state(kNs), "nvidia-container-toolkit-daemonset").status.desired_number_scheduled, 2);
  EXPECT_EQ(nodes_with_pod(c, "nvidia-container-toolkit-daemonset"),
            (std::vector<std::string>{"lab-node-0", "lab-node-1"}));

  // Step 3: the driver lands on one; the skipped GPU node is lab-node-1.
  c.apply({lab_daemonset("driver")});
  c.settle();
  auto s = c.state(kNs);
  EXPECT_EQ(ds_of(s, "nvidia-driver-daemonset").status.desired_number_scheduled, 1);
  auto with_driver = nodes_with_pod(c, "nvidia-driver-daemonset");
  std::vector<std::string> skipped;
  for (const auto& n : s.nodes)
    if (n.metadata.labels.count("nvidia.com/gpu.present") &&
        std::find(with_driver.begin(), with_driver.end(), n.metadata.name) == with_driver.end())
      skipped.push_back(n.metadata.name);
  EXPECT_EQ(skipped, std::vector<std::string>{"lab-node-1"});

  // Step 4: device plugin and GFD, two each.
  c.apply({lab_daemonset("device-plugin"), lab_daemonset("gpu-feature-discovery")});
  c.settle();
  s = c.state(kNs);
  EXPECT_EQ(ds_of(s, "nvidia-device-plugin-daemonset").status.desired_number_scheduled, 2);
  EXPECT_EQ(ds_of(s, "gpu-feature-discovery").status.desired_number_scheduled, 2);

  // Step 5: DCGM on two, then opt lab-node-1 out: BEFORE=2, AFTER=1.
  c.apply({lab_daemonset("dcgm-exporter")});
  c.settle();
  EXPECT_EQ(nodes_with_pod(c, "nvidia-dcgm-exporter").size(), 2u);
  c.set_node_label("lab-node-1", "nvidia.com/gpu.deploy.dcgm-exporter", "false");
  c.settle();
  EXPECT_EQ(nodes_with_pod(c, "nvidia-dcgm-exporter"), std::vector<std::string>{"lab-node-0"});

  // Step 6: the audit finds no gap.
  auto audit = core::audit(c.state(kNs), cat);
  EXPECT_EQ(audit.text(), "lab-node-0 OK\nlab-node-1 OK\nlab-node-2 OK\n");
  EXPECT_EQ(audit.exit_code, 0);

  // Step 7: hand-label lab-node-2 with the device plugin only.
  c.set_node_label("lab-node-2", "nvidia.com/gpu.deploy.device-plugin", "true");
  c.settle();
  s = c.state(kNs);
  EXPECT_EQ(core::order_check(s, cat, "lab-node-0").text(), "ok\n");
  EXPECT_EQ(core::order_check(s, cat, "lab-node-1").text(), "ok\n");
  auto bad = core::order_check(s, cat, "lab-node-2");
  EXPECT_EQ(bad.text(), "device-plugin-without-toolkit\n");
  EXPECT_EQ(bad.exit_code, 1);

  // Step 8: the matrix.
  EXPECT_EQ(core::matrix(s, cat).text(),
            "lab-node-0 driver=yes toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
            "lab-node-1 driver=no toolkit=yes device-plugin=yes gfd=yes dcgm=no\n"
            "lab-node-2 driver=no toolkit=no device-plugin=yes gfd=no dcgm=no\n"
            "TOTAL_PODS=9\n");
}

TEST(Lab, EightStepsKwok) {
  FakeCluster c;
  run_lab(c);
}

// The same results with the kubelet profile: settle() waits out start delays
// and grace periods.
TEST(Lab, EightStepsKubelet) {
  FakeCluster::Options o;
  o.profile = KubeletProfile::kKubelet;
  FakeCluster c(o);
  run_lab(c);
}

}  // namespace
}  // namespace gpuops::simulator
