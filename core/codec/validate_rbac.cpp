// core/codec/validate_rbac.cpp: rbac.authorization.k8s.io/v1 ClusterRole, Role,
// ClusterRoleBinding and RoleBinding, checked as the API server checks them
// on create (core/codec/validate_kinds.h). mirrors ValidateClusterRole,
// ValidateRole, validatePolicyRule, ValidateClusterRoleBinding,
// ValidateRoleBinding and validateRoleBindingSubject, k8s.io/kubernetes
// pkg/apis/rbac/validation/validation.go, after SetDefaults_Subject
// (pkg/apis/rbac/v1/defaults.go: a User's or Group's empty apiGroup is
// rbac.authorization.k8s.io).
#include <boost/json.hpp>

#include <string>
#include <vector>

#include "core/codec/codec_internal.h"
#include "core/kube/names.h"

namespace gpuops::core::codec_internal {

namespace json = boost::json;

namespace {

constexpr const char* kGroup = "rbac.authorization.k8s.io";

// minimalNameRequirements = path.IsValidPathSegmentName
// (k8s.io/apimachinery pkg/api/validate/content/path.go): its first message.
std::string validate_path_segment_name(const std::string& name) {
  if (name == "." || name == "..") return "may not be '" + name + "'";
  if (name.find('/') != std::string::npos) return "may not contain '/'";
  if (name.find('%') != std::string::npos) return "may not contain '%'";
  return "";
}

// A []string as field.Error renders a value: its JSON.
std::string go_string_slice(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& x : v) a.emplace_back(x);
  return json::serialize(a);
}

std::vector<std::string> strings(const Decoder& d, const json::object* o, const char* key, const Path& p) {
  std::vector<std::string> out;
  const Path kp = p.child(key);
  if (const json::array* a = d.array(get(o, key), kp, "PolicyRule", "[]string"))
    for (size_t i = 0; i < a->size(); ++i) out.push_back(d.string(&(*a)[i], kp.index(i), "PolicyRule"));
  return out;
}

void validate_roles(const Document& doc, const char* kind, bool namespaced) {
  Decoder d(doc, kind, "v1", std::string(kind) + "." + kGroup);
  const json::object& root = doc.value.as_object();
  const Path top;
  d.known_fields(root, top, {"apiVersion", "kind", "metadata", "rules", "aggregationRule"});
  validate_object_meta(d, root, validate_path_segment_name, namespaced);
  const Path rp = top.child("rules");
  const json::array* rules = d.array(get(&root, "rules"), rp, kind, "[]v1.PolicyRule");
  for (size_t i = 0; rules && i < rules->size(); ++i) {
    const Path ip = rp.index(i);
    const json::object* r = d.object(&(*rules)[i], ip, kind, "v1.PolicyRule");
    if (!r) continue;
    d.known_fields(*r, ip, {"verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"});
    auto verbs = strings(d, r, "verbs", ip);
    auto groups = strings(d, r, "apiGroups", ip);
    auto resources = strings(d, r, "resources", ip);
    auto names = strings(d, r, "resourceNames", ip);
    auto urls = strings(d, r, "nonResourceURLs", ip);
    // validatePolicyRule's detail "verbs must contain at least one value" is
    // not in the message a v1.37 API server gives.
    if (verbs.empty()) d.invalid(ip.child("verbs"), "Required value");
    if (!urls.empty()) {
      if (namespaced)
        d.invalid(ip.child("nonResourceURLs"),
                  "Invalid value: " + go_string_slice(urls) + ": namespaced rules cannot apply to non-resource URLs");
      if (!groups.empty() || !resources.empty() || !names.empty())
        d.invalid(ip.child("nonResourceURLs"), "Invalid value: " + go_string_slice(urls) +
                                                   ": rules cannot apply to both regular resources and non-resource "
                                                   "URLs");
      continue;
    }
    if (groups.empty())
      d.invalid(ip.child("apiGroups"), "Required value: resource rules must supply at least one api group");
    if (resources.empty())
      d.invalid(ip.child("resources"), "Required value: resource rules must supply at least one resource");
    if (!names.empty() && resources.size() > 1)
      d.invalid(ip.child("resourceNames"), "Required value: resource names cannot apply to multiple resources");
  }
}

void validate_bindings(const Document& doc, const char* kind, bool namespaced) {
  Decoder d(doc, kind, "v1", std::string(kind) + "." + kGroup);
  const json::object& root = doc.value.as_object();
  const Path top;
  d.known_fields(root, top, {"apiVersion", "kind", "metadata", "subjects", "roleRef"});
  validate_object_meta(d, root, validate_path_segment_name, namespaced);
  const Path rrp = top.child("roleRef");
  const json::object* ref = d.object(get(&root, "roleRef"), rrp, kind, "v1.RoleRef");
  if (ref) d.known_fields(*ref, rrp, {"apiGroup", "kind", "name"});
  std::string group = d.string(get(ref, "apiGroup"), rrp.child("apiGroup"), "RoleRef");
  if (group != kGroup) d.invalid(rrp.child("apiGroup"), not_supported(group, {kGroup}));
  std::string ref_kind = d.string(get(ref, "kind"), rrp.child("kind"), "RoleRef");
  if (namespaced ? ref_kind != "Role" && ref_kind != "ClusterRole" : ref_kind != "ClusterRole")
    d.invalid(rrp.child("kind"),
              namespaced ? not_supported(ref_kind, {"Role", "ClusterRole"}) : not_supported(ref_kind, {"ClusterRole"}));
  std::string ref_name = d.string(get(ref, "name"), rrp.child("name"), "RoleRef");
  if (ref_name.empty()) d.invalid(rrp.child("name"), "Required value");
  if (std::string e = validate_path_segment_name(ref_name); !e.empty())
    d.invalid(rrp.child("name"), "Invalid value: \"" + ref_name + "\": " + e);
  const Path sp = top.child("subjects");
  const json::array* subjects = d.array(get(&root, "subjects"), sp, kind, "[]v1.Subject");
  for (size_t i = 0; subjects && i < subjects->size(); ++i) {
    const Path ip = sp.index(i);
    const json::object* s = d.object(&(*subjects)[i], ip, kind, "v1.Subject");
    if (!s) continue;
    d.known_fields(*s, ip, {"kind", "apiGroup", "name", "namespace"});
    std::string sk = d.string(get(s, "kind"), ip.child("kind"), "Subject");
    std::string sg = d.string(get(s, "apiGroup"), ip.child("apiGroup"), "Subject");
    std::string name = d.string(get(s, "name"), ip.child("name"), "Subject");
    std::string ns = d.string(get(s, "namespace"), ip.child("namespace"), "Subject");
    if (name.empty()) d.invalid(ip.child("name"), "Required value");
    if (sk == "ServiceAccount") {
      if (std::string e = validate_dns1123_subdomain(name); !e.empty())
        d.invalid(ip.child("name"), "Invalid value: \"" + name + "\": " + e);
      if (!sg.empty()) d.invalid(ip.child("apiGroup"), not_supported(sg, {""}));
      if (!namespaced && ns.empty()) d.invalid(ip.child("namespace"), "Required value");
    } else if (sk == "User" || sk == "Group") {
      if (!sg.empty() && sg != kGroup) d.invalid(ip.child("apiGroup"), not_supported(sg, {kGroup}));
    } else {
      d.invalid(ip.child("kind"), not_supported(sk, {"ServiceAccount", "User", "Group"}));
    }
  }
}

}  // namespace

void validate_cluster_role(const Document& doc) { validate_roles(doc, "ClusterRole", false); }
void validate_role(const Document& doc) { validate_roles(doc, "Role", true); }
void validate_cluster_role_binding(const Document& doc) { validate_bindings(doc, "ClusterRoleBinding", false); }
void validate_role_binding(const Document& doc) { validate_bindings(doc, "RoleBinding", true); }

}  // namespace gpuops::core::codec_internal
