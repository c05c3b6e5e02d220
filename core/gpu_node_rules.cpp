#include "core/gpu_node_rules.h"

#include <algorithm>
#include <cctype>

namespace gpuops::core {

namespace {

// gpuNodeLabels, gpu-operator controllers/state_manager.go.
const char* const kNfdGpuLabels[] = {
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
};

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

}  // namespace

std::optional<std::string> node_label(const Node& n, const std::string& key) {
  auto it = n.metadata.labels.find(key);
  if (it == n.metadata.labels.end()) return std::nullopt;
  return it->second;
}

LabelClass classify_label(const std::optional<std::string>& value) {
  if (!value) return LabelClass::kAbsent;
  const std::string& v = *value;
  if (v == "true") return LabelClass::kTrue;
  if (v == "false") return LabelClass::kFalse;
  if (v.empty()) return LabelClass::kEmpty;
  if (v == "pre-installed") return LabelClass::kPreInstalled;
  if (v == "paused-for-driver-upgrade" || ends_with(v, "_paused-for-driver-upgrade"))
    return LabelClass::kPausedForDriverUpgrade;
  if (v == "paused-for-mig-change") return LabelClass::kPausedForMigChange;
  if (v == "paused-for-vgpu-change") return LabelClass::kPausedForVgpuChange;
  return LabelClass::kOther;
}

// mirrors hasGPULabels, gpu-operator controllers/state_manager.go
bool is_gpu_node(const Node& node) {
  for (const char* k : kNfdGpuLabels)
    if (node_label(node, k) == std::optional<std::string>("true")) return true;
  return false;
}

std::vector<std::string> unrecognised_nvidia_pci_labels(const Node& node) {
  // NFD's PCI feature labels: feature.node.kubernetes.io/pci-<fields>.present,
  // with <fields> from deviceLabelFields joined by "_" (class, vendor, device,
  // subsystem_vendor, subsystem_device). NVIDIA's vendor id is 10de.
  const std::string prefix = "feature.node.kubernetes.io/pci-";
  std::vector<std::string> out;
  for (const auto& [k, v] : node.metadata.labels) {
    if (!starts_with(k, prefix) || !ends_with(k, ".present")) continue;
    bool known = false;
    for (const char* g : kNfdGpuLabels) known = known || k == g;
    if (known) continue;
    std::string fields = k.substr(prefix.size(), k.size() - prefix.size() - std::string(".present").size());
    // Split on '_' and look for the vendor field 10de.
    size_t start = 0;
    bool nvidia = false;
    while (start <= fields.size()) {
      size_t end = fields.find('_', start);
      std::string part = fields.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (part == "10de") nvidia = true;
      if (end == std::string::npos) break;
      start = end + 1;
    }
    if (nvidia) out.push_back(k);
  }
  return out;
}

// mirrors getWorkloadConfig, gpu-operator controllers/state_manager.go
std::string workload_config(const Node& node) {
  auto v = node_label(node, kWorkloadConfigLabel);
  if (v && (*v == "container" || *v == "vm-passthrough" || *v == "vm-vgpu")) return *v;
  return "container";
}

// mirrors hasMIGCapableGPU, gpu-operator controllers/state_manager.go
bool has_mig_capable_gpu(const Node& node) {
  auto host = node_label(node, "nvidia.com/vgpu.host-driver-version");
  if (host && !host->empty()) return false;
  if (auto cap = node_label(node, "nvidia.com/mig.capable")) return *cap == "true";
  auto product = node_label(node, "nvidia.com/gpu.product");
  if (!product) return false;
  std::string p = *product;
  std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return std::tolower(c); });
  return p.find("h100") != std::string::npos || p.find("a100") != std::string::npos ||
         p.find("a30") != std::string::npos;
}

// mirrors gpuStateLabels as labelGPUNodes applies them (plus the mig-manager
// label on MIG-capable container nodes), gpu-operator controllers/state_manager.go
std::vector<std::string> expected_deploy_labels(const Node& node, const Catalog& catalog) {
  std::string cfg = workload_config(node);
  std::vector<std::string> out;
  for (const auto& op : catalog.operands) {
    if (std::find(op.workload_configs.begin(), op.workload_configs.end(), cfg) == op.workload_configs.end())
      continue;
    if (op.label == kMigManagerDeployLabel && !(cfg == "container" && has_mig_capable_gpu(node))) continue;
    if (std::find(out.begin(), out.end(), op.label) == out.end()) out.push_back(op.label);
  }
  return out;
}

}  // namespace gpuops::core
