#include "cli/plan_operator.h"

#include <algorithm>

#include <boost/json.hpp>

#include "core/base/errors.h"
#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/nfd.h"
#include "core/plan/plan_objects.h"
#include "simulator/gpu_operator/operator_render.h"

namespace gpuops::cli {

namespace json = boost::json;

namespace {

const json::value& or_null(const json::value* v) {
  static const json::value kNull;
  return v ? *v : kNull;
}

// What of a render a ClusterPolicy change can move: its pod template and
// update strategy.
std::string rendered(const core::Operand& op, const core::ClusterPolicy& cp, const core::Catalog& catalog,
                     const std::string& ns, const std::string& os_tag) {
  core::DaemonSet ds;
  try {
    ds = simulator::rendered_daemonset(op, cp, catalog, ns, os_tag);
  } catch (const core::InputError& e) {
    return std::string("refused: ") + e.what();  // as the controller fails the state
  }
  return json::serialize(or_null(core::json_member(ds.raw, {"spec", "template"}))) + "|" +
         json::serialize(or_null(core::json_member(ds.raw, {"spec", "updateStrategy"})));
}

// A pod template with each container's env keyed by variable name
// ({"NAME": "value"}, or the entry less its name when it is not a plain
// value; {} without env), so that the operator's setContainerEnv, which sets one variable
// among the asset's, compares as that one variable and not as a list that
// shifts by position; its volumes likewise keyed by name, a hostPath volume
// as its path (the transforms move one volume among the asset's).
json::value keyed_by_name(const json::value& template_value) {
  json::value t = template_value;
  json::value* spec = t.is_object() ? t.as_object().if_contains("spec") : nullptr;
  if (!spec || !spec->is_object()) return t;
  for (const char* list : {"initContainers", "containers"}) {
    json::value* cs = spec->as_object().if_contains(list);
    if (!cs || !cs->is_array()) continue;
    for (json::value& c : cs->as_array()) {
      if (!c.is_object()) continue;
      json::value* env = c.as_object().if_contains("env");
      if (!env) env = &c.as_object().emplace("env", json::array{}).first->value();
      if (!env->is_array()) continue;
      json::object by_name;
      for (const json::value& e : env->as_array()) {
        const json::value* name = e.is_object() ? e.as_object().if_contains("name") : nullptr;
        if (!name || !name->is_string()) continue;
        json::object rest = e.as_object();
        rest.erase("name");
        const json::value* value = rest.if_contains("value");
        by_name[name->as_string()] = rest.size() == 1 && value ? *value : json::value(std::move(rest));
      }
      *env = std::move(by_name);
    }
  }
  if (json::value* vs = spec->as_object().if_contains("volumes"); vs && vs->is_array()) {
    json::object by_name;
    for (const json::value& v : vs->as_array()) {
      const json::value* name = v.is_object() ? v.as_object().if_contains("name") : nullptr;
      if (!name || !name->is_string()) continue;
      const json::value* host = v.as_object().if_contains("hostPath");
      const json::value* path = host && host->is_object() ? host->as_object().if_contains("path") : nullptr;
      by_name[name->as_string()] = path ? *path : v;
    }
    *vs = std::move(by_name);
  }
  return t;
}

}  // namespace

std::vector<std::string> refine_operator_changes(core::PlanResult& plan, const core::ClusterState& before,
                                                 const core::ClusterState& after, const core::Catalog& catalog,
                                                 const std::string& ns) {
  if (before.cluster_policies.empty() || after.cluster_policies.empty()) return {};
  const core::ClusterPolicy& cb = before.cluster_policies.front();
  const core::ClusterPolicy* found = nullptr;
  for (const auto& cp : after.cluster_policies)
    if (cp.metadata.name == cb.metadata.name) found = &cp;
  if (!found) return {};
  const core::ClusterPolicy& ca = *found;
  const json::value& spec_b = or_null(core::json_member(cb.raw, {"spec"}));
  const json::value& spec_a = or_null(core::json_member(ca.raw, {"spec"}));
  if (spec_b == spec_a) return {};
  // The first GPU node by name, as the simulated operator takes it.
  const core::Node* first_gpu = nullptr;
  for (const auto& n : before.nodes)
    if (core::has_common_gpu_label(n.metadata.labels) && (!first_gpu || n.metadata.name < first_gpu->metadata.name))
      first_gpu = &n;
  const std::string os_tag = first_gpu ? core::driver_os_tag(*first_gpu, catalog.version) : "";

  // Template differences, render against render.
  for (auto& c : plan.daemonsets) {
    if (c.kind != core::DaemonSetChange::Kind::kChanged || c.rollout.empty()) continue;
    const core::Operand* op = catalog.by_name(c.operand);
    const core::DaemonSet* now = nullptr;
    for (const auto& d : after.daemonsets)
      if (d.metadata.name == c.name) now = &d;
    if (!op || !now || !now->metadata.annotations.count(simulator::kLastAppliedHash)) continue;
    core::DaemonSet rb, ra;
    try {
      rb = simulator::rendered_daemonset(*op, cb, catalog, ns, os_tag);
      ra = simulator::rendered_daemonset(*op, ca, catalog, ns, os_tag);
    } catch (const core::InputError&) {
      continue;  // the operator fails that state instead (its status says so)
    }
    // What the render changes, with the value the cluster's DaemonSet holds
    // now where it has one (the operator's deployment sets images the
    // policy does not name: the render's default is not the cluster's).
    const core::DaemonSet* was = nullptr;
    for (const auto& d : before.daemonsets)
      if (d.metadata.name == c.name) was = &d;
    const json::value was_template =
        keyed_by_name(was ? or_null(core::json_member(was->raw, {"spec", "template"})) : or_null(nullptr));
    const json::value template_before = keyed_by_name(or_null(core::json_member(rb.raw, {"spec", "template"})));
    const json::value template_after = keyed_by_name(or_null(core::json_member(ra.raw, {"spec", "template"})));
    std::vector<std::string> fields;
    for (auto change : core::json_changes(template_before, template_after)) {
      if (const json::value* held = core::json_at(was_template, change.path)) change.before = held;
      if (change.before && change.after && *change.before == *change.after) continue;
      if (fields.size() < core::kMaxFieldChanges) fields.push_back(core::json_change_text("spec.template", change));
    }
    for (const auto& f : c.fields)
      if (f.rfind("spec.updateStrategy", 0) == 0) fields.push_back(f);
    // Nothing the cluster's DaemonSet does not already hold: what differed
    // was only what the simulation does not render.
    if (fields.empty() || fields.front().rfind("spec.template", 0) != 0) c.rollout.clear();
    c.fields = std::move(fields);
  }
  plan.daemonsets.erase(std::remove_if(plan.daemonsets.begin(), plan.daemonsets.end(),
                                       [](const core::DaemonSetChange& c) {
                                         return c.kind == core::DaemonSetChange::Kind::kChanged && c.fields.empty();
                                       }),
                        plan.daemonsets.end());
  core::update_plan_summary(plan);

  // Keys whose change reaches no render.
  std::vector<std::string> notes;
  const json::object empty;
  const json::object& ob = spec_b.is_object() ? spec_b.as_object() : empty;
  const json::object& oa = spec_a.is_object() ? spec_a.as_object() : empty;
  std::vector<std::string> keys;
  for (const auto& kv : ob) keys.emplace_back(kv.key());
  for (const auto& kv : oa)
    if (!ob.contains(kv.key())) keys.emplace_back(kv.key());
  std::sort(keys.begin(), keys.end());
  for (const auto& k : keys) {
    const json::value& vb = or_null(ob.if_contains(k));
    const json::value& va = or_null(oa.if_contains(k));
    if (vb == va) continue;
    core::ClusterPolicy only = cb;
    json::object& spec =
        only.raw["spec"].is_object() ? only.raw["spec"].as_object() : only.raw["spec"].emplace_object();
    if (oa.contains(k))
      spec[k] = va;
    else
      spec.erase(k);
    bool reaches = false;
    for (const auto& op : catalog.operands) {
      if (core::state_enabled(cb, op.name, catalog.version) != core::state_enabled(only, op.name, catalog.version) ||
          rendered(op, cb, catalog, ns, os_tag) != rendered(op, only, catalog, ns, os_tag)) {
        reaches = true;
        break;
      }
    }
    if (reaches) continue;
    std::vector<std::string> what = core::json_differences(vb, va, "spec." + k, 3);
    std::string list;
    for (const auto& w : what) list += (list.empty() ? "" : "; ") + w;
    notes.push_back("spec." + k + " changes (" + list +
                    "), which the simulated operator renders into no DaemonSet: what the real operator's transform "
                    "makes of it (a template change, pods replaced) is not predicted");
  }
  return notes;
}

}  // namespace gpuops::cli
