// The admission policy generated from the catalog; see admission_policy.h.
#include "core/gpu_operator/admission_policy.h"

#include <boost/json.hpp>

#include <algorithm>
#include <set>

#include "core/base/errors.h"
#include "core/gpu_operator/gpu_node_rules.h"

namespace gpuops::core {

namespace {

namespace json = boost::json;

// A CEL string literal (single-quoted; the texts here hold no quote, no
// backslash and no line break, which the catalog's validated names cannot).
std::string lit(const std::string& s) { return "'" + s + "'"; }

// An RE2 alternation, anchored, of the written values whose class `keep`
// accepts: exact texts as they are, suffixes as ".*<text>". The texts are
// lowercase letters, digits, '-' and '_': nothing to escape.
template <typename Keep>
std::string values_regex(Keep keep) {
  std::string re;
  bool first = true;  // "" is an alternative too: count, do not test re
  for (const WrittenValue& w : operator_written_values()) {
    if (!keep(w.cls)) continue;
    if (!first) re += "|";
    first = false;
    re += w.suffix ? std::string(".*") + w.text : std::string(w.text);
  }
  return "^(" + re + ")$";
}

bool satisfies_need(LabelClass c) {
  return c == LabelClass::kTrue || c == LabelClass::kPausedForDriverUpgrade || c == LabelClass::kPausedForMigChange ||
         c == LabelClass::kPausedForVgpuChange;
}

// The operands others need, in catalog order, with their dependents; the
// driver is left out (its "false" on a GPU node, or "pre-installed", is the
// host driver's marker: diagnose's host_driver_marker).
std::vector<std::pair<const Operand*, std::vector<const Operand*>>> needed(const Catalog& catalog) {
  std::vector<std::pair<const Operand*, std::vector<const Operand*>>> out;
  for (const Operand& n : catalog.operands) {
    if (n.label == kDriverDeployLabel) continue;
    std::vector<const Operand*> deps;
    for (const Operand& d : catalog.operands) {
      if (&d == &n || std::find(d.needs.begin(), d.needs.end(), n.name) == d.needs.end()) continue;
      // One label for two operands (mps-control-daemon is placed by the
      // device plugin's): listed once.
      if (std::none_of(deps.begin(), deps.end(), [&](const Operand* x) { return x->label == d.label; }))
        deps.push_back(&d);
    }
    if (!deps.empty()) out.emplace_back(&n, std::move(deps));
  }
  return out;
}

json::object validation(const std::string& expression, const std::string& message) {
  return {{"expression", expression}, {"messageExpression", message}, {"reason", "Invalid"}};
}

json::object value_rule() {
  const std::string re = values_regex([](LabelClass) { return true; });
  std::string allowed;
  for (const WrittenValue& w : operator_written_values()) {
    if (w.suffix || std::string(w.text).empty()) continue;
    allowed += (allowed.empty() ? "" : ", ") + std::string(w.text);
  }
  const std::string bad = "variables.changedDeployLabels.filter(k, !variables.labels[k].matches(" + lit(re) + "))";
  return validation(
      "variables.changedDeployLabels.all(k, variables.labels[k].matches(" + lit(re) + "))",
      "'node ' + object.metadata.name + ': ' + " + bad +
          ".map(k, k + '=\"' + variables.labels[k] + '\"').join(', ') + ' is not a value the GPU Operator or its "
          "helpers write (" +
          allowed +
          "); their DaemonSets select \"true\" exactly, so this places nothing. Use true or false (gpuops policy, rule "
          "deploy-label-value)'");
}

// mirrors getWorkloadConfig (gpu-operator controllers/state_manager.go): a
// value it does not know is not refused there, the default workload is
// used instead, and the node gets another workload's operands.
json::object workload_config_rule() {
  const std::string L = lit(kWorkloadConfigLabel);
  std::string list, shown;
  for (const auto& c : workload_configs()) {
    list += (list.empty() ? "" : ", ") + lit(c);
    shown += (shown.empty() ? "" : ", ") + c;
  }
  return validation("!(" + L + " in variables.labels) || (" + L + " in variables.oldLabels && variables.oldLabels[" +
                        L + "] == variables.labels[" + L + "]) || variables.labels[" + L + "] in [" + list + "]",
                    "'node ' + object.metadata.name + ': " + std::string(kWorkloadConfigLabel) +
                        "=\"' + variables.labels[" + L + "] + '\" is not a workload the GPU Operator knows (" + shown +
                        "): it falls back to the default workload (sandboxWorkloads.defaultWorkload), silently, and "
                        "the node gets the operands of that workload (gpuops policy, rule workload-config-value)'");
}

json::object need_rule(const Operand& n, const std::vector<const Operand*>& deps) {
  const std::string L = lit(n.label);
  const std::string on_host = lit(kOnHostLabelPrefix + n.name);
  std::string list;
  for (const Operand* d : deps) list += (list.empty() ? "" : ", ") + lit(d->label);
  list = "[" + list + "]";
  const std::string ok_re = values_regex(satisfies_need);
  const std::string in_new = L + " in variables.labels";
  const std::string exempt = "(" + on_host + " in variables.labels && variables.labels[" + on_host + "] == 'true')";
  const std::string ok = "(" + in_new + " && variables.labels[" + L + "].matches(" + lit(ok_re) + "))";
  const std::string restored = "(variables.gpuNode && !(" + in_new + "))";
  const std::string changed = "((" + in_new + ") != (" + L + " in variables.oldLabels) || (" + in_new +
                              " && variables.labels[" + L + "] != variables.oldLabels[" + L + "]))";
  const std::string dep_true = list + ".exists(d, d in variables.labels && variables.labels[d] == 'true')";
  const std::string dep_flip = list +
                               ".exists(d, d in variables.labels && variables.labels[d] == 'true' && d in "
                               "variables.oldLabels && variables.oldLabels[d] == 'false')";
  const std::string dep_added = "(!variables.gpuNode && " + list +
                                ".exists(d, d in variables.labels && variables.labels[d] == 'true' && !(d in "
                                "variables.oldLabels)))";
  const std::string expression = exempt + " || " + ok + " || " + restored + " || !((" + changed + " && " + dep_true +
                                 ") || " + dep_flip + " || " + dep_added + ")";
  const std::string shown_deps = list +
                                 ".filter(d, d in variables.labels && variables.labels[d] == 'true').map(d, "
                                 "d.substring(" +
                                 std::to_string(std::string(kDeployLabelPrefix).size()) + ")).join(', ')";
  const std::string shown_value = "(" + in_new + " ? '\"' + variables.labels[" + L + "] + '\"' : 'absent')";
  const std::string message = "'node ' + object.metadata.name + ': ' + " + shown_deps + " + ' \"true\" with " + n.name +
                              " ' + " + shown_value +
                              " + ': the GPU is advertised, pods are scheduled, then fail without " + n.name +
                              " (LAB.md step 7). Set " + n.label + "=true, or set those to false as well, or, if " +
                              n.name + " is installed on the host, label the node " + kOnHostLabelPrefix + n.name +
                              "=true (gpuops policy, rule needs-" + n.name + ")'";
  return validation(expression, message);
}

}  // namespace

std::vector<AdmissionPolicyRule> admission_policy_rules(const Catalog& catalog) {
  std::vector<AdmissionPolicyRule> out;
  out.push_back({"deploy-label-value",
                 "a nvidia.com/gpu.deploy.* value the GPU Operator and its helpers never write (\"True\", \"yes\")"});
  out.push_back({"workload-config-value", std::string(kWorkloadConfigLabel) +
                                              " set to a value the operator does not know (not container, "
                                              "vm-passthrough or vm-vgpu)"});
  for (const auto& [n, deps] : needed(catalog)) {
    std::string names;
    for (const Operand* d : deps) names += (names.empty() ? "" : ", ") + d->name;
    out.push_back({"needs-" + n->name, names + " \"true\" while " + n->name + " is not \"true\" or paused"});
  }
  return out;
}

json::array admission_policy(const Catalog& catalog, const AdmissionPolicyOptions& o) {
  const std::set<std::string> known = {"Deny", "Warn", "Audit"};
  std::set<std::string> actions;
  for (const auto& a : o.validation_actions) {
    if (!known.count(a))
      throw InputError("", 0, "--validation-actions", "\"" + a + "\": supported values: \"Audit\", \"Deny\", \"Warn\"");
    if (!actions.insert(a).second) throw InputError("", 0, "--validation-actions", "\"" + a + "\" is given twice");
  }
  if (actions.empty()) throw InputError("", 0, "--validation-actions", "at least one of Deny, Warn, Audit");
  // mirrors ValidateValidatingAdmissionPolicyBinding (k8s.io/kubernetes
  // pkg/apis/admissionregistration/validation): Deny and Warn together are
  // refused ("must not contain both Deny and Warn").
  if (actions.count("Deny") && actions.count("Warn"))
    throw InputError("", 0, "--validation-actions",
                     "must not contain both Deny and Warn (repeating the same validation failure information in "
                     "the API response and headers serves no purpose)");

  std::vector<AdmissionPolicyRule> rules = admission_policy_rules(catalog);
  for (const auto& id : o.rules)
    if (std::none_of(rules.begin(), rules.end(), [&](const AdmissionPolicyRule& r) { return r.id == id; })) {
      std::string ids;
      for (const auto& r : rules) ids += (ids.empty() ? "" : ", ") + r.id;
      throw InputError("", 0, "--rules", "\"" + id + "\" is not a rule of this catalog (" + ids + ")");
    }
  auto wanted = [&](const std::string& id) {
    return o.rules.empty() || std::find(o.rules.begin(), o.rules.end(), id) != o.rules.end();
  };

  json::array validations;
  std::string included;
  if (wanted("deploy-label-value")) {
    validations.push_back(value_rule());
    included = "deploy-label-value";
  }
  if (wanted("workload-config-value")) {
    validations.push_back(workload_config_rule());
    included += (included.empty() ? "" : ",") + std::string("workload-config-value");
  }
  for (const auto& [n, deps] : needed(catalog)) {
    if (!wanted("needs-" + n->name)) continue;
    validations.push_back(need_rule(*n, deps));
    included += (included.empty() ? "" : ",") + ("needs-" + n->name);
  }
  if (validations.empty()) throw InputError("", 0, "--rules", "no rule left");

  std::string gpu;
  for (const auto& k : nfd_gpu_labels()) gpu += (gpu.empty() ? "" : ", ") + lit(k);
  json::array variables = {
      json::object{{"name", "labels"}, {"expression", "has(object.metadata.labels) ? object.metadata.labels : {}"}},
      json::object{{"name", "oldLabels"},
                   {"expression", "has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}"}},
      // mirrors hasGPULabels, gpu-operator controllers/state_manager.go
      json::object{{"name", "gpuNode"},
                   {"expression", "[" + gpu + "].exists(k, k in variables.labels && variables.labels[k] == 'true')"}},
      // The deploy labels this write adds or changes: a value already there
      // is not judged again.
      json::object{{"name", "changedDeployLabels"},
                   {"expression", "variables.labels.filter(k, k.startsWith(" + lit(kDeployLabelPrefix) +
                                      ") && !(k in variables.oldLabels && variables.oldLabels[k] == "
                                      "variables.labels[k]))"}},
  };
  json::object meta_labels{{"app.kubernetes.io/managed-by", "gpuops"}};
  json::object annotations{{"gpuops/rules", included}};
  if (!o.catalog_name.empty()) annotations["gpuops/catalog"] = o.catalog_name;

  json::object policy{
      {"apiVersion", "admissionregistration.k8s.io/v1"},
      {"kind", "ValidatingAdmissionPolicy"},
      {"metadata", json::object{{"name", o.name}, {"labels", meta_labels}, {"annotations", annotations}}},
      {"spec",
       json::object{
           {"failurePolicy", "Fail"},
           {"matchConstraints",
            json::object{{"resourceRules", json::array{json::object{{"apiGroups", json::array{""}},
                                                                    {"apiVersions", json::array{"v1"}},
                                                                    {"operations", json::array{"UPDATE"}},
                                                                    {"resources", json::array{"nodes"}}}}}}},
           {"variables", std::move(variables)},
           {"validations", std::move(validations)},
       }},
  };
  json::array acts;
  for (const auto& a : o.validation_actions) acts.emplace_back(a);
  json::object binding{
      {"apiVersion", "admissionregistration.k8s.io/v1"},
      {"kind", "ValidatingAdmissionPolicyBinding"},
      {"metadata", json::object{{"name", o.name}, {"labels", meta_labels}}},
      {"spec", json::object{{"policyName", o.name}, {"validationActions", std::move(acts)}}},
  };
  return {std::move(policy), std::move(binding)};
}

}  // namespace gpuops::core
