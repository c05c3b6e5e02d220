// The gate graph of core/diagnose/root_cause.h: who waits on whom
// (gate_writer, after the init containers of the operator's assets), and the
// circular waits find_wait_cycle and attribute_root_cause name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/diagnose/root_cause.h"
#include "core/gpu_operator/operands.h"

namespace gpuops {
namespace {

// assets/state-*/0500_daemonset.yaml: an operand's gate waits for the file
// the validator's gate of that name writes; the validator's own gate checks
// the component (nvidia-validator COMPONENT=<x>).
TEST(GateGraph, WritersAfterTheAssetsInitContainers) {
  EXPECT_EQ(core::gate_writer("toolkit-validation", "device-plugin"), "operator-validator");
  EXPECT_EQ(core::gate_writer("toolkit-validation", "operator-validator"), "container-toolkit");
  EXPECT_EQ(core::gate_writer("driver-validation", "container-toolkit"), "driver");
  EXPECT_EQ(core::gate_writer("plugin-validation", "operator-validator"), "device-plugin");
  // The vGPU device manager's vgpu-manager-validation waits for
  // vgpu-manager-ready, which the sandbox validator writes
  // (state-vgpu-device-manager); the sandbox validator's own checks the vGPU
  // manager (state-sandbox-validation).
  EXPECT_EQ(core::gate_writer("vgpu-manager-validation", "vgpu-device-manager"), "sandbox-validator");
  EXPECT_EQ(core::gate_writer("vgpu-manager-validation", "sandbox-validator"), "vgpu-manager");
  EXPECT_EQ(core::gate_writer("vgpu-devices-validation", "sandbox-device-plugin"), "sandbox-validator");
  EXPECT_EQ(core::gate_writer("vgpu-devices-validation", "sandbox-validator"), "vgpu-device-manager");
  EXPECT_EQ(core::gate_writer("vfio-pci-validation", "sandbox-validator"), "vfio-manager");
  EXPECT_EQ(core::gate_writer("cc-manager-validation", "sandbox-validator"), "cc-manager");
  EXPECT_EQ(core::gate_writer("cuda-validation", "operator-validator"), "");
  EXPECT_EQ(core::gate_writer("k8s-driver-manager", "driver"), "");
}

TEST(GateGraph, CircularWaitsAreFoundFromTheirFirstLink) {
  using L = core::ChainLink;
  // vgpu-device-manager waits in its gate for the sandbox validator, whose
  // deploy label the device manager paused (a warning, not broken).
  std::vector<L> links = {{"driver", false, "", false},
                          {"vgpu-device-manager", true, "sandbox-validator", true},
                          {"sandbox-validator", false, "vgpu-device-manager", true}};
  EXPECT_EQ(core::find_wait_cycle(links), (std::vector<size_t>{1, 2}));
  // A chain that ends in a link that waits on nothing is no cycle.
  links = {{"device-plugin", true, "operator-validator", true},
           {"operator-validator", true, "container-toolkit", true},
           {"container-toolkit", true, "", true}};
  EXPECT_TRUE(core::find_wait_cycle(links).empty());
  // A link that runs (neither waiting nor broken) ends the walk.
  links = {{"a", true, "b", true}, {"b", false, "a", false}};
  EXPECT_TRUE(core::find_wait_cycle(links).empty());
  // A cycle the first walk enters but does not start: found from its own
  // first link, in wait order.
  links = {{"a", true, "b", true}, {"b", true, "c", true}, {"c", true, "b", true}};
  EXPECT_EQ(core::find_wait_cycle(links), (std::vector<size_t>{1, 2}));
}

core::Finding state(const std::string& op, const std::string& name, core::Severity sev,
                    std::vector<std::pair<std::string, std::string>> evidence) {
  core::Finding f;
  f.name = name;
  f.severity = sev;
  f.node = "vgpu-node";
  f.operand = op;
  f.evidence = std::move(evidence);
  return f;
}

// The cycle reported once, as a node finding that names the pause to lift;
// no root cause beside it.
TEST(GateGraph, AttributeRootCauseNamesTheCycleAndThePauseToBreak) {
  core::Catalog catalog;
  catalog.operator_mode = true;
  for (auto [name, label] : {std::pair{"vgpu-device-manager", "nvidia.com/gpu.deploy.vgpu-device-manager"},
                             std::pair{"sandbox-validator", "nvidia.com/gpu.deploy.sandbox-validator"}}) {
    core::Operand op;
    op.name = name;
    op.label = label;
    catalog.operands.push_back(op);
  }
  std::vector<std::vector<core::Finding>> per_operand = {
      {state("vgpu-device-manager", "stuck-in-init", core::Severity::kError, {{"gate", "vgpu-manager-validation"}})},
      {state("sandbox-validator", "label-paused-for-vgpu-change", core::Severity::kWarning,
             {{"label nvidia.com/gpu.deploy.sandbox-validator", "paused-for-vgpu-change"}})}};
  std::vector<core::Finding> consistency, node_level;
  core::attribute_root_cause(catalog, "gpu-operator", "vgpu-node", {"sandbox-validator", "vgpu-device-manager"},
                             {nullptr, nullptr}, {"", ""}, per_operand, consistency, node_level);
  ASSERT_EQ(node_level.size(), 1u);
  const core::Finding& f = node_level.front();
  EXPECT_EQ(f.name, "wait-cycle");
  EXPECT_EQ(f.severity, core::Severity::kError);
  EXPECT_EQ(f.operand, "vgpu-device-manager");
  std::vector<std::pair<std::string, std::string>> expected = {
      {"waits",
       "vgpu-device-manager -> sandbox-validator: its pod waits in init container vgpu-manager-validation for what "
       "sandbox-validator writes"},
      {"waits",
       "sandbox-validator -> vgpu-device-manager: nvidia.com/gpu.deploy.sandbox-validator=paused-for-vgpu-change: "
       "vgpu-device-manager paused it and restores it only when done"},
      {"edge to break", "nvidia.com/gpu.deploy.sandbox-validator on vgpu-node"}};
  EXPECT_EQ(f.evidence, expected);
  EXPECT_EQ(f.reason.rfind("circular wait vgpu-device-manager -> sandbox-validator -> vgpu-device-manager: ", 0), 0u)
      << f.reason;
  EXPECT_NE(f.reason.find("kubectl label node vgpu-node nvidia.com/gpu.deploy.sandbox-validator=true --overwrite"),
            std::string::npos)
      << f.reason;
  // The members keep their own severities: the cycle is not one of them.
  EXPECT_EQ(per_operand[0].front().severity, core::Severity::kError);
}

}  // namespace
}  // namespace gpuops
