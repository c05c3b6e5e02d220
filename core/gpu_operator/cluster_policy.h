// core/gpu_operator/cluster_policy.h: what a ClusterPolicy says, with the operator's
// defaults.
//
// Upstream: gpu-operator api/nvidia/v1/clusterpolicy_types.go (the spec
// fields and their IsEnabled defaults) and controllers/state_manager.go
// isStateEnabled (which states are rendered), ClusterPolicyController.init
// (sandboxWorkloads). The spec is read from ClusterPolicy::raw; a field of the
// wrong JSON type counts as absent (the API server's schema refuses it, so
// only a hand-written dump can have it). None of these throws.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "core/gpu_operator/gpu_node_rules.h"
#include "core/model/model.h"

namespace gpuops::core {

// The ClusterPolicy field of an operand (the catalog's operand names), as
// isStateEnabled reads it: "driver", "toolkit", "devicePlugin" (device-plugin
// and mps-control-daemon), "dcgm", "dcgmExporter", "migManager", "gfd",
// "nodeStatusExporter", "sandboxDevicePlugin", "kataSandboxDevicePlugin",
// "kataManager", "vfioManager", "vgpuDeviceManager", "vgpuManager",
// "ccManager"; "" for operator-validator and sandbox-validator (no enabled
// field of their own) and for a name the operator does not have.
std::string policy_field(const std::string& operand);

// Whether the ClusterPolicy renders the operand's state. Mirrors
// isStateEnabled: `spec.<field>.enabled`, absent meaning the IsEnabled default
// (true for driver, toolkit, devicePlugin, dcgm, dcgmExporter, migManager,
// gfd; false for the rest); the sandbox states also need
// sandboxWorkloads.enabled, and sandboxDevicePlugin mode kubevirt,
// kataSandboxDevicePlugin and ccManager mode kata (`sandboxWorkloads.mode`,
// default kubevirt); kata-manager is never rendered from v26.7 (`version`,
// "v26.7" or later; before, kataManager.enabled); the operator-validator
// always; the sandbox-validator with sandboxWorkloads. nullopt for an operand
// the operator does not have (a user catalog's own).
std::optional<bool> state_enabled(const ClusterPolicy& policy, const std::string& operand, const std::string& version);

// `spec.sandboxWorkloads.enabled` (default false).
bool sandbox_workloads_enabled(const ClusterPolicy& policy);

// `spec.sandboxWorkloads.defaultWorkload` when it is container,
// vm-passthrough or vm-vgpu, else "container" (ClusterPolicyController.init).
std::string default_workload(const ClusterPolicy& policy);

// `spec.<field>` when it is an object, else null (absent, or another type:
// the operator's decoding would refuse it, gpuops reads it as absent).
const boost::json::object* spec_object(const ClusterPolicy& policy, std::string_view field);

// `o[key]` when `o` is not null and that member is a string, else "".
std::string string_field(const boost::json::object* o, std::string_view key);

// `spec.<field>.enabled` as written: nullopt when absent (or not a bool).
std::optional<bool> enabled_field(const ClusterPolicy& policy, const std::string& field);

// `spec.sandboxWorkloads.mode` ("" when unset).
std::string sandbox_mode(const ClusterPolicy& policy);

// The spec fields the ClusterPolicy CRD requires, read from the schema
// gpuops carries (core/codec/crd_schema.h; spec.required of the operator's
// nvidia.com_clusterpolicies.yaml, the same in v25.3.4 and v26.7.0):
// daemonsets, dcgm, dcgmExporter, devicePlugin, driver, gfd,
// nodeStatusExporter, operator, toolkit. The Helm chart's ClusterPolicy
// always renders them; the API server refuses a ClusterPolicy without one
// (422 "Required value").
const std::vector<std::string>& required_spec_fields();

// `spec` with each required field it lacks added as {} (every component at
// its default: IsEnabled and the defaults read an empty block as absent).
boost::json::object with_required_spec_fields(boost::json::object spec);

// A ClusterPolicy's `raw` as installOperator and the lab's operator install
// apply it (its metadata is the typed ObjectMeta's): apiVersion
// nvidia.com/v1, kind ClusterPolicy, and `spec` with_required_spec_fields.
// Also what a scenario's operator.clusterPolicy is validated as at load.
boost::json::object cluster_policy_object(boost::json::object spec);

// What the node labeller reads of the policy (core/gpu_operator/gpu_node_rules.h).
LabellerPolicy labeller_policy(const ClusterPolicy& policy);

}  // namespace gpuops::core
