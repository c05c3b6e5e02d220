// The simulated GPU Operator's rendering; see operator_object_controls.h.
#include "simulator/gpu_operator/operator_object_controls.h"

#include <boost/json.hpp>

#include "core/base/errors.h"
#include "core/codec/decode.h"
#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/operator_install.h"
#include "simulator/gpu_operator/operator_container_config.h"
#include "simulator/gpu_operator/operator_host_paths.h"

namespace gpuops::simulator::internal {

namespace json = boost::json;

namespace {

// mirrors gpuv1.ImagePath (imagePath, api/nvidia/v1/clusterpolicy_types.go)
// and resolveDriverTag's suffix (`version_suffix`, the driver's "-<os>",
// left off a digest): repository and version both empty: the image alone
// (kbld's path@digest), else the release's default (the operator's
// <COMPONENT>_IMAGE env); either set: repository/image:version
// (@version for a sha256 digest) as written, also when a part is empty
// ("/:v1") up to v26.6; from v26.7 (upstream 7dbfffc37, "Reject incomplete
// image specs in ImagePath") a missing part fails the state with
// upstream's words (core::InputError, field `spec.<field>`).
std::string image_path(const json::object* spec, const std::string& fallback, const std::string& version_suffix,
                       const std::string& release, const std::string& field) {
  std::string repo = core::string_field(spec, "repository"), image = core::string_field(spec, "image"),
              version = core::string_field(spec, "version");
  if (repo.empty() && version.empty()) {
    if (image.empty()) return fallback;
    return image + (image.find("sha256:") == std::string::npos ? version_suffix : "");
  }
  if (core::version_at_least(release, 26, 7) && (repo.empty() || image.empty() || version.empty()))
    throw core::InputError("", 0, "spec." + field,
                           "invalid image specification: repository, image and version must all be set (repository=" +
                               repo + ", image=" + image + ", version=" + version + ")");
  if (version.rfind("sha256:", 0) == 0) return repo + "/" + image + "@" + version;
  return repo + "/" + image + ":" + version + version_suffix;
}

json::object labels_json(const std::vector<std::pair<std::string, std::string>>& l) {
  json::object o;
  for (const auto& [k, v] : l) o[k] = v;
  return o;
}

}  // namespace

// mirrors preProcessDaemonSet and the Transform* functions' placement fields,
// gpu-operator controllers/object_controls.go
core::DaemonSet render_operand_daemonset(const core::Operand& op, const core::ClusterPolicy& policy,
                                         const core::Catalog& catalog, const std::string& ns,
                                         const std::string& os_tag) {
  const json::object* daemonsets = core::spec_object(policy, "daemonsets");
  // The validators' container runs spec.validator's image
  // (TransformValidatorShared).
  const bool validator_operand = op.name == "operator-validator" || op.name == "sandbox-validator";
  const std::string field = validator_operand ? "validator" : core::policy_field(op.name);
  const json::object* component = field.empty() ? nullptr : core::spec_object(policy, field);

  json::object selector = op.selector.empty() ? json::object{{"app", op.app}} : labels_json(op.selector);
  json::object pod_labels = selector;
  if (!op.component.empty()) pod_labels["app.kubernetes.io/component"] = op.component;
  for (const auto& [k, v] : op.pod_labels) pod_labels[k] = v;

  json::object node_selector{{op.label, "true"}};
  for (const auto& [k, v] : op.node_selector) node_selector[k] = v;

  // applyCommonDaemonsetConfig: a non-empty spec.daemonsets.tolerations
  // replaces the template's list.
  // The asset's own list: the nvidia.com/gpu toleration in every one but
  // assets/state-vgpu-device-manager/0600_daemonset.yaml, which has none.
  json::array tolerations;
  if (op.name != "vgpu-device-manager")
    tolerations.push_back(json::object{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}});
  if (daemonsets)
    if (const json::value* t = daemonsets->if_contains("tolerations"); t && t->is_array() && !t->as_array().empty())
      tolerations = t->as_array();
  std::string priority = core::string_field(daemonsets, "priorityClassName");
  if (priority.empty()) priority = "system-node-critical";

  // The validation init containers run the validator image;
  // k8s-driver-manager spec.driver.manager's (the release's default:
  // operator.driver_manager_image), vGPU Manager's and VFIO Manager's their
  // own driverManager's (TransformVGPUManager, TransformVFIOManager). Each
  // resolved only for an operand that has such a container, as the
  // transforms resolve them.
  const core::Operand* validator = catalog.by_name("operator-validator");
  auto validator_image = [&] {
    return image_path(core::spec_object(policy, "validator"), validator ? validator->image : "", "", catalog.version,
                      "validator");
  };
  auto manager_image = [&] {
    const DriverManagerSpec manager = driver_manager_spec(policy, op.name);
    return image_path(manager.spec, catalog.rules.driver_manager_image, "", catalog.version, manager.field);
  };
  json::array init;
  // handleDevicePluginConfig: config-manager-init stays only with a custom
  // plugin config (spec.devicePlugin.config.name set, isCustomPluginConfigSet).
  const json::object* plugin = core::spec_object(policy, "devicePlugin");
  const json::value* plugin_config = plugin ? plugin->if_contains("config") : nullptr;
  const bool custom_plugin_config =
      plugin_config && plugin_config->is_object() && !core::string_field(&plugin_config->as_object(), "name").empty();
  // TransformValidatorComponent "cc-manager": cc-manager-validation only
  // while spec.ccManager is enabled (IsEnabled: default false).
  const bool cc_manager = core::enabled_field(policy, "ccManager").value_or(false);
  for (const auto& gate : op.gates)
    if ((gate != "config-manager-init" || custom_plugin_config) && (gate != "cc-manager-validation" || cc_manager))
      init.push_back(
          json::object{{"name", gate}, {"image", gate == "k8s-driver-manager" ? manager_image() : validator_image()}});
  // mirrors resolveDriverTag (controllers/object_controls.go v25.3.4): the
  // driver's version gets "-" and the OS tag, also when the tag is "" (a
  // first GPU node without NFD's OS labels: driver:580.82.07-).
  std::string suffix = op.name == "driver" ? "-" + os_tag : "";
  json::array containers{
      json::object{{"name", op.container}, {"image", image_path(component, op.image, suffix, catalog.version, field)}}};

  json::object pod_spec{{"nodeSelector", node_selector},
                        {"tolerations", tolerations},
                        {"priorityClassName", priority},
                        {"containers", containers}};
  if (!init.empty()) pod_spec["initContainers"] = init;
  apply_host_paths(op, policy, catalog.version, pod_spec);
  apply_container_config(op, policy, catalog.version, pod_spec);
  // setRuntimeClassName: spec.operator.runtimeClass, default "nvidia".
  if (op.runtime_class) {
    std::string rc = core::string_field(core::spec_object(policy, "operator"), "runtimeClass");
    pod_spec["runtimeClassName"] = rc.empty() ? "nvidia" : rc;
  }

  // applyUpdateStrategyConfig: spec.daemonsets.updateStrategy OnDelete for
  // every DaemonSet; RollingUpdate (rollingUpdate.maxUnavailable, default
  // "1") for all but the driver's, which keeps the asset's OnDelete.
  json::object strategy;
  const std::string wanted = core::string_field(daemonsets, "updateStrategy");
  if (wanted == "OnDelete" || op.update_strategy == "OnDelete") {
    strategy = json::object{{"type", "OnDelete"}};
  } else {
    // intstr.Parse of the value: digits are an int, anything else a string
    // (a percentage).
    json::value max_unavailable = 1;
    if (daemonsets)
      if (const json::value* ru = daemonsets->if_contains("rollingUpdate"); ru && ru->is_object())
        if (const json::value* mu = ru->as_object().if_contains("maxUnavailable")) {
          if (mu->is_int64()) max_unavailable = *mu;
          if (mu->is_string()) {
            std::string v(mu->as_string());
            bool digits = !v.empty() && v.size() < 10 && v.find_first_not_of("0123456789") == std::string::npos;
            max_unavailable = digits ? json::value(std::stoll(v)) : json::value(json::string(v));
          }
        }
    strategy = json::object{{"type", "RollingUpdate"},
                            {"rollingUpdate", json::object{{"maxUnavailable", max_unavailable}, {"maxSurge", 0}}}};
  }

  json::object owner{{"apiVersion", "nvidia.com/v1"}, {"kind", "ClusterPolicy"}, {"name", policy.metadata.name},
                     {"uid", policy.metadata.uid},    {"controller", true},      {"blockOwnerDeletion", true}};
  json::object ds{
      {"apiVersion", "apps/v1"},
      {"kind", "DaemonSet"},
      {"metadata",
       json::object{{"name", op.daemonset},
                    {"namespace", ns},
                    {"labels", json::object{{"app", op.app}, {"app.kubernetes.io/managed-by", "gpu-operator"}}},
                    {"ownerReferences", json::array{owner}}}},
      {"spec", json::object{{"selector", json::object{{"matchLabels", selector}}},
                            {"updateStrategy", strategy},
                            {"template",
                             json::object{{"metadata", json::object{{"labels", pod_labels}}}, {"spec", pod_spec}}}}}};
  core::Document doc;
  doc.value = std::move(ds);
  doc.file = "gpu-operator " + catalog.version + " " + (op.state.empty() ? op.name : op.state);
  return core::decode_daemonset(std::move(doc));
}

// mirrors isDaemonSetReady, gpu-operator controllers/object_controls.go
bool operand_daemonset_ready(const core::DaemonSet& ds, const std::vector<const PodRecord*>& pods,
                             const std::string& hash) {
  if (ds.status.desired_number_scheduled == 0) return true;
  if (ds.status.number_unavailable != 0) return false;
  if (ds.update_strategy != "OnDelete") return true;
  if (pods.empty()) return false;
  // The pod's hash against the latest revision's, as upstream; or its
  // pod-template-generation against the DaemonSet's (what IsPodUpdated also
  // accepts): the same pods on a real cluster, and the only test that holds
  // for an imported one, whose ControllerRevisions the dump does not carry.
  auto tg = ds.metadata.annotations.find("deprecated.daemonset.template.generation");
  for (const PodRecord* p : pods) {
    const auto& labels = p->shared_meta().labels;
    auto it = labels.find("controller-revision-hash");
    auto gen = labels.find("pod-template-generation");
    bool current = (it != labels.end() && it->second == hash) ||
                   (tg != ds.metadata.annotations.end() && gen != labels.end() && gen->second == tg->second);
    if (!current || p->status->phase != "Running") return false;
    for (const auto& c : p->status->container_statuses)
      if (!c.ready) return false;
  }
  return true;
}

}  // namespace gpuops::simulator::internal
