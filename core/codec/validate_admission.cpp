// core/codec/validate_admission.cpp: admissionregistration.k8s.io/v1
// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding, checked as
// the API server checks their structure on create (core/codec/validate_kinds.h):
// mirrors ValidateValidatingAdmissionPolicy and
// ValidateValidatingAdmissionPolicyBinding, k8s.io/kubernetes
// pkg/apis/admissionregistration/validation/validation.go (required fields,
// enums, names; the first failure). CEL is compiled only by the API server:
// an expression is checked to be there, not to compile (its type errors show
// in the policy's status.typeChecking).
#include <boost/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "core/codec/codec_internal.h"
#include "core/kube/names.h"

namespace gpuops::core::codec_internal {

namespace json = boost::json;

namespace {

constexpr const char* kGroup = "admissionregistration.k8s.io";

std::vector<std::string> strings(const Decoder& d, const json::object* o, const char* key, const Path& p,
                                 const char* st) {
  std::vector<std::string> out;
  const Path kp = p.child(key);
  if (const json::array* a = d.array(get(o, key), kp, st, "[]string"))
    for (size_t i = 0; i < a->size(); ++i) out.push_back(d.string(&(*a)[i], kp.index(i), st));
  return out;
}

void one_of(const Decoder& d, const std::string& v, const Path& p, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed)
    if (v == a) return;
  d.invalid(p, not_supported(v, allowed));
}

// validateRuleWithOperations: operations and resources required, each
// operation one of CREATE, UPDATE, DELETE, CONNECT, *.
void validate_resource_rules(const Decoder& d, const json::object* mc, const Path& p) {
  const Path rp = p.child("resourceRules");
  const json::array* rules = d.array(get(mc, "resourceRules"), rp, "MatchResources", "[]v1.NamedRuleWithOperations");
  for (size_t i = 0; rules && i < rules->size(); ++i) {
    const Path ip = rp.index(i);
    const json::object* r = d.object(&(*rules)[i], ip, "NamedRuleWithOperations", "v1.NamedRuleWithOperations");
    if (!r) continue;
    d.known_fields(*r, ip, {"resourceNames", "operations", "apiGroups", "apiVersions", "resources", "scope"});
    auto ops = strings(d, r, "operations", ip, "NamedRuleWithOperations");
    if (ops.empty()) d.invalid(ip.child("operations"), "Required value");
    const Path op = ip.child("operations");
    for (size_t j = 0; j < ops.size(); ++j)
      one_of(d, ops[j], op.index(j), {"*", "CONNECT", "CREATE", "DELETE", "UPDATE"});
    if (strings(d, r, "apiGroups", ip, "NamedRuleWithOperations").empty())
      d.invalid(ip.child("apiGroups"), "Required value");
    if (strings(d, r, "apiVersions", ip, "NamedRuleWithOperations").empty())
      d.invalid(ip.child("apiVersions"), "Required value");
    if (strings(d, r, "resources", ip, "NamedRuleWithOperations").empty())
      d.invalid(ip.child("resources"), "Required value");
    if (const json::value* s = get(r, "scope"))
      one_of(d, d.string(s, ip.child("scope"), "NamedRuleWithOperations"), ip.child("scope"),
             {"*", "Cluster", "Namespaced"});
  }
}

// A list of {name, expression} (variables, matchConditions): both required,
// names unique.
void validate_named_expressions(const Decoder& d, const json::object& spec, const char* key, const Path& p,
                                bool qualified) {
  const Path lp = p.child(key);
  const json::array* list = d.array(get(&spec, key), lp, "ValidatingAdmissionPolicySpec", "[]v1.Variable");
  std::set<std::string> seen;
  for (size_t i = 0; list && i < list->size(); ++i) {
    const Path ip = lp.index(i);
    const json::object* v = d.object(&(*list)[i], ip, "ValidatingAdmissionPolicySpec", "v1.Variable");
    if (!v) continue;
    d.known_fields(*v, ip, {"name", "expression"});
    std::string name = d.string(get(v, "name"), ip.child("name"), "Variable");
    if (name.empty()) d.invalid(ip.child("name"), "Required value");
    if (qualified)
      for (const auto& m : qualified_name_errors(name))
        d.invalid(ip.child("name"), "Invalid value: " + go_quote(name) + ": " + m);
    if (!seen.insert(name).second) d.invalid(ip.child("name"), "Duplicate value: " + go_quote(name));
    if (d.string(get(v, "expression"), ip.child("expression"), "Variable").empty())
      d.invalid(ip.child("expression"), "Required value");
  }
}

}  // namespace

void validate_validating_admission_policy(const Document& doc) {
  Decoder d(doc, "ValidatingAdmissionPolicy", "v1", std::string("ValidatingAdmissionPolicy.") + kGroup);
  const json::object& root = doc.value.as_object();
  const Path top;
  d.known_fields(root, top, {"apiVersion", "kind", "metadata", "spec", "status"});
  validate_object_meta(d, root, validate_dns1123_subdomain, false);
  const Path sp = top.child("spec");
  const json::object* spec =
      d.object(get(&root, "spec"), sp, "ValidatingAdmissionPolicy", "v1.ValidatingAdmissionPolicySpec");
  if (!spec) d.invalid(sp, "Required value");
  d.known_fields(*spec, sp,
                 {"paramKind", "matchConstraints", "validations", "failurePolicy", "auditAnnotations",
                  "matchConditions", "variables"});
  if (const json::value* fp = get(spec, "failurePolicy"))
    one_of(d, d.string(fp, sp.child("failurePolicy"), "ValidatingAdmissionPolicySpec"), sp.child("failurePolicy"),
           {"Fail", "Ignore"});
  const Path mp = sp.child("matchConstraints");
  const json::object* mc =
      d.object(get(spec, "matchConstraints"), mp, "ValidatingAdmissionPolicySpec", "v1.MatchResources");
  if (!mc) d.invalid(mp, "Required value");
  d.known_fields(*mc, mp,
                 {"namespaceSelector", "objectSelector", "resourceRules", "excludeResourceRules", "matchPolicy"});
  const json::value* rr = get(mc, "resourceRules");
  if (!rr || (rr->is_array() && rr->as_array().empty())) d.invalid(mp.child("resourceRules"), "Required value");
  validate_resource_rules(d, mc, mp);
  if (const json::value* m = get(mc, "matchPolicy"))
    one_of(d, d.string(m, mp.child("matchPolicy"), "MatchResources"), mp.child("matchPolicy"), {"Equivalent", "Exact"});
  validate_named_expressions(d, *spec, "variables", sp, false);
  validate_named_expressions(d, *spec, "matchConditions", sp, true);
  const Path vp = sp.child("validations");
  const json::array* vals = d.array(get(spec, "validations"), vp, "ValidatingAdmissionPolicySpec", "[]v1.Validation");
  const json::value* audit = get(spec, "auditAnnotations");
  if ((!vals || vals->empty()) && (!audit || !audit->is_array() || audit->as_array().empty()))
    d.invalid(vp, "Required value: validations or auditAnnotations must contain at least one item");
  for (size_t i = 0; vals && i < vals->size(); ++i) {
    const Path ip = vp.index(i);
    const json::object* v = d.object(&(*vals)[i], ip, "ValidatingAdmissionPolicySpec", "v1.Validation");
    if (!v) continue;
    d.known_fields(*v, ip, {"expression", "message", "reason", "messageExpression"});
    if (d.string(get(v, "expression"), ip.child("expression"), "Validation").empty())
      d.invalid(ip.child("expression"), "Required value");
    std::string msg = d.string(get(v, "message"), ip.child("message"), "Validation");
    if (msg.find('\n') != std::string::npos)
      d.invalid(ip.child("message"), "Invalid value: " + go_quote(msg) + ": message must not contain line breaks");
    if (const json::value* r = get(v, "reason"))
      one_of(d, d.string(r, ip.child("reason"), "Validation"), ip.child("reason"),
             {"Forbidden", "Invalid", "RequestEntityTooLarge"});
  }
}

void validate_validating_admission_policy_binding(const Document& doc) {
  Decoder d(doc, "ValidatingAdmissionPolicyBinding", "v1", std::string("ValidatingAdmissionPolicyBinding.") + kGroup);
  const json::object& root = doc.value.as_object();
  const Path top;
  d.known_fields(root, top, {"apiVersion", "kind", "metadata", "spec"});
  validate_object_meta(d, root, validate_dns1123_subdomain, false);
  const Path sp = top.child("spec");
  const json::object* spec =
      d.object(get(&root, "spec"), sp, "ValidatingAdmissionPolicyBinding", "v1.ValidatingAdmissionPolicyBindingSpec");
  if (!spec) d.invalid(sp, "Required value");
  d.known_fields(*spec, sp, {"policyName", "paramRef", "matchResources", "validationActions"});
  if (d.string(get(spec, "policyName"), sp.child("policyName"), "ValidatingAdmissionPolicyBindingSpec").empty())
    d.invalid(sp.child("policyName"), "Required value");
  auto actions = strings(d, spec, "validationActions", sp, "ValidatingAdmissionPolicyBindingSpec");
  const Path ap = sp.child("validationActions");
  if (actions.empty()) d.invalid(ap, "Required value: at least one validation action is required");
  std::set<std::string> seen;
  for (size_t i = 0; i < actions.size(); ++i) {
    one_of(d, actions[i], ap.index(i), {"Audit", "Deny", "Warn"});
    if (!seen.insert(actions[i]).second) d.invalid(ap.index(i), "Duplicate value: " + go_quote(actions[i]));
  }
  if (seen.count("Deny") && seen.count("Warn"))
    d.invalid(ap,
              "Invalid value: [\"Deny\",\"Warn\"]: must not contain both Deny and Warn (repeating the same validation "
              "failure information in the API response and headers serves no purpose)");
}

}  // namespace gpuops::core::codec_internal
