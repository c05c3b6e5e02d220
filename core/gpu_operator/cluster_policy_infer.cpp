// core/gpu_operator/cluster_policy_infer.cpp: a ClusterPolicy from what the
// operator rendered (core/gpu_operator/cluster_policy_infer.h).
#include "core/gpu_operator/cluster_policy_infer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <boost/json.hpp>

#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/operator_install.h"

namespace gpuops::core {

namespace {

namespace json = boost::json;

bool is_sandbox_operand(const std::string& name) {
  return name == "sandbox-validator" || name == "sandbox-device-plugin" || name == "kata-sandbox-device-plugin" ||
         name == "kata-manager" || name == "cc-manager" || name == "vfio-manager" || name == "vgpu-device-manager" ||
         name == "vgpu-manager";
}

}  // namespace

InferredClusterPolicy infer_cluster_policy(const ClusterState& state, const Catalog& catalog) {
  InferredClusterPolicy out;
  std::map<std::string, bool> present;  // operand name -> a DaemonSet of it is in the state
  std::optional<Time> oldest;
  for (const auto& op : catalog.operands) {
    auto dss = operand_daemonsets(state, catalog, op);
    present[op.name] = !dss.empty();
    for (const DaemonSet* d : dss)
      if (d->metadata.creation_timestamp && (!oldest || *d->metadata.creation_timestamp < *oldest))
        oldest = d->metadata.creation_timestamp;
  }
  // One field may stand for several operands (devicePlugin: the device
  // plugin and the MPS control daemon): enabled when any of them runs.
  std::map<std::string, bool> fields;
  bool sandbox = false, kata = false;
  for (const auto& op : catalog.operands) {
    const std::string field = policy_field(op.name);
    if (!field.empty()) fields[field] = fields[field] || present[op.name];
    if (is_sandbox_operand(op.name) && present[op.name]) sandbox = true;
    if ((op.name == "kata-sandbox-device-plugin" || op.name == "cc-manager") && present[op.name]) kata = true;
  }
  json::object spec;
  for (const auto& [field, on] : fields) {
    spec[field] = json::object{{"enabled", on}};
    if (on) out.enabled.push_back(field);
  }
  if (sandbox) {
    json::object sw{{"enabled", true}};
    if (kata) sw["mode"] = "kata";
    spec["sandboxWorkloads"] = std::move(sw);
  }
  out.policy.raw = cluster_policy_object(std::move(spec));
  out.policy.metadata.name = "cluster-policy";
  out.policy.metadata.generation = 1;
  out.policy.metadata.creation_timestamp = oldest;
  for (const auto& op : catalog.operands) {
    std::optional<bool> on = state_enabled(out.policy, op.name, catalog.version);
    if (on && *on != present[op.name]) out.uncertain.push_back(op.name);
  }
  return out;
}

}  // namespace gpuops::core
