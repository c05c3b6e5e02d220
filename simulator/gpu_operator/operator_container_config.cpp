// The ClusterPolicy's per-container fields in a rendered operand DaemonSet;
// see operator_container_config.h.
#include "simulator/gpu_operator/operator_container_config.h"

#include <array>
#include <string_view>

#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/operator_install.h"

namespace gpuops::simulator::internal {

namespace json = boost::json;

namespace {

const json::object* member_object(const json::object* o, std::string_view key) {
  if (!o) return nullptr;
  const json::value* v = o->if_contains(key);
  return v && v->is_object() ? &v->as_object() : nullptr;
}

const json::array* member_array(const json::object* o, std::string_view key) {
  if (!o) return nullptr;
  const json::value* v = o->if_contains(key);
  return v && v->is_array() ? &v->as_array() : nullptr;
}

// mirrors gpuv1.ImagePullPolicy, api/nvidia/v1/clusterpolicy_types.go: any
// other value (or none) is IfNotPresent.
std::string image_pull_policy(const std::string& v) { return v == "Always" || v == "Never" ? v : "IfNotPresent"; }

// The loop over spec.<component>.env the transforms share (EnvVar: name,
// value).
void apply_env(json::object& container, const json::object* spec) {
  if (const json::array* env = member_array(spec, "env"))
    for (const json::value& e : *env)
      if (e.is_object() && e.as_object().contains("name"))
        set_container_env(container, core::string_field(&e.as_object(), "name"),
                          core::string_field(&e.as_object(), "value"));
}

// mirrors addPullSecrets, controllers/object_controls.go: each name once,
// in the order the transforms add them.
void add_pull_secrets(json::object& pod_spec, const json::object* spec) {
  const json::array* secrets = member_array(spec, "imagePullSecrets");
  if (!secrets) return;
  json::value& list = pod_spec["imagePullSecrets"];
  if (!list.is_array()) list = json::array{};
  for (const json::value& s : *secrets) {
    if (!s.is_string()) continue;
    bool present = false;
    for (const json::value& have : list.as_array())
      if (have.is_object() && core::string_field(&have.as_object(), "name") == s.as_string()) present = true;
    if (!present) list.as_array().push_back(json::object{{"name", s}});
  }
  if (list.as_array().empty()) pod_spec.erase("imagePullSecrets");
}

// Resources.Requests and Resources.Limits taken whole (a nil map is
// omitted), as the transforms and applyResourceRequirements assign them.
void apply_resources(json::object& container, const json::object* spec) {
  const json::object* r = member_object(spec, "resources");
  if (!r) return;
  json::object out;
  if (const json::object* req = member_object(r, "requests")) out["requests"] = *req;
  if (const json::object* lim = member_object(r, "limits")) out["limits"] = *lim;
  container["resources"] = std::move(out);
}

json::object* init_container(json::object& pod_spec, std::string_view name) {
  json::value* init = pod_spec.if_contains("initContainers");
  if (!init || !init->is_array()) return nullptr;
  for (json::value& c : init->as_array())
    if (c.is_object() && core::string_field(&c.as_object(), "name") == name) return &c.as_object();
  return nullptr;
}

// spec.validator.<field>.env for the validation init container of that
// component (TransformValidatorComponent's switch; transformValidationInitContainer
// takes only the driver's and the toolkit's).
struct ValidatorEnv {
  std::string_view container;
  std::string_view field;
};
constexpr std::array<ValidatorEnv, 7> kValidatorEnv{{{"driver-validation", "driver"},
                                                     {"toolkit-validation", "toolkit"},
                                                     {"cuda-validation", "cuda"},
                                                     {"plugin-validation", "plugin"},
                                                     {"vfio-pci-validation", "vfioPCI"},
                                                     {"vgpu-manager-validation", "vgpuManager"},
                                                     {"vgpu-devices-validation", "vgpuDevices"}}};

// transformValidationInitContainer (operands with validation init
// containers) and TransformValidatorComponent (the validators' own): the
// validator's pull policy when set, its component env, from v26.7 its
// resources; then its pull secrets.
void apply_validation_init(json::object& pod_spec, const core::ClusterPolicy& policy, const std::string& version,
                           bool validator_components) {
  const json::object* validator = core::spec_object(policy, "validator");
  const std::string policy_value = core::string_field(validator, "imagePullPolicy");
  if (json::value* init = pod_spec.if_contains("initContainers"); init && init->is_array())
    for (json::value& v : init->as_array()) {
      if (!v.is_object()) continue;
      json::object& c = v.as_object();
      const std::string name = core::string_field(&c, "name");
      if (name.find("validation") == std::string::npos) continue;
      for (const auto& [container, field] : kValidatorEnv)
        if (name == container && (validator_components || field == "driver" || field == "toolkit"))
          apply_env(c, member_object(validator, field));
      if (!policy_value.empty()) c["imagePullPolicy"] = image_pull_policy(policy_value);
      if (core::version_at_least(version, 26, 7)) apply_resources(c, validator);
    }
  add_pull_secrets(pod_spec, validator);
}

// Which transform calls transformValidationInitContainer, per release: every
// operand transform with validation init containers; TransformDriver and
// TransformNodeStatusExporter no longer do from v26.7.
bool calls_validation_init(const std::string& operand, const std::string& version) {
  static constexpr std::array<std::string_view, 10> kAlways{
      "gpu-feature-discovery",      "container-toolkit", "device-plugin", "mps-control-daemon", "sandbox-device-plugin",
      "kata-sandbox-device-plugin", "dcgm-exporter",     "dcgm",          "mig-manager",        "vgpu-device-manager"};
  for (auto a : kAlways)
    if (operand == a) return true;
  return (operand == "driver" || operand == "node-status-exporter") && !core::version_at_least(version, 26, 7);
}

}  // namespace

// mirrors setContainerEnv, controllers/object_controls.go: a variable of
// that name takes the value, else one is appended.
void set_container_env(json::object& container, const std::string& name, const std::string& value) {
  json::value& env = container["env"];
  if (!env.is_array()) env = json::array{};
  for (json::value& e : env.as_array())
    if (e.is_object() && core::string_field(&e.as_object(), "name") == name) {
      e.as_object()["value"] = value;
      return;
    }
  env.as_array().push_back(json::object{{"name", name}, {"value", value}});
}

DriverManagerSpec driver_manager_spec(const core::ClusterPolicy& policy, const std::string& operand) {
  if (operand == "driver") return {member_object(core::spec_object(policy, "driver"), "manager"), "driver.manager"};
  if (operand == "vgpu-manager")
    return {member_object(core::spec_object(policy, "vgpuManager"), "driverManager"), "vgpuManager.driverManager"};
  if (operand == "vfio-manager")
    return {member_object(core::spec_object(policy, "vfioManager"), "driverManager"), "vfioManager.driverManager"};
  return {};
}

// mirrors the Transform<Component> functions' container configuration,
// gpu-operator controllers/object_controls.go (see the header for which)
void apply_container_config(const core::Operand& op, const core::ClusterPolicy& policy, const std::string& version,
                            json::object& pod_spec) {
  const bool validator = op.name == "operator-validator" || op.name == "sandbox-validator";
  const std::string field = validator ? "validator" : core::policy_field(op.name);
  if (field.empty()) return;
  const json::object* spec = core::spec_object(policy, field);

  if (validator || calls_validation_init(op.name, version)) apply_validation_init(pod_spec, policy, version, validator);

  // transformDriverManagerInitContainer: its pull policy when set, env, then
  // its pull secrets.
  if (json::object* manager = init_container(pod_spec, "k8s-driver-manager")) {
    const json::object* m = driver_manager_spec(policy, op.name).spec;
    if (const std::string p = core::string_field(m, "imagePullPolicy"); !p.empty())
      (*manager)["imagePullPolicy"] = image_pull_policy(p);
    apply_env(*manager, m);
    add_pull_secrets(pod_spec, m);
  }

  json::value* containers = pod_spec.if_contains("containers");
  if (!containers || !containers->is_array() || containers->as_array().empty() ||
      !containers->as_array().front().is_object())
    return;
  json::object& main = containers->as_array().front().as_object();
  // (TransformValidatorShared for the validators: spec.validator, whose
  // pull secrets are already added above.)
  main["imagePullPolicy"] = image_pull_policy(core::string_field(spec, "imagePullPolicy"));
  if (!validator) add_pull_secrets(pod_spec, spec);
  apply_resources(main, spec);
  // TransformToolkit takes no args; TransformMPSControlDaemon (the device
  // plugin's spec) neither args nor env.
  if (op.name != "container-toolkit" && op.name != "mps-control-daemon")
    if (const json::array* args = member_array(spec, "args"); args && !args->empty()) main["args"] = *args;
  if (op.name != "mps-control-daemon") apply_env(main, spec);
}

}  // namespace gpuops::simulator::internal
