// The node labeller's rules (core/gpu_operator/gpu_node_rules.h reconcile_gpu_node_labels
// and node_update_triggers_labelling) on one node at a time, per release.
// Expected labels follow labelGPUNodes, addGPUStateLabels,
// removeGPUStateLabels, removeAllGPUStateLabels and gpuStateLabels of
// NVIDIA/gpu-operator controllers/state_manager.go (v25.3.4) and
// controllers/nodelabeling_controller.go (v26.7.0), and the measured facts
// of docs/reference/gpu-operator-live.md.
#include <gtest/gtest.h>

#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/operands.h"

namespace core = gpuops::core;

namespace {

const core::Catalog& v25() {
  static const core::Catalog c = core::load_catalog("gpu-operator-v25.3");
  return c;
}
const core::Catalog& v26() {
  static const core::Catalog c = core::load_catalog("gpu-operator");
  return c;
}

const char* kPci = "feature.node.kubernetes.io/pci-10de.present";

// gpuStateLabels[container] of v25.3.4, with gpu.present.
core::Labels labelled_container_node() {
  core::Labels l{{kPci, "true"}, {"nvidia.com/gpu.present", "true"}};
  for (const char* k : {"driver", "gpu-feature-discovery", "container-toolkit", "device-plugin", "dcgm",
                        "dcgm-exporter", "node-status-exporter", "operator-validator"})
    l[std::string("nvidia.com/gpu.deploy.") + k] = "true";
  return l;
}

TEST(GpuNodeLabeller, NewGpuNodeGetsGpuPresentAndTheEightContainerLabels) {
  core::Labels l{{kPci, "true"}};
  EXPECT_TRUE(core::reconcile_gpu_node_labels(l, {}, v25()));
  EXPECT_EQ(l, labelled_container_node());
  // A second pass changes nothing.
  EXPECT_FALSE(core::reconcile_gpu_node_labels(l, {}, v25()));
}

TEST(GpuNodeLabeller, V26AddsTheClientLabel) {
  core::Labels l{{kPci, "true"}};
  core::reconcile_gpu_node_labels(l, {}, v26());
  core::Labels want = labelled_container_node();
  want["nvidia.com/gpu.deploy.client"] = "true";
  EXPECT_EQ(l, want);
}

TEST(GpuNodeLabeller, AUserFalseIsKeptAnAbsentKeyIsAdded) {
  core::Labels l = labelled_container_node();
  l["nvidia.com/gpu.deploy.dcgm-exporter"] = "false";
  l.erase("nvidia.com/gpu.deploy.device-plugin");
  EXPECT_TRUE(core::reconcile_gpu_node_labels(l, {}, v25()));
  EXPECT_EQ(l.at("nvidia.com/gpu.deploy.dcgm-exporter"), "false");
  EXPECT_EQ(l.at("nvidia.com/gpu.deploy.device-plugin"), "true");
}

TEST(GpuNodeLabeller, EmptyValueKeptBeforeV26RepairedFrom) {
  core::Labels old_release = labelled_container_node();
  old_release["nvidia.com/gpu.deploy.device-plugin"] = "";
  core::Labels new_release = old_release;
  new_release["nvidia.com/gpu.deploy.client"] = "true";
  EXPECT_FALSE(core::reconcile_gpu_node_labels(old_release, {}, v25()));
  EXPECT_EQ(old_release.at("nvidia.com/gpu.deploy.device-plugin"), "");
  EXPECT_TRUE(core::reconcile_gpu_node_labels(new_release, {}, v26()));
  EXPECT_EQ(new_release.at("nvidia.com/gpu.deploy.device-plugin"), "true");
}

TEST(GpuNodeLabeller, OperandsFalseRemovesEveryStateLabel) {
  core::Labels l = labelled_container_node();
  l["nvidia.com/gpu.deploy.dcgm-exporter"] = "false";
  l["nvidia.com/gpu.deploy.mig-manager"] = "true";
  l["nvidia.com/gpu.deploy.operands"] = "false";
  EXPECT_TRUE(core::reconcile_gpu_node_labels(l, {}, v25()));
  EXPECT_EQ(l, (core::Labels{
                   {kPci, "true"}, {"nvidia.com/gpu.present", "true"}, {"nvidia.com/gpu.deploy.operands", "false"}}));
}

TEST(GpuNodeLabeller, GpuPresentWithoutNfdLabelTurnsFalseAndTakesTheLabels) {
  core::Labels l = labelled_container_node();
  l.erase(kPci);
  EXPECT_TRUE(core::reconcile_gpu_node_labels(l, {}, v25()));
  EXPECT_EQ(l, (core::Labels{{"nvidia.com/gpu.present", "false"}}));
}

TEST(GpuNodeLabeller, HandLabelOnACpuNodeStaysInV25GoesInV26) {
  core::Labels l{{"nvidia.com/gpu.deploy.device-plugin", "true"}};
  core::Labels l26 = l;
  EXPECT_FALSE(core::reconcile_gpu_node_labels(l, {}, v25()));
  EXPECT_EQ(l.at("nvidia.com/gpu.deploy.device-plugin"), "true");
  EXPECT_TRUE(core::reconcile_gpu_node_labels(l26, {}, v26()));
  EXPECT_TRUE(l26.empty());
}

TEST(GpuNodeLabeller, WorkloadConfigOnlyWithSandboxWorkloads) {
  core::Labels l{{kPci, "true"}, {"nvidia.com/gpu.workload.config", "vm-passthrough"}};
  core::Labels off = l;
  core::reconcile_gpu_node_labels(off, {}, v25());  // sandbox off: container
  EXPECT_EQ(off.at("nvidia.com/gpu.deploy.driver"), "true");
  EXPECT_FALSE(off.count("nvidia.com/gpu.deploy.vfio-manager"));
  core::LabellerPolicy sandbox;
  sandbox.sandbox_enabled = true;
  core::reconcile_gpu_node_labels(l, sandbox, v25());
  core::Labels want{
      {kPci, "true"}, {"nvidia.com/gpu.workload.config", "vm-passthrough"}, {"nvidia.com/gpu.present", "true"}};
  for (const char* k : {"sandbox-device-plugin", "sandbox-validator", "vfio-manager", "kata-manager", "cc-manager"})
    want[std::string("nvidia.com/gpu.deploy.") + k] = "true";
  EXPECT_EQ(l, want);
  // Switching the node to container: removeGPUStateLabels drops the
  // passthrough keys whatever their value, addGPUStateLabels adds the eight.
  l["nvidia.com/gpu.deploy.vfio-manager"] = "false";
  l["nvidia.com/gpu.workload.config"] = "container";
  core::reconcile_gpu_node_labels(l, sandbox, v25());
  EXPECT_FALSE(l.count("nvidia.com/gpu.deploy.vfio-manager"));
  EXPECT_EQ(l.at("nvidia.com/gpu.deploy.operator-validator"), "true");
}

TEST(GpuNodeLabeller, KataModeSwapsTheSandboxDevicePluginInV26) {
  core::Labels l{{kPci, "true"}, {"nvidia.com/gpu.workload.config", "vm-passthrough"}};
  core::LabellerPolicy kata;
  kata.sandbox_enabled = true;
  kata.sandbox_mode = "kata";
  core::reconcile_gpu_node_labels(l, kata, v26());
  EXPECT_EQ(l.at("nvidia.com/gpu.deploy.kata-sandbox-device-plugin"), "true");
  EXPECT_FALSE(l.count("nvidia.com/gpu.deploy.sandbox-device-plugin"));
}

TEST(GpuNodeLabeller, MigManagerOnMigCapableContainerNodesAndAllDisabledConfig) {
  core::Labels l{{kPci, "true"}, {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}};
  core::LabellerPolicy p;
  p.mig_config_default = "all-disabled";
  core::reconcile_gpu_node_labels(l, p, v25());
  EXPECT_EQ(l.at("nvidia.com/gpu.deploy.mig-manager"), "true");
  EXPECT_EQ(l.at("nvidia.com/mig.config"), "all-disabled");
  // mig.capable=false from GFD wins over the product name.
  core::Labels no{{kPci, "true"}, {"nvidia.com/gpu.product", "NVIDIA-A100"}, {"nvidia.com/mig.capable", "false"}};
  core::reconcile_gpu_node_labels(no, p, v25());
  EXPECT_FALSE(no.count("nvidia.com/gpu.deploy.mig-manager"));
  EXPECT_FALSE(no.count("nvidia.com/mig.config"));
}

TEST(GpuNodeLabeller, NodeWatchPredicatesPerRelease) {
  core::Labels before = labelled_container_node();
  core::Labels deleted_key = before;
  deleted_key.erase("nvidia.com/gpu.deploy.device-plugin");
  // A deploy key alone wakes neither release's node watch.
  EXPECT_FALSE(core::node_update_triggers_labelling(before, deleted_key, v25()));
  EXPECT_FALSE(core::node_update_triggers_labelling(before, deleted_key, v26()));
  core::Labels operands = before;
  operands["nvidia.com/gpu.deploy.operands"] = "false";
  EXPECT_TRUE(core::node_update_triggers_labelling(before, operands, v25()));
  EXPECT_TRUE(core::node_update_triggers_labelling(operands, before, v26()));
  // GFD's mig.capable turning true: v25.3 through "mig-manager label
  // missing", v26.7 through migCapableLabelChanged (PR #2610).
  core::Labels mig = before;
  mig["nvidia.com/mig.capable"] = "true";
  EXPECT_TRUE(core::node_update_triggers_labelling(before, mig, v25()));
  EXPECT_TRUE(core::node_update_triggers_labelling(before, mig, v26()));
  // gpu.present changed by hand on a GPU node: only v26.7 watches the value.
  core::Labels flipped = before;
  flipped["nvidia.com/gpu.present"] = "false";
  EXPECT_TRUE(core::node_update_triggers_labelling(before, flipped, v25()));  // gpuCommonLabelMissing
  core::Labels cpu{{"a", "b"}}, cpu_present{{"a", "b"}, {"nvidia.com/gpu.present", "false"}};
  EXPECT_FALSE(core::node_update_triggers_labelling(cpu, cpu_present, v25()));
  EXPECT_TRUE(core::node_update_triggers_labelling(cpu, cpu_present, v26()));
}

TEST(GpuNodeLabeller, CatalogRefusesAnUnknownWatchReason) {
  const std::string text = R"(operator:
  node_label_watch: [gpu-label-missing, label-flapping]
operands:
  - {name: driver, label: nvidia.com/gpu.deploy.driver, daemonset: nvidia-driver-daemonset}
)";
  try {
    core::parse_catalog(text, "c.yaml");
    FAIL() << "accepted";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "operator.node_label_watch[1]");
    EXPECT_EQ(e.line(), 2);
  }
}

// The device plugin's resources (nvidia.com/gpu, and nvidia.com/mig-<profile>
// with the mixed MIG strategy): requests, else limits (extended resources are
// not overcommitted: a limit alone sets the request, SetDefaults).
TEST(GpuResources, RequestsElseLimitsOfEveryContainer) {
  core::Pod p;
  EXPECT_EQ(core::gpu_resources(p), "");
  EXPECT_FALSE(core::holds_gpu(p));
  core::Container train;
  train.name = "train";
  train.limits["nvidia.com/gpu"] = core::Quantity::parse("2");
  train.requests["cpu"] = core::Quantity::parse("4");
  p.spec.containers.push_back(train);
  EXPECT_EQ(core::gpu_resources(p), "nvidia.com/gpu: 2");
  EXPECT_TRUE(core::holds_gpu(p));
  core::Container mig;
  mig.name = "infer";
  mig.requests["nvidia.com/mig-1g.10gb"] = core::Quantity::parse("1");
  mig.limits["nvidia.com/mig-1g.10gb"] = core::Quantity::parse("1");
  p.spec.containers.push_back(mig);
  EXPECT_EQ(core::gpu_resources(p), "nvidia.com/gpu: 2, nvidia.com/mig-1g.10gb: 1");
  // A zero amount holds nothing; a finished pod holds nothing.
  core::Pod zero;
  core::Container z;
  z.requests["nvidia.com/gpu"] = core::Quantity::parse("0");
  zero.spec.containers.push_back(z);
  EXPECT_FALSE(core::holds_gpu(zero));
  p.status.phase = "Succeeded";
  EXPECT_FALSE(core::holds_gpu(p));
  // A renamed share (renameByDefault) is a GPU of this driver too.
  core::Pod shared;
  core::Container s;
  s.limits["nvidia.com/gpu.shared"] = core::Quantity::parse("1");
  shared.spec.containers.push_back(s);
  EXPECT_EQ(core::gpu_resources(shared), "nvidia.com/gpu.shared: 1");
  // Other vendors' and NVIDIA's other devices are not.
  core::Pod other;
  core::Container o;
  o.limits["amd.com/gpu"] = core::Quantity::parse("1");
  o.limits["nvidia.com/gpus"] = core::Quantity::parse("1");
  o.limits["nvidia.com/GA100_A100_PCIE_40GB"] = core::Quantity::parse("1");
  other.spec.containers.push_back(o);
  EXPECT_FALSE(core::holds_gpu(other));
}

}  // namespace
