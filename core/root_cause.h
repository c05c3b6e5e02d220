// core/root_cause.h: the first broken link of a node's operand chain.
//
// On a GPU Operator node the operands start in a chain held together by the
// validation gates (reference/gpu-operator.md §3): the driver, then the
// container toolkit (its driver-validation waits for driver-ready), then the
// operator-validator (whose toolkit-validation writes toolkit-ready), then the
// device plugin, GFD, DCGM, the exporter, the MIG manager and MPS (their
// toolkit-validation waits for toolkit-ready), and the validator's
// plugin-validation waits for the device plugin's resources. One broken link
// leaves everything after it broken too. Given, per operand of a node, whether
// it is broken and which operand it waits on, find_root_cause names the
// first broken link and what it blocks. Pure graph logic: the findings that
// feed it come from core/diagnose.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpuops::core {

// One operand of a node.
struct ChainLink {
  std::string operand;  // catalog name
  bool broken = false;  // its state finding is an error
  // The operand it is waiting on, when that decides its state: the writer of
  // the gate its pod is stuck at (core::gate_writer), else, for a pod that
  // runs without one it needs, that need. Empty: it waits on nothing known.
  std::string waits_on;
};

struct RootCause {
  size_t root = 0;              // index into the links
  std::vector<size_t> blocked;  // broken links whose wait leads to root, in link order
};

// The root: follow waits_on from each broken link through broken links; the
// last broken link reached (its waits_on is empty, not broken, or leads back
// into the walk) is a root. When several broken links are roots, the first in
// link order whose walk blocks the most is chosen; ties go to link order.
// nullopt when no link is broken.
std::optional<RootCause> find_root_cause(const std::vector<ChainLink>& links);

// The operand that writes what a validation gate (an init container of the
// operator's operands) waits for: driver-validation -> "driver",
// toolkit-validation -> "operator-validator" (toolkit-ready),
// plugin-validation -> "device-plugin", vgpu-manager-validation ->
// "vgpu-manager", vfio-pci-validation -> "vfio-manager",
// vgpu-devices-validation -> "vgpu-device-manager", cc-manager-validation ->
// "cc-manager"; "" for the others (cuda-validation runs its own pod).
// Upstream: cmd/nvidia-validator/main.go and the assets' init containers.
std::string gate_writer(const std::string& gate);

}  // namespace gpuops::core
