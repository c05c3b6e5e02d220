// core/gpu_operator/cluster_policy_infer.cpp: a ClusterPolicy from what the
// operator rendered (core/gpu_operator/cluster_policy_infer.h).
#include "core/gpu_operator/cluster_policy_infer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>

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

// The value at JSON pointer `pointer` (RFC 6901) under `v`, null when `v`
// is null or the path is not there.
const json::value* at(const json::value* v, std::string_view pointer) {
  boost::system::error_code ec;
  return v ? v->find_pointer(pointer, ec) : nullptr;
}

// mirrors applyCommonDaemonsetConfig and applyUpdateStrategyConfig
// (controllers/object_controls.go) the other way round: what every rendered
// operand DaemonSet holds alike, where it is not the assets' own, is
// spec.daemonsets' (`daemonsets`, filled; `fields`, what was inferred). The
// assets' own: the nvidia.com/gpu toleration (none in vgpu-device-manager's),
// priority class system-node-critical, RollingUpdate maxUnavailable 1 but
// the driver's OnDelete.
void infer_daemonsets(const std::vector<std::pair<const Operand*, const DaemonSet*>>& rendered,
                      json::object& daemonsets, std::vector<std::string>& fields) {
  if (rendered.empty()) return;
  const json::array kDefaultTolerations{
      json::object{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
  std::optional<json::value> tolerations, priority, strategy;
  bool same_tolerations = true, same_priority = true, same_strategy = true, default_tolerations = true;
  bool default_priority = true, default_strategy = true;
  for (const auto& [op, d] : rendered) {
    const json::value* pod = at(&d->raw.at("spec"), "/template/spec");
    const json::value* t = at(pod, "/tolerations");
    json::value tv = t && t->is_array() ? *t : json::value(json::array{});
    const json::value* pc = at(pod, "/priorityClassName");
    json::value pv = pc && pc->is_string() ? *pc : json::value("");
    const json::value* us = at(&d->raw.at("spec"), "/updateStrategy");
    json::value sv = us ? *us : json::value(nullptr);
    default_tolerations =
        default_tolerations &&
        tv == (op->name == "vgpu-device-manager" ? json::value(json::array{}) : json::value(kDefaultTolerations));
    default_priority = default_priority && pv == "system-node-critical";
    if (op->name != "driver")
      default_strategy = default_strategy &&
                         (!sv.is_object() || at(&sv, "/type") == nullptr || *at(&sv, "/type") == "RollingUpdate") &&
                         (!at(&sv, "/rollingUpdate/maxUnavailable") || *at(&sv, "/rollingUpdate/maxUnavailable") == 1);
    if (!tolerations) tolerations = tv;
    same_tolerations = same_tolerations && *tolerations == tv;
    if (!priority) priority = pv;
    same_priority = same_priority && *priority == pv;
    if (op->name != "driver") {
      if (!strategy) strategy = sv;
      same_strategy = same_strategy && *strategy == sv;
    }
  }
  if (!default_tolerations && same_tolerations && tolerations->is_array() && !tolerations->as_array().empty()) {
    daemonsets["tolerations"] = *tolerations;
    fields.push_back("daemonsets.tolerations");
  }
  if (!default_priority && same_priority && priority->is_string() && !priority->as_string().empty()) {
    daemonsets["priorityClassName"] = *priority;
    fields.push_back("daemonsets.priorityClassName");
  }
  if (!default_strategy && same_strategy && strategy && strategy->is_object()) {
    const json::value* type = at(&*strategy, "/type");
    if (type && *type == "OnDelete") {
      daemonsets["updateStrategy"] = "OnDelete";
      fields.push_back("daemonsets.updateStrategy");
    } else if (const json::value* mu = at(&*strategy, "/rollingUpdate/maxUnavailable")) {
      daemonsets["rollingUpdate"] = json::object{{"maxUnavailable", *mu}};
      fields.push_back("daemonsets.rollingUpdate");
    }
  }
}

}  // namespace

InferredClusterPolicy infer_cluster_policy(const ClusterState& state, const Catalog& catalog) {
  InferredClusterPolicy out;
  std::map<std::string, bool> present;  // operand name -> a DaemonSet of it is in the state
  std::optional<Time> oldest;
  std::vector<std::pair<const Operand*, const DaemonSet*>> rendered;  // the operator's own, by name
  for (const auto& op : catalog.operands) {
    auto dss = operand_daemonsets(state, catalog, op);
    present[op.name] = !dss.empty();
    for (const DaemonSet* d : dss)
      if (d->metadata.name == op.daemonset && d->raw.contains("spec")) rendered.emplace_back(&op, d);
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
  json::object daemonsets;
  infer_daemonsets(rendered, daemonsets, out.inferred);
  if (!daemonsets.empty()) spec["daemonsets"] = std::move(daemonsets);
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
