#include "simulator/gpu_operator/operator_host_paths.h"

#include <filesystem>

#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/operator_install.h"
#include "simulator/gpu_operator/operator_container_config.h"

namespace gpuops::simulator::internal {

namespace json = boost::json;

namespace {

// filepath.Join(a, b) for an absolute a: the two joined by "/" and cleaned.
std::string join(const std::string& a, const std::string& b) {
  std::string joined = std::filesystem::path(a + "/" + b).lexically_normal().generic_string();
  if (joined.size() > 1 && joined.back() == '/') joined.pop_back();
  return joined;
}

// The containers of `list` ("containers" or "initContainers") in pod_spec,
// those named `only` when it is not empty.
template <typename F>
void each_container(json::object& pod_spec, const char* list, const std::string& only, F f) {
  json::value* cs = pod_spec.if_contains(list);
  if (!cs || !cs->is_array()) return;
  for (json::value& c : cs->as_array())
    if (c.is_object() && (only.empty() || core::string_field(&c.as_object(), "name") == only)) f(c.as_object());
}

// The operand's main container, containers[0]; nullptr when there is none.
json::object* main_container(json::object& pod_spec) {
  json::value* cs = pod_spec.if_contains("containers");
  if (!cs || !cs->is_array() || cs->as_array().empty() || !cs->as_array().front().is_object()) return nullptr;
  return &cs->as_array().front().as_object();
}

// Sets the path of volume `name`; false when the pod has none of that name.
bool move_volume(json::array& volumes, const std::string& name, const std::string& path) {
  for (json::value& v : volumes)
    if (core::string_field(&v.as_object(), "name") == name) {
      v.as_object()["hostPath"] = json::object{{"path", path}};
      return true;
    }
  return false;
}

}  // namespace

// mirrors transformForHostRoot, transformForDriverInstallDir and the
// installDir / MPS root blocks of TransformToolkit, TransformDevicePlugin and
// TransformMPSControlDaemon, gpu-operator controllers/object_controls.go
void apply_host_paths(const core::Operand& op, const core::ClusterPolicy& policy, const std::string& version,
                      json::object& pod_spec) {
  if (op.host_paths.empty()) return;
  json::array volumes;
  for (const auto& [name, path] : op.host_paths)
    volumes.push_back(json::object{{"name", name}, {"hostPath", json::object{{"path", path}}}});

  const json::object* host_paths = core::spec_object(policy, "hostPaths");
  if (core::version_at_least(version, 24, 6)) {
    const std::string root = core::string_field(host_paths, "rootFS");
    if (!root.empty() && root != "/" && move_volume(volumes, "host-root", root)) {
      for (const char* list : {"initContainers", "containers"})
        each_container(pod_spec, list, "", [&](json::object& c) { set_container_env(c, "HOST_ROOT", root); });
    }
    if (!root.empty() && root != "/") move_volume(volumes, "host-dev-char", join(root, "/dev/char"));
    const std::string driver_dir = core::string_field(host_paths, "driverInstallDir");
    if (!driver_dir.empty() && driver_dir != "/run/nvidia/driver" &&
        move_volume(volumes, "driver-install-dir", driver_dir))
      each_container(pod_spec, "initContainers", "driver-validation", [&](json::object& c) {
        set_container_env(c, "DRIVER_INSTALL_DIR", driver_dir);
        set_container_env(c, "DRIVER_INSTALL_DIR_CTR_PATH", driver_dir);
      });
  }
  if (op.name == "container-toolkit") {
    const std::string dir = core::string_field(core::spec_object(policy, "toolkit"), "installDir");
    if (!dir.empty() && dir != "/usr/local/nvidia") {
      move_volume(volumes, "toolkit-install-dir", dir);
      if (json::object* c = main_container(pod_spec)) set_container_env(*c, "ROOT", dir);
    }
  }
  if (op.name == "device-plugin" || op.name == "mps-control-daemon") {
    const json::object* plugin = core::spec_object(policy, "devicePlugin");
    const json::value* mps = plugin ? plugin->if_contains("mps") : nullptr;
    const std::string root = mps && mps->is_object() ? core::string_field(&mps->as_object(), "root") : "";
    if (!root.empty() && root != "/run/nvidia/mps") {
      move_volume(volumes, "mps-root", root);
      move_volume(volumes, "mps-shm", join(root, "shm"));
      json::object* c = main_container(pod_spec);
      if (op.name == "device-plugin" && c) set_container_env(*c, "MPS_ROOT", root);
    }
  }
  pod_spec["volumes"] = std::move(volumes);
}

}  // namespace gpuops::simulator::internal
