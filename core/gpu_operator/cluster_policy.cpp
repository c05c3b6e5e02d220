#include "core/gpu_operator/cluster_policy.h"

#include <map>

#include "core/codec/crd_schema.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/operator_install.h"

namespace gpuops::core {

namespace json = boost::json;

namespace {

// The IsEnabled default of each field (api/nvidia/v1/clusterpolicy_types.go).
bool default_enabled(const std::string& field) {
  return field == "driver" || field == "toolkit" || field == "devicePlugin" || field == "dcgm" ||
         field == "dcgmExporter" || field == "migManager" || field == "gfd";
}

}  // namespace

const json::object* spec_object(const ClusterPolicy& p, std::string_view field) {
  const json::value* spec = p.raw.if_contains("spec");
  if (!spec || !spec->is_object()) return nullptr;
  const json::value* f = spec->as_object().if_contains(field);
  return f && f->is_object() ? &f->as_object() : nullptr;
}

std::string string_field(const json::object* o, std::string_view key) {
  if (!o) return "";
  const json::value* v = o->if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

std::string policy_field(const std::string& operand) {
  static const std::map<std::string, std::string> kFields = {
      {"driver", "driver"},
      {"container-toolkit", "toolkit"},
      {"device-plugin", "devicePlugin"},
      {"mps-control-daemon", "devicePlugin"},
      {"dcgm", "dcgm"},
      {"dcgm-exporter", "dcgmExporter"},
      {"mig-manager", "migManager"},
      {"gpu-feature-discovery", "gfd"},
      {"node-status-exporter", "nodeStatusExporter"},
      {"sandbox-device-plugin", "sandboxDevicePlugin"},
      {"kata-sandbox-device-plugin", "kataSandboxDevicePlugin"},
      {"kata-manager", "kataManager"},
      {"vfio-manager", "vfioManager"},
      {"vgpu-device-manager", "vgpuDeviceManager"},
      {"vgpu-manager", "vgpuManager"},
      {"cc-manager", "ccManager"},
  };
  auto it = kFields.find(operand);
  return it == kFields.end() ? "" : it->second;
}

std::optional<bool> enabled_field(const ClusterPolicy& policy, const std::string& field) {
  const json::object* o = spec_object(policy, field);
  if (!o) return std::nullopt;
  const json::value* v = o->if_contains("enabled");
  if (!v || !v->is_bool()) return std::nullopt;
  return v->as_bool();
}

bool sandbox_workloads_enabled(const ClusterPolicy& policy) {
  return enabled_field(policy, "sandboxWorkloads").value_or(false);
}

std::string default_workload(const ClusterPolicy& policy) {
  std::string w = string_field(spec_object(policy, "sandboxWorkloads"), "defaultWorkload");
  return is_workload_config(w) ? w : "container";
}

std::optional<bool> state_enabled(const ClusterPolicy& policy, const std::string& operand, const std::string& version) {
  // mirrors isStateEnabled, controllers/state_manager.go
  if (operand == "operator-validator") return true;
  const bool sandbox = sandbox_workloads_enabled(policy);
  if (operand == "sandbox-validator") return sandbox;
  std::string field = policy_field(operand);
  if (field.empty()) return std::nullopt;
  bool on = enabled_field(policy, field).value_or(default_enabled(field));
  std::string mode = string_field(spec_object(policy, "sandboxWorkloads"), "mode");
  if (mode.empty()) mode = "kubevirt";  // +kubebuilder:default=kubevirt
  if (operand == "sandbox-device-plugin") return sandbox && on && mode == "kubevirt";
  if (operand == "kata-sandbox-device-plugin") return sandbox && on && mode == "kata";
  // v26.0 on: cc-manager only in kata mode; v26.7 on: kata-manager never
  // (deprecated), docs/reference/gpu-operator.md §1.
  if (operand == "cc-manager") return sandbox && on && (!version_at_least(version, 26, 0) || mode == "kata");
  if (operand == "kata-manager") return version_at_least(version, 26, 7) ? false : sandbox && on;
  if (operand == "vfio-manager" || operand == "vgpu-device-manager" || operand == "vgpu-manager") return sandbox && on;
  return on;
}

}  // namespace gpuops::core

namespace gpuops::core {

std::string sandbox_mode(const ClusterPolicy& policy) {
  const json::value* spec = policy.raw.if_contains("spec");
  if (!spec || !spec->is_object()) return "";
  const json::value* sw = spec->as_object().if_contains("sandboxWorkloads");
  if (!sw || !sw->is_object()) return "";
  const json::value* m = sw->as_object().if_contains("mode");
  return m && m->is_string() ? std::string(m->as_string()) : "";
}

// mirrors what ClusterPolicyController.init and labelGPUNodes read of the
// spec (gpu-operator controllers/state_manager.go)
LabellerPolicy labeller_policy(const ClusterPolicy& policy) {
  LabellerPolicy p;
  p.sandbox_enabled = sandbox_workloads_enabled(policy);
  p.default_workload = default_workload(policy);
  p.sandbox_mode = sandbox_mode(policy);
  p.mig_manager_enabled = enabled_field(policy, "migManager").value_or(true);
  const json::value* spec = policy.raw.if_contains("spec");
  if (spec && spec->is_object())
    if (const json::value* mm = spec->as_object().if_contains("migManager"); mm && mm->is_object())
      if (const json::value* cfg = mm->as_object().if_contains("config"); cfg && cfg->is_object())
        if (const json::value* d = cfg->as_object().if_contains("default"); d && d->is_string())
          p.mig_config_default = std::string(d->as_string());
  return p;
}

}  // namespace gpuops::core

namespace gpuops::core {

const std::vector<std::string>& required_spec_fields() {
  static const std::vector<std::string> kRequired = [] {
    std::vector<std::string> out;
    if (const auto* req = crd_schema("clusterpolicy").as_object().if_contains("required"); req && req->is_array())
      for (const auto& r : req->get_array())
        if (r.is_string()) out.emplace_back(r.get_string());
    return out;
  }();
  return kRequired;
}

boost::json::object with_required_spec_fields(boost::json::object spec) {
  for (const auto& field : required_spec_fields())
    if (!spec.contains(field)) spec[field] = boost::json::object{};
  return spec;
}

boost::json::object cluster_policy_object(boost::json::object spec) {
  return boost::json::object{
      {"apiVersion", "nvidia.com/v1"}, {"kind", "ClusterPolicy"}, {"spec", with_required_spec_fields(std::move(spec))}};
}

}  // namespace gpuops::core
