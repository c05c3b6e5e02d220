#include "core/diagnose/hints.h"

#include <algorithm>
#include <string>

namespace gpuops::core {

const std::vector<MessageHint>& message_hints() {
  static const std::vector<MessageHint> kHints = {
      {"no runtime for \"nvidia\"",
       "the container runtime has no \"nvidia\" handler: the container toolkit did not write it into the "
       "configuration this runtime reads, or the runtime was not restarted since; on k3s, RKE2 or MicroK8s set "
       "the toolkit's CONTAINERD_CONFIG and CONTAINERD_SOCKET to their paths",
       "NVIDIA/gpu-operator#730, #413, #349"},
      {"system not yet initialized",
       "CUDA error 802 on an NVSwitch system (HGX, DGX): the fabric manager is not running or failed; it runs "
       "beside the driver (the driver container's nvidia-fabricmanager, or the host's systemd unit "
       "nvidia-fabricmanager for a host driver) and must match the driver's version",
       "NVIDIA/gpu-operator#375, #286, #1043"},
      {"driver is in use",
       "the old driver's kernel modules cannot be unloaded while processes hold the GPUs: drain the GPU "
       "workloads from the node (k8s-driver-manager does it with ENABLE_GPU_POD_EVICTION, or the upgrade "
       "controller with driver.upgradePolicy.drain), then delete the driver pod",
       "NVIDIA/nvidia-docker#1242"},
      {"Failed to initialize NVML: Unknown Error",
       "the container lost its GPU devices after a systemd daemon-reload (cgroup driver systemd): restart the "
       "pod; the lasting fix is CDI or the device nodes symlinked under /dev/char",
       "NVIDIA/nvidia-container-toolkit#48"},
      {"unsatisfied condition: cuda",
       "the image requires a newer CUDA than the node's driver supports (NVIDIA_REQUIRE_CUDA): upgrade the "
       "driver or run an image built for an older CUDA",
       "NVIDIA/nvidia-docker#1442, NVIDIA/nvidia-container-toolkit#152"},
      {"Insufficient nvidia.com/gpu",
       "no node has a free nvidia.com/gpu: the device plugin does not run or is not Ready on the GPU nodes, or "
       "every GPU is allocated (kubectl describe node: Allocatable, Allocated resources)",
       "kube-scheduler's NodeResourcesFit, pkg/scheduler/framework/plugins/noderesources/fit.go"},
  };
  return kHints;
}

namespace {

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

void lower_ascii(std::string& text) {
  for (char& c : text) c = ascii_lower(c);
}

// The table's patterns, lowered once.
const std::vector<std::string>& lowered_patterns() {
  static const std::vector<std::string> kLowered = [] {
    std::vector<std::string> out;
    for (const auto& h : message_hints()) {
      out.emplace_back(h.pattern);
      lower_ascii(out.back());
    }
    return out;
  }();
  return kLowered;
}

}  // namespace

// The text is lowered once and searched for each lowered pattern (diagnose
// calls this for every value of every finding: one finding per (node,
// operand) pair, a million values on a 65,000-node cluster).
std::vector<const MessageHint*> hints_for(std::string_view text) {
  std::vector<const MessageHint*> out;
  const auto& hints = message_hints();
  const auto& patterns = lowered_patterns();
  thread_local std::string lowered;
  lowered.assign(text);
  lower_ascii(lowered);
  for (size_t i = 0; i < hints.size(); ++i)
    if (lowered.find(patterns[i]) != std::string::npos) out.push_back(&hints[i]);
  return out;
}

void add_hints(Finding& f) {
  std::vector<const MessageHint*> found;
  auto scan = [&](std::string_view text) {
    for (const MessageHint* h : hints_for(text))
      if (std::find(found.begin(), found.end(), h) == found.end()) found.push_back(h);
  };
  scan(f.reason);
  for (const auto& [k, v] : f.evidence)
    if (k != "hint") scan(v);
  std::sort(found.begin(), found.end());  // table order: the table is one array
  for (const MessageHint* h : found) {
    std::string line = std::string(h->hint) + " (" + std::string(h->source) + ")";
    bool present = false;
    for (const auto& [k, v] : f.evidence)
      if (k == "hint" && v == line) present = true;
    if (!present) f.evidence.emplace_back("hint", std::move(line));
  }
}

}  // namespace gpuops::core
