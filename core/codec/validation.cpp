// core/codec/validation.cpp: the API server's validation rules gpuops applies.
//
// The object-level rules the decoders report through a Decoder (core/codec/codec_internal.h): ObjectMeta's labels and
// annotations, a node's taints, a pod spec.
#include "core/kube/names.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/codec/codec_internal.h"
#include "core/kube/taints.h"
#include "core/model/model.h"
#include "core/model/quantity.h"

namespace gpuops::core {

namespace codec_internal {

// mirrors IsQualifiedName, k8s.io/apimachinery/pkg/util/validation/validation.go:
// every message it returns, in its order (an empty name is both "must be
// non-empty" and the regular expression's message).
std::vector<std::string> qualified_name_errors(const std::string& value) {
  static const std::string kRegexMsg =
      "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
      "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  std::vector<std::string> errs;
  std::string_view name = value;
  size_t slashes = std::count(value.begin(), value.end(), '/');
  if (slashes > 1)
    return {"a qualified name " + kRegexMsg +
            " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"};
  if (slashes == 1) {
    size_t at = value.find('/');
    std::string prefix = value.substr(0, at);
    name = name.substr(at + 1);
    if (prefix.empty())
      errs.push_back("prefix part must be non-empty");
    else if (std::string m = validate_dns1123_subdomain(prefix); !m.empty())
      errs.push_back("prefix part " + m);
  }
  if (name.empty())
    errs.push_back("name part must be non-empty");
  else if (name.size() > 63)
    errs.push_back("name part must be no more than 63 characters");
  if (!is_qualified_name_text(name)) errs.push_back("name part " + kRegexMsg);
  return errs;
}

}  // namespace codec_internal

using codec_internal::qualified_name_errors;

// ---------------------------------------------------------------- objects

namespace codec_internal {

std::string aggregate(const std::vector<std::string>& texts) {
  std::unordered_set<std::string_view> seen;
  std::vector<std::string_view> distinct;
  for (const auto& t : texts)
    if (seen.insert(t).second) distinct.push_back(t);
  if (distinct.size() == 1) return std::string(distinct[0]);
  std::string agg = "[";
  for (size_t i = 0; i < distinct.size(); ++i) {
    if (i) agg += ", ";
    agg += distinct[i];
  }
  return agg + "]";
}

// field.NotSupported's body: `Unsupported value: "v": supported values: "a", "b"`.
std::string not_supported(const std::string& value, std::initializer_list<const char*> supported) {
  std::string out = "Unsupported value: \"" + value + "\": supported values: ";
  bool first = true;
  for (const char* s : supported) {
    out += (first ? "\"" : ", \"") + std::string(s) + "\"";
    first = false;
  }
  return out;
}

// mirrors IsValidPortNum (k8s.io/apimachinery pkg/util/validation).
std::string validate_port_number(int64_t port) {
  return port >= 1 && port <= 65535 ? "" : "must be between 1 and 65535, inclusive";
}

// mirrors IsValidPortName (k8s.io/apimachinery pkg/util/validation, an
// IANA_SVC_NAME): its first message.
std::string validate_port_name(const std::string& name) {
  if (name.size() > 15) return "must be no more than 15 characters";
  bool letter = false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)";
    letter = letter || (c >= 'a' && c <= 'z');
  }
  if (!letter) return "must contain at least one letter (a-z)";
  if (name.find("--") != std::string::npos) return "must not contain consecutive hyphens";
  if (!name.empty() && (name.front() == '-' || name.back() == '-')) return "must not begin or end with a hyphen";
  return "";
}

// mirrors ValidatePortNumOrName (pkg/apis/core/validation): an IntOrString
// port, a number or an IANA service name; "" (no value) is valid here.
void validate_port_num_or_name(const Decoder& d, const boost::json::value* v, const Path& p, const char* st) {
  if (!v || v->is_null()) return;
  if (v->is_int64() || v->is_uint64()) {
    int64_t n = v->is_int64() ? v->as_int64() : static_cast<int64_t>(v->as_uint64());
    if (std::string e = validate_port_number(n); !e.empty())
      d.invalid(p, "Invalid value: " + std::to_string(n) + ": " + e);
    return;
  }
  if (!v->is_string()) d.type_error(p, *v, st, "intstr.IntOrString");
  std::string name(v->as_string());
  if (std::string e = validate_port_name(name); !e.empty()) d.invalid(p, "Invalid value: \"" + name + "\": " + e);
}

// mirrors validateObjectMetaAccessorWithOptsCommon's namespace check,
// k8s.io/apimachinery/pkg/api/validation/objectmeta.go, with ValidateNamespaceName
// (NameIsDNSLabel, generic.go), for an object a create has reached validation
// with: rest.BeforeCreate has already cleared a cluster-scoped object's
// namespace (EnsureObjectNamespaceMatchesRequestNamespace, k8s.io/apiserver
// pkg/registry/rest/meta.go), and an empty one of a namespaced object is
// filled from the request, so neither is an error here.
std::string validate_meta_namespace(const Decoder& d, const std::string& ns, bool namespaced, const Path& p) {
  if (!namespaced) return "";
  if (std::string e = validate_dns1123_label(ns); !ns.empty() && !e.empty())
    d.invalid(p, "Invalid value: \"" + ns + "\": " + e);
  return ns;
}

// mirrors ValidateLabels, k8s.io/apimachinery/pkg/apis/meta/v1/validation/
// validation.go, which ValidateObjectMeta and the pod template's checks call:
// every key a label key, every value a label value; the first failure is the
// 422 (upstream lists them all).
void validate_meta_labels(const Decoder& d, const Labels& labels, const Path& p) {
  for (const auto& [k, v] : labels) {
    std::string e = validate_label_key(k);
    if (!e.empty()) d.invalid(p, "Invalid value: \"" + k + "\": " + e);
    e = validate_label_value(v);
    if (!e.empty()) d.invalid(p.map_key(k), "Invalid value: \"" + v + "\": " + e);
  }
}

// mirrors ValidateAnnotationsSize, k8s.io/apimachinery/pkg/api/validation/
// objectmeta.go, called by ValidateAnnotations for every ObjectMeta and pod
// template: the keys and values together at most TotalAnnotationSizeLimitB =
// 256 KiB, else field.TooLong(fldPath, "", TotalAnnotationSizeLimitB).
void validate_meta_annotations(const Decoder& d, const Labels& annotations, const Path& p) {
  constexpr size_t kTotalAnnotationSizeLimitB = 256 * 1024;
  size_t total = 0;
  for (const auto& [k, v] : annotations) total += k.size() + v.size();
  if (total > kTotalAnnotationSizeLimitB)
    d.invalid_all(
        {field_error("FieldValueTooLong", p,
                     "Too long: must have at most " + std::to_string(kTotalAnnotationSizeLimitB) + " bytes")});
}

// mirrors validateNodeTaints and validateTaintEffect (allowEmpty false),
// k8s.io/kubernetes pkg/apis/core/validation/validation.go. ValidateNode calls it with
// fldPath.Child("taints") where fldPath is "metadata", so upstream names the
// fields metadata.taints[i].key, not spec.taints[i]: `p` is that path. Per
// taint: the key (ValidateLabelName: every IsQualifiedName message as an
// Invalid value), the value (IsValidLabelValue), the effect (Required, or
// NotSupported outside NoSchedule/PreferNoSchedule/NoExecute), then
// uniqueness by (key, effect): field.Duplicate(taints[i], taint) with the
// detail "taints must be unique by key and effect pair"; the value prints as
// Go's %#v of the internal core.Taint.
std::vector<FieldError> validate_node_taints(const std::vector<Taint>& taints, const Path& p) {
  std::vector<FieldError> errs;
  std::map<std::string, std::vector<std::string>> unique;  // effect -> keys
  for (size_t i = 0; i < taints.size(); ++i) {
    const Taint& t = taints[i];
    Path ip = p.index(i);
    for (const auto& m : qualified_name_errors(t.key))
      errs.push_back(field_error("FieldValueInvalid", ip.child("key"), "Invalid value: " + go_quote(t.key) + ": " + m));
    if (std::string m = validate_label_value(t.value); !m.empty())
      errs.push_back(
          field_error("FieldValueInvalid", ip.child("value"), "Invalid value: " + go_quote(t.value) + ": " + m));
    if (t.effect.empty()) {
      errs.push_back(field_error("FieldValueRequired", ip.child("effect"), "Required value"));
    } else if (!is_taint_effect(t.effect)) {
      errs.push_back(
          field_error("FieldValueNotSupported", ip.child("effect"),
                      "Unsupported value: " + go_quote(t.effect) + ": supported values: " + quoted_taint_effects()));
    }
    auto& keys = unique[t.effect];
    if (std::find(keys.begin(), keys.end(), t.key) != keys.end()) {
      // %#v prints a non-nil *metav1.Time field as its address; upstream's
      // text then differs from run to run, so no exact match is possible.
      std::string added = t.time_added ? "(*v1.Time)(0xc000000000)" : "(*v1.Time)(nil)";
      errs.push_back(field_error("FieldValueDuplicate", ip,
                                 "Duplicate value: core.Taint{Key:" + go_quote(t.key) + ", Value:" + go_quote(t.value) +
                                     ", Effect:" + go_quote(t.effect) + ", TimeAdded:" + added +
                                     "}: taints must be unique by key and effect pair"));
      continue;
    }
    keys.push_back(t.key);
  }
  return errs;
}

namespace {

// mirrors validateContainerPorts (pkg/apis/core/validation/validation.go),
// after SetDefaults_ContainerPort (protocol TCP) and, with hostNetwork,
// defaultHostNetworkPorts (hostPort = containerPort when 0), then
// validateHostNetwork's hostPort == containerPort. The ports of one container
// at `p`; strict field validation of each port's fields.
void validate_container_ports(const Decoder& d, const boost::json::value* v, const Path& p, bool host_network) {
  const boost::json::array* ports = d.array(v, p, "Container", "[]v1.ContainerPort");
  std::vector<std::string> names;
  for (size_t i = 0; ports && i < ports->size(); ++i) {
    const Path ip = p.index(i);
    const boost::json::object* port = d.object(&(*ports)[i], ip, "Container", "v1.ContainerPort");
    if (!port) continue;
    d.known_fields(*port, ip, {"name", "hostPort", "containerPort", "protocol", "hostIP"});
    std::string name = d.string(get(port, "name"), ip.child("name"), "ContainerPort");
    if (!name.empty()) {
      if (std::string e = validate_port_name(name); !e.empty())
        d.invalid(ip.child("name"), "Invalid value: \"" + name + "\": " + e);
      if (std::find(names.begin(), names.end(), name) != names.end())
        d.invalid(ip.child("name"), "Duplicate value: \"" + name + "\"");
      names.push_back(name);
    }
    int64_t container_port =
        d.integer(get(port, "containerPort"), ip.child("containerPort"), "ContainerPort", "int32").value_or(0);
    if (container_port == 0) d.invalid(ip.child("containerPort"), "Required value");
    if (std::string e = validate_port_number(container_port); !e.empty())
      d.invalid(ip.child("containerPort"), "Invalid value: " + std::to_string(container_port) + ": " + e);
    int64_t host_port = d.integer(get(port, "hostPort"), ip.child("hostPort"), "ContainerPort", "int32").value_or(0);
    if (host_port != 0)
      if (std::string e = validate_port_number(host_port); !e.empty())
        d.invalid(ip.child("hostPort"), "Invalid value: " + std::to_string(host_port) + ": " + e);
    std::string protocol = d.string(get(port, "protocol"), ip.child("protocol"), "ContainerPort");
    if (!protocol.empty() && protocol != "TCP" && protocol != "UDP" && protocol != "SCTP")
      d.invalid(ip.child("protocol"), not_supported(protocol, {"SCTP", "TCP", "UDP"}));
    if (host_network && host_port != 0 && host_port != container_port)
      d.invalid(ip.child("hostPort"), "Invalid value: " + std::to_string(host_port) +
                                          ": must match `containerPort` when `hostNetwork` is true");
  }
}

}  // namespace

// Validation of a pod spec as ValidatePodSpec does for the fields gpuops reads
// (k8s.io/kubernetes pkg/apis/core/validation/validation.go): nodeSelector labels, affinity operators,
// tolerations, at least one container; each container's name (a DNS-1123
// label), image, ports (from spec_json) and resources (no negative amount,
// requests within limits).
void validate_pod_spec(const Decoder& d, const PodSpec& s, const Path& p, const boost::json::object* spec_json) {
  Path nsp = p.child("nodeSelector");
  for (const auto& [k, v] : s.node_selector) {
    std::string e = validate_label_key(k);
    if (!e.empty()) d.invalid(nsp, "Invalid value: \"" + k + "\": " + e);
    e = validate_label_value(v);
    if (!e.empty()) d.invalid(nsp.map_key(k), "Invalid value: \"" + v + "\": " + e);
  }
  if (s.required_node_affinity) {
    const Path ap = p.child("affinity");
    const Path nap = ap.child("nodeAffinity");
    const Path rp0 = nap.child("requiredDuringSchedulingIgnoredDuringExecution");
    const Path tp = rp0.child("nodeSelectorTerms");
    if (s.required_node_affinity->empty()) d.invalid(tp, "Required value: must have at least one node selector term");
    for (size_t i = 0; i < s.required_node_affinity->size(); ++i) {
      const auto& term = (*s.required_node_affinity)[i];
      for (size_t j = 0; j < term.match_expressions.size(); ++j) {
        const auto& r = term.match_expressions[j];
        const Path ip = tp.index(i);
        const Path mp = ip.child("matchExpressions");
        const Path rp = mp.index(j);
        switch (r.op) {
          case SelectorOperator::kIn:
          case SelectorOperator::kNotIn:
            if (r.values.empty())
              d.invalid(rp.child("values"), "Required value: must be specified when `operator` is 'In' or 'NotIn'");
            break;
          case SelectorOperator::kExists:
          case SelectorOperator::kDoesNotExist:
            if (!r.values.empty())
              d.invalid(rp.child("values"),
                        "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
            break;
          case SelectorOperator::kGt:
          case SelectorOperator::kLt:
            if (r.values.size() != 1)
              d.invalid(rp.child("values"),
                        "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'");
            break;
          case SelectorOperator::kUnknown:
            d.invalid(rp.child("operator"), "Invalid value: \"" + r.op_text() + "\": not a valid selector operator");
        }
      }
      for (size_t j = 0; j < term.match_fields.size(); ++j) {
        const auto& r = term.match_fields[j];
        const Path ip = tp.index(i);
        const Path mp = ip.child("matchFields");
        const Path rp = mp.index(j);
        if (r.key != "metadata.name")
          d.invalid(rp.child("key"), "Invalid value: \"" + r.key + "\": not a valid field selector key");
        if (r.op != SelectorOperator::kIn && r.op != SelectorOperator::kNotIn)
          d.invalid(rp.child("operator"), "Invalid value: \"" + r.op_text() + "\": not a valid selector operator");
        if (r.values.size() != 1)
          d.invalid(
              rp.child("values"),
              "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector");
      }
    }
  }
  for (size_t i = 0; i < s.tolerations.size(); ++i) {
    const auto& t = s.tolerations[i];
    const Path tolp = p.child("tolerations");
    const Path tp = tolp.index(i);
    if (!t.op.empty() && t.op != "Equal" && t.op != "Exists")
      d.invalid(tp.child("operator"), "Unsupported value: \"" + t.op + "\": supported values: \"Equal\", \"Exists\"");
    if (t.op == "Exists" && !t.value.empty())
      d.invalid(tp.child("operator"),
                "Invalid value: \"" + t.value + "\": value must be empty when `operator` is 'Exists'");
    if (!t.effect.empty() && !is_taint_effect(t.effect))
      d.invalid(tp.child("effect"),
                "Unsupported value: \"" + t.effect + "\": supported values: " + quoted_taint_effects());
  }
  if (s.containers.empty()) d.invalid(p.child("containers"), "Required value");
  for (const char* key : {"initContainers", "containers"}) {
    const auto& cs = std::string_view(key) == "containers" ? s.containers : s.init_containers;
    const Path csp = p.child(key);
    for (size_t i = 0; i < cs.size(); ++i) {
      const Path cp = csp.index(i);
      const Container& c = cs[i];
      // validateContainerCommon: the name is a DNS-1123 label.
      if (c.name.empty()) d.invalid(cp.child("name"), "Required value");
      if (std::string e = validate_dns1123_label(c.name); !e.empty())
        d.invalid(cp.child("name"), "Invalid value: \"" + c.name + "\": " + e);
      if (c.image.empty()) d.invalid(cp.child("image"), "Required value");
      if (spec_json) {
        const boost::json::array* cs_json = get(spec_json, key) ? get(spec_json, key)->if_array() : nullptr;
        const boost::json::object* c_json = cs_json && i < cs_json->size() ? (*cs_json)[i].if_object() : nullptr;
        validate_container_ports(d, get(c_json, "ports"), cp.child("ports"), s.host_network);
      }
      // ValidateResourceRequirements: no negative amount (ValidateResourceQuantityValue),
      // and a request no larger than the limit of the same resource.
      const Path rp = cp.child("resources");
      for (const auto& [list, path] :
           {std::pair{&c.limits, rp.child("limits")}, std::pair{&c.requests, rp.child("requests")}})
        for (const auto& [name, q] : *list)
          if (q < Quantity())
            d.invalid(path.map_key(name),
                      "Invalid value: \"" + q.to_string() + "\": must be greater than or equal to 0");
      const Path reqp = rp.child("requests");
      for (const auto& [name, q] : c.requests) {
        auto lim = c.limits.find(name);
        if (lim != c.limits.end() && q > lim->second)
          d.invalid(reqp.map_key(name), "Invalid value: \"" + q.to_string() + "\": must be less than or equal to " +
                                            name + " limit of " + lim->second.to_string());
      }
    }
  }
}

}  // namespace codec_internal

}  // namespace gpuops::core
