#include "core/plan/plan_objects.h"

#include <map>

#include "core/gpu_operator/operator_install.h"

namespace gpuops::core {

namespace json = boost::json;

namespace {

// The API server's defaults for fields of a pod template, by field name
// (pkg/apis/core/v1/defaults.go: SetDefaults_Container,
// SetDefaults_PodSpec, SetDefaults_Volume, SetDefaults_HostPathVolumeSource,
// SetDefaults_ConfigMapVolumeSource, SetDefaults_SecretVolumeSource,
// SetDefaults_ContainerPort, SetDefaults_ObjectFieldSelector); and, for any
// key, null, {} and [] (omitempty: `creationTimestamp: null`,
// `securityContext: {}`).
// imagePullPolicy's default depends on the tag (Always for :latest or none),
// so either value counts.
bool is_default(const std::string& key, const json::value& v) {
  static const std::map<std::string, std::vector<json::value>> kDefaults = {
      {"terminationMessagePath", {json::value("/dev/termination-log")}},
      {"terminationMessagePolicy", {json::value("File")}},
      {"imagePullPolicy", {json::value("IfNotPresent"), json::value("Always")}},
      {"dnsPolicy", {json::value("ClusterFirst")}},
      {"restartPolicy", {json::value("Always")}},
      {"schedulerName", {json::value("default-scheduler")}},
      {"terminationGracePeriodSeconds", {json::value(30)}},
      {"defaultMode", {json::value(420)}},
      {"protocol", {json::value("TCP")}},
      {"type", {json::value("")}},
      {"apiVersion", {json::value("v1")}},
      {"enableServiceLinks", {json::value(true)}},
  };
  // An empty map or list, or null, is the same as absent (omitempty).
  if (v.is_null() || (v.is_object() && v.as_object().empty()) || (v.is_array() && v.as_array().empty())) return true;
  auto it = kDefaults.find(key);
  if (it == kDefaults.end()) return false;
  for (const auto& d : it->second)
    if (d == v) return true;
  return false;
}

std::string shown(const json::value& v) {
  std::string s = json::serialize(v);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

void diff(const json::value* a, const json::value* b, std::vector<JsonStep>& at, std::vector<JsonChange>& out) {
  if (a && b && a->is_object() && b->is_object()) {
    std::map<std::string, std::pair<const json::value*, const json::value*>> keys;
    for (const auto& kv : a->as_object()) keys[std::string(kv.key())].first = &kv.value();
    for (const auto& kv : b->as_object()) keys[std::string(kv.key())].second = &kv.value();
    for (const auto& [k, pair] : keys) {
      auto [x, y] = pair;
      // One side only, holding the API server's default: no difference.
      if ((!x && is_default(k, *y)) || (!y && is_default(k, *x))) continue;
      at.push_back(JsonStep{k, 0});
      diff(x, y, at, out);
      at.pop_back();
    }
    return;
  }
  if (a && b && a->is_array() && b->is_array()) {
    const auto& aa = a->as_array();
    const auto& ba = b->as_array();
    for (size_t i = 0; i < std::max(aa.size(), ba.size()); ++i) {
      at.push_back(JsonStep{"", i});
      diff(i < aa.size() ? &aa[i] : nullptr, i < ba.size() ? &ba[i] : nullptr, at, out);
      at.pop_back();
    }
    return;
  }
  if (a && b) {
    // Numbers compare by value whatever their JSON type (30 and 30.0).
    if (a->is_number() && b->is_number() && a->to_number<double>() == b->to_number<double>()) return;
    if (*a == *b) return;
  }
  if (!a && !b) return;
  out.push_back(JsonChange{at, a, b});
}

// A count or a percentage as the DaemonSet holds it: "1", "10%".
std::string iop(const IntOrPercent& v) { return std::to_string(v.value) + (v.percent ? "%" : ""); }

std::string strategy_phrase(const DaemonSet& d) {
  if (d.update_strategy == "OnDelete")
    return "OnDelete: the pods keep the old template until each is deleted, by hand or, for the driver, by the "
           "operator's upgrade controller (driver.upgradePolicy.autoUpgrade)";
  return "RollingUpdate: the pods are replaced node by node, at most " + iop(d.max_unavailable) +
         " unavailable at once (maxSurge " + iop(d.max_surge) + ")";
}

// "RollingUpdate (maxUnavailable 1, maxSurge 0)", "OnDelete".
std::string strategy_text(const DaemonSet& d) {
  if (d.update_strategy == "OnDelete") return "OnDelete";
  return d.update_strategy + " (maxUnavailable " + iop(d.max_unavailable) + ", maxSurge " + iop(d.max_surge) + ")";
}

std::string operand_name(const Catalog& catalog, const DaemonSet& d) {
  if (const Operand* op = catalog.by_daemonset(d.metadata.name)) return op->name;
  for (const auto& op : catalog.operands)
    if (is_operand_daemonset(catalog, op, d)) return op.name;
  return "";
}

}  // namespace

std::vector<JsonChange> json_changes(const json::value& before, const json::value& after) {
  std::vector<JsonChange> out;
  std::vector<JsonStep> at;
  diff(&before, &after, at, out);
  return out;
}

std::string json_path_text(const std::string& root, const std::vector<JsonStep>& path) {
  std::string s = root;
  for (const auto& step : path) {
    if (step.key.empty())
      s += "[" + std::to_string(step.index) + "]";
    else
      s += (s.empty() ? "" : ".") + step.key;
  }
  return s;
}

const json::value* json_at(const json::value& root, const std::vector<JsonStep>& path) {
  const json::value* v = &root;
  for (const auto& step : path) {
    if (!step.key.empty()) {
      v = v->is_object() ? v->as_object().if_contains(step.key) : nullptr;
    } else {
      const json::array* a = v->if_array();
      v = a && step.index < a->size() ? &(*a)[step.index] : nullptr;
    }
    if (!v) return nullptr;
  }
  return v;
}

const json::value* json_member(const json::object& o, std::initializer_list<const char*> keys) {
  const json::value* v = nullptr;
  const json::object* at = &o;
  for (const char* k : keys) {
    if (!at) return nullptr;
    v = at->if_contains(k);
    if (!v) return nullptr;
    at = v->if_object();
  }
  return v;
}

std::string json_change_text(const std::string& root, const JsonChange& c) {
  auto value = [](const json::value* v) { return v ? shown(*v) : std::string("(absent)"); };
  return json_path_text(root, c.path) + ": " + value(c.before) + " -> " + value(c.after);
}

std::vector<std::string> json_differences(const json::value& before, const json::value& after, const std::string& path,
                                          size_t max) {
  std::vector<std::string> out;
  auto changes = json_changes(before, after);
  for (size_t i = 0; i < changes.size() && i < max; ++i) out.push_back(json_change_text(path, changes[i]));
  if (changes.size() > max) out.push_back("... " + std::to_string(changes.size() - max) + " more");
  return out;
}

std::vector<DaemonSetChange> daemonset_changes(const ClusterState& before, const ClusterState& after,
                                               const Catalog& catalog) {
  std::map<std::string, std::pair<const DaemonSet*, const DaemonSet*>> by_name;
  for (const auto& d : before.daemonsets) by_name[d.metadata.name].first = &d;
  for (const auto& d : after.daemonsets) by_name[d.metadata.name].second = &d;
  std::vector<DaemonSetChange> out;
  static const json::value kNone;
  for (const auto& [name, pair] : by_name) {
    auto [b, a] = pair;
    DaemonSetChange c;
    c.name = name;
    c.operand = operand_name(catalog, a ? *a : *b);
    if (!b || !a) {
      c.kind = b ? DaemonSetChange::Kind::kDeleted : DaemonSetChange::Kind::kCreated;
      out.push_back(std::move(c));
      continue;
    }
    // A DaemonSet re-created under the same name is a delete and a create.
    if (!b->metadata.uid.empty() && !a->metadata.uid.empty() && b->metadata.uid != a->metadata.uid) {
      out.push_back({DaemonSetChange::Kind::kDeleted, name, c.operand, {}, ""});
      out.push_back({DaemonSetChange::Kind::kCreated, name, c.operand, {}, ""});
      continue;
    }
    const json::value* bt = json_member(b->raw, {"spec", "template"});
    const json::value* at = json_member(a->raw, {"spec", "template"});
    std::vector<std::string> fields;
    if (bt || at) fields = json_differences(bt ? *bt : kNone, at ? *at : kNone, "spec.template");
    const bool template_changed = !fields.empty();
    if (strategy_text(*b) != strategy_text(*a))
      fields.push_back("spec.updateStrategy: " + strategy_text(*b) + " -> " + strategy_text(*a));
    if (fields.empty()) continue;
    c.fields = std::move(fields);
    if (template_changed) c.rollout = strategy_phrase(*a);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<ClusterPolicyChange> cluster_policy_changes(const ClusterState& before, const ClusterState& after) {
  auto ready = [](const ClusterPolicy& cp) {
    for (const auto& c : cp.conditions)
      if (c.type == "Ready") return c.status + (c.reason.empty() ? "" : " (" + c.reason + ")");
    return std::string("(none)");
  };
  auto state = [](const ClusterPolicy& cp) { return cp.state.empty() ? std::string("(unset)") : cp.state; };
  std::vector<ClusterPolicyChange> out;
  for (const auto& b : before.cluster_policies)
    for (const auto& a : after.cluster_policies) {
      if (a.metadata.name != b.metadata.name) continue;
      if (state(a) == state(b) && ready(a) == ready(b)) continue;
      out.push_back({a.metadata.name, state(b), state(a), ready(b), ready(a)});
    }
  return out;
}

void append_object_changes_text(const std::vector<DaemonSetChange>& daemonsets,
                                const std::vector<ClusterPolicyChange>& policies, std::string& out) {
  for (const auto& c : daemonsets) {
    out += "daemonset " + c.name + (c.operand.empty() ? "" : " (" + c.operand + ")") + " ";
    out += c.kind == DaemonSetChange::Kind::kCreated   ? "created\n"
           : c.kind == DaemonSetChange::Kind::kDeleted ? "deleted\n"
                                                       : "changed:\n";
    for (const auto& f : c.fields) out += "  " + f + "\n";
    if (!c.rollout.empty()) out += "  " + c.rollout + "\n";
  }
  for (const auto& p : policies)
    out += "clusterpolicy " + p.name + ": status.state " + p.state_before + " -> " + p.state_after + ", Ready " +
           p.ready_before + " -> " + p.ready_after + "\n";
}

json::object object_changes_json(const std::vector<DaemonSetChange>& daemonsets,
                                 const std::vector<ClusterPolicyChange>& policies) {
  json::array ds;
  for (const auto& c : daemonsets) {
    json::array fields(c.fields.begin(), c.fields.end());
    ds.push_back(json::object{{"name", c.name},
                              {"operand", c.operand},
                              {"kind", c.kind == DaemonSetChange::Kind::kCreated   ? "created"
                                       : c.kind == DaemonSetChange::Kind::kDeleted ? "deleted"
                                                                                   : "changed"},
                              {"fields", std::move(fields)},
                              {"rollout", c.rollout}});
  }
  json::array cps;
  for (const auto& p : policies)
    cps.push_back(json::object{{"name", p.name},
                               {"stateBefore", p.state_before},
                               {"stateAfter", p.state_after},
                               {"readyBefore", p.ready_before},
                               {"readyAfter", p.ready_after}});
  return json::object{{"daemonsets", std::move(ds)}, {"clusterPolicies", std::move(cps)}};
}

}  // namespace gpuops::core
