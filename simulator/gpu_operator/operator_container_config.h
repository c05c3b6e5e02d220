// simulator/gpu_operator/operator_container_config.h: internal to simulator/.
// The per-container fields of a ClusterPolicy component that the GPU
// Operator's transforms write into an operand's DaemonSet, beyond its image
// and placement (operator_object_controls.h): imagePullPolicy, resources,
// args and env of the operand's main container, the pod's imagePullSecrets,
// and the same of its k8s-driver-manager and validation init containers.
//
// Mirrors, in NVIDIA/gpu-operator controllers/object_controls.go (v25.3.4 and
// v26.7.0): the Transform<Component> functions' common block (ImagePullPolicy,
// addPullSecrets, Resources, Args, setContainerEnv of spec.<component>.env),
// transformDriverContainer and transformVGPUManagerContainer (the driver's
// own container), transformDriverManagerInitContainer (spec.driver.manager,
// spec.vgpuManager.driverManager, spec.vfioManager.driverManager),
// transformValidationInitContainer and TransformValidatorComponent
// (spec.validator's imagePullPolicy and imagePullSecrets, and
// spec.validator.<component>.env on the matching validation init container;
// from v26.7 also spec.validator.resources on them, applyResourceRequirements).
//
// Not rendered: the env the operator computes itself (CDI, MIG strategy, GDS,
// the validator's VALIDATOR_IMAGE family, kernel module type), the asset's own
// env (an entry of spec.<component>.env named like one of them replaces it
// upstream, here it is added), probes, security contexts, volume mounts
// (host paths: operator_host_paths.h); quantities are kept as written (the API
// server would store them in canonical form).
#pragma once

#include <boost/json.hpp>
#include <string>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::simulator::internal {

// The DriverManagerSpec of an operand that runs k8s-driver-manager
// (TransformDriver: spec.driver.manager; TransformVGPUManager and
// TransformVFIOManager: spec.vgpuManager.driverManager,
// spec.vfioManager.driverManager), with its path under spec for errors;
// {null, ""} for another operand or when absent (not an object).
struct DriverManagerSpec {
  const boost::json::object* spec = nullptr;
  std::string field;
};
DriverManagerSpec driver_manager_spec(const core::ClusterPolicy& policy, const std::string& operand);

// mirrors setContainerEnv, controllers/object_controls.go: the variable
// `name` of `container` (a rendered container: {"env": [{name, value}]})
// takes `value`, else one is appended.
void set_container_env(boost::json::object& container, const std::string& name, const std::string& value);

// Writes the fields above into `pod_spec` (a rendered pod template's spec:
// "containers"[0] is the operand's main container, "initContainers" those
// named by op.gates) for operand `op` of operator release `version`
// ("v25.3", "v26.7": core::version_at_least) under `policy`. A field of the
// wrong type counts as absent, as core/gpu_operator/cluster_policy.h reads
// them; never throws for any policy.
void apply_container_config(const core::Operand& op, const core::ClusterPolicy& policy, const std::string& version,
                            boost::json::object& pod_spec);

}  // namespace gpuops::simulator::internal
