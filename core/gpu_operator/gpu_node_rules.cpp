#include "core/gpu_operator/gpu_node_rules.h"

#include <charconv>
#include <string_view>

#include <algorithm>
#include <cctype>
#include <set>

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

// mirrors the strconv.ParseInt(v, 10, 64) of handleTimeout,
// k8s-operator-libs pkg/upgrade validation_manager.go and pod_manager.go
std::optional<Time> upgrade_start_time(const Node& n, const char* annotation) {
  auto it = n.metadata.annotations.find(annotation);
  if (it == n.metadata.annotations.end()) return std::nullopt;
  std::string_view v = it->second;
  bool negative = false;
  if (!v.empty() && (v.front() == '+' || v.front() == '-')) {
    negative = v.front() == '-';
    v.remove_prefix(1);
  }
  if (v.empty() || v.front() == '+' || v.front() == '-') return std::nullopt;
  int64_t seconds = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  if (negative) seconds = -seconds;
  // A time RFC 3339 cannot write (before year 1, after year 9999: what
  // metav1.Time and format_time hold) is no time: diagnose shows no duration
  // for it. (Past about 146 million years, the difference with the
  // observation time or the timeout added would overflow the millisecond
  // clock: ±9223372036854775 printed "292471151y left".)
  constexpr int64_t kFirst = -62135596800;  // 0001-01-01T00:00:00Z
  constexpr int64_t kLast = 253402300799;   // 9999-12-31T23:59:59Z
  if (seconds < kFirst || seconds > kLast) return std::nullopt;
  return Time(std::chrono::milliseconds(seconds * 1000));
}

const std::vector<WrittenValue>& operator_written_values() {
  static const std::vector<WrittenValue> values = {
      {"true", false, LabelClass::kTrue},
      {"false", false, LabelClass::kFalse},
      {"", false, LabelClass::kEmpty},
      {"pre-installed", false, LabelClass::kPreInstalled},
      {"paused-for-driver-upgrade", false, LabelClass::kPausedForDriverUpgrade},
      {"_paused-for-driver-upgrade", true, LabelClass::kPausedForDriverUpgrade},
      {"paused-for-mig-change", false, LabelClass::kPausedForMigChange},
      {"paused-for-vgpu-change", false, LabelClass::kPausedForVgpuChange},
  };
  return values;
}

const std::vector<std::string>& workload_configs() {
  static const std::vector<std::string> configs = {"container", "vm-passthrough", "vm-vgpu"};
  return configs;
}

bool is_workload_config(const std::string& value) {
  const auto& c = workload_configs();
  return std::find(c.begin(), c.end(), value) != c.end();
}

const std::vector<std::string>& nfd_gpu_labels() {
  static const std::vector<std::string> labels(std::begin(kNfdGpuLabels), std::end(kNfdGpuLabels));
  return labels;
}

LabelClass classify_label(const std::optional<std::string>& value) {
  if (!value) return LabelClass::kAbsent;
  for (const WrittenValue& w : operator_written_values())
    if (w.suffix ? ends_with(*value, w.text) : *value == w.text) return w.cls;
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
  if (v && is_workload_config(*v)) return *v;
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
    if (std::find(op.workload_configs.begin(), op.workload_configs.end(), cfg) == op.workload_configs.end()) continue;
    if (op.label == kMigManagerDeployLabel && !(cfg == "container" && has_mig_capable_gpu(node))) continue;
    if (std::find(out.begin(), out.end(), op.label) == out.end()) out.push_back(op.label);
  }
  return out;
}

}  // namespace gpuops::core

namespace gpuops::core {

namespace {

std::optional<std::string> label_of(const Labels& l, const char* key) {
  auto it = l.find(key);
  if (it == l.end()) return std::nullopt;
  return it->second;
}

// hasGPULabels / hasCommonGPULabel / hasOperandsDisabled / hasMIGCapableGPU
// over a label map (state_manager.go).
bool has_gpu_labels(const Labels& l) {
  for (const char* k : kNfdGpuLabels)
    if (label_of(l, k) == std::optional<std::string>("true")) return true;
  return false;
}
bool has_operands_disabled(const Labels& l) {
  return label_of(l, kOperandsDeployLabel) == std::optional<std::string>("false");
}
bool mig_capable(const Labels& l) {
  Node n;
  n.metadata.labels = l;
  return has_mig_capable_gpu(n);
}
std::string config_of(const Labels& l, bool sandbox_enabled, const std::string& default_workload) {
  Node n;
  n.metadata.labels = l;
  return workload_config(n, sandbox_enabled, default_workload);
}

bool remove_all_state_labels(Labels& labels, const Catalog& catalog) {
  bool modified = false;
  for (const auto& k : all_state_labels(catalog)) modified = labels.erase(k) > 0 || modified;
  return modified;
}

}  // namespace

// mirrors getWorkloadConfig, gpu-operator controllers/state_manager.go
std::string workload_config(const Node& node, bool sandbox_enabled, const std::string& default_workload) {
  if (!sandbox_enabled) return "container";
  auto v = node_label(node, kWorkloadConfigLabel);
  if (v && is_workload_config(*v)) return *v;
  return default_workload;
}

// mirrors gpuStateLabels and getEffectiveStateLabels, gpu-operator controllers/state_manager.go
std::vector<std::string> state_labels(const std::string& config, const std::string& sandbox_mode,
                                      const Catalog& catalog) {
  std::vector<std::string> out;
  auto add = [&](const std::string& l) {
    if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  };
  const Operand* kubevirt = catalog.by_name("sandbox-device-plugin");
  const Operand* kata = catalog.by_name("kata-sandbox-device-plugin");
  for (const auto& op : catalog.operands) {
    if (op.label == kMigManagerDeployLabel) continue;
    if (std::find(op.workload_configs.begin(), op.workload_configs.end(), config) == op.workload_configs.end())
      continue;
    if (config == "vm-passthrough" && sandbox_mode == "kata" && kata && &op == kubevirt) {
      add(kata->label);
      continue;
    }
    add(op.label);
  }
  for (const auto& sl : catalog.rules.state_labels)
    if (std::find(sl.workload_configs.begin(), sl.workload_configs.end(), config) != sl.workload_configs.end())
      add(sl.label);
  return out;
}

// mirrors removeAllGPUStateLabels' key set, gpu-operator controllers/state_manager.go
std::vector<std::string> all_state_labels(const Catalog& catalog) {
  std::vector<std::string> out;
  for (const auto& cfg : workload_configs())
    for (const auto& l : state_labels(cfg, "kata", catalog)) out.push_back(l);
  for (const auto& l : state_labels("vm-passthrough", "kubevirt", catalog)) out.push_back(l);
  out.push_back(kMigManagerDeployLabel);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string gpu_resources(const Pod& pod) {
  std::string out;
  for (const auto* list : {&pod.spec.init_containers, &pod.spec.containers})
    for (const auto& c : *list) {
      std::set<std::string> names;
      for (const auto* m : {&c.requests, &c.limits})
        for (const auto& [name, q] : *m)
          if (name == "nvidia.com/gpu" || name.rfind("nvidia.com/gpu.", 0) == 0 ||
              name.rfind("nvidia.com/mig-", 0) == 0)
            names.insert(name);
      for (const auto& name : names) {
        auto it = c.requests.find(name);
        const Quantity& q = it != c.requests.end() ? it->second : c.limits.at(name);
        if (q.is_zero()) continue;
        out += (out.empty() ? "" : ", ") + name + ": " + q.to_string();
      }
    }
  return out;
}

bool holds_gpu(const Pod& pod) {
  if (pod.status.phase == "Succeeded" || pod.status.phase == "Failed") return false;
  return !gpu_resources(pod).empty();
}

// mirrors labelGPUNodes' loop body (v25.3 controllers/state_manager.go) and
// reconcileCommonGPULabel + updateGPUStateLabels (v26.7
// controllers/nodelabeling_controller.go), with addGPUStateLabels and
// removeGPUStateLabels of state_manager.go
bool reconcile_gpu_node_labels(Labels& labels, const LabellerPolicy& policy, const Catalog& catalog) {
  bool modified = false;
  if (!has_common_gpu_label(labels) && has_gpu_labels(labels)) {
    labels[kGpuPresentLabel] = "true";
    modified = true;
  } else if (has_common_gpu_label(labels) && !has_gpu_labels(labels)) {
    labels[kGpuPresentLabel] = "false";
    remove_all_state_labels(labels, catalog);
    modified = true;
  }
  if (!has_common_gpu_label(labels)) {
    if (catalog.rules.labels_need_gpu_present) modified = remove_all_state_labels(labels, catalog) || modified;
    return modified;
  }
  // updateGPUStateLabels
  if (has_operands_disabled(labels)) return remove_all_state_labels(labels, catalog) || modified;
  const std::string config = config_of(labels, policy.sandbox_enabled, policy.default_workload);
  const std::vector<std::string> mine = state_labels(config, policy.sandbox_mode, catalog);
  // removeGPUStateLabels: the keys of other configs, whatever their value;
  // mig-manager's off container nodes.
  for (const auto& k : all_state_labels(catalog)) {
    if (k == kMigManagerDeployLabel) {
      if (config != "container") modified = labels.erase(k) > 0 || modified;
      continue;
    }
    if (std::find(mine.begin(), mine.end(), k) == mine.end()) modified = labels.erase(k) > 0 || modified;
  }
  // addGPUStateLabels
  for (const auto& k : mine) {
    auto it = labels.find(k);
    if (it == labels.end() || (catalog.rules.empty_label_is_absent && it->second.empty())) {
      labels[k] = "true";
      modified = true;
    }
  }
  if (config == "container" && mig_capable(labels) && !labels.count(kMigManagerDeployLabel)) {
    labels[kMigManagerDeployLabel] = "true";
    modified = true;
  }
  // Disable MIG explicitly where no MIG config is given.
  if (policy.mig_manager_enabled && mig_capable(labels) && !labels.count(kMigConfigLabel) &&
      policy.mig_config_default == "all-disabled") {
    labels[kMigConfigLabel] = "all-disabled";
    modified = true;
  }
  return modified;
}

// mirrors addWatchNewGPUNode's UpdateFunc (v25.3 clusterpolicy_controller.go)
// and getNodeLabelUpdateReasons (v26.7 nodelabeling_controller.go)
bool node_update_triggers_labelling(const Labels& old_labels, const Labels& new_labels, const Catalog& catalog) {
  auto value = [](const Labels& l, const char* k) { return label_of(l, k).value_or(""); };
  for (NodeWatchReason r : catalog.rules.node_label_watch) {
    bool hit = false;
    switch (r) {
      case NodeWatchReason::kGpuLabelMissing:
        hit = has_gpu_labels(new_labels) && !has_common_gpu_label(new_labels);
        break;
      case NodeWatchReason::kGpuLabelOutdated:
        hit = !has_gpu_labels(new_labels) && has_common_gpu_label(new_labels);
        break;
      case NodeWatchReason::kGpuPresentChanged:
        hit = value(old_labels, kGpuPresentLabel) != value(new_labels, kGpuPresentLabel);
        break;
      case NodeWatchReason::kMigManagerLabelMissing:
        hit = mig_capable(new_labels) && !new_labels.count(kMigManagerDeployLabel);
        break;
      case NodeWatchReason::kMigCapableChanged: hit = mig_capable(old_labels) != mig_capable(new_labels); break;
      case NodeWatchReason::kOperandsChanged:
        hit = has_operands_disabled(old_labels) != has_operands_disabled(new_labels);
        break;
      case NodeWatchReason::kWorkloadConfigChanged:
        // getWorkloadConfig(labels, true) with the package default.
        hit = config_of(old_labels, true, "container") != config_of(new_labels, true, "container");
        break;
      case NodeWatchReason::kOstreeChanged:
        hit = value(old_labels, kOstreeVersionLabel) != value(new_labels, kOstreeVersionLabel);
        break;
      case NodeWatchReason::kDriverOwnerChanged:
        hit = value(old_labels, kDriverOwnerLabel) != value(new_labels, kDriverOwnerLabel);
        break;
    }
    if (hit) return true;
  }
  return false;
}

bool has_common_gpu_label(const Labels& labels) {
  auto it = labels.find(kGpuPresentLabel);
  return it != labels.end() && it->second == "true";
}

}  // namespace gpuops::core
