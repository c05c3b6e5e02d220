// The host paths the ClusterPolicy moves in what the simulated operator
// renders. Expected values from NVIDIA/gpu-operator controllers/
// object_controls.go (v25.3.4): transformForHostRoot, transformForDriverInstallDir
// (both absent before v24.6), TransformToolkit's installDir, and the MPS root
// of TransformDevicePlugin and TransformMPSControlDaemon; which operand has
// which volume from the release's assets (assets/state-*/).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <string>

#include "render_helpers.h"

namespace {

namespace json = boost::json;
using namespace gpuops;

json::object pod_spec(const std::string& catalog_name, const std::string& operand, const std::string& spec) {
  return gpuops::testing::rendered_pod_spec(catalog_name, operand, spec);
}

std::string volume(const json::object& spec, const std::string& name) {
  for (const auto& v : spec.at("volumes").as_array())
    if (v.at("name") == name.c_str()) return std::string(v.at("hostPath").at("path").as_string());
  return "(none)";
}

std::string env(const json::object& container, const std::string& name) {
  if (!container.contains("env")) return "(none)";
  for (const auto& e : container.at("env").as_array())
    if (e.at("name") == name.c_str()) return std::string(e.at("value").as_string());
  return "(none)";
}

const json::object& container(const json::object& spec, const char* list, const std::string& name) {
  for (const auto& c : spec.at(list).as_array())
    if (c.at("name") == name.c_str()) return c.as_object();
  ADD_FAILURE() << "no container " << name;
  static const json::object kNone;
  return kNone;
}

// At the defaults the asset's paths stand and no variable is added.
TEST(OperatorHostPaths, TheAssetsPathsAtTheDefaults) {
  auto s = pod_spec("gpu-operator-v25.3", "container-toolkit", "{}");
  EXPECT_EQ(volume(s, "host-root"), "/");
  EXPECT_EQ(volume(s, "host-dev-char"), "/dev/char");
  EXPECT_EQ(volume(s, "driver-install-dir"), "/run/nvidia/driver");
  EXPECT_EQ(volume(s, "toolkit-install-dir"), "/usr/local/nvidia");
  EXPECT_EQ(env(s.at("containers").at(0).as_object(), "HOST_ROOT"), "(none)");
  // Set to the default: nothing moves either.
  auto d = pod_spec("gpu-operator-v25.3", "container-toolkit",
                    R"({"hostPaths":{"rootFS":"/","driverInstallDir":"/run/nvidia/driver"},
                        "toolkit":{"installDir":"/usr/local/nvidia"}})");
  EXPECT_EQ(d.at("volumes"), s.at("volumes"));
  // An operand whose asset has no such volume renders none.
  EXPECT_FALSE(
      pod_spec("gpu-operator-v25.3", "dcgm-exporter", R"({"hostPaths":{"rootFS":"/host"}})").contains("volumes"));
}

// transformForDriverInstallDir: the volume and the two variables on the
// driver-validation init container only.
TEST(OperatorHostPaths, DriverInstallDirOnTheDriverValidationOnly) {
  auto s = pod_spec("gpu-operator-v25.3", "container-toolkit", R"({"hostPaths":{"driverInstallDir":"/opt/drv"}})");
  EXPECT_EQ(volume(s, "driver-install-dir"), "/opt/drv");
  const json::object& validation = container(s, "initContainers", "driver-validation");
  EXPECT_EQ(env(validation, "DRIVER_INSTALL_DIR"), "/opt/drv");
  EXPECT_EQ(env(validation, "DRIVER_INSTALL_DIR_CTR_PATH"), "/opt/drv");
  EXPECT_EQ(env(s.at("containers").at(0).as_object(), "DRIVER_INSTALL_DIR"), "(none)");
}

// TransformDevicePlugin sets MPS_ROOT; TransformMPSControlDaemon moves the
// volumes (root, root/shm) without it.
TEST(OperatorHostPaths, MpsRoot) {
  auto plugin = pod_spec("gpu-operator-v25.3", "device-plugin", R"({"devicePlugin":{"mps":{"root":"/var/mps/"}}})");
  EXPECT_EQ(volume(plugin, "mps-root"), "/var/mps/");
  EXPECT_EQ(volume(plugin, "mps-shm"), "/var/mps/shm");
  EXPECT_EQ(env(plugin.at("containers").at(0).as_object(), "MPS_ROOT"), "/var/mps/");
  auto daemon = pod_spec("gpu-operator-v25.3", "mps-control-daemon", R"({"devicePlugin":{"mps":{"root":"/var/mps"}}})");
  EXPECT_EQ(volume(daemon, "mps-shm"), "/var/mps/shm");
  EXPECT_EQ(env(daemon.at("containers").at(0).as_object(), "MPS_ROOT"), "(none)");
}

// Before v24.6 there is no hostPaths transform: rootFS moves nothing; the
// toolkit's installDir does (TransformToolkit has it at v24.3.0).
TEST(OperatorHostPaths, NoHostPathsTransformBeforeV246) {
  auto old = pod_spec("gpu-operator-v24.3", "container-toolkit",
                      R"({"hostPaths":{"rootFS":"/host"},"toolkit":{"installDir":"/opt/nvidia"}})");
  EXPECT_EQ(volume(old, "host-root"), "/");
  EXPECT_EQ(env(old.at("containers").at(0).as_object(), "HOST_ROOT"), "(none)");
  EXPECT_EQ(volume(old, "toolkit-install-dir"), "/opt/nvidia");
  EXPECT_EQ(env(old.at("containers").at(0).as_object(), "ROOT"), "/opt/nvidia");
  auto v246 = pod_spec("gpu-operator-v24.6", "container-toolkit", R"({"hostPaths":{"rootFS":"/host"}})");
  EXPECT_EQ(volume(v246, "host-root"), "/host");
  EXPECT_EQ(volume(v246, "host-dev-char"), "/host/dev/char");
  for (const char* list : {"initContainers", "containers"})
    for (const auto& c : v246.at(list).as_array()) EXPECT_EQ(env(c.as_object(), "HOST_ROOT"), "/host") << list;
}

}  // namespace
