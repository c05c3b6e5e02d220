// The ClusterPolicy's per-container fields in what the simulated operator
// renders. Expected values from NVIDIA/gpu-operator controllers/
// object_controls.go (v25.3.4 and v26.7.0): the Transform<Component>
// functions, setContainerEnv, addPullSecrets, gpuv1.ImagePullPolicy,
// transformValidationInitContainer, transformDriverManagerInitContainer.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <string>

#include "core/base/errors.h"
#include "core/codec/decode.h"
#include "core/gpu_operator/operands.h"
#include "render_helpers.h"
#include "simulator/gpu_operator/operator_render.h"

namespace {

namespace json = boost::json;
using namespace gpuops;

core::ClusterPolicy policy(const std::string& spec) { return gpuops::testing::policy_of(spec); }

json::object pod_spec(const std::string& catalog_name, const std::string& operand, const std::string& spec) {
  return gpuops::testing::rendered_pod_spec(catalog_name, operand, spec);
}

const json::object& init_named(const json::object& spec, const std::string& name) {
  for (const auto& c : spec.at("initContainers").as_array())
    if (c.at("name") == name.c_str()) return c.as_object();
  ADD_FAILURE() << "no init container " << name;
  static const json::object kNone;
  return kNone;
}

// TransformToolkit: the pull policy always (gpuv1.ImagePullPolicy: any
// other value, or none, is IfNotPresent); env set by name, a later entry of
// the same name taking the value in place (setContainerEnv); no args (the
// transform takes none).
TEST(OperatorContainerConfig, ToolkitEnvAndPullPolicy) {
  auto spec = pod_spec("gpu-operator", "container-toolkit",
                       R"({"toolkit":{"imagePullPolicy":"Sometimes","args":["--ignored"],
                           "env":[{"name":"CONTAINERD_CONFIG","value":"/etc/k3s.toml"},
                                  {"name":"CONTAINERD_SOCKET","value":"/run/k3s.sock"},
                                  {"name":"CONTAINERD_CONFIG","value":"/etc/k3s/config.toml"}]}})");
  const json::object& c = spec.at("containers").at(0).as_object();
  EXPECT_EQ(c.at("imagePullPolicy"), "IfNotPresent");
  EXPECT_EQ(c.at("env"), json::parse(R"([{"name":"CONTAINERD_CONFIG","value":"/etc/k3s/config.toml"},
                                         {"name":"CONTAINERD_SOCKET","value":"/run/k3s.sock"}])"));
  EXPECT_FALSE(c.contains("args"));
  EXPECT_EQ(pod_spec("gpu-operator", "container-toolkit", R"({"toolkit":{"imagePullPolicy":"Always"}})")
                .at("containers")
                .at(0)
                .at("imagePullPolicy"),
            "Always");
}

// The pod's pull secrets: the validator's first (transformValidationInitContainer
// runs before the component's block), each name once (addPullSecrets); the
// component's resources and args on its container.
TEST(OperatorContainerConfig, DevicePluginSecretsResourcesArgs) {
  auto spec = pod_spec("gpu-operator", "device-plugin",
                       R"({"validator":{"imagePullSecrets":["ngc","mirror"],"imagePullPolicy":"Never"},
                           "devicePlugin":{"imagePullSecrets":["plugin","ngc"],"args":["--fail-on-init-error=false"],
                                           "resources":{"limits":{"memory":"200Mi"}}}})");
  EXPECT_EQ(spec.at("imagePullSecrets"), json::parse(R"([{"name":"ngc"},{"name":"mirror"},{"name":"plugin"}])"));
  const json::object& c = spec.at("containers").at(0).as_object();
  EXPECT_EQ(c.at("args"), json::parse(R"(["--fail-on-init-error=false"])"));
  EXPECT_EQ(c.at("resources"), json::parse(R"({"limits":{"memory":"200Mi"}})"));
  // The validator's pull policy on its validation init container, when set.
  EXPECT_EQ(init_named(spec, "toolkit-validation").at("imagePullPolicy"), "Never");
}

// The MPS control daemon is the device plugin's (TransformMPSControlDaemon):
// its pull policy, secrets and resources, but neither args nor env.
TEST(OperatorContainerConfig, MpsControlDaemonTakesNoArgsOrEnv) {
  auto spec = pod_spec("gpu-operator", "mps-control-daemon",
                       R"({"devicePlugin":{"imagePullPolicy":"Always","args":["-v"],
                                           "env":[{"name":"X","value":"1"}],"imagePullSecrets":["s"]}})");
  const json::object& c = spec.at("containers").at(0).as_object();
  EXPECT_EQ(c.at("imagePullPolicy"), "Always");
  EXPECT_FALSE(c.contains("args"));
  EXPECT_FALSE(c.contains("env"));
  EXPECT_EQ(spec.at("imagePullSecrets"), json::parse(R"([{"name":"s"}])"));
}

// The driver: spec.driver.manager on the k8s-driver-manager init container
// (its pull policy only when set, its env, its secrets before the
// driver's), spec.driver on the driver container.
TEST(OperatorContainerConfig, DriverAndItsManager) {
  auto spec = pod_spec("gpu-operator", "driver",
                       R"({"driver":{"imagePullSecrets":["drv"],"env":[{"name":"KERNEL_MODULE_TYPE","value":"open"}],
                                     "manager":{"imagePullSecrets":["mgr"],"imagePullPolicy":"Always",
                                                "env":[{"name":"ENABLE_GPU_POD_EVICTION","value":"false"}]}}})");
  EXPECT_EQ(spec.at("imagePullSecrets"), json::parse(R"([{"name":"mgr"},{"name":"drv"}])"));
  const json::object& m = init_named(spec, "k8s-driver-manager");
  EXPECT_EQ(m.at("imagePullPolicy"), "Always");
  EXPECT_EQ(m.at("env"), json::parse(R"([{"name":"ENABLE_GPU_POD_EVICTION","value":"false"}])"));
  EXPECT_EQ(spec.at("containers").at(0).at("env"), json::parse(R"([{"name":"KERNEL_MODULE_TYPE","value":"open"}])"));
  // Without a manager pull policy the init container gets none from the
  // transform.
  EXPECT_FALSE(init_named(pod_spec("gpu-operator", "driver", "{}"), "k8s-driver-manager").contains("imagePullPolicy"));
}

// The validator's components: spec.validator.<component>.env on the
// matching validation init container of the operator validator
// (TransformValidatorComponent); other operands' validation init containers
// take only the driver's and the toolkit's (transformValidationInitContainer).
TEST(OperatorContainerConfig, ValidatorComponentEnv) {
  const std::string cp = R"({"validator":{"env":[{"name":"WITH_WORKLOAD","value":"false"}],
                                           "plugin":{"env":[{"name":"WITH_WORKLOAD","value":"true"}]},
                                           "toolkit":{"env":[{"name":"T","value":"1"}]}}})";
  auto v = pod_spec("gpu-operator", "operator-validator", cp);
  EXPECT_EQ(v.at("containers").at(0).at("env"), json::parse(R"([{"name":"WITH_WORKLOAD","value":"false"}])"));
  EXPECT_EQ(init_named(v, "plugin-validation").at("env"), json::parse(R"([{"name":"WITH_WORKLOAD","value":"true"}])"));
  EXPECT_EQ(init_named(v, "toolkit-validation").at("env"), json::parse(R"([{"name":"T","value":"1"}])"));
  EXPECT_FALSE(init_named(v, "driver-validation").contains("env"));
  auto gfd = pod_spec("gpu-operator", "gpu-feature-discovery", cp);
  EXPECT_EQ(init_named(gfd, "toolkit-validation").at("env"), json::parse(R"([{"name":"T","value":"1"}])"));
}

// spec.validator.resources reach the validation init containers from v26.7
// (applyResourceRequirements in transformValidationInitContainer), not in
// v25.3.4.
TEST(OperatorContainerConfig, ValidatorResourcesOnInitContainersFromV26_7) {
  const std::string cp = R"({"validator":{"resources":{"requests":{"cpu":"10m"}}}})";
  EXPECT_EQ(init_named(pod_spec("gpu-operator", "device-plugin", cp), "toolkit-validation").at("resources"),
            json::parse(R"({"requests":{"cpu":"10m"}})"));
  EXPECT_FALSE(
      init_named(pod_spec("gpu-operator-v25.3", "device-plugin", cp), "toolkit-validation").contains("resources"));
}

// vGPU Manager and VFIO Manager run k8s-driver-manager with their own
// driverManager (TransformVGPUManager, TransformVFIOManager), not
// spec.driver.manager.
TEST(OperatorContainerConfig, VfioManagerHasItsOwnDriverManager) {
  auto spec = pod_spec("gpu-operator", "vfio-manager",
                       R"({"driver":{"manager":{"repository":"r","image":"driver-side","version":"v1"}},
                           "vfioManager":{"driverManager":{"repository":"r","image":"vfio-side","version":"v2",
                                                           "env":[{"name":"E","value":"v"}]}}})");
  const json::object& m = init_named(spec, "k8s-driver-manager");
  EXPECT_EQ(m.at("image"), "r/vfio-side:v2");
  EXPECT_EQ(m.at("env"), json::parse(R"([{"name":"E","value":"v"}])"));
}

}  // namespace

namespace {

// gpuv1.ImagePath (api/nvidia/v1/clusterpolicy_types.go): with repository
// or version set, repository/image:version as written, also with a part
// missing, up to v26.6 (v25.3.4's imagePath); from v26.7 a missing part is
// an error (upstream 7dbfffc37), which fails the state.
TEST(OperatorImagePath, AnIncompleteImageSpecPerRelease) {
  const std::string cp = R"({"devicePlugin":{"version":"v0.99.0"}})";
  EXPECT_EQ(pod_spec("gpu-operator-v25.3", "device-plugin", cp).at("containers").at(0).at("image"), "/:v0.99.0");
  EXPECT_EQ(pod_spec("gpu-operator-v25.3", "device-plugin", R"({"devicePlugin":{"repository":"r","image":"p"}})")
                .at("containers")
                .at(0)
                .at("image"),
            "r/p:");
  const core::Catalog v26 = core::load_catalog("gpu-operator");
  try {
    simulator::rendered_daemonset(*v26.by_name("device-plugin"), policy(cp), v26, "gpu-operator", "ubuntu22.04");
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.message(),
              "invalid image specification: repository, image and version must all be set (repository=, image=, "
              "version=v0.99.0)");
    EXPECT_EQ(e.field(), "spec.devicePlugin");
  }
  // The image alone (repository and version empty) is taken as it is, in
  // both; nothing set is the release's default.
  EXPECT_EQ(pod_spec("gpu-operator", "device-plugin", R"({"devicePlugin":{"image":"reg/p@sha256:abc"}})")
                .at("containers")
                .at(0)
                .at("image"),
            "reg/p@sha256:abc");
  // Another operand does not resolve the device plugin's image: unaffected.
  EXPECT_NO_THROW(pod_spec("gpu-operator", "dcgm", cp));
}

// The validators run spec.validator's image (TransformValidatorShared), in
// their container as in every validation init container.
TEST(OperatorImagePath, TheValidatorRunsSpecValidatorsImage) {
  auto spec = pod_spec("gpu-operator", "operator-validator",
                       R"({"validator":{"repository":"r","image":"gpu-operator-validator","version":"v9"}})");
  EXPECT_EQ(spec.at("containers").at(0).at("image"), "r/gpu-operator-validator:v9");
  EXPECT_EQ(init_named(spec, "driver-validation").at("image"), "r/gpu-operator-validator:v9");
}

}  // namespace
